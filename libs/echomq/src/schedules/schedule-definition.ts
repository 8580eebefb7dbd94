import { createHash } from 'node:crypto';
import { describeValue, InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import { buildJobRecord } from '../queue/enqueue-options';
import { assertCron } from './cron-next';
import type { ScheduleOptions, ScheduleSpec, ScheduleTemplate, ScheduleView } from './schedule-types';

/**
 * A schedule's definition as the `schedulers` hash keeps it: canonical JSON (fixed key order,
 * defaults filled in, data already encoded as a row stores it), so one definition always has
 * one text, and "the same definition" is a string comparison inside the scripts.
 */
export interface StoredDefinition {
  readonly spec: { readonly cron: string; readonly tz: string } | { readonly everyMs: number };
  readonly options: Required<ScheduleOptions>;
  readonly template: StoredTemplate;
}

/** The template's fields as the occurrence's row takes them (see occurrence_fields in Lua). */
export interface StoredTemplate {
  readonly data: string;
  readonly name?: string;
  readonly maxAttempts?: number;
  readonly backoff?: string;
  readonly lane?: string;
  readonly priority?: number;
  readonly timeoutMs?: number;
}

export const SCHEDULE_KEY_PATTERN = /^[A-Za-z0-9_.:@+=-]{1,128}$/;
export const SCHEDULE_KEY_RULE = '1 to 128 characters from A-Z a-z 0-9 _ . : @ + = -';

/** Ranges of a schedule's numbers (docs/schedules.md). */
export const SCHEDULE_RANGES = {
  everyMs: { min: 1, max: 366 * 24 * 3_600_000 },
  missedAfterMs: { min: 0, max: 366 * 24 * 3_600_000 },
} as const;

export const SCHEDULE_DEFAULTS = { tz: 'UTC', missed: 'once', missedAfterMs: 60_000 } as const;

const SPEC_KEYS = ['cron', 'tz', 'everyMs', 'missed', 'missedAfterMs'];
const TEMPLATE_KEYS = ['data', 'name', 'maxAttempts', 'backoff', 'lane', 'priority', 'timeoutMs'];
/** Stands in for the occurrence's id while the template is checked (ids are minted later). */
const CHECK_ID = 'JOB00000000000';

export function assertScheduleKey(key: unknown): string {
  if (typeof key !== 'string' || !SCHEDULE_KEY_PATTERN.test(key)) {
    throw new InvalidArgumentError(`A schedule key is ${SCHEDULE_KEY_RULE}, got ${describeValue(key)}`);
  }
  return key;
}

function refuseUnknown(record: object, known: readonly string[], what: string): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) {
      throw new InvalidArgumentError(`${what} has no field '${key}'; known: ${known.join(', ')}`);
    }
  }
}

function checkRange(value: unknown, field: string, range: { min: number; max: number }): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw new InvalidArgumentError(
      `${field} must be an integer from ${range.min} to ${range.max}, got ${describeValue(value)}`,
    );
  }
  return value;
}

function storedSpec(spec: Record<string, unknown>): StoredDefinition['spec'] {
  const hasCron = spec.cron !== undefined;
  const hasEvery = spec.everyMs !== undefined;
  if (hasCron === hasEvery) throw new InvalidArgumentError('A schedule has either cron (with tz) or everyMs');
  if (hasEvery) {
    if (spec.tz !== undefined) throw new InvalidArgumentError('tz applies to cron schedules only');
    return { everyMs: checkRange(spec.everyMs, 'everyMs', SCHEDULE_RANGES.everyMs) };
  }
  const tz = spec.tz === undefined ? SCHEDULE_DEFAULTS.tz : spec.tz;
  assertCron(spec.cron, tz);
  return { cron: (spec.cron as string).trim(), tz: tz as string };
}

function storedOptions(spec: Record<string, unknown>): Required<ScheduleOptions> {
  const missed = spec.missed === undefined ? SCHEDULE_DEFAULTS.missed : spec.missed;
  if (missed !== 'once' && missed !== 'skip') {
    throw new InvalidArgumentError(`missed must be 'once' or 'skip', got ${describeValue(missed)}`);
  }
  const after = spec.missedAfterMs === undefined ? SCHEDULE_DEFAULTS.missedAfterMs : spec.missedAfterMs;
  return { missed, missedAfterMs: checkRange(after, 'missedAfterMs', SCHEDULE_RANGES.missedAfterMs) };
}

/** The template checked as enqueue checks a job (buildJobRecord), in the row's encoding. */
function storedTemplate(template: ScheduleTemplate, payloadLimitBytes: number): StoredTemplate {
  if (typeof template !== 'object' || template === null || Array.isArray(template)) {
    throw new InvalidArgumentError(`template must be an object, got ${describeValue(template)}`);
  }
  refuseUnknown(template, TEMPLATE_KEYS, 'A schedule template');
  const record = buildJobRecord(CHECK_ID, { ...template, data: template.data }, payloadLimitBytes);
  // Fixed order, absent fields left out: one definition, one text.
  return {
    data: record.data,
    ...(record.name === '' ? {} : { name: record.name }),
    ...(record.maxAttempts === undefined ? {} : { maxAttempts: record.maxAttempts }),
    ...(record.backoff === undefined || record.backoff === '' ? {} : { backoff: record.backoff }),
    ...(record.lane === undefined ? {} : { lane: record.lane }),
    ...(record.priority === undefined ? {} : { priority: record.priority }),
    ...(record.timeoutMs === undefined ? {} : { timeoutMs: record.timeoutMs }),
  };
}

/**
 * Checks a schedule (key, spec, options, template) and returns its stored definition and
 * canonical text. Throws InvalidArgumentError (or PayloadTooLargeError) naming what to fix;
 * nothing touches Redis. Only undefined means "the default": a null template, tz, missed or
 * missedAfterMs is refused like any other wrong value, never read as absent.
 */
export function buildDefinition(
  spec: ScheduleSpec & ScheduleOptions,
  template: ScheduleTemplate | undefined,
  payloadLimitBytes: number,
): { definition: StoredDefinition; text: string } {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new InvalidArgumentError(`A schedule spec must be an object, got ${describeValue(spec)}`);
  }
  const record = spec as unknown as Record<string, unknown>;
  refuseUnknown(record, SPEC_KEYS, 'A schedule spec');
  const definition: StoredDefinition = {
    spec: storedSpec(record),
    options: storedOptions(record),
    template: storedTemplate(template === undefined ? {} : template, payloadLimitBytes),
  };
  return { definition, text: JSON.stringify(definition) };
}

/** Reads a stored definition back; one that does not parse (never written by EchoMQ) is refused. */
export function parseDefinition(text: string): StoredDefinition {
  const parsed = JSON.parse(text) as StoredDefinition;
  if (typeof parsed !== 'object' || parsed === null || typeof parsed.template?.data !== 'string') {
    throw new InvalidArgumentError('A stored schedule definition is malformed');
  }
  return parsed;
}

/** The digest advance-schedule compares with the stored text (redis.sha1hex there). */
export function definitionDigest(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

/** The view listSchedules and getSchedule return. */
export function toScheduleView<T>(
  key: string,
  definition: StoredDefinition,
  nextId: string | null,
  nextRunAtMs: number | null,
): ScheduleView<T> {
  const { template } = definition;
  return {
    key,
    spec: definition.spec,
    options: definition.options,
    template: {
      data: JSON.parse(template.data) as T,
      ...(template.name === undefined ? {} : { name: template.name }),
      ...(template.maxAttempts === undefined ? {} : { maxAttempts: template.maxAttempts }),
      ...(template.backoff === undefined ? {} : { backoff: JSON.parse(template.backoff) as never }),
      ...(template.lane === undefined ? {} : { lane: template.lane }),
      ...(template.priority === undefined ? {} : { priority: template.priority }),
      ...(template.timeoutMs === undefined ? {} : { timeoutMs: template.timeoutMs }),
    },
    nextRunAt: nextRunAtMs === null ? null : new Date(nextRunAtMs),
    nextId: nextId as JobId | null,
  };
}
