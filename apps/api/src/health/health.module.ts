import { EchoMqHealthIndicator } from '@app/echomq/health';
import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';

@Module({
  // Terminus logs every failed check; as one JSON line, not a box, since probes poll often.
  imports: [TerminusModule.forRoot({ errorLogStyle: 'json' })],
  controllers: [HealthController],
  providers: [EchoMqHealthIndicator],
})
export class HealthModule {}
