import request from 'supertest';
import { waitUntil, withTimeout } from '../../worker/fixtures/support';
import { aborted, started, WORKED_QUEUE } from './acl-processor';

type Http = () => ReturnType<typeof request>;

/**
 * Every route family of the api on a queue a worker serves: enqueue, history, a dead job
 * retried (one and all), a busy queue kept from obliteration, a running job removed (its
 * handler aborted), pause and resume.
 */
export async function tourWorkedQueue(http: Http): Promise<void> {
  const base = `/queues/${WORKED_QUEUE}`;
  const enqueue = async (data: object): Promise<string> =>
    (await http().post(`${base}/jobs`).send({ data }).expect(201)).body.id as string;
  const stateOf = async (id: string): Promise<string> =>
    (await http().get(`${base}/jobs/${id}`).expect(200)).body.state as string;

  const ok = await enqueue({ kind: 'ok' });
  await waitUntil(async () => {
    const res = await http().get(`${base}/completed`).expect(200);
    return (res.body.jobs as { id: string }[]).some((job) => job.id === ok);
  }, 'the completed job in the history');

  const doom = await enqueue({ kind: 'doom' });
  await waitUntil(async () => (await stateOf(doom)) === 'dead', 'the doomed job in dead');
  expect((await http().get(`${base}/jobs`).query({ state: 'dead' }).expect(200)).body.jobs).toEqual([
    expect.objectContaining({ id: doom, lastError: expect.stringContaining('doomed') }),
  ]);
  await http().post(`${base}/jobs/${doom}/retry`).expect(200);
  await waitUntil(async () => (await stateOf(doom)) === 'completed', 'the retried job completed');
  expect((await http().post(`${base}/dead/retry`).send({}).expect(200)).body).toEqual({
    queue: WORKED_QUEUE,
    retried: 0,
  });

  const hold = await enqueue({ kind: 'hold' });
  await withTimeout(started.get(hold).promise, 10_000, 'the held job started');
  expect((await http().get(`${base}/jobs`).query({ state: 'active' }).expect(200)).body.jobs).toEqual([
    expect.objectContaining({ id: hold, state: 'active' }),
  ]);
  // A queue a worker is busy on is not obliterated without force (the live leases are counted).
  expect((await http().post(`${base}/obliterate`).expect(409)).body).toMatchObject({ code: 'QUEUE_BUSY' });
  await http().delete(`${base}/jobs/${hold}`).expect(204);
  await withTimeout(aborted.get(hold).promise, 10_000, 'the removed job aborted');

  await http().post(`${base}/pause`).expect(200);
  expect((await http().get(base).expect(200)).body).toMatchObject({ paused: true });
  await http().post(`${base}/resume`).expect(200);
  const after = await enqueue({ kind: 'ok' });
  await waitUntil(async () => (await stateOf(after)) === 'completed', 'a job after resume completed');
}

/**
 * Every route family on a queue nobody serves, so its jobs stay where the api puts them:
 * enqueue (plain, keyed, debounced, throttled, delayed, bulk), reads, lanes, limits,
 * schedules, job control (update, promote, clean of each state, drain, obliterate), health.
 */
export async function tourIdleQueue(http: Http, queue: string): Promise<void> {
  const base = `/queues/${queue}`;
  const submit = async (body: object): Promise<{ id: string; outcome: string; state: string }> =>
    (await http().post(`${base}/jobs`).send(body).expect(201)).body;

  const plain = await submit({ data: 1, lane: 'tenant-a', priority: 3 });
  expect((await submit({ data: 2, idempotencyKey: 'once' })).outcome).toBe('created');
  expect((await submit({ data: 3, idempotencyKey: 'once' })).outcome).toBe('matched');
  const debounce = { key: 'reindex', delayMs: 60_000 };
  expect((await submit({ data: 4, debounce })).state).toBe('schedule');
  expect((await submit({ data: 5, debounce })).outcome).toBe('replaced');
  const throttle = { key: 'digest', windowMs: 60_000 };
  await submit({ data: 6, throttle });
  expect((await submit({ data: 7, throttle })).outcome).toBe('matched');
  const later = await submit({ data: 8, delayMs: 3_600_000 });
  const bulk = await http()
    .post(`${base}/jobs/bulk`)
    .send({ jobs: [{ data: 9 }, { data: 10, lane: 'tenant-b' }] })
    .expect(201);
  expect(bulk.body.ids).toHaveLength(2);

  expect((await http().get('/queues').expect(200)).body.queues).toContainEqual(
    expect.objectContaining({ queue }),
  );
  expect((await http().get(base).expect(200)).body).toMatchObject({ queue, paused: false, heldUntil: null });
  for (const state of ['pending', 'active', 'schedule', 'dead']) {
    await http().get(`${base}/jobs`).query({ state }).expect(200);
  }
  await http().get(`${base}/jobs`).query({ state: 'pending', lane: 'tenant-a', priority: 3 }).expect(200);
  expect((await http().get(`${base}/jobs/${plain.id}`).expect(200)).body).toMatchObject({ lane: 'tenant-a' });

  await http().put(`${base}/lanes/tenant-a`).send({ weight: 2, concurrency: 3 }).expect(204);
  await http().post(`${base}/lanes/tenant-b/pause`).expect(200);
  const listed = (await http().get(`${base}/lanes`).expect(200)).body.lanes as {
    lane: string;
    paused: boolean;
  }[];
  expect(listed.find((lane) => lane.lane === 'tenant-b')?.paused).toBe(true);
  await http().post(`${base}/lanes/tenant-b/resume`).expect(200);
  await http()
    .put(`${base}/limits`)
    .send({ laneConcurrency: 5, rateLimit: { max: 100, windowMs: 1_000 } })
    .expect(204);
  expect((await http().get(`${base}/limits`).expect(200)).body).toMatchObject({ laneConcurrency: 5 });

  await http()
    .put(`${base}/schedules/nightly`)
    .send({ cron: '0 3 * * *', tz: 'Europe/Berlin', template: { data: { report: 'daily' } } })
    .expect(200);
  await http().put(`${base}/schedules/every`).send({ everyMs: 60_000 }).expect(200);
  expect((await http().get(`${base}/schedules`).expect(200)).body.schedules).toHaveLength(2);
  await http().get(`${base}/schedules/nightly`).expect(200);
  await http().delete(`${base}/schedules/every`).expect(204);

  await http()
    .patch(`${base}/jobs/${plain.id}`)
    .send({ data: { v: 2 }, lane: 'tenant-b', priority: 4 })
    .expect(200);
  await http().patch(`${base}/jobs/${plain.id}`).send({ runAt: '2999-01-01T00:00:00Z' }).expect(200);
  await http().post(`${base}/jobs/${later.id}/promote`).expect(200);
  await http().delete(`${base}/jobs/${later.id}`).expect(204);
  for (const state of ['dead', 'schedule', 'pending']) {
    await http().post(`${base}/clean`).send({ state, olderThanMs: 3_600_000 }).expect(200);
  }
  // More lanes than one call of the drain walks (200 sets), so a later call resumes inside the walk.
  const lanes = Array.from({ length: 250 }, (_, i) => ({ data: i, lane: `many-${i}` }));
  await http().post(`${base}/jobs/bulk`).send({ jobs: lanes }).expect(201);
  expect((await http().post(`${base}/drain`).send({ keepScheduled: true }).expect(200)).body.removed).toBe(
    254,
  );
  expect((await http().post(`${base}/obliterate`).query({ force: 'true' }).expect(200)).body.removed).toBe(3);
  expect((await http().get('/health').expect(200)).body).toMatchObject({ status: 'ok' });
}
