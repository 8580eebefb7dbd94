import { Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';

/** The api's `/metrics` route; EchoMqMetrics comes from EchoMqModule (global). */
@Module({ controllers: [MetricsController] })
export class MetricsModule {}
