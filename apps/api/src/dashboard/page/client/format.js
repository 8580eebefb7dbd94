// @ts-check
/** How numbers, instants and JSON read on the page. */

const integers = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimals = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/** @param {number} n */
export function count(n) {
  return integers.format(n);
}

/** Jobs per second: one decimal below 10, whole numbers above. @param {number} perSecond */
export function rate(perSecond) {
  return `${perSecond < 10 ? decimals.format(perSecond) : integers.format(perSecond)}/s`;
}

/** @param {number} fraction from 0 to 1 */
export function percent(fraction) {
  return `${decimals.format(fraction * 100)}%`;
}

/**
 * An instant in the reader's time zone; the time alone when it is today.
 * @param {string | undefined} iso
 */
export function instant(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString();
}

/**
 * JSON as people read it: indented, and never longer than max characters when max is given.
 * @param {unknown} value
 * @param {number} [max]
 */
export function json(value, max) {
  const text = max === undefined ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  if (text === undefined) return String(value);
  return max !== undefined && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The first line of a text, cut to max characters (an error's summary in a list).
 * @param {string | undefined} text
 * @param {number} max
 */
export function firstLine(text, max) {
  if (!text) return '';
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
