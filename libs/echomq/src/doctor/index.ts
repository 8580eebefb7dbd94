export * from './findings';
export { diagnoseQueue, type QueueDiagnosis } from './diagnose';
export { DEFAULT_LEASE_GRACE_MS, type DoctorOptions } from './options';
export { nothingLeft, runDoctor, type DoctorReport, type SkippedQueue } from './run-doctor';
export { discoverQueues } from './discover';
export { queueHasKeys } from './key-scan';
export { NOT_CHECKABLE } from './unchecked';
