/**
 * Calls task(i) for i = 0..total-1 with at most `inFlight` calls outstanding
 * (each lane starts its next call when its previous one settles).
 */
export async function runInFlight(
  total: number,
  inFlight: number,
  task: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, lane));
}

/** Calls task on consecutive slices of `size` items, one slice at a time. */
export async function inBatches<T>(
  items: readonly T[],
  size: number,
  task: (batch: readonly T[]) => Promise<unknown>,
): Promise<void> {
  for (let from = 0; from < items.length; from += size) await task(items.slice(from, from + size));
}
