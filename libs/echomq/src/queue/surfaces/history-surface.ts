import { FlowSurface } from './flow-surface';

/** QueueService's reads of what happened: recently completed jobs (from the event stream). */
export abstract class HistorySurface extends FlowSurface {}
