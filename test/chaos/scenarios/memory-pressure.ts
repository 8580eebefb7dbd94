import { Redis } from 'ioredis';
import { scenario } from '../scenario';
import { bookOf, readLedger, type LedgerLine } from '../support/ledger';
import { openInspector } from '../support/inspector';
import { childLogLines, memoryFigures, roomAgain, startSmallRedis } from '../support/memory-redis';
import { producerChild, producerFinished, workerChild, type ChildHandle } from '../support/processes';
import { basicPromises, judge, outcomeFigures, settle } from '../support/verdict';

const QUEUE = 'chaos-memory';
const OUT_OF_MEMORY = 'REDIS_OUT_OF_MEMORY';
/**
 * Codes an enqueue may also meet here and still keep every promise: a command deadline passed
 * while Redis or the producer was busy (OUTCOME_UNKNOWN: the call may have run; REDIS_UNAVAILABLE:
 * it was never sent). The producer repeats the call under the same idempotency key, which
 * returns the first call's job if it ran, so neither can lose or double a job. Any other code
 * (an untyped OOM reply, an internal error) is a broken promise.
 */
const TRANSIENT = new Set(['OUTCOME_UNKNOWN', 'REDIS_UNAVAILABLE']);
/** The shortest replay window the default command deadline (5 s) allows. */
const REPLAY_WINDOW_MS = 10_000;
const IDEMPOTENCY_TTL_MS = 5_000;

/**
 * Scenario 8: a Redis with a small maxmemory and noeviction, and a producer that enqueues far
 * more than fits, as fast as it can. Once Redis is full, enqueue is refused with
 * REDIS_OUT_OF_MEMORY having written nothing, and the producer tries the same idempotency key
 * again; workers, started only then (so they boot on a full Redis), drain the queue, which
 * frees room, and the refused jobs go in. Completed rows are deleted (not retained), the event
 * stream is short and idempotency keys live 10 s, so processing frees more than it takes.
 */
export const memoryPressure = scenario({
  name: 'memory-pressure',
  summary:
    'a producer fills a Redis with a small maxmemory (noeviction) past full: enqueue is refused with REDIS_OUT_OF_MEMORY, nothing accepted is lost, workers drain it and enqueue works again',
  params: {
    jobs: { full: 100_000, quick: 15_000, doc: 'jobs enqueued, many more than fit at once' },
    maxmemoryMb: { full: 16, quick: 6, doc: "the Redis's maxmemory (MB)" },
    payloadBytes: { full: 400, quick: 400, doc: 'padding in each job payload' },
    workers: { full: 3, quick: 2, doc: 'worker processes, started once enqueue was first refused' },
    workMs: { full: 2, quick: 1, doc: 'each handler sleeps this long' },
  },
  async run({ params, workDir, log }) {
    const maxmemory = params.maxmemoryMb * 1024 * 1024;
    const redis = await startSmallRedis(maxmemory);
    const admin = new Redis(redis.url);
    const connection = { url: redis.url };
    const inspector = await openInspector(connection);
    // Bookkeeping that outlives its job takes room too: each write call's reply record (kept
    // replayWindowMs), each idempotency key (idempotencyTtlMs), the event stream (eventsMaxLen).
    // Kept short here so that the backlog is what fills Redis, and processing is what frees it.
    const module = {
      eventsMaxLen: 1_000,
      replayWindowMs: REPLAY_WINDOW_MS,
      idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
      reaper: { intervalMs: 250 },
    };
    const workers: ChildHandle[] = [];
    let producer: ChildHandle | undefined;
    try {
      producer = producerChild({
        connection,
        queue: QUEUE,
        ledgerDir: workDir,
        count: params.jobs,
        inFlight: 50,
        perSecond: 0,
        job: { name: 'work', data: { ms: params.workMs, pad: 'x'.repeat(params.payloadBytes) } },
        idempotencyPrefix: 'm1',
        retryDelayMs: 50,
        module,
      });
      const handle = producer;
      const refused = new Promise<void>((resolve) =>
        handle.onMessage((message) => {
          if (message.type === 'progress' && message.failed > 0) resolve();
        }),
      );
      await producer.start();
      const produced = producerFinished(producer);
      const filled = await Promise.race([refused.then(() => true), produced.then(() => false)]);
      const atFull = await memoryFigures(admin);
      log(
        `${filled ? 'Redis full' : 'never full'} at ${atFull.used} bytes; starting ${params.workers} workers`,
      );
      const fullAt = Date.now();
      for (let i = 0; i < params.workers; i++) {
        workers.push(
          workerChild({
            connection,
            queue: QUEUE,
            ledgerDir: workDir,
            concurrency: 20,
            leaseMs: 5_000,
            maxAttempts: 1_000,
            // Processing must free room: a kept row would hold most of what its job took.
            retainCompletedMs: 0,
            module,
          }),
        );
      }
      await Promise.all(workers.map((worker) => worker.start()));
      const { acked } = await produced;
      log(`producer acknowledged ${acked} jobs`);
      const final = await settle(inspector.queues, QUEUE, 120_000);
      const drainedMs = Date.now() - fullAt;
      // The last reply records and idempotency keys expire within their TTLs of the drain.
      const room = await roomAgain(admin, maxmemory, REPLAY_WINDOW_MS + IDEMPOTENCY_TTL_MS + 5_000);
      const end = await memoryFigures(admin);
      const workersExited = workers.filter((worker) => !worker.running).length;
      await Promise.all(workers.map((worker) => worker.kill('SIGTERM')));

      const lines = readLedger(workDir);
      const book = bookOf(lines);
      const outcome = await judge(book, inspector.queues, QUEUE);
      const refusedOOM = book.failures.get(OUT_OF_MEMORY) ?? 0;
      const transient = [...TRANSIENT].reduce((sum, code) => sum + (book.failures.get(code) ?? 0), 0);
      const others = [...book.failures].filter(([code]) => code !== OUT_OF_MEMORY && !TRANSIENT.has(code));
      const ackedAfterFull = acksAfterFirstRefusal(lines);

      const broken = basicPromises(outcome);
      if (!filled || refusedOOM === 0)
        broken.push('Redis never filled up: raise jobs or lower maxmemoryMb, the run tested nothing');
      if (!final.settled) broken.push('the queue did not settle');
      if (outcome.acked !== params.jobs) broken.push(`${outcome.acked} of ${params.jobs} jobs acknowledged`);
      if (ackedAfterFull === 0) broken.push('no enqueue succeeded after the first refusal');
      for (const [code, count] of others) broken.push(`${count} enqueues failed with ${code}`);
      if (room.afterMs === undefined)
        broken.push(`Redis still full after the drain (${end.used} bytes used)`);
      if (workersExited > 0) broken.push(`${workersExited} worker processes exited`);
      return {
        figures: {
          jobs: params.jobs,
          maxmemory,
          ...outcomeFigures(outcome),
          refusedOOM,
          transient,
          otherFailures: others.reduce((sum, [, count]) => sum + count, 0),
          ackedAfterFull,
          usedAtFull: atFull.used,
          usedMemoryPeak: end.peak,
          usedAtEnd: end.used,
          roomAfterDrainMs: room.afterMs ?? '-',
          fullNotices: childLogLines(workDir, 'Redis is full').length,
          drainedMs,
        },
        broken,
      };
    } finally {
      await producer?.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.kill('SIGKILL')));
      await inspector.close();
      admin.disconnect();
      await redis.destroy();
    }
  },
});

/** Acks written after the first REDIS_OUT_OF_MEMORY refusal (the producer's own clock, one process). */
function acksAfterFirstRefusal(lines: readonly LedgerLine[]): number {
  const refusals = lines.filter((line) => line.kind === 'fail' && line.code === OUT_OF_MEMORY);
  if (refusals.length === 0) return 0;
  const first = Math.min(...refusals.map((line) => line.at));
  return lines.filter((line) => line.kind === 'ack' && line.at > first).length;
}
