import type { Context, Span, Tracer } from '@opentelemetry/api';
import { requireOtelApi, type OtelApi } from './otel-api';
import { ATTR, exceptionOf, messageOf, operationAttributes, TRACER_NAME } from './span-attributes';
import { injectedCarrier } from './trace-carrier';
import { guarded, tracingFault } from './tracing-faults';

/**
 * Gives one job of a publish its trace context (the text for its row's 'tc'), once its id is
 * minted and every check passed; undefined when there is none to carry. Never throws.
 */
export type StampTrace = (id: string, lane: string | undefined) => string | undefined;

/**
 * What one job of a publish came to, from the enqueue's result: the id the caller got back
 * (an idempotency match or a debounce names the job that was there, not the id just minted)
 * and what the enqueue did (created, matched, replaced; an upsert's created, updated, unchanged).
 */
export interface PublishedJob {
  readonly id: string;
  readonly outcome: string;
}

/** A stamp that carries nothing: what a publish whose span could not be made gives its jobs. */
const UNTRACED: StampTrace = () => undefined;

/**
 * The producer's spans (docs/tracing.md). One enqueue call is one `<queue> publish` PRODUCER
 * span, a child of the caller's active span, and each job carries a creation context:
 * - one job: the publish span itself;
 * - several (enqueueMany): a `<queue> create` PRODUCER span per job, a child of the publish
 *   span, so each job's consumer spans point at a span that names that job.
 * The enqueue runs inside the publish span's context, so spans a Redis instrumentation makes
 * for its commands are the publish span's children.
 *
 * Tracing never changes what an enqueue does: every call into the SDK is guarded, so a span
 * processor or a propagator that throws costs the spans, never the write (a caller that saw a
 * written enqueue rejected would repeat it and enqueue twice).
 */
export class ProducerTracing {
  private readonly tracer: Tracer;

  constructor(private readonly api: OtelApi) {
    this.tracer = api.trace.getTracer(TRACER_NAME);
  }

  /**
   * Runs `send` (an enqueue of `jobs` jobs to `queue`) in its publish span, ended when `send`
   * settles: with an error status and the exception when it rejects; else with what each job
   * came to (`described` of the result, in the order the jobs were stamped) as its
   * `messaging.message.id` and `echomq.enqueue.outcome`. `send` resolves or rejects exactly as
   * it would untraced.
   */
  async publish<R>(
    queue: string,
    jobs: number,
    send: (stamp: StampTrace) => Promise<R>,
    described: (result: R) => readonly PublishedJob[],
  ): Promise<R> {
    const publication = guarded('a publish span (start)', () => this.start(queue, jobs), undefined);
    if (!publication) return send(UNTRACED);
    let began = false;
    let sent: Promise<R> | undefined;
    const call = (): Promise<R> => {
      began = true;
      return (sent = send(publication.stamp));
    };
    let result: R;
    try {
      let pending: Promise<R>;
      try {
        pending = this.api.context.with(publication.context, call);
      } catch (error) {
        // `send` itself threw, or the context manager failed: before `send` began, it runs
        // outside the span; after, what it started goes on.
        if (began && sent === undefined) throw error;
        if (!began) tracingFault('the context manager', error);
        pending = sent ?? call();
      }
      result = await pending;
    } catch (error) {
      publication.refused(error);
      throw error;
    }
    guarded('a publish span (end)', () => publication.done(described(result)), undefined);
    return result;
  }

  private start(queue: string, jobs: number): Publication {
    const { api } = this;
    const span = this.tracer.startSpan(`${queue} publish`, {
      kind: api.SpanKind.PRODUCER,
      attributes: {
        ...operationAttributes(queue, 'send', 'publish'),
        ...(jobs > 1 ? { [ATTR.batchCount]: jobs } : {}),
      },
    });
    return new Publication(api, this.tracer, queue, jobs > 1, span);
  }
}

/** One publish span and, for a batch, the create span of each job stamped so far. */
class Publication {
  readonly context: Context;
  private readonly creates: Span[] = [];

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
    private readonly queue: string,
    private readonly batch: boolean,
    private readonly span: Span,
  ) {
    this.context = api.trace.setSpan(api.context.active(), span);
  }

  readonly stamp: StampTrace = (id, lane) =>
    guarded(
      'a trace context for a job',
      () => (this.batch ? this.created(id, lane) : this.published(id, lane)),
      undefined,
    );

  /** The call went through: each span says what its job came to, and ends. */
  done(jobs: readonly PublishedJob[]): void {
    if (!this.batch) {
      const [job] = jobs;
      guarded('a publish span (attributes)', () => this.describe(this.span, job), undefined);
    }
    this.creates.forEach((create, index) => {
      guarded('a create span (attributes)', () => this.describe(create, jobs[index]), undefined);
      guarded('a create span (end)', () => create.end(), undefined);
    });
    this.span.end();
  }

  /**
   * The call was refused or its outcome is unknown: every span has an error status. The create
   * spans started (a refusal by a check comes before any job is stamped, so only a call that
   * reached Redis has them) end too: a job whose outcome is unknown may have been written.
   */
  refused(error: unknown): void {
    const { api } = this;
    const status = { code: api.SpanStatusCode.ERROR, message: messageOf(error) };
    for (const create of this.creates) {
      guarded('a create span (end)', () => create.setStatus(status).end(), undefined);
    }
    guarded(
      'a publish span (end)',
      () => {
        this.span.recordException(exceptionOf(error));
        this.span.setStatus(status).end();
      },
      undefined,
    );
  }

  private describe(span: Span, job: PublishedJob | undefined): void {
    if (job === undefined) return;
    span.setAttribute(ATTR.messageId, job.id);
    span.setAttribute(ATTR.enqueueOutcome, job.outcome);
  }

  /**
   * One job: the publish span is its creation context. Its id is the one minted for it until
   * the call says which job it came to (done).
   */
  private published(id: string, lane: string | undefined): string | undefined {
    this.span.setAttribute(ATTR.messageId, id);
    if (lane !== undefined) this.span.setAttribute(ATTR.lane, lane);
    return injectedCarrier(this.api, this.context);
  }

  /**
   * One job of several: a create span of its own is its creation context. It is started now,
   * for the context the row carries, and ended with the call, once the job's id and outcome
   * are known (until then its id is the one minted for it).
   */
  private created(id: string, lane: string | undefined): string | undefined {
    const { api } = this;
    const span = this.tracer.startSpan(
      `${this.queue} create`,
      {
        kind: api.SpanKind.PRODUCER,
        attributes: {
          ...operationAttributes(this.queue, 'create', 'create'),
          [ATTR.messageId]: id,
          ...(lane === undefined ? {} : { [ATTR.lane]: lane }),
        },
      },
      this.context,
    );
    this.creates.push(span);
    return injectedCarrier(api, api.trace.setSpan(this.context, span));
  }
}

let shared: ProducerTracing | undefined;

/** The process's one ProducerTracing (the API is the application's one copy), made on first use. */
export function producerTracing(): ProducerTracing {
  return (shared ??= new ProducerTracing(requireOtelApi()));
}
