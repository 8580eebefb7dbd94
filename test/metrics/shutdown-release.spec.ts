import { Processor, QueueService } from '@app/echomq';
import { EchoMqMetrics } from '@app/echomq/metrics';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { deferred } from '../worker/fixtures/support';
import { parseExposition, valueOf } from './support/exposition';

describe('a job released at shutdown while its handler ignores its abort', () => {
  it('counts as released, though its handler never returns', async () => {
    const queue = uniqueQueue('released-hung');
    const started = deferred();
    @Processor(queue)
    class Hung {
      process(): Promise<never> {
        started.resolve();
        // Ignores job.signal: only the process's end would stop it.
        return new Promise<never>(() => undefined);
      }
    }
    const app = await bootApp([Hung], { shutdownGraceMs: 100 });
    const metrics = app.get(EchoMqMetrics);
    await app.get(QueueService).enqueue(queue, { n: 1 });
    await started.promise;
    await app.close();

    // Its counters outlive the application: what the last scrape would have read.
    const scrape = parseExposition(await metrics.runtimeRegistry.metrics());
    expect(valueOf(scrape, 'echomq_settlements_total', { queue, outcome: 'released' })).toBe(1);
    expect(valueOf(scrape, 'echomq_handler_duration_seconds_count', { queue, outcome: 'released' })).toBe(
      undefined,
    );
  });
});
