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
import { DEFAULT_LANE, logicalQueueOf } from '../keyspace';
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
  async enqueueMany<T>(
    ctx: DurableScriptContext,
    jobs: readonly JobToEnqueue<T>[],
    tag?: number,
  ): Promise<JobId[]> {
    const items = jobs instanceof Array ? jobs.map((_, index) => index) : [];
    const [ids] = await this.enqueueSpread(ctx.keys.queue, jobs, [{ ctx, tag, items }]);
    return ids ?? [];
  }

  /**
   * One batch spread over several queues (a partitioned queue's partitions): `groups` say which
   * items go where and the partition tag their ids carry. Every item is checked and every
   * record built before anything is sent, so bad input writes nothing anywhere; then each
   * group is one all-or-nothing script call, sent concurrently. Ids come back per group, in
   * the order of its items. With tracing on, the whole call is one publish span of `queue`.
   */
  async enqueueSpread<T>(
    queue: string,
    jobs: readonly JobToEnqueue<T>[],
    groups: readonly EnqueueGroup[],
  ): Promise<JobId[][]> {
    const tracing = this.tracing;
    // (an empty call, or one refused for not being an array, is no publish)
    const outcomes =
      tracing && jobs instanceof Array && jobs.length > 0
        ? await tracing.publish(
            queue,
            jobs.length,
            (stamp) => this.spread(jobs, groups, stamp),
            (done) => done.flat().map((outcome) => ({ id: outcome.id, outcome: outcomeOf(outcome) })),
          )
        : await this.spread(jobs, groups);
    return outcomes.map((group) => group.map((outcome) => outcome.id as JobId));
  }

  private async spread<T>(
    jobs: readonly JobToEnqueue<T>[],
    groups: readonly EnqueueGroup[],
    stamp?: StampTrace,
  ): Promise<EnqueueOutcome[][]> {
    checkBatch(jobs);
    const prepared = [];
    for (const group of groups) {
      const items = group.items.map((index) => jobs[index]);
      const names = group.items.map((index) => (jobs.length > 1 ? `jobs[${index}]` : ''));
      prepared.push({ group, records: await this.prepare(group.ctx, items, names, group.tag) });
    }
    return Promise.all(prepared.map(({ group, records }) => this.send(group.ctx, records, stamp)));
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
    tag?: number,
  ): Promise<EnqueueResult> {
    const tracing = this.tracing;
    if (!tracing) return this.submitOne(ctx, job, repeat, tag);
    return tracing.publish(
      logicalQueueOf(ctx.keys.queue),
      1,
      (stamp) => this.submitOne(ctx, job, repeat, tag, stamp),
      (result) => [result],
    );
  }

  private async submitOne<T>(
    ctx: DurableScriptContext,
    job: JobToEnqueue<T>,
    repeat: RepeatOptions,
    tag: number | undefined,
    stamp?: StampTrace,
  ): Promise<EnqueueResult> {
    if (!isKeyed(job)) {
      checkBatch([job]);
      const records = await this.prepare(ctx, [job], [''], tag);
      const [outcome] = await this.send(ctx, records, stamp);
      return { id: outcome.id as JobId, outcome: outcomeOf(outcome) };
    }
    const rule = keyedRuleOf(job);
    if (!rule) throw new InvalidArgumentError('A keyed job has a debounce or a throttle');
    const queue = logicalQueueOf(ctx.keys.queue);
    const schema = this.definitions.get(queue)?.schemas.data;
    if (schema) await checkJobData(queue, schema, [job]);
    const [id] = await this.mintIds(1, tag);
    const built = buildJobRecord(id, job, this.settings.maxPayloadBytes);
    await this.registerIfDue(ctx.keys.queue);
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

  /**
   * Checks a group's items (the queue's data schema, every option), mints their ids (carrying
   * `tag`) and builds their records; nothing is sent but the queue's registration when due.
   * `names` name each item in a refusal (jobs[3].lane ...), as the schema check does.
   */
  private async prepare<T>(
    ctx: DurableScriptContext,
    jobs: readonly JobToEnqueue<T>[],
    names: readonly string[],
    tag: number | undefined,
  ): Promise<NewJobRecord[]> {
    if (jobs.length === 0) return [];
    const queue = logicalQueueOf(ctx.keys.queue);
    const schema = this.definitions.get(queue)?.schemas.data;
    if (schema) await checkJobData(queue, schema, jobs);
    // Only the job's own maxAttempts goes on its row: this process's configuration does not
    // decide the budget of jobs that other processes serve.
    const ids = await this.mintIds(jobs.length, tag);
    const records = jobs.map((job, index) =>
      buildJobRecord(ids[index], job, this.settings.maxPayloadBytes, names[index]),
    );
    const bytes = payloadBytes(records);
    if (bytes > ENQUEUE_CALL_MAX_BYTES) throw new PayloadTooLargeError(bytes, ENQUEUE_CALL_MAX_BYTES);
    return records;
  }

  /** Registers the queue when due and hands the records to its batcher (one merged script call). */
  private async send(
    ctx: DurableScriptContext,
    records: readonly NewJobRecord[],
    stamp?: StampTrace,
  ): Promise<EnqueueOutcome[]> {
    if (records.length === 0) return [];
    await this.registerIfDue(ctx.keys.queue);
    // Stamped once every check passed and just before the write: a refused call starts no span
    // per job (a create span must name a job that may exist).
    return this.batcher(ctx).submit(records.map((record) => traced(record, stamp)));
  }

  /**
   * Ids are minted only on a node number this process holds (docs/model.md, "Why ids are
   * unique"); while its lease is being confirmed or taken back, enqueue waits, boundedly.
   */
  async mintIds(count: number, tag?: number): Promise<JobId[]> {
    const mint = (): JobId[] => Array.from({ length: count }, () => this.minter.mint(tag) as JobId);
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

/** Where some items of a batch go: the queue's context and the partition tag their ids carry. */
export interface EnqueueGroup {
  readonly ctx: DurableScriptContext;
  readonly tag?: number;
  /** Indices into the batch, in the order their ids come back. */
  readonly items: readonly number[];
}

/**
 * What a batch must be before any item is looked at: an array of at most ENQUEUE_MANY_MAX
 * objects, none of them keyed (those go one at a time, through submit).
 */
function checkBatch<T>(jobs: readonly JobToEnqueue<T>[]): void {
  if (!(jobs instanceof Array) || jobs.length > ENQUEUE_MANY_MAX) {
    throw new InvalidArgumentError(
      `enqueueMany takes an array of at most ${ENQUEUE_MANY_MAX} jobs (one script call moves at most that many, ` +
        'so Redis is never blocked for more than a few milliseconds); split larger batches',
    );
  }
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
}

function outcomeOf(outcome: EnqueueOutcome): 'created' | 'matched' {
  return outcome.created ? 'created' : 'matched';
}
