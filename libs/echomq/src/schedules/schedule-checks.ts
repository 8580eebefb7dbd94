import { describeValue, EchoMqError } from '../errors';
import { isValidQueueName } from '../keyspace';
import { refuse } from '../option-checks';
import { PAYLOAD_MAX_BYTES } from '../scripts/limits';
import { assertScheduleKey, buildDefinition } from './schedule-definition';
import type { DeclaredSchedule } from './schedule-types';

/**
 * The module option `schedules`, checked at boot with upsertSchedule's own checks (the data
 * against the largest payload any queue may take; the configured limit applies at the upsert).
 * Refuses with InvalidOptionError naming the entry (`schedules[2].cron`), and a key declared
 * twice for one queue.
 */
export function checkDeclaredSchedules(value: unknown, option: string): void {
  if (!Array.isArray(value)) refuse(option, `must be an array of schedules, got ${describeValue(value)}`);
  const seen = new Set<string>();
  (value as unknown[]).forEach((item, index) => {
    const at = `${option}[${index}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      refuse(at, `must be an object, got ${describeValue(item)}`);
    }
    const { queue, key, template, ...spec } = item as DeclaredSchedule;
    if (!isValidQueueName(queue))
      refuse(`${at}.queue`, `is not a valid queue name, got ${describeValue(queue)}`);
    try {
      assertScheduleKey(key);
      buildDefinition(spec, template, PAYLOAD_MAX_BYTES);
    } catch (error) {
      if (error instanceof EchoMqError) refuse(at, error.message);
      throw error;
    }
    const id = `${queue}\u0000${key}`;
    if (seen.has(id)) refuse(at, `declares schedule '${key}' of queue '${queue}' a second time`);
    seen.add(id);
  });
}
