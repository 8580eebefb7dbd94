// The event reader, waitFor and the per-queue reader registry live in events/; the event
// types stay importable from here, where the public index has always taken them.
export type { QueueEvent, QueueEventListener } from '../events/queue-event';
