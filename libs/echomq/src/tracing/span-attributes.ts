import type { Attributes } from '@opentelemetry/api';
import type { ClaimedJobRecord } from '../scripts/claim';

/** The instrumentation scope of every EchoMQ span (the package's name). */
export const TRACER_NAME = '@echomq/nestjs';

/**
 * Attribute names: the OpenTelemetry messaging semantic conventions where they have one,
 * `echomq.*` for what is EchoMQ's own. Never job data: a payload may hold anything.
 */
export const ATTR = {
  system: 'messaging.system',
  destination: 'messaging.destination.name',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  messageId: 'messaging.message.id',
  batchCount: 'messaging.batch.message_count',
  /** The job's attempt: its fencing token (DESIGN.md invariant 3). */
  attempt: 'echomq.job.attempt',
  lane: 'echomq.job.lane',
  /** The job's name (its handler route), when it has one. */
  jobName: 'echomq.job.name',
  scheduleKey: 'echomq.schedule.key',
  /** What an enqueue did: created, matched (an idempotency key or throttle), replaced (a debounce). */
  enqueueOutcome: 'echomq.enqueue.outcome',
  /** How the job's settlement ended (SettledOutcome): completed, retried, dead, stale, ... */
  settlementOutcome: 'echomq.settlement.outcome',
} as const;

export const MESSAGING_SYSTEM = 'echomq';

/** The operation types of the conventions (`messaging.operation.type`). */
export type OperationType = 'create' | 'send' | 'receive' | 'process' | 'settle';

/** What every span of one queue's operation carries. */
export function operationAttributes(queue: string, type: OperationType, name: string): Attributes {
  return {
    [ATTR.system]: MESSAGING_SYSTEM,
    [ATTR.destination]: queue,
    [ATTR.operationType]: type,
    [ATTR.operationName]: name,
  };
}

/** A claimed job's identity on a worker span: id, attempt (fencing token), lane, name, schedule. */
export function claimedJobAttributes(record: ClaimedJobRecord): Attributes {
  return {
    [ATTR.messageId]: record.id,
    [ATTR.attempt]: record.attempt,
    [ATTR.lane]: record.lane,
    ...(record.name === '' ? {} : { [ATTR.jobName]: record.name }),
    ...(record.scheduleKey === undefined ? {} : { [ATTR.scheduleKey]: record.scheduleKey }),
  };
}

/** An error as a span records it: an Error keeps its stack; anything else its text. */
export function exceptionOf(error: unknown): Error | string {
  return error instanceof Error ? error : String(error);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
