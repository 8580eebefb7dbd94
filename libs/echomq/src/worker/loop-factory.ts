import { Logger } from '@nestjs/common';
import type { RedisConnections } from '../connection/redis-connections';
import type { QueueService } from '../queue/queue.service';
import type { QueueOptions, ResolvedQueueOptions } from '../queue/queue-options';
import { parsePhysicalQueue, partitionQueueName } from '../keyspace';
import { completeJobs } from '../scripts';
import type { CancelWatch } from './cancel-watch';
import { ClaimLoop } from './claim-loop';
import { Completer } from './completer';
import type { IsolationGate } from './isolation-gate';
import { JobRunner, type Dispatch, type WorkerEventEmitter } from './job-runner';
import { LeaseKeeper } from './lease-keeper';
import { observedAs } from './logical-observer';
import { PartitionLoops } from './partition-loops';
import { assertWorkerOptions } from './processor-definition';
import type { RuntimeObserver } from './runtime-observer';
import type { SharedSlots } from './shared-slots';
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
 * The loops of one @Processor's queue, as far as discovery knows them: one per declared
 * partition (`partitions` in forRoot or on the @Processor), else one on the queue itself;
 * bootstrap completes them from the partitions registry (LayoutFollower.settle). The processor's
 * options are recorded with QueueService first, so the queue is served with configuration and
 * the processor's overrides merged; wrong values stop the boot (assertWorkerOptions).
 */
export function createProcessorLoops(
  deps: LoopFactoryDeps,
  queue: string,
  overrides: QueueOptions,
  dispatch: Dispatch,
): PartitionLoops {
  deps.queues.useProcessorOptions(queue, overrides);
  const options = assertWorkerOptions(queue, deps.queues.queueOptions(queue));
  const group = new PartitionLoops(queue, options, deps.isolation, (placement) =>
    createClaimLoop(deps, placement, options, dispatch),
  );
  const declared = options.partitions ?? 1;
  if (declared <= 1) group.add(queue);
  for (let index = 0; declared > 1 && index < declared; index++) group.add(partitionQueueName(queue, index));
  return group;
}

/** Where one claim loop sits: the queue it serves, the physical queue it claims from, what it shares. */
export interface LoopPlacement {
  /** The queue as users name it (job.queue, worker events, observers). */
  readonly queue: string;
  /** The physical queue claimed from: the queue itself, or one partition of it (`q#2`). */
  readonly physical: string;
  /** The queue's concurrency, shared by its loops (see SharedSlots). */
  readonly shares: SharedSlots;
  /** The queue's worker events, one emitter for all its loops. */
  readonly events: WorkerEventEmitter;
}

/**
 * One claim loop of a @Processor with its collaborators: the lease keeper (heartbeat), the
 * completer (batched completions), the runner (handler and settlement) and the wake waiter,
 * each on the loop's physical queue. `options` are the queue's, resolved and checked (see
 * createProcessorLoops): a partition is served with its queue's settings.
 */
export function createClaimLoop(
  deps: LoopFactoryDeps,
  placement: LoopPlacement,
  options: ResolvedQueueOptions,
  dispatch: Dispatch,
): ClaimLoop {
  const { queues, connections } = deps;
  const { queue, physical } = placement;
  const ctx = queues.context(physical);
  const logger = new Logger(`EchoMQ:${physical}`);
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
      onRepeat: (error) => logger.warn(`Completions of ${physical}: ${error.message}; repeating the batch`),
    },
  );
  const observer = physical === queue ? deps.observer : observedAs(queue, deps.observer);
  const runner = new JobRunner(
    queue,
    options,
    ctx,
    keeper,
    completer,
    dispatch,
    logger,
    timing,
    // A schedule lives in one partition: its next occurrence is made where this one ran.
    (key, id, traceContext) => queues.advanceSchedule(physical, key, id, false, traceContext),
    observer,
    {
      partition: parsePhysicalQueue(physical)?.partition,
      events: placement.events,
      otherPhysical: async () =>
        (await queues.partitionLayout(queue)).physical
          .filter((name) => name !== physical)
          .map((name) => queues.context(name)),
    },
  );
  const waiter = new WakeWaiter(connections, ctx.keys.wake);
  return new ClaimLoop(
    physical,
    options,
    ctx,
    runner,
    keeper,
    waiter,
    logger,
    timing,
    deps.isolation,
    deps.cancels,
    placement.shares,
  );
}
