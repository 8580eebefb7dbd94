/**
 * Parses a body-parser style size ('512kb', '1mb', '1048576') into bytes. Written
 * here rather than imported so a bad EMQ_BODY_LIMIT is caught at boot with a
 * message naming the variable, not when the first request arrives.
 */
const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i;
const UNIT: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNIT[(match[2] ?? 'b').toLowerCase()]);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
