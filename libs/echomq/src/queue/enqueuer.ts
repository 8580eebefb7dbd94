import { InvalidArgumentError, PayloadTooLargeError } from '../errors';
import { NodeLeaseLostError, type JobId } from '../ids';
import type { ResolvedModuleSettings } from '../module/echomq-options';
import { JOB_ID_READY_TIMEOUT_MS, type JobIdMinter } from '../module/tokens';
import type { DurableScriptContext } from '../durability/durable-context';
import { durableEnqueue } from '../durability/durable-enqueue';
import type { EnqueueOutcome } from '../scripts';
import { enqueueKeyed, type KeyedEnqueueResult } from '../scripts/enqueue-keyed';
import { ENQUEUE_CALL_MAX_BYTES, ENQUEUE_MANY_MAX } from '../scripts/limits';
import { repeatUntilKnown, type RepeatOptions } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { checkJobData } from './check-job-data';
import { isKeyed, keyedRuleOf, type EnqueueResult } from './dedupe-options';
import { EnqueueBatcher, payloadBytes } from './enqueue-batcher';
import { buildJobRecord, checkEnqueueItem, type JobToEnqueue } from './enqueue-options';
import type { QueueDefinitions } from './queue-definitions';
import { DEFAULT_LANE } from '../keyspace';
import type { NewJobRecord } from '../scripts';
import { producerTracing, type ProducerTracing, type StampTrace } from '../tracing/producer-tracing';

/** The record with its producer's trace context, when there is one to carry. */
function traced(record: NewJobRecord, stamp: StampTrace | undefined): NewJobRecord {
  if (!stamp) return record;
  const traceContext = stamp(record.id, record.lane ?? DEFAULT_LANE);
  return traceContext === undefined ? record : { ...record, traceContext };
}

/**
 * QueueService's enqueue path: checks a batch (its size, the queue's data schema, every
 * option), mints the ids, registers the queue when it is due, and hands the records to the
 * queue's batcher, which merges concurrent callers into one script call. With durable
 * writes (the context's `durability`), a call resolves only once WAIT confirmed it. With
 * tracing on (module option `tracing`), each call is a publish span and each job carries its
 * creation context on its row (tracing/producer-tracing.ts); off, a call costs one branch more.
 */
export class Enqueuer {
  private readonly batchers = new Map<string, EnqueueBatcher>();
  private readonly tracing?: ProducerTracing;

  constructor(
    private readonly settings: ResolvedModuleSettings,
    private readonly minter: JobIdMinter,
    private readonly definitions: QueueDefinitions,
    /** Registers the queue when this process has not lately (QueueRegistration.needed). */
    private readonly registerIfDue: (queue: string) => Promise<void>,
  ) {
    if (settings.tracing) this.tracing = producerTracing();
  }

  /**
   * Every job in one script call, all or nothing; ids in input order. At most ENQUEUE_MANY_MAX
   * jobs and ENQUEUE_CALL_MAX_BYTES of payload: one script call blocks Redis while it runs, so
   * a larger batch is refused before anything is sent.
   */
  async enqueueMany<T>(ctx: DurableScriptContext, jobs: readonly JobToEnqueue<T>[]): Promise<JobId[]> {
    const tracing = this.tracing;
    // (an empty call, or one refused for not being an array, is no publish)
    const outcomes =
      tracing && jobs instanceof Array && jobs.length > 0
        ? await tracing.publish(
            ctx.keys.queue,
            jobs.length,
            (stamp) => this.enqueueOutcomes(ctx, jobs, stamp),
            (done) => done.map((outcome) => ({ id: outcome.id, outcome: outcomeOf(outcome) })),
          )
        : await this.enqueueOutcomes(ctx, jobs);
    return outcomes.map((outcome) => outcome.id as JobId);
  }

  /**
   * One job, with what its enqueue did. A debounce or throttle job goes alone through the
   * keyed enqueue script (repeated under one request id while its reply is lost, for as long
   * as `repeat` says); any other job through the batcher, like enqueueMany.
   */
  async submit<T>(
    ctx: DurableScriptContext,
    job: JobToEnqueue<T>,
    repeat: RepeatOptions,
  ): Promise<EnqueueResult> {
    const tracing = this.tracing;
    if (!tracing) return this.submitOne(ctx, job, repeat);
    return tracing.publish(
      ctx.keys.queue,
      1,
      (stamp) => this.submitOne(ctx, job, repeat, stamp),
      (result) => [result],
    );
  }

  private async submitOne<T>(
    ctx: DurableScriptContext,
    job: JobToEnqueue<T>,
    repeat: RepeatOptions,
    stamp?: StampTrace,
  ): Promise<EnqueueResult> {
    if (!isKeyed(job)) {
      const [outcome] = await this.enqueueOutcomes(ctx, [job], stamp);
      return { id: outcome.id as JobId, outcome: outcomeOf(outcome) };
    }
    const rule = keyedRuleOf(job);
    if (!rule) throw new InvalidArgumentError('A keyed job has a debounce or a throttle');
    const queue = ctx.keys.queue;
    const schema = this.definitions.get(queue)?.schemas.data;
    if (schema) await checkJobData(queue, schema, [job]);
    const [id] = await this.mintIds(1);
    const built = buildJobRecord(id, job, this.settings.maxPayloadBytes);
    await this.registerIfDue(queue);
    const record = traced(built, stamp);
    const requestId = newRequestId();
    const write = (): Promise<KeyedEnqueueResult> =>
      repeatUntilKnown(() => enqueueKeyed(ctx, record, rule, job.name !== undefined, requestId), repeat);
    const result = ctx.durability ? await this.replicated(ctx, requestId, write, repeat) : await write();
    return { id: result.id as JobId, outcome: result.outcome };
  }

  /** A keyed enqueue confirmed by its replicas (see durableEnqueue); else it rejects naming its job. */
  private replicated(
    ctx: DurableScriptContext,
    requestId: string,
    write: () => Promise<KeyedEnqueueResult>,
    repeat: RepeatOptions,
  ): Promise<KeyedEnqueueResult> {
    return durableEnqueue(ctx, ctx.durability!, requestId, write, repeat.untilMs, (written, errorFor) => {
      throw errorFor([written.id]);
    });
  }

  private async enqueueOutcomes<T>(
    ctx: DurableScriptContext,
    jobs: readonly JobToEnqueue<T>[],
    stamp?: StampTrace,
  ): Promise<EnqueueOutcome[]> {
    const queue = ctx.keys.queue;
    if (!(jobs instanceof Array) || jobs.length > ENQUEUE_MANY_MAX) {
      throw new InvalidArgumentError(
        `enqueueMany takes an array of at most ${ENQUEUE_MANY_MAX} jobs (one script call moves at most that many, ` +
          'so Redis is never blocked for more than a few milliseconds); split larger batches',
      );
    }
    if (jobs.length === 0) return [];
    // Before isKeyed or a schema reads a field of an item that may not be an object.
    jobs.forEach((job, index) => checkEnqueueItem(job, `jobs[${index}]`));
    const keyed = jobs.findIndex(isKeyed);
    if (keyed >= 0) {
      throw new InvalidArgumentError(
        `${jobs.length > 1 ? `jobs[${keyed}]: ` : ''}a job with debounce or throttle is enqueued one at a ` +
          'time (enqueue or submit), not in enqueueMany: each is one script call that may replace or ' +
          'match an existing job',
      );
    }
    const schema = this.definitions.get(queue)?.schemas.data;
    if (schema) await checkJobData(queue, schema, jobs);
    // Only the job's own maxAttempts goes on its row: this process's configuration does not
    // decide the budget of jobs that other processes serve.
    const ids = await this.mintIds(jobs.length);
    // Of several jobs, a refusal names the one to fix (jobs[3].lane ...), as the schema check does.
    const at = (index: number): string => (jobs.length > 1 ? `jobs[${index}]` : '');
    const records = jobs.map((job, index) =>
      buildJobRecord(ids[index], job, this.settings.maxPayloadBytes, at(index)),
    );
    const bytes = payloadBytes(records);
    if (bytes > ENQUEUE_CALL_MAX_BYTES) throw new PayloadTooLargeError(bytes, ENQUEUE_CALL_MAX_BYTES);
    await this.registerIfDue(queue);
    // Stamped once every check passed and just before the write: a refused call starts no span
    // per job (a create span must name a job that may exist).
    return this.batcher(ctx).submit(records.map((record) => traced(record, stamp)));
  }

  /**
   * Ids are minted only on a node number this process holds (docs/model.md, "Why ids are
   * unique"); while its lease is being confirmed or taken back, enqueue waits, boundedly.
   */
  async mintIds(count: number): Promise<JobId[]> {
    const mint = (): JobId[] => Array.from({ length: count }, () => this.minter.mint() as JobId);
    try {
      return mint();
    } catch (error) {
      if (!(error instanceof NodeLeaseLostError)) throw error;
      await this.minter.ready(JOB_ID_READY_TIMEOUT_MS);
      return mint();
    }
  }

  private batcher(ctx: DurableScriptContext): EnqueueBatcher {
    let batcher = this.batchers.get(ctx.keys.queue);
    if (!batcher) {
      // Repeats of a lost enqueue reply stay well inside the window in which scripts remember it.
      batcher = new EnqueueBatcher(ctx, this.settings.idempotencyTtlMs, this.settings.replayWindowMs / 2);
      this.batchers.set(ctx.keys.queue, batcher);
    }
    return batcher;
  }
}

function outcomeOf(outcome: EnqueueOutcome): 'created' | 'matched' {
  return outcome.created ? 'created' : 'matched';
}
