export * from './processor.decorator';
export * from './job';
export * from './backoff';
export { ProcessorExplorer } from './processor-explorer';
export { Reaper } from './reaper';
export type { QueueLoop } from './queue-loop';
// What ProcessorExplorer.loop(queue) hands out, under the name it always had: the claim loop of an
// unpartitioned queue, or the loops of a partitioned one's partitions together.
export type { QueueLoop as ClaimLoop } from './queue-loop';
export type { WorkerEvents, WorkerEventEmitter } from './job-runner';
