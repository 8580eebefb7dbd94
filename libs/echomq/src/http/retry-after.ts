/**
 * Reads an HTTP `Retry-After` header (RFC 9110 §10.2.3) as milliseconds from `nowMs`: either
 * delay-seconds ("120", and also a decimal such as "1.5", which servers do send) or an
 * HTTP-date in any of the three forms a recipient must accept. Undefined when the header is
 * missing or is neither; a date in the past gives a value ≤ 0. Pure, so that
 * RateLimitedError.fromRetryAfter can clamp what it gets, and tests can pin the clock.
 *
 * Strict on shape on purpose: Date.parse accepts almost anything ("7" is a date in 2001), and
 * a header misread as a far-off date would hold a queue for a day.
 */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (typeof header !== 'string') return undefined;
  const text = header.trim();
  if (SECONDS.test(text)) return Number(text) * 1_000;
  const at = httpDateMs(text, nowMs);
  return at === undefined ? undefined : at - nowMs;
}

const SECONDS = /^\d+(?:\.\d+)?$/;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const LONG_DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/** "Sun, 06 Nov 1994 08:49:37 GMT", the form senders must use. */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
/** "Sunday, 06-Nov-94 08:49:37 GMT", obsolete. */
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i');
/** "Sun Nov  6 08:49:37 1994", C's asctime(), obsolete. */
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`, 'i');

interface DateParts {
  readonly year: number;
  readonly month: string;
  readonly day: string;
  readonly hour: string;
  readonly minute: string;
  readonly second: string;
}

function httpDateMs(text: string, nowMs: number): number | undefined {
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    const [, day, month, year, hour, minute, second] = match;
    return utcMs({ year: Number(year), month, day, hour, minute, second });
  }
  match = RFC850_DATE.exec(text);
  if (match) {
    const [, day, month, year, hour, minute, second] = match;
    return utcMs({ year: rfc850Year(Number(year), nowMs), month, day, hour, minute, second });
  }
  match = ASCTIME_DATE.exec(text);
  if (match) {
    const [, month, day, hour, minute, second, year] = match;
    return utcMs({ year: Number(year), month, day: day.trim(), hour, minute, second });
  }
  return undefined;
}

/**
 * A two-digit year that would be more than 50 years ahead is the most recent past year with
 * those digits (RFC 9110 §5.6.7).
 */
function rfc850Year(twoDigits: number, nowMs: number): number {
  const thisYear = new Date(nowMs).getUTCFullYear();
  let year = thisYear - (thisYear % 100) + twoDigits;
  if (year > thisYear + 50) year -= 100;
  return year;
}

/** The instant, or undefined for a calendar value that does not exist (31 Feb, 25:00). */
function utcMs(parts: DateParts): number | undefined {
  const month = MONTHS.indexOf(parts.month.toLowerCase());
  const [day, hour, minute, second] = [parts.day, parts.hour, parts.minute, parts.second].map(Number);
  // 60 is a leap second: the instant is the next minute's first.
  if (day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(parts.year, month, day, hour, minute, second);
  const date = new Date(Date.UTC(parts.year, month, day));
  return date.getUTCMonth() === month && date.getUTCDate() === day ? ms : undefined;
}
