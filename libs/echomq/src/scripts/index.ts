export * from './registry';
export * from './context';
export * from './enqueue';
export * from './claim';
export * from './extend';
export * from './complete';
export * from './fail';
export * from './release';
export * from './reap';
export * from './deadlines';
export * from './promote';
export * from './retry';
export * from './remove';
export * from './throttle';
export * from './set-limits';
export * from './lanes';
export * from './job-view';
export * from './pending-reads';
export * from './lane-reads';
export * from './progress';
export * from './limits';
export * from './request-id';
export * from './repeat';
export { BUILT_IN_MAX_ATTEMPTS } from './lua/prelude';
export * from './schedules';
// schedules
export * from './drain';
export * from './clean';
export * from './obliterate';
export * from './retry-all';
export * from './promote-job';
export * from './update-job';
export { OBLITERATED_KEYS } from './lua/obliterate.lua';
// job control
export * from './enqueue-keyed';
// dedupe
export * from './job-log';
// job log and cancellation
export * from './dead-retention';
// retention
