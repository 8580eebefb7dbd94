import type { RedisConnections } from '../connection/redis-connections';
import { describeValue, InvalidArgumentError } from '../errors';
import type { JobView } from '../queue/job-view';
import { DEFAULT_KEY_PREFIX, queueKeys } from '../keyspace';
import { QueueEventReader } from './event-reader';
import type { QueueEventListener } from './queue-event';
import { waitForJob } from './wait-for';

/**
 * How long a reader nobody listens to (no subscriber, no wait) keeps its connection
 * before it is closed; the next subscribe or waitFor opens a new one. Long enough that
 * a steady trickle of waits reuses one reader, short enough that a process that waited
 * on many queues once does not hold a connection per queue for good.
 */
export const READER_IDLE_MS = 30_000;

interface Slot {
  readonly started: Promise<QueueEventReader>;
  idle?: NodeJS.Timeout;
}

/**
 * The event readers of one application, one per queue that someone listens to: started
 * on first use, shared by every subscriber and wait of that queue, closed after
 * READER_IDLE_MS without interest. QueueService delegates its event methods here.
 */
export class QueueEventReaders {
  private readonly slots = new Map<string, Slot>();

  constructor(
    private readonly connections: RedisConnections,
    private readonly idleMs = READER_IDLE_MS,
    /** The module's keyPrefix: whose streams these readers read. */
    private readonly keyPrefix = DEFAULT_KEY_PREFIX,
  ) {}

  /**
   * Calls listener with every event of the queue from now on; returns the function that
   * unsubscribes. A listener that is not a function is refused (InvalidArgumentError) before
   * a reader is started: taken, it would fail on every event, far from the mistake.
   */
  async subscribe(queue: string, listener: QueueEventListener): Promise<() => void> {
    if (typeof listener !== 'function') {
      throw new InvalidArgumentError(`listener must be a function, got ${describeValue(listener)}`);
    }
    const reader = await this.reader(queue);
    const unsubscribe = reader.subscribe(listener);
    return () => {
      unsubscribe();
      this.released(queue, reader);
    };
  }

  /** Waits for one job (see waitForJob); the wait keeps its queue's reader open. */
  async waitFor(
    queue: string,
    id: string,
    timeoutMs: number,
    readView: () => Promise<JobView | undefined>,
  ): Promise<unknown> {
    const reader = await this.reader(queue);
    try {
      return await waitForJob(reader, id, timeoutMs, readView);
    } finally {
      this.released(queue, reader);
    }
  }

  /**
   * The queue's running reader, started if there is none. The caller takes its interest
   * (subscribe, watch) in the same tick the promise resolves, before any idle timer can fire.
   */
  async reader(queue: string): Promise<QueueEventReader> {
    for (;;) {
      let slot = this.slots.get(queue);
      if (!slot) {
        const started = QueueEventReader.start(this.connections, queueKeys(queue, this.keyPrefix));
        slot = { started };
        this.slots.set(queue, slot);
        const mine = slot;
        started.catch(() => this.forget(queue, mine));
      }
      const reader = await slot.started;
      if (!reader.stopped) return reader;
      this.forget(queue, slot); // stopped by shutdown meanwhile: start afresh
    }
  }

  /** How many readers (each with its own connection) are running. */
  readerCount(): number {
    return this.slots.size;
  }

  /** Stops every reader and waits for their read loops to end (application shutdown). */
  async stopAll(): Promise<void> {
    const slots = [...this.slots.values()];
    this.slots.clear();
    const readers = await Promise.all(slots.map((slot) => slot.started.catch(() => undefined)));
    for (const slot of slots) clearTimeout(slot.idle);
    const running = readers.filter((reader): reader is QueueEventReader => reader !== undefined);
    for (const reader of running) reader.stop();
    await Promise.all(running.map((reader) => reader.closed));
  }

  /** Some interest ended: when none is left, the reader is closed after the idle period. */
  private released(queue: string, reader: QueueEventReader): void {
    const slot = this.slots.get(queue);
    if (!slot || reader.stopped || reader.interest() > 0) return;
    clearTimeout(slot.idle); // the idle period counts from the last interest that ended
    slot.idle = setTimeout(() => {
      if (this.slots.get(queue) !== slot || reader.interest() > 0) return;
      this.slots.delete(queue);
      reader.stop();
    }, this.idleMs);
    slot.idle.unref();
  }

  private forget(queue: string, slot: Slot): void {
    if (this.slots.get(queue) === slot) this.slots.delete(queue);
  }
}
