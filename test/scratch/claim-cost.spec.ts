import { Redis } from 'ioredis';
import { installScripts } from '@app/echomq/scripts/registry';
import { claimJobs } from '@app/echomq/scripts/claim';
import { enqueueJobs, type NewJobRecord } from '@app/echomq/scripts/enqueue';
import { queueKeys } from '@app/echomq/keyspace';
import { JOB_IDS } from '@app/echomq/ids';
import { SnowflakeMinter } from '@app/echomq/ids/snowflake';
import { randomBytes } from 'node:crypto';

const mint = JOB_IDS.minter(new SnowflakeMinter(3));
jest.setTimeout(120_000);
describe('claim cost', () => {
  const redis = new Redis(process.env.REDIS_URL!);
  afterAll(() => redis.quit());
  for (const lanes of [1, 10, 1000, 1]) {
    it(`lanes ${lanes}`, async () => {
      const ctx = { redis: installScripts(redis), keys: queueKeys(`c-${randomBytes(4).toString('hex')}`), eventsMaxLen: 1000 };
      const total = 20_000;
      for (let i = 0; i < total; i += 500) {
        const batch: NewJobRecord[] = [];
        for (let j = 0; j < 500; j++) batch.push({ id: mint(), data: '{"x":1}', name: '', delayMs: 0, runAtMs: 0, idempotencyKey: '', lane: lanes === 1 ? undefined : `l${(i + j) % lanes}` });
        await enqueueJobs(ctx, batch, 1000);
      }
      await redis.call('CONFIG', 'RESETSTAT');
      let got = 0, calls = 0;
      while (got < total) {
        const b = await claimJobs(ctx, { count: 50, leaseMs: 60000, claimantPrefix: `p${calls}` });
        got += b.jobs.length; calls++;
      }
      const info = await redis.info('commandstats');
      const line = info.split('\n').find((l) => l.startsWith('cmdstat_evalsha'))!;
      const usec = Number(/usec=(\d+)/.exec(line)![1]);
      console.log(`lanes=${lanes} calls=${calls} claim µs/job=${(usec / total).toFixed(2)}`);
      await redis.del(...(await redis.keys(`${ctx.keys.base}*`)).slice(0, 1)); 
    });
  }
});
