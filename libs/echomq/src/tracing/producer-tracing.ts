import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { OtelApi } from './otel-api';
import { ATTR, exceptionOf, messageOf, operationAttributes, TRACER_NAME } from './span-attributes';
import { injectedCarrier } from './trace-carrier';

/**
 * Gives one job of a publish its trace context (the text for its row's 'tc'), once its id is
 * minted; undefined when there is none to carry.
 */
export type StampTrace = (id: string, lane: string | undefined) => string | undefined;

/**
 * The producer's spans (docs/tracing.md). One enqueue call is one `<queue> publish` PRODUCER
 * span, a child of the caller's active span, and each job carries a creation context:
 * - one job: the publish span itself (its `messaging.message.id` is the job's id);
 * - several (enqueueMany): a `<queue> create` PRODUCER span per job, a child of the publish
 *   span, so each job's consumer spans point at a span that names that job.
 * The enqueue runs inside the publish span's context, so spans a Redis instrumentation makes
 * for its commands are the publish span's children.
 */
export class ProducerTracing {
  private readonly tracer: Tracer;

  constructor(private readonly api: OtelApi) {
    this.tracer = api.trace.getTracer(TRACER_NAME);
  }

  /**
   * Runs `send` (an enqueue of `jobs` jobs to `queue`) in its publish span, ended when `send`
   * settles: with an error status and the exception when it rejects; with `outcome` of its
   * result (created, matched, replaced) as an attribute when given.
   */
  async publish<R>(
    queue: string,
    jobs: number,
    send: (stamp: StampTrace) => Promise<R>,
    outcome?: (result: R) => string | undefined,
  ): Promise<R> {
    const { api } = this;
    const span = this.tracer.startSpan(`${queue} publish`, {
      kind: api.SpanKind.PRODUCER,
      attributes: {
        ...operationAttributes(queue, 'send', 'publish'),
        ...(jobs > 1 ? { [ATTR.batchCount]: jobs } : {}),
      },
    });
    const context = api.trace.setSpan(api.context.active(), span);
    const stamp: StampTrace = (id, lane) =>
      jobs > 1 ? this.created(queue, context, id, lane) : this.published(span, context, id, lane);
    try {
      const result = await api.context.with(context, () => send(stamp));
      const described = outcome?.(result);
      if (described !== undefined) span.setAttribute(ATTR.enqueueOutcome, described);
      return result;
    } catch (error) {
      span.recordException(exceptionOf(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: messageOf(error) });
      throw error;
    } finally {
      span.end();
    }
  }

  /** One job: the publish span is its creation context. */
  private published(span: Span, context: Context, id: string, lane: string | undefined): string | undefined {
    span.setAttribute(ATTR.messageId, id);
    if (lane !== undefined) span.setAttribute(ATTR.lane, lane);
    return injectedCarrier(this.api, context);
  }

  /** One job of several: a create span of its own, ended at once, is its creation context. */
  private created(queue: string, parent: Context, id: string, lane: string | undefined): string | undefined {
    const { api } = this;
    const span = this.tracer.startSpan(
      `${queue} create`,
      {
        kind: api.SpanKind.PRODUCER,
        attributes: {
          ...operationAttributes(queue, 'create', 'create'),
          [ATTR.messageId]: id,
          ...(lane === undefined ? {} : { [ATTR.lane]: lane }),
        },
      },
      parent,
    );
    span.end();
    return injectedCarrier(api, api.trace.setSpan(parent, span));
  }
}
