import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createApiApp } from '../../../apps/api/src/create-app';
import { RedisServer } from '../../support/redis-server';
import { scenario } from '../scenario';
import { adminCases } from '../support/hostile-http-admin';
import { jobCases } from '../support/hostile-http-jobs';
import { libraryCalls } from '../support/hostile-library-calls';
import { callAll, sendAll } from '../support/hostile-runner';
import { keyChanges, seedQueue, snapshotKeys } from '../support/hostile-seed';
import { HostileTally } from '../support/hostile-tally';
import { openInspector } from '../support/inspector';

const QUEUE = 'seeded';
const BODY_LIMIT = 16 * 1024;
const PAYLOAD_LIMIT = 4096;
const TOKEN = 'chaos-hostile-token';
/** The route families the HTTP cases must all reach. */
const FAMILIES = [
  'enqueue',
  'bulk',
  'job reads',
  'retry/remove',
  'job control',
  'bad queue name',
  'pause',
  'lanes',
  'limits',
  'schedules',
  'history',
  'no such route',
  'huge values',
  'auth',
];

/** Anything that escaped to the top of the process while the scenario ran. */
function watchCrashes(): { readonly seen: string[]; stop(): void } {
  const seen: string[] = [];
  const onError = (error: unknown): void =>
    void seen.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.on('uncaughtException', onError).on('unhandledRejection', onError);
  return { seen, stop: () => process.off('uncaughtException', onError).off('unhandledRejection', onError) };
}

/**
 * Scenario 7: generated malformed input against the real api (every route family: wrong types,
 * huge values, bad ids, queue names and lanes, bad JSON, wrong content types, oversized bodies,
 * unknown fields, missing or wrong tokens) and against QueueService itself (anything at all
 * where a name, id, payload or options object belongs). Every request must get a 4xx with a
 * JSON error body, every call a typed EchoMqError, and Redis must hold exactly the keys it held
 * before. The inputs come from one fast-check seed, printed, so a failure replays exactly.
 */
export const hostileInput = scenario({
  name: 'hostile-input',
  summary:
    'generated malformed api requests and library calls: every one a 4xx JSON error or a typed error, Redis keys unchanged',
  params: {
    requests: { full: 6_000, quick: 1_200, doc: 'malformed HTTP requests' },
    calls: { full: 4_000, quick: 800, doc: 'malformed QueueService calls' },
    seed: { full: 20_251_201, quick: 20_251_201, doc: 'the fast-check seed the inputs are generated from' },
  },
  async run({ params, log }) {
    const redis = await RedisServer.start();
    const direct = new Redis(redis.url);
    const crashes = watchCrashes();
    const api = await createApiApp({
      env: {
        REDIS_URL: redis.url,
        EMQ_API_TOKEN: TOKEN,
        EMQ_BODY_LIMIT: `${BODY_LIMIT}b`,
        EMQ_MAX_PAYLOAD_BYTES: String(PAYLOAD_LIMIT),
        EMQ_THROTTLE_LIMIT: '1000000000',
        // Fixed node numbers: no node lease key comes and goes during the run.
        EMQ_NODE_ID: '1',
      },
      logger: ['error'],
    });
    // The orchestrator's own application: seeds through the library, then takes the hostile calls.
    // A long replay window keeps the seeding's reply records for the whole run.
    const inspector = await openInspector(
      { url: redis.url },
      { nodeId: 2, maxPayloadBytes: PAYLOAD_LIMIT, replayWindowMs: 3_600_000 },
    );
    try {
      await api.listen(0, '127.0.0.1');
      const url = await api.getUrl();
      const seeded = await seedQueue(inspector.queues, QUEUE, {
        bodyLimit: BODY_LIMIT,
        payloadLimit: PAYLOAD_LIMIT,
      });
      const before = await snapshotKeys(direct);

      const tally = new HostileTally();
      const httpCases = fc.sample(fc.oneof(jobCases(seeded), adminCases(seeded, TOKEN)), {
        numRuns: params.requests,
        seed: params.seed,
      });
      await sendAll(url, TOKEN, httpCases, tally);
      log(`${tally.requests} requests answered`);
      const calls = fc.sample(libraryCalls(seeded), { numRuns: params.calls, seed: params.seed });
      await callAll(inspector.queues, calls, tally);
      log(`${tally.calls} library calls made`);

      const after = await snapshotKeys(direct);
      const changes = keyChanges(before, after);
      const broken: string[] = [];
      if (tally.non4xx > 0) broken.push(`${tally.non4xx} requests answered outside 4xx or dropped`);
      if (tally.notJsonError > 0) broken.push(`${tally.notJsonError} 4xx answers without a JSON error body`);
      if (tally.untyped > 0) broken.push(`${tally.untyped} library calls failed with an untyped error`);
      if (tally.accepted > 0) broken.push(`${tally.accepted} malformed library calls were carried out`);
      if (tally.hung > 0) broken.push(`${tally.hung} library calls hung`);
      if (crashes.seen.length > 0)
        broken.push(`uncaught in the process: ${crashes.seen.slice(0, 2).join(' || ')}`);
      if (after.size !== before.size || changes.count > 0)
        broken.push(`Redis keys changed: ${before.size} -> ${after.size} (${changes.sample.join(', ')})`);
      const missing = FAMILIES.filter((family) => !tally.byFamily.has(family));
      if (missing.length > 0) broken.push(`route families never exercised: ${missing.join(', ')}`);
      // The inputs behind each kind of broken answer (samples are kept only of those).
      broken.push(...tally.findings().map((finding) => `sample ${finding}`));
      const statuses = Object.fromEntries(
        [...tally.byStatus].sort(([a], [b]) => a - b).map(([status, n]) => [`http${status}`, n]),
      );
      return {
        figures: {
          seed: params.seed,
          requests: tally.requests,
          calls: tally.calls,
          ...statuses,
          non4xx: tally.non4xx,
          notJsonError: tally.notJsonError,
          typed: tally.typed,
          untyped: tally.untyped,
          accepted: tally.accepted,
          hung: tally.hung,
          keysBefore: before.size,
          keysAfter: after.size,
          keysChanged: changes.count,
        },
        broken,
      };
    } finally {
      crashes.stop();
      await inspector.close();
      await api.close();
      direct.disconnect();
      await redis.destroy();
    }
  },
});
