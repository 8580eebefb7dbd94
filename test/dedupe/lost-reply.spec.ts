import { QueueService } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import type { FaultProxy } from '../support/fault-proxy';
import { connect, uniqueQueue } from '../support/redis';
import { withTimeout } from '../worker/fixtures/support';
import {
  Apps,
  LOST_REPLY_FLAVOURS,
  members,
  metricsOf,
  recordDrops,
  rowIds,
  runsScript,
  startProxy,
  stopWhenDrained,
} from '../faults/support/faults';

/**
 * A keyed enqueue whose reply is lost after Redis ran it: submit repeats it under its request
 * id and reports the first call's outcome; the job is created (or replaced) once.
 */
/** A hang detector (not a timing assertion). */
const SETTLES_MS = 10_000;

const apps = new Apps();
let proxy: FaultProxy;
let direct: Redis;

beforeAll(() => {
  direct = connect();
});
afterAll(() => {
  direct.disconnect();
});
beforeEach(async () => {
  proxy = await startProxy();
});
afterEach(async () => {
  await proxy.heal();
  proxy.closeAll();
  await apps.closeEvery();
  await stopWhenDrained(proxy);
});

describe.each(LOST_REPLY_FLAVOURS)('a keyed enqueue whose reply is lost (%s)', (_flavour, lose) => {
  it('reports created, then replaced, each done once', async () => {
    const queue = uniqueQueue('lost-keyed');
    const queues = (await apps.boot([], proxy.url)).get(QueueService);
    const debounce = { key: 'lost', delayMs: 60_000 };
    const dropped = recordDrops(proxy);

    lose(proxy, runsScript('emqEnqueueKeyed', queue));
    const first = await withTimeout(queues.submit(queue, { n: 1 }, { debounce }), SETTLES_MS, 'the create');
    expect(first.outcome).toBe('created');
    expect(dropped[0]).toContain(first.id);

    lose(proxy, runsScript('emqEnqueueKeyed', queue));
    const second = await withTimeout(queues.submit(queue, { n: 2 }, { debounce }), SETTLES_MS, 'the replace');
    expect(second).toEqual({ id: first.id, outcome: 'replaced' });
    expect(dropped.length).toBeGreaterThanOrEqual(2);

    expect(await members(direct, queue)).toEqual({ pending: [], active: [], schedule: [first.id], dead: [] });
    expect(await rowIds(direct, queue)).toEqual([first.id]);
    expect(await metricsOf(direct, queue)).toMatchObject({ enqueued: 1, debounced: 1 });
  });
});
