import { InvalidArgumentError, PayloadTooLargeError } from '../errors';
import type { JobId } from '../ids';
import type { ResolvedModuleSettings } from '../module/echomq-options';
import type { JobIdMinter } from '../module/tokens';
import type { DurableScriptContext } from '../durability/durable-context';
import type { EnqueueOutcome } from '../scripts';
import { ENQUEUE_CALL_MAX_BYTES } from '../scripts/limits';
import type { RepeatOptions } from '../scripts/repeat';
import { checkJobData } from './check-job-data';
import { isKeyed, keyedRuleOf, type EnqueueResult } from './dedupe-options';
import { EnqueueBatcher, payloadBytes, payloadBytesAtMost } from './enqueue-batcher';
import { buildJobRecord, type JobToEnqueue } from './enqueue-options';
import { checkBatch, itemPlace, outcomeOf, type EnqueueGroup } from './enqueue-batch';
import { IdMinting } from './id-minting';
import { writeKeyed } from './keyed-write';
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

/** What the enqueue path keeps per physical queue, made at its first enqueue. */
interface QueueWrites {
  readonly batcher: EnqueueBatcher;
  /** The queue's own name, for a partition the queue it belongs to: its schema and spans go by it. */
  readonly logical: string;
}

/**
 * QueueService's enqueue path: checks a batch (its size, the queue's data schema, every
 * option), mints the ids, registers the queue when it is due, and hands the records to the
 * queue's batcher, which merges concurrent callers into one script call. With durable
 * writes (the context's `durability`), a call resolves only once WAIT confirmed it. With
 * tracing on (module option `tracing`), each call is a publish span and each job carries its
 * creation context on its row (tracing/producer-tracing.ts); off, a call costs one branch more.
 *
 * A busy producer runs this once per job, so it does its work synchronously where it can: an
 * enqueue awaits only the queue's registration (a resolved promise once it is done) and the
 * script call, unless a schema checks the data or the node lease is being confirmed.
 */
export class Enqueuer {
  private readonly queues = new Map<string, QueueWrites>();
  private readonly tracing?: ProducerTracing;
  private readonly ids: IdMinting;

  constructor(
    private readonly settings: ResolvedModuleSettings,
    minter: JobIdMinter,
    private readonly definitions: QueueDefinitions,
    /** Registers the queue when this process has not lately (QueueRegistration.needed). */
    private readonly registerIfDue: (queue: string) => Promise<void>,
  ) {
    if (settings.tracing) this.tracing = producerTracing();
    this.ids = new IdMinting(minter);
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
    for (let group = 0; group < groups.length; group++) {
      const { items } = groups[group];
      for (let at = 0; at < items.length; at++) ids[items[at]] = outcomes[group][at].id as JobId;
    }
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
    const schema = this.schemaOf(queue);
    if (schema) await checkJobData(queue, schema, jobs);
    const prepared: { ctx: DurableScriptContext; records: NewJobRecord[] }[] = [];
    for (const group of groups) {
      prepared.push({ ctx: group.ctx, records: await this.prepare(jobs, group.items, group.tag) });
    }
    // Every queue is registered before any is written to: a refusal (a newer data format, an
    // old Redis) leaves no group of the batch written.
    if (prepared.length === 1) {
      if (prepared[0].records.length > 0) await this.registerIfDue(prepared[0].ctx.keys.queue);
    } else {
      const written = prepared.filter(({ records }) => records.length > 0);
      await Promise.all(written.map(({ ctx }) => this.registerIfDue(ctx.keys.queue)));
    }
    return Promise.all(prepared.map(({ ctx, records }) => this.send(ctx, records, stamp)));
  }

  /**
   * One job, with what its enqueue did. A debounce or throttle job goes alone through the
   * keyed enqueue script (repeated under one request id while its reply is lost, for as long
   * as `repeat` says, asked when that job's enqueue begins); any other job through the batcher,
   * like enqueueMany. The job's shape was checked by the caller (checkEnqueueOptions).
   */
  submit<T>(
    ctx: DurableScriptContext,
    job: JobToEnqueue<T>,
    repeat: () => RepeatOptions,
    tag?: number,
  ): Promise<EnqueueResult> {
    const tracing = this.tracing;
    if (!tracing) return isKeyed(job) ? this.keyed(ctx, job, repeat, tag) : this.one(ctx, job, tag);
    return tracing.publish(
      this.writesTo(ctx).logical,
      1,
      (stamp) => (isKeyed(job) ? this.keyed(ctx, job, repeat, tag, stamp) : this.one(ctx, job, tag, stamp)),
      (result) => [result],
    );
  }

  /** One job through the batcher: checked, minted, built, its queue registered, then merged. */
  private async one<T>(
    ctx: DurableScriptContext,
    job: JobToEnqueue<T>,
    tag: number | undefined,
    stamp?: StampTrace,
  ): Promise<EnqueueResult> {
    const writes = this.writesTo(ctx);
    const schema = this.schemaOf(writes.logical);
    if (schema) await checkJobData(writes.logical, schema, [job]);
    const id = this.ids.mintOne(tag) ?? (await this.ids.mint(1, tag))[0];
    // One job's payload is at most maxPayloadBytes, which is at most ENQUEUE_CALL_MAX_BYTES.
    const record = buildJobRecord(id, job, this.settings.maxPayloadBytes);
    await this.registerIfDue(ctx.keys.queue);
    const [outcome] = await writes.batcher.submit([traced(record, stamp)]);
    return { id: outcome.id as JobId, outcome: outcomeOf(outcome) };
  }

  private async keyed<T>(
    ctx: DurableScriptContext,
    job: JobToEnqueue<T>,
    repeatFor: () => RepeatOptions,
    tag: number | undefined,
    stamp?: StampTrace,
  ): Promise<EnqueueResult> {
    const repeat = repeatFor();
    const rule = keyedRuleOf(job);
    if (!rule) throw new InvalidArgumentError('A keyed job has a debounce or a throttle');
    const logical = this.writesTo(ctx).logical;
    const schema = this.schemaOf(logical);
    if (schema) await checkJobData(logical, schema, [job]);
    const [id] = await this.ids.mint(1, tag);
    const built = buildJobRecord(id, job, this.settings.maxPayloadBytes);
    await this.registerIfDue(ctx.keys.queue);
    return writeKeyed(ctx, traced(built, stamp), rule, job.name !== undefined, repeat);
  }

  /** The data schema of the (logical) queue, if its definition has one. */
  private schemaOf(queue: string) {
    return this.definitions.get(queue)?.schemas.data;
  }

  /**
   * Mints a group's ids (carrying `tag`) and builds the records of `jobs[items]`, checking
   * every option; nothing is sent. Refusals name an item by its index in the whole batch.
   */
  private async prepare<T>(
    jobs: readonly JobToEnqueue<T>[],
    items: readonly number[],
    tag: number | undefined,
  ): Promise<NewJobRecord[]> {
    if (items.length === 0) return [];
    // Only the job's own maxAttempts goes on its row: this process's configuration does not
    // decide the budget of jobs that other processes serve.
    const ids = await this.ids.mint(items.length, tag);
    const limit = this.settings.maxPayloadBytes;
    const records = new Array<NewJobRecord>(items.length);
    for (let at = 0; at < items.length; at++) {
      const index = items[at];
      records[at] = buildJobRecord(ids[at], jobs[index], limit, itemPlace(jobs.length, index));
    }
    // Counted exactly only when the bound says the call may be too large.
    if (payloadBytesAtMost(records) > ENQUEUE_CALL_MAX_BYTES) {
      const bytes = payloadBytes(records);
      if (bytes > ENQUEUE_CALL_MAX_BYTES) throw new PayloadTooLargeError(bytes, ENQUEUE_CALL_MAX_BYTES);
    }
    return records;
  }

  /** Hands the records to the queue's batcher (one merged script call); the queue is registered already. */
  private async send(
    ctx: DurableScriptContext,
    records: NewJobRecord[],
    stamp?: StampTrace,
  ): Promise<EnqueueOutcome[]> {
    if (records.length === 0) return [];
    // Stamped once every check passed and just before the write: a refused call starts no span
    // per job (a create span must name a job that may exist).
    return this.writesTo(ctx).batcher.submit(
      stamp ? records.map((record) => traced(record, stamp)) : records,
    );
  }

  /**
   * Ids are minted only on a node number this process holds (docs/model.md, "Why ids are
   * unique"); while its lease is being confirmed or taken back, enqueue waits, boundedly.
   */
  mintIds(count: number, tag?: number): Promise<JobId[]> {
    return this.ids.mint(count, tag);
  }

  private writesTo(ctx: DurableScriptContext): QueueWrites {
    let writes = this.queues.get(ctx.keys.queue);
    if (!writes) {
      writes = {
        // Repeats of a lost enqueue reply stay well inside the window in which scripts remember it.
        batcher: new EnqueueBatcher(ctx, this.settings.idempotencyTtlMs, this.settings.replayWindowMs / 2),
        logical: logicalQueueOf(ctx.keys.queue),
      };
      this.queues.set(ctx.keys.queue, writes);
    }
    return writes;
  }
}
