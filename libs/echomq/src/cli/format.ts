import type { JobState } from '../scripts/job-view';
import type { Colors } from './io';

/** An instant as ISO 8601 (UTC), or '' when there is none. */
export function instant(date: Date | undefined): string {
  return date ? date.toISOString() : '';
}

/** The first line of a text, cut to `max` characters. */
export function firstLine(text: string | undefined, max = 60): string {
  return text ? cut(text.split('\n', 1)[0], max) : '';
}

/** A value as indented JSON, cut to `max` characters ('' for none: functions and undefined have no JSON). */
export function json(value: unknown, max = 2_000): string {
  const text = JSON.stringify(value, null, 2) as string | undefined;
  return text === undefined ? '' : cut(text, max);
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** A state in its colour: the same for every command, so a glance finds the dead ones. */
export function state(colors: Colors, value: JobState): string {
  switch (value) {
    case 'pending':
      return colors.cyan(value);
    case 'active':
      return colors.green(value);
    case 'schedule':
      return colors.blue(value);
    case 'dead':
      return colors.red(value);
    case 'completed':
      return colors.green(value);
    default:
      return colors.yellow(value);
  }
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** A text cut to `max` characters. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
