import type { JobId } from '../../ids';
import type { ResolvedModuleSettings } from '../../module/echomq-options';
import type { ScriptContext } from '../../scripts';
import type { RepeatOptions } from '../../scripts/repeat';
import type { QueueDefinitions } from '../queue-definitions';
import type { QueueOptions, ResolvedQueueOptions } from '../queue-options';

/**
 * What every part of QueueService's surface stands on. QueueService is one injectable, but its
 * methods live in layers, one file per area (flow control, history, job control, schedules),
 * each a class extending the one below; QueueService, at the top, supplies these members.
 */
export abstract class QueueSurface {
  abstract readonly settings: ResolvedModuleSettings;

  /** @internal Script context of one queue (validates the name). */
  abstract context(queue: string): ScriptContext;

  /** The settings this process serves a queue with (see QueueService.queueOptions). */
  abstract queueOptions(queue: string, overrides?: QueueOptions): ResolvedQueueOptions;

  /** How long an admin call whose reply was lost is repeated under its request id. */
  protected abstract repeatOnce(): RepeatOptions;

  /** Mints job ids on this process's leased node number (waits, boundedly, while it is confirmed). */
  protected abstract mintIds(count: number): Promise<JobId[]>;

  /** Registers the queue when this process has not lately (before a write that creates work). */
  protected abstract registerIfDue(queue: string): Promise<void>;

  /** Forgets that this process registered the queue, so its next write registers it again (after obliterate). */
  protected abstract forgetRegistration(queue: string): void;

  /** The typed definitions this application declared (their data schemas apply to new jobs). */
  protected abstract readonly definitions: QueueDefinitions;
}
