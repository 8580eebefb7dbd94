import { randomBytes } from 'node:crypto';
import {
  claimJobs,
  completeJobs,
  failJob,
  QueueService,
  type ClaimedJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import request from 'supertest';
import type { RawEnvironment } from '../../../../apps/api/src/config/environment';
import { DashboardEventHub } from '../../../../apps/api/src/dashboard/events/event-hub';
import { OverviewSampler } from '../../../../apps/api/src/dashboard/overview/overview-sampler';
import { startApi, type RunningApi } from '../../../api/support/api';

export const TOKEN = 'dash-test_token.0123456789~abcdef';

export interface DashboardApi extends RunningApi {
  /** The key prefix only this api uses, so its registry holds only this test's queues. */
  readonly prefix: string;
  readonly queues: QueueService;
  readonly sampler: OverviewSampler;
  readonly hub: DashboardEventHub;
}

/**
 * The api as main runs it, on a key prefix of its own (the overview reads every queue of its
 * registry, and the suite's other specs share this Redis), throttling off, a short refresh.
 */
export async function startDashboardApi(env: RawEnvironment = {}): Promise<DashboardApi> {
  const prefix = `dash${randomBytes(5).toString('hex')}`;
  const api = await startApi({
    EMQ_KEY_PREFIX: prefix,
    EMQ_THROTTLE_LIMIT: '0',
    EMQ_DASHBOARD_REFRESH_MS: '200',
    ...env,
  });
  return {
    ...api,
    prefix,
    queues: api.app.get(QueueService),
    // Looked up when used: with EMQ_DASHBOARD=off there are none.
    get sampler() {
      return api.app.get(OverviewSampler);
    },
    get hub() {
      return api.app.get(DashboardEventHub);
    },
  };
}

/** Logs in with the token and returns the `emq_session=...` pair to send as Cookie. */
export async function login(api: RunningApi, token = TOKEN): Promise<string> {
  const res = await request(api.url).post('/dashboard/session').send({ token }).expect(204);
  const cookie = [res.headers['set-cookie'] ?? []].flat()[0];
  if (!cookie) throw new Error('no Set-Cookie');
  return cookie.split(';')[0];
}

/** Claims up to `count` jobs of the queue, as a worker would. */
export async function claim(api: DashboardApi, queue: string, count: number): Promise<ClaimedJobRecord[]> {
  const { jobs } = await claimJobs(ctx(api, queue), {
    count,
    leaseMs: 30_000,
    claimantPrefix: `w${randomBytes(4).toString('hex')}`,
  });
  return jobs;
}

/** Claims and completes up to `count` jobs, their rows kept for `keepMs` (0: deleted); returns their ids. */
export async function completeSome(
  api: DashboardApi,
  queue: string,
  count: number,
  keepMs = 0,
): Promise<string[]> {
  const jobs = await claim(api, queue, count);
  await completeJobs(
    ctx(api, queue),
    jobs.map((job) => ({ claim: job, result: '' })),
    keepMs,
  );
  return jobs.map((job) => job.id);
}

/** Claims and fails up to `count` jobs for good (straight to dead). */
export async function killSome(api: DashboardApi, queue: string, count: number): Promise<string[]> {
  const jobs = await claim(api, queue, count);
  for (const job of jobs) {
    await failJob(ctx(api, queue), job, { error: 'Error: boom', backoffMs: 0, unrecoverable: true });
  }
  return jobs.map((job) => job.id);
}

function ctx(api: DashboardApi, queue: string): ScriptContext {
  return api.queues.context(queue);
}

/** Polls `probe` until it returns a value other than undefined; fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
