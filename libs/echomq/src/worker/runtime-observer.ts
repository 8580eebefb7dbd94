import type { RuntimeHooks } from '../observability/runtime-hooks';

/**
 * What the worker runtime calls its observers through: every hook present. In an application
 * it is the module's RuntimeHooksRegistry (metrics, tracing); runtimes built without one (tests
 * that assemble a runner by hand) get PASS_THROUGH.
 */
export type RuntimeObserver = Required<
  Pick<RuntimeHooks, 'claimed' | 'settled' | 'aroundHandler' | 'aroundSettle'>
>;

/** Observes nothing: the handler and the settlement just run. */
export const PASS_THROUGH: RuntimeObserver = {
  claimed: () => undefined,
  settled: () => undefined,
  aroundHandler: (_queue, _record, run) => run(),
  aroundSettle: (_queue, _record, _verb, run) => run(),
};
