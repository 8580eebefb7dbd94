import { Inject, Injectable } from '@nestjs/common';
import type { EchoMqModuleOptions } from '../module/echomq-options';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { requireOtelApi } from './otel-api';
import { WorkerTracing } from './worker-tracing';

/**
 * OpenTelemetry tracing of this application's queues (docs/tracing.md), on with the module
 * option `tracing: true`, off by default. On, it registers the worker's spans (WorkerTracing)
 * with the runtime's observers; the producer's spans are made by QueueService's enqueue path,
 * which reads the same option. Off, it does nothing and @opentelemetry/api is never loaded.
 */
@Injectable()
export class EchoMqTracing {
  /** Whether this application makes spans (the module option `tracing`). */
  readonly enabled: boolean;

  constructor(@Inject(ECHOMQ_OPTIONS) options: EchoMqModuleOptions, hooks: RuntimeHooksRegistry) {
    // Anything but true is off; a value that is not a boolean is refused by the options check.
    this.enabled = options.tracing === true;
    if (this.enabled) hooks.register(new WorkerTracing(requireOtelApi()));
  }
}
