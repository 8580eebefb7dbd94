import type { HealthIndicatorResult } from '@nestjs/terminus';
import { Processor, type Job } from '@app/echomq';
import { RedisConnections } from '@app/echomq/internal';
import { EchoMqHealthIndicator, type EchoMqHealthDetails, type LoopDetail } from '@app/echomq/health';
import { COMMAND_DEADLINES_PER_TRY, StepBounds } from '@app/echomq/worker/loop-liveness';
import { RedisServer } from '../support/redis-server';
import { uniqueQueue } from '../support/redis';
import { eventually } from '../metrics/support/eventually';
import { bootWithHealth } from './support/boot';

type Details = EchoMqHealthDetails & { status: 'up' | 'down' };
const details = (result: HealthIndicatorResult<'echomq'>): Details => result.echomq as unknown as Details;

const COMMAND_TIMEOUT_MS = 500;
const REPLAY_WINDOW_MS = 5_000;
/** The claim step's bound before it counted a command held while the connection is down: two deadlines a try. */
const OLD_CLAIM_BOUND_MS = REPLAY_WINDOW_MS - COMMAND_TIMEOUT_MS + 2 * COMMAND_TIMEOUT_MS;
/** Small, so that a bound too short shows; not 0, which a timer firing a few ms late would trip. */
const MARGIN_MS = 500;

describe('a claim loop through a Redis outage', () => {
  it('bounds one claim try by three command deadlines: held while down, sent on reconnect, EVAL after NOSCRIPT', () => {
    const repeatForMs = REPLAY_WINDOW_MS - COMMAND_TIMEOUT_MS;
    const bounds = new StepBounds({ repeatForMs, commandTimeoutMs: COMMAND_TIMEOUT_MS }, { cluster: false });
    expect(COMMAND_DEADLINES_PER_TRY).toBe(3);
    expect(bounds.claimMs).toBe(repeatForMs + 3 * COMMAND_TIMEOUT_MS);
    expect(bounds.startMs).toBeGreaterThanOrEqual(3 * COMMAND_TIMEOUT_MS);
  });

  it('is never judged stuck while Redis is down past the old claim bound, nor while it comes back', async () => {
    const server = await RedisServer.start();
    const queue = uniqueQueue('outage');
    @Processor(queue)
    class Echo {
      process(job: Job) {
        return job.data;
      }
    }
    const app = await bootWithHealth([Echo], {
      connection: { url: server.url },
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      replayWindowMs: REPLAY_WINDOW_MS,
    });
    const seen: LoopDetail[] = [];
    const live: string[] = [];
    const indicator = app.get(EchoMqHealthIndicator);
    const look = async (): Promise<Details> => {
      const now = details(await indicator.isHealthy('echomq', { stuckMarginMs: MARGIN_MS }));
      seen.push(now.loops[queue]);
      const liveness = details(
        await indicator.isHealthy('echomq', { stuckMarginMs: MARGIN_MS, redis: false }),
      );
      live.push(liveness.status);
      return now;
    };
    try {
      await eventually(look, (now) => now.status === 'up', 'health before the outage');
      const closed = new Promise((resolve) => app.get(RedisConnections).client.once('close', resolve));
      await server.stop();
      await closed;
      // Looked at every 50 ms for the whole outage: longer than the old bound and its margin, and
      // until the loop (idle on its wake list when Redis went) has claimed, failed and backed off.
      const downSince = Date.now();
      await eventually(
        look,
        () =>
          Date.now() - downSince > OLD_CLAIM_BOUND_MS + MARGIN_MS + 1_000 &&
          seen.some((loop) => loop.step === 'backing off'),
        'the outage',
        25_000,
      );
      expect(seen.some((loop) => loop.step === 'claiming')).toBe(true);

      // Back, with no scripts loaded (NOSCRIPT, then EVAL), and claiming again.
      await server.restart();
      await eventually(
        look,
        (now) => now.status === 'up' && now.loops[queue].step === 'waiting for work',
        'the loop idle again once Redis is back',
        20_000,
      );
      expect(seen.filter((loop) => loop.state === 'stuck')).toEqual([]);
      // Liveness never went down: a Redis outage is no reason to restart a worker.
      expect(live.filter((status) => status !== 'up')).toEqual([]);
    } finally {
      await app.close();
      await server.destroy();
    }
  }, 60_000);
});
