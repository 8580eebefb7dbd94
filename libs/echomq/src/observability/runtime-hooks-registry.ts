import { Injectable, Logger } from '@nestjs/common';
import type { ClaimedJobRecord } from '../scripts/claim';
import type { RuntimeHooks, SettledOutcome, SettleVerb } from './runtime-hooks';

type Around = <T>(run: () => Promise<T>, hooks: RuntimeHooks) => Promise<T> | undefined;

/**
 * The observers of this process's worker runtime (EchoMqMetrics, EchoMqTracing register
 * themselves here), composed into one RuntimeHooks the claim loops call. Observers may
 * register at any time before or after the loops start: each call reads the current list.
 * An observer that throws is logged once per call and skipped; a wrapper that throws before
 * calling `run` is skipped too, so the handler and the settlement always run exactly once.
 */
@Injectable()
export class RuntimeHooksRegistry implements Required<RuntimeHooks> {
  private readonly observers: RuntimeHooks[] = [];
  private readonly logger = new Logger('EchoMQ:observability');

  register(hooks: RuntimeHooks): void {
    this.observers.push(hooks);
  }

  claimed(
    queue: string,
    jobs: readonly ClaimedJobRecord[],
    roundTripMs: number,
    sentAtEpochMs: number,
  ): void {
    this.each('claimed', (hooks) => hooks.claimed?.(queue, jobs, roundTripMs, sentAtEpochMs));
  }

  settled(queue: string, record: ClaimedJobRecord, outcome: SettledOutcome, handlerMs?: number): void {
    this.each('settled', (hooks) => hooks.settled?.(queue, record, outcome, handlerMs));
  }

  reaped(queue: string, toPending: number, toDead: number): void {
    this.each('reaped', (hooks) => hooks.reaped?.(queue, toPending, toDead));
  }

  aroundHandler<T>(queue: string, record: ClaimedJobRecord, run: () => Promise<T>): Promise<T> {
    return this.nest('aroundHandler', run, (inner, hooks) => hooks.aroundHandler?.(queue, record, inner));
  }

  aroundSettle<T>(
    queue: string,
    record: ClaimedJobRecord,
    verb: SettleVerb,
    run: () => Promise<T>,
  ): Promise<T> {
    return this.nest('aroundSettle', run, (inner, hooks) => hooks.aroundSettle?.(queue, record, verb, inner));
  }

  private each(name: string, call: (hooks: RuntimeHooks) => void): void {
    for (const hooks of this.observers) {
      try {
        call(hooks);
      } catch (error) {
        this.failed(name, error);
      }
    }
  }

  /** The wrappers nested, first registered outermost, around `run`, which runs exactly once. */
  private nest<T>(name: string, run: () => Promise<T>, wrap: Around): Promise<T> {
    let inner = run;
    for (const hooks of [...this.observers].reverse()) {
      const next = inner;
      inner = () => {
        let started: Promise<T> | undefined;
        const once = (): Promise<T> => (started ??= next());
        try {
          const wrapped = wrap(once, hooks);
          if (wrapped !== undefined) return wrapped;
        } catch (error) {
          this.failed(name, error);
        }
        // No wrapper, or one that threw: the rest runs unwrapped (or goes on, if it started).
        return started ?? next();
      };
    }
    return inner();
  }

  private failed(name: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.logger.error(`A ${name} observer threw: ${message}`);
  }
}
