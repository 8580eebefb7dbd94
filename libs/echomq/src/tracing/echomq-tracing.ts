import { Injectable } from '@nestjs/common';

/**
 * Placeholder: OpenTelemetry spans for enqueue, claim, handler and settlement, off by
 * default. Filled in by the tracing work; registered by EchoMqModule.
 */
@Injectable()
export class EchoMqTracing {}
