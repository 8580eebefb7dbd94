import { claimJobs, enqueueJobs, readJobView } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('payload storage in the row', () => {
  let redis: Redis;
  const mint = idMinter(7);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  // Sizes around the 63-byte chunk, the read-ahead of four chunks, and the whole-value cut-off.
  it.each([0, 1, 62, 63, 64, 100, 126, 127, 252, 253, 1000, 6999, 7000, 7001, 20000])(
    'a %i-byte payload reads back whole through the job view and the claim',
    async (size) => {
      const ctx = scriptContext(redis, uniqueQueue('chunk'));
      // Two-byte characters at odd offsets, so chunk boundaries fall inside a character.
      const data = 'xé'.repeat(size).slice(0, size);
      const id = mint();
      await enqueueJobs(
        ctx,
        [{ id, data, name: '', maxAttempts: 1, delayMs: 0, runAtMs: 0, idempotencyKey: '' }],
        1000,
      );
      const view = await readJobView(ctx, id);
      expect(view.state).toBe('pending');
      expect(view.fields.d).toBe(data);
      expect(Object.keys(view.fields).sort()).toEqual(['d', 'm']);
      const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 10_000, claimantPrefix: 'w' });
      expect(jobs[0].data).toBe(data);
      const bytes = Buffer.byteLength(data);
      if (bytes > 64 && bytes <= 7000) {
        // Every stored value fits Redis's listpack limit, so the row stays compact.
        expect(await redis.object('ENCODING', ctx.keys.job(id))).toBe('listpack');
      }
    },
  );
});
