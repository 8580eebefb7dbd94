import { JobControlSurface } from './job-control-surface';

/** QueueService's schedules: upsert, remove and list cron and interval schedulers. */
export abstract class ScheduleSurface extends JobControlSurface {}
