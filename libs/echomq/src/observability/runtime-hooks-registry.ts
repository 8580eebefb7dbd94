import { Injectable, Logger } from '@nestjs/common';
import type { ClaimedJobRecord } from '../scripts/claim';
import type { RuntimeHooks, SettledOutcome, SettleVerb } from './runtime-hooks';

type Around = <T>(run: () => Promise<T>, hooks: RuntimeHooks) => Promise<T> | undefined;

/**
 * The observers of this process's worker runtime (EchoMqMetrics, EchoMqTracing register
 * themselves here), composed into one RuntimeHooks the claim loops call. Observers may
 * register at any time before or after the loops start: each call reads the current list.
 * An observer that throws is logged once per call and skipped; a wrapper that throws or
 * rejects before calling `run` is skipped too, so the handler and the settlement always run
 * exactly once, and once `run` started its own outcome is what the runtime gets.
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

  /**
   * The wrappers nested, first registered outermost, around `run`, which runs exactly once.
   * A wrapper that throws, or whose promise rejects, before it called `run` is skipped: the
   * rest runs unwrapped. Once it called `run`, run's own outcome wins (a wrapper that fails
   * after it, or resolves to something else, changes nothing but a log line), so a broken
   * observer can neither stop a handler or a settlement nor change what it returned.
   */
  private nest<T>(name: 'aroundHandler' | 'aroundSettle', run: () => Promise<T>, wrap: Around): Promise<T> {
    // Only observers that define the hook wrap it; with none (the metrics define neither), every
    // job runs `run` as it is, with no closures built for it.
    const wrapping = this.observers.filter((hooks) => hooks[name] !== undefined);
    if (wrapping.length === 0) return run();
    let inner = run;
    for (const hooks of wrapping.reverse()) {
      const next = inner;
      inner = () => {
        let started: Promise<T> | undefined;
        const once = (): Promise<T> => (started ??= next());
        let wrapped: Promise<T> | undefined;
        try {
          wrapped = wrap(once, hooks);
        } catch (error) {
          this.failed(name, error);
        }
        // No wrapper, or one that threw: the rest runs unwrapped (or goes on, if it started).
        if (wrapped === undefined) return started ?? next();
        return this.outcomeOf(name, wrapped, () => started, next);
      };
    }
    return inner();
  }

  /** What a wrapped call settles to: run's own outcome, or the rest run unwrapped when the wrapper never called it. */
  private async outcomeOf<T>(
    name: string,
    wrapped: Promise<T>,
    started: () => Promise<T> | undefined,
    next: () => Promise<T>,
  ): Promise<T> {
    let failure: { readonly error: unknown } | undefined;
    try {
      await wrapped;
    } catch (error) {
      failure = { error };
    }
    const ran = started();
    if (ran === undefined) {
      this.failed(name, failure ? failure.error : new Error('it returned without calling run'));
      return next();
    }
    if (failure) {
      // The wrapper passing on run's own rejection is no failure of the observer.
      const own = await ran.then(
        () => false,
        (error: unknown) => error === failure.error,
      );
      if (!own) this.failed(name, failure.error);
    }
    return ran;
  }

  private failed(name: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.logger.error(`A ${name} observer threw: ${message}`);
  }
}
