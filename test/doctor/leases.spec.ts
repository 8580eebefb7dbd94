import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DEFAULT_LEASE_GRACE_MS, diagnoseQueue } from '@app/echomq/doctor';
import { claimJobs, reapExpired } from '@app/echomq/internal';
import { MODULE_OPTION_RANGES } from '@app/echomq/module/validate-options';
import { LEASE_CEILING_MS } from '@app/echomq/scripts/repair-leases';
import { openMonitor } from '../support/monitor';
import { redisUrl } from '../support/redis';
import { serverNow } from '../worker/fixtures/support';
import { doctorBench } from './support/doctor-bench';
import { checkOnly, doctor, findingsOf, prefixedContext } from './support/doctor';

describe('emq doctor on lease deadlines', () => {
  const bench = doctorBench('lease', 14);

  async function claimed(count: number, leaseMs = 600_000): Promise<string[]> {
    const ids = await bench.queues.enqueueMany(
      bench.queue,
      Array.from({ length: count }, (_, n) => ({ data: n })),
    );
    const batch = await claimJobs(bench.ctx, {
      count,
      leaseMs,
      claimantPrefix: `leases-spec-${randomBytes(4).toString('hex')}`,
    });
    expect(batch.jobs.map((job) => job.id).sort()).toEqual([...ids].sort());
    return ids;
  }

  it('finds deadlines further ahead than any lease; the repair sets them to now, and the next reap returns the jobs', async () => {
    const [forever, micros, fine] = await claimed(3);
    await bench.redis.zadd(bench.keys.active, 'XX', '+inf', forever);
    await bench.redis.zadd(bench.keys.active, 'XX', (await serverNow(bench.redis)) * 1_000, micros); // written in µs

    const found = await checkOnly(bench.redis, bench.prefix, bench.queue);
    expect(found.code).toBe(1);
    const [[kind, ids, details]] = findingsOf(found);
    expect(kind).toBe('lease-far-future');
    expect(Object.fromEntries(ids.map((id, i) => [id, details[i]]))).toEqual({
      [forever]: 'deadline +inf',
      [micros]: expect.stringMatching(/^deadline \d+ ms ahead$/),
    });
    expect(findingsOf(found)).toHaveLength(1);

    const repaired = await doctor(bench.prefix, bench.queue, '--repair');
    expect(repaired.code).toBe(0);
    expect(repaired.report.queues[0].findings).toEqual([
      expect.objectContaining({ kind: 'lease-far-future', count: 2, repaired: 2 }),
    ]);
    const now = await serverNow(bench.redis);
    for (const id of [forever, micros])
      expect(Number(await bench.redis.zscore(bench.keys.active, id))).toBeLessThanOrEqual(now);
    expect(findingsOf(await checkOnly(bench.redis, bench.prefix, bench.queue))).toEqual([]);
    // Due now: the reaper's transition returns them; the third lease is untouched.
    expect(await reapExpired(bench.ctx, 10)).toMatchObject({ toPending: 2, toDead: 0 });
    expect((await bench.queues.getJob(bench.queue, fine))?.state).toBe('active');
  });

  it('takes the longest lease a claim accepts for a lease', async () => {
    await claimed(1, LEASE_CEILING_MS);
    const found = await checkOnly(bench.redis, bench.prefix, bench.queue);
    expect(findingsOf(found)).toEqual([]);
    expect(found.code).toBe(0);
  });

  it('by default leaves leases alone that expired within the longest reaper interval; --grace lowers the bar', async () => {
    expect(DEFAULT_LEASE_GRACE_MS).toBeGreaterThanOrEqual(2 * MODULE_OPTION_RANGES.reaperIntervalMs.max);
    const [id] = await claimed(1);
    // A deployment whose reaper ticks every 60 s sees leases this late between two ticks.
    await bench.redis.zadd(bench.keys.active, 'XX', (await serverNow(bench.redis)) - 65_000, id);
    expect(await checkOnly(bench.redis, bench.prefix, bench.queue)).toMatchObject({ code: 0 });
    const strict = await checkOnly(bench.redis, bench.prefix, bench.queue, '--grace', '30000');
    expect(findingsOf(strict)).toEqual([
      ['lease-expired', [id], [expect.stringMatching(/^expired \d+ ms ago$/)]],
    ]);
    expect(strict.code).toBe(1);
  });

  it("reads the server's clock inside its one script: the doctor's connection sends no TIME and no write", async () => {
    const [id] = await claimed(1);
    await bench.redis.zadd(bench.keys.active, 'XX', (await serverNow(bench.redis)) - 600_000, id);
    const own = new Redis(redisUrl());
    const monitor = await openMonitor();
    try {
      // This connection's address, as MONITOR names the sender of each command.
      const info = String(await own.client('INFO'));
      const address = /\baddr=(\S+)/.exec(info)?.[1];
      expect(address).toEqual(expect.any(String));
      const sent: string[] = [];
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source === address) sent.push(String(args[0]).toLowerCase());
      });
      const diagnosis = await diagnoseQueue(prefixedContext(own, bench.queue, bench.prefix));
      expect(diagnosis.findings.map((finding) => finding.kind)).toEqual(['lease-expired']);
      await own.ping('doctor-spec-done'); // everything sent before it is seen once it is
      await waitForPing(sent);
      const commands = new Set(sent);
      expect((commands.has('evalsha') || commands.has('eval')) && commands.has('scan')).toBe(true);
      expect(commands.has('time')).toBe(false);
      const reads = new Set([
        'evalsha',
        'eval',
        'script',
        'scan',
        'zscan',
        'sscan',
        'hscan',
        'get',
        'cluster',
        'ping',
      ]);
      expect([...commands].filter((command) => !reads.has(command))).toEqual([]);
    } finally {
      monitor.disconnect();
      own.disconnect();
    }
  });
});

/** Waits (bounded) until MONITOR has shown the marker PING, which follows every other command. */
async function waitForPing(sent: readonly string[]): Promise<void> {
  for (let tries = 0; tries < 500 && !sent.includes('ping'); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(sent).toContain('ping');
}
