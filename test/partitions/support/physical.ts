/** The physical queue names of `queue`'s `count` partitions, in partition order (`q#0`, `q#1`, ...). */
export function partitionNames(queue: string, count: number): string[] {
  return Array.from({ length: count }, (_, k) => `${queue}#${k}`);
}
