export * from './processor.decorator';
export * from './job';
export * from './backoff';
export { ProcessorExplorer } from './processor-explorer';
export { Reaper } from './reaper';
export type { ClaimLoop } from './claim-loop';
export type { WorkerEvents, WorkerEventEmitter } from './job-runner';
