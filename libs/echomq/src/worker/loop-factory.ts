import { Logger } from '@nestjs/common';
import type { RedisConnections } from '../connection/redis-connections';
import type { QueueService } from '../queue/queue.service';
import type { QueueOptions } from '../queue/queue-options';
import { completeJobs } from '../scripts';
import type { CancelWatch } from './cancel-watch';
import { ClaimLoop } from './claim-loop';
import { Completer } from './completer';
import type { IsolationGate } from './isolation-gate';
import { JobRunner, type Dispatch } from './job-runner';
import { LeaseKeeper } from './lease-keeper';
import { assertWorkerOptions } from './processor-definition';
import type { RuntimeObserver } from './runtime-observer';
import { WakeWaiter } from './wake-waiter';

/** What every claim loop of one application shares. */
export interface LoopFactoryDeps {
  readonly queues: QueueService;
  readonly connections: RedisConnections;
  /** The application's gate: a job that may have crashed its last worker runs alone in it. */
  readonly isolation: IsolationGate;
  /** The application's one follower of the cancels streams. */
  readonly cancels: CancelWatch;
  /** This process's observers of the worker runtime (metrics, tracing). */
  readonly observer: RuntimeObserver;
}

/**
 * One @Processor's claim loop with its collaborators: the lease keeper (heartbeat), the
 * completer (batched completions), the runner (handler and settlement) and the wake waiter.
 * The processor's options are recorded with QueueService first, so the loop serves the
 * queue with configuration and the processor's overrides merged.
 */
export function createClaimLoop(
  deps: LoopFactoryDeps,
  queue: string,
  overrides: QueueOptions,
  dispatch: Dispatch,
): ClaimLoop {
  const { queues, connections } = deps;
  queues.useProcessorOptions(queue, overrides);
  const options = assertWorkerOptions(queue, queues.queueOptions(queue));
  const ctx = queues.context(queue);
  const logger = new Logger(`EchoMQ:${queue}`);
  const { commandTimeoutMs, replayWindowMs } = queues.settings;
  // A repeat may wait out a full command deadline before Redis runs it: stop repeating
  // one deadline before the replay window ends, so every repeat still finds the first
  // call's recorded outcome (the module keeps the window at least two deadlines long).
  const timing = { commandTimeoutMs, repeatForMs: replayWindowMs - commandTimeoutMs };
  const keeper = new LeaseKeeper(ctx, options.leaseMs, logger);
  const completer = new Completer(
    (completions, requestId) => completeJobs(ctx, completions, options.retainCompletedMs, requestId),
    {
      repeatForMs: timing.repeatForMs,
      onRepeat: (error) => logger.warn(`Completions of ${queue}: ${error.message}; repeating the batch`),
    },
  );
  const runner = new JobRunner(
    queue,
    options,
    ctx,
    keeper,
    completer,
    dispatch,
    logger,
    timing,
    (key, id, traceContext) => queues.advanceSchedule(queue, key, id, false, traceContext),
    deps.observer,
  );
  const waiter = new WakeWaiter(connections, ctx.keys.wake);
  return new ClaimLoop(
    queue,
    options,
    ctx,
    runner,
    keeper,
    waiter,
    logger,
    timing,
    deps.isolation,
    deps.cancels,
  );
}
