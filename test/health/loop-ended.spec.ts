import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { Processor, type Job } from '@app/echomq';
import { ProcessorExplorer, queueKeys } from '@app/echomq/internal';
import type { IsolationGate } from '@app/echomq/worker/isolation-gate';
import { EchoMqHealthIndicator, type EchoMqHealthDetails, type LoopEnded } from '@app/echomq/health';
import { CapturedLog } from '../support/captured-log';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { deferred } from '../worker/fixtures/support';
import { WorkerHost } from '../metrics/support/worker-host';
import { bootWithHealth } from './support/boot';

type Details = EchoMqHealthDetails & { status: 'up' | 'down' };
const details = (result: HealthIndicatorResult<'echomq'>): Details => result.echomq as unknown as Details;

/** The same words as support/plant-loop-defect.ts (not imported here: importing it plants the defect). */
const DEFECT = 'a defect planted by the test';

/**
 * The gate a loop asks for its turn at every pass, made to throw from its next call on: an error
 * outside the claim's own handling, as only a defect raises (the seam is this test's; production
 * has no hook for it).
 */
function plantDefect(app: INestApplication, queue: string): void {
  const loop = app.get(ProcessorExplorer).requireLoop(queue);
  const gate = (loop as unknown as { gate: IsolationGate }).gate;
  gate.turn = () => {
    throw new Error(DEFECT);
  };
}

describe('a claim loop that an error ends', () => {
  it('is reported ended in health and the error log, and told to loop-ended listeners, late ones too', async () => {
    const queue = uniqueQueue('loop-ended');
    @Processor(queue)
    class Echo {
      process(job: Job) {
        return job.data;
      }
    }
    const log = new CapturedLog();
    const app = await bootWithHealth([Echo], {}, { logger: log });
    const redis = connect();
    try {
      const explorer = app.get(ProcessorExplorer);
      const indicator = app.get(EchoMqHealthIndicator);
      const told = deferred<LoopEnded>();
      explorer.onLoopEnded((ended) => told.resolve(ended));
      expect(details(await indicator.isHealthy('echomq')).status).toBe('up');

      // The loop waits on its wake list; woken, its next pass meets the defect.
      plantDefect(app, queue);
      await redis.rpush(queueKeys(queue).wake, '1');
      expect(await told.promise).toEqual({ queue, reason: DEFECT });

      const ready = details(await indicator.isHealthy('echomq'));
      expect(ready).toMatchObject({ status: 'down', loops: { [queue]: { state: 'ended', reason: DEFECT } } });
      expect(ready.message).toContain(`the claim loop of ${queue} ended: ${DEFECT}`);
      // A restart mends it, so the liveness check (Redis left out) says down too.
      const live = details(await indicator.isHealthy('echomq', { redis: false }));
      expect(live).toMatchObject({ status: 'down', loops: { [queue]: { state: 'ended' } } });
      expect(live.redis).toBeUndefined();
      const lines = log.matching((line) => line.level === 'error' && line.message.includes('ended'));
      expect(lines.map((line) => line.message)).toEqual([
        `The claim loop of ${queue} ended: ${DEFECT}; nothing is claimed from it here`,
      ]);

      // A listener that comes later is told at once of the loop that ended before it.
      const late: LoopEnded[] = [];
      const unsubscribe = explorer.onLoopEnded((ended) => late.push(ended));
      expect(late).toEqual([{ queue, reason: DEFECT }]);
      unsubscribe();
    } finally {
      await app.close();
      await redis.quit();
    }
  });

  it('makes the worker host exit with code 1, said in its log, for its supervisor to restart it', async () => {
    const host = WorkerHost.start(
      { REDIS_URL: redisUrl(), EMQ_KEY_PREFIX: uniqueQueue('ended-host'), EMQ_SHUTDOWN_GRACE_MS: '200' },
      [join(__dirname, 'support', 'plant-loop-defect.ts')],
    );
    try {
      // It boots under ts-node (seconds), and its demo loop ends at its first pass.
      const ended = await host.ended();
      expect({ ended, log: host.log }).toMatchObject({ ended: { code: 1, signal: null } });
      expect(host.log).toContain(`The claim loop of demo ended: ${DEFECT}`);
      expect(host.log).toContain('exiting with code 1 so that the supervisor restarts this worker');
    } finally {
      await host.stop();
    }
  }, 60_000);
});
