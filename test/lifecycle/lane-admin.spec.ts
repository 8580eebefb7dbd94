import {
  InvalidArgumentError,
  pauseLane,
  resumeLane,
  setLaneSettings,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { events, serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

describe("lane admin: a lane's own settings, pausing and resuming a lane", () => {
  let redis: Redis;
  const mint = idMinter(63);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('lane-admin'));
  }

  describe('setLaneSettings', () => {
    it('writes the weight and the concurrency; null clears one; the hash goes with its last field', async () => {
      const ctx = context();
      const key = ctx.keys.laneSettings('acme');
      await setLaneSettings(ctx, 'acme', { weight: 3, concurrency: 2 });
      expect(await redis.hgetall(key)).toEqual({ w: '3', k: '2' });
      await setLaneSettings(ctx, 'acme', { weight: null });
      expect(await redis.hgetall(key)).toEqual({ k: '2' });
      await setLaneSettings(ctx, 'acme', { weight: 7 });
      expect(await redis.hgetall(key)).toEqual({ w: '7', k: '2' });
      await setLaneSettings(ctx, 'acme', { weight: null, concurrency: null });
      expect(await redis.exists(key)).toBe(0);
    });

    it('a raised cap returns the lane it held back at once, and wakes a worker', async () => {
      const ctx = context();
      await setLaneSettings(ctx, 'acme', { concurrency: 1 });
      const ids = await enqueueIn(ctx, mint, [
        ['acme', 4],
        ['acme', 4],
      ]);
      expect((await claimUpTo(ctx, 5)).map((job) => job.id)).toEqual([ids[0]]);
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '4' });
      await redis.del(ctx.keys.wake);

      await setLaneSettings(ctx, 'acme', { concurrency: null });
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.held).toEqual({});
      expect(Object.keys(flow.ready[4] ?? {})).toEqual(['acme']);
      expect(await redis.llen(ctx.keys.wake)).toBe(1);
      expect((await claimUpTo(ctx, 5)).map((job) => job.id)).toEqual([ids[1]]);
    });

    it('a cap still reached keeps the lane held and wakes nobody', async () => {
      const ctx = context();
      await setLaneSettings(ctx, 'acme', { concurrency: 1 });
      await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['acme', 0],
      ]);
      await claimUpTo(ctx, 5);
      await redis.del(ctx.keys.wake);
      await setLaneSettings(ctx, 'acme', { weight: 5 });
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
      expect(await redis.llen(ctx.keys.wake)).toBe(0);
    });

    it('nothing given: nothing is sent', async () => {
      const ctx = context();
      await setLaneSettings(ctx, 'acme', {});
      expect(await redis.exists(ctx.keys.laneSettings('acme'))).toBe(0);
    });

    it.each<[string, string, unknown]>([
      ['weight 0', 'acme', { weight: 0 }],
      ['weight past 1,000', 'acme', { weight: 1_001 }],
      ['concurrency 1.5', 'acme', { concurrency: 1.5 }],
      ['concurrency past 1,000,000', 'acme', { concurrency: 1_000_001 }],
      ['an unknown setting', 'acme', { share: 2 }],
      ['a lane name with a space', 'ac me', { weight: 2 }],
      ['a lane name of 65 characters', 'a'.repeat(65), { weight: 2 }],
      ['an empty lane name', '', { weight: 2 }],
    ])('refuses %s before anything is sent', async (_name, lane, settings) => {
      const ctx = context();
      await expect(
        setLaneSettings(ctx, lane, settings as Parameters<typeof setLaneSettings>[2]),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
      if (lane === 'acme') expect(await redis.exists(ctx.keys.laneSettings('acme'))).toBe(0);
    });

    it.each<[string, string, string, (string | number)[]]>([
      ['a bad lane name', 'ac me', 'acme', ['w', 2]],
      ['a settings key of another lane', 'acme', 'globex', ['w', 2]],
      ['an unknown field', 'acme', 'acme', ['x', 2]],
      ['a weight out of range', 'acme', 'acme', ['w', 1_001]],
      ['a field twice', 'acme', 'acme', ['w', 2, 'w', 3]],
    ])('the script itself refuses %s before writing', async (_name, lane, keyLane, pairs) => {
      const ctx = context();
      const { keys } = ctx;
      const error = await ctx.redis
        .emqSetLane(
          keys.fence,
          keys.reply('bad'),
          keys.laneSettings(keyLane),
          keys.wake,
          lane,
          60_000,
          pairs.length / 2,
          ...pairs,
        )
        .catch((e: unknown) => e);
      expect(String(error)).toMatch(/EMQ_BAD_ARG/);
      expect(await redis.exists(keys.laneSettings(keyLane), keys.reply('bad'))).toBe(0);
    });
  });

  describe('pauseLane / resumeLane', () => {
    it('a paused lane is claimed from no more; other lanes go on; enqueue into it goes on', async () => {
      const ctx = context();
      const [a1, b1] = await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['globex', 0],
      ]);
      expect(await pauseLane(ctx, 'acme')).toBe(true);
      const [a2] = await enqueueIn(ctx, mint, [['acme', 6]]);

      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.paused).toEqual(['acme']);
      expect(flow.held).toEqual({ acme: '06' });
      expect(flow.pending).toMatchObject({ [at('acme', 0)]: [a1], [at('acme', 6)]: [a2] });
      expect((await claimUpTo(ctx, 5)).map((job) => job.id)).toEqual([b1]);
      expect(await claimUpTo(ctx, 5)).toEqual([]);
    });

    it('resume returns the lane at every level where it has work, and wakes a worker', async () => {
      const ctx = context();
      const [low, high] = await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['acme', 9],
      ]);
      await pauseLane(ctx, 'acme');
      await redis.del(ctx.keys.wake);
      expect(await resumeLane(ctx, 'acme')).toBe(true);

      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.paused).toEqual([]);
      expect(flow.held).toEqual({});
      expect(Object.keys(flow.ready[0] ?? {})).toEqual(['acme']);
      expect(Object.keys(flow.ready[9] ?? {})).toEqual(['acme']);
      expect(await redis.llen(ctx.keys.wake)).toBe(1);
      expect((await claimUpTo(ctx, 5)).map((job) => job.id)).toEqual([high, low]);
    });

    it('both are idempotent, and say so once each on the event stream', async () => {
      const ctx = context();
      await enqueueIn(ctx, mint, [['acme', 0]]);
      expect(await pauseLane(ctx, 'acme')).toBe(true);
      expect(await pauseLane(ctx, 'acme')).toBe(false);
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
      expect(await resumeLane(ctx, 'acme')).toBe(true);
      expect(await resumeLane(ctx, 'acme')).toBe(false);
      await expectFlowConsistent(redis, ctx.keys);
      const laneEvents = (await events(redis, ctx.keys))
        .map((e) => e.fields)
        .filter((fields) => fields.type.startsWith('lane-'));
      expect(laneEvents).toEqual([
        { type: 'lane-paused', ids: '', lane: 'acme' },
        { type: 'lane-resumed', ids: '', lane: 'acme' },
      ]);
    });

    it('a lane with no work can be paused ahead of its jobs, and resumed', async () => {
      const ctx = context();
      await pauseLane(ctx, 'acme');
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '' });
      const [id] = await enqueueIn(ctx, mint, [['acme', 2]]);
      expect(await claimUpTo(ctx, 5)).toEqual([]);
      await resumeLane(ctx, 'acme');
      expect((await claimUpTo(ctx, 5)).map((job) => job.id)).toEqual([id]);
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.held).toEqual({});
    });

    it('resume leaves the lane held while something else still holds it: its cap, a throttle timer', async () => {
      const ctx = context();
      await setLaneSettings(ctx, 'acme', { concurrency: 1 });
      await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['acme', 0],
      ]);
      await claimUpTo(ctx, 5);
      await pauseLane(ctx, 'acme');
      await redis.del(ctx.keys.wake);
      await resumeLane(ctx, 'acme');
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
      expect(await redis.llen(ctx.keys.wake)).toBe(0);

      await redis.zadd(ctx.keys.laneTimers, (await serverNowMs(redis)) + 3_600_000, 'acme');
      await setLaneSettings(ctx, 'acme', { concurrency: null });
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
    });

    it('a repeated request changes nothing more: a resend of a pause does not undo a later resume', async () => {
      const ctx = context();
      await enqueueIn(ctx, mint, [['acme', 0]]);
      await pauseLane(ctx, 'acme', 'pause-1');
      await resumeLane(ctx, 'acme');
      expect(await pauseLane(ctx, 'acme', 'pause-1')).toBe(true);
      expect((await expectFlowConsistent(redis, ctx.keys)).paused).toEqual([]);
    });

    it.each(['ac me', '', 'a'.repeat(65), 'a{b}'])(
      'refuses the lane name %p before anything is sent',
      async (lane) => {
        const ctx = context();
        await expect(pauseLane(ctx, lane)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(resumeLane(ctx, lane)).rejects.toBeInstanceOf(InvalidArgumentError);
        expect(await redis.exists(ctx.keys.pausedLanes, ctx.keys.events)).toBe(0);
      },
    );

    it('the scripts themselves refuse a bad lane name before writing', async () => {
      const ctx = context();
      const { keys } = ctx;
      const pause = await ctx.redis
        .emqPauseLane(keys.fence, keys.reply('p'), keys.pausedLanes, keys.events, 'a b', 1000, 60_000)
        .catch((e: unknown) => e);
      const resume = await ctx.redis
        .emqResumeLane(
          keys.fence,
          keys.reply('r'),
          keys.pausedLanes,
          keys.events,
          keys.wake,
          'a'.repeat(65),
          1000,
          60_000,
        )
        .catch((e: unknown) => e);
      expect(String(pause)).toMatch(/EMQ_BAD_ARG/);
      expect(String(resume)).toMatch(/EMQ_BAD_ARG/);
      expect(
        await redis.exists(keys.pausedLanes, keys.events, keys.held, keys.reply('p'), keys.reply('r')),
      ).toBe(0);
    });
  });
});
