import { Injectable } from '@nestjs/common';

/**
 * Placeholder: the Prometheus metrics of this process's queues and worker runtime
 * (prom-client). Filled in by the metrics work; registered by EchoMqModule.
 */
@Injectable()
export class EchoMqMetrics {}
