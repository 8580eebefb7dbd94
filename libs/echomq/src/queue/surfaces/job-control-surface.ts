import { HistorySurface } from './history-surface';

/** QueueService's bulk and per-job controls: drain, clean, obliterate, retry all, promote, update. */
export abstract class JobControlSurface extends HistorySurface {}
