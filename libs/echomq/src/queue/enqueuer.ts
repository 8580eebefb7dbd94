import { InvalidArgumentError, PayloadTooLargeError } from '../errors';
import { NodeLeaseLostError, type JobId } from '../ids';
import type { ResolvedModuleSettings } from '../module/echomq-options';
import { JOB_ID_READY_TIMEOUT_MS, type JobIdMinter } from '../module/tokens';
import type { DurableScriptContext } from '../durability/durable-context';
import { durableEnqueue } from '../durability/durable-enqueue';
import type { EnqueueOutcome } from '../scripts';
import { enqueueKeyed, type KeyedEnqueueResult } from '../scripts/enqueue-keyed';
import { ENQUEUE_CALL_MAX_BYTES } from '../scripts/limits';
import { repeatUntilKnown, type RepeatOptions } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { checkJobData } from './check-job-data';
import { isKeyed, keyedRuleOf, type EnqueueResult } from './dedupe-options';
import { EnqueueBatcher, payloadBytes } from './enqueue-batcher';
import { buildJobRecord, type JobToEnqueue } from './enqueue-options';
import { checkBatch, itemNames, outcomeOf, type EnqueueGroup } from './enqueue-batch';
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
   * One batch, spread over one or several queues (a partitioned queue's partitions): `groups`
   * say which items go where and the partition tag their ids carry. Every item is checked and
   * every record built, and every queue registered, before anything is sent, so bad input (or
   * a refused registration) writes nothing anywhere; then each group is one all-or-nothing
   * script call, sent concurrently. At most ENQUEUE_MANY_MAX jobs, and ENQUEUE_CALL_MAX_BYTES of
   * payload per group. Ids come back in input order. With tracing on, the whole call is one
   * publish span of the queue, by its own name even when a partition was named.
   */
  async enqueueMany<T>(
    queue: string,
    jobs: readonly JobToEnqueue<T>[],
    groups: readonly EnqueueGroup[],
  ): Promise<JobId[]> {
    const tracing = this.tracing;
    const logical = logicalQueueOf(queue);
    // (an empty call, or one refused for not being an array, is no publish)
    const outcomes =
      tracing && jobs instanceof Array && jobs.length > 0
        ? await tracing.publish(
            logical,
            jobs.length,
            (stamp) => this.spread(logical, jobs, groups, stamp),
            (done) => done.flat().map((outcome) => ({ id: outcome.id, outcome: outcomeOf(outcome) })),
          )
        : await this.spread(logical, jobs, groups);
    const ids = new Array<JobId>(jobs.length);
    groups.forEach(({ items }, group) =>
      items.forEach((item, at) => (ids[item] = outcomes[group][at].id as JobId)),
    );
    return ids;
  }

  private async spread<T>(
    queue: string,
    jobs: readonly JobToEnqueue<T>[],
    groups: readonly EnqueueGroup[],
    stamp?: StampTrace,
  ): Promise<EnqueueOutcome[][]> {
    checkBatch(jobs);
    // The whole batch at once, so a refusal names the item by its place in the caller's batch.
    await this.checkData(queue, jobs);
    const prepared = [];
    for (const group of groups) {
      const items = group.items.map((index) => jobs[index]);
      prepared.push({
        ctx: group.ctx,
        records: await this.prepare(items, itemNames(jobs.length, group.items), group.tag),
      });
    }
    // Every queue is registered before any is written to: a refusal (a newer data format, an
    // old Redis) leaves no group of the batch written.
    const written = prepared.filter(({ records }) => records.length > 0);
    await Promise.all(written.map(({ ctx }) => this.registerIfDue(ctx.keys.queue)));
    return Promise.all(prepared.map(({ ctx, records }) => this.send(ctx, records, stamp)));
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
    const keyed = isKeyed(job);
    if (!keyed) checkBatch([job]);
    const rule = keyed ? keyedRuleOf(job) : undefined;
    if (keyed && !rule) throw new InvalidArgumentError('A keyed job has a debounce or a throttle');
    await this.checkData(logicalQueueOf(ctx.keys.queue), [job]);
    if (!rule) {
      const records = await this.prepare([job], [''], tag);
      await this.registerIfDue(ctx.keys.queue);
      const [outcome] = await this.send(ctx, records, stamp);
      return { id: outcome.id as JobId, outcome: outcomeOf(outcome) };
    }
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

  /** Checks the jobs' data against the (logical) queue's schema, if it has one; nothing is sent. */
  private async checkData<T>(queue: string, jobs: readonly JobToEnqueue<T>[]): Promise<void> {
    const schema = this.definitions.get(queue)?.schemas.data;
    if (schema) await checkJobData(queue, schema, jobs);
  }

  /**
   * Mints a group's ids (carrying `tag`) and builds their records, checking every option;
   * nothing is sent. `names` name each item in a refusal (jobs[3].lane ...).
   */
  private async prepare<T>(
    jobs: readonly JobToEnqueue<T>[],
    names: readonly string[],
    tag: number | undefined,
  ): Promise<NewJobRecord[]> {
    if (jobs.length === 0) return [];
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

  /** Hands the records to the queue's batcher (one merged script call); the queue is registered already. */
  private async send(
    ctx: DurableScriptContext,
    records: readonly NewJobRecord[],
    stamp?: StampTrace,
  ): Promise<EnqueueOutcome[]> {
    if (records.length === 0) return [];
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
