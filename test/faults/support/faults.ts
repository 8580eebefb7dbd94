import { createHash, randomInt } from 'node:crypto';
import type { INestApplication, Provider } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  queueKeys,
  RedisConnections,
  SCRIPTS,
  STATE_SETS,
  type EchoMqModuleOptions,
  type ScriptName,
  type StateSet,
} from '@app/echomq/internal';
import { FaultProxy, type RequestMatcher } from '../../support/fault-proxy';
import { bootApp } from '../../support/nest';
import { redisUrl } from '../../support/redis';
import { withTimeout } from '../../worker/fixtures/support';

/**
 * Shared pieces of the fault suites (issue 8, items 2 and 4): a fault proxy in front of the
 * suite's real redis-server, matchers that pick one transition script's requests out of a
 * connection's traffic, and readers that look at the real server directly (never through the
 * proxy), so what a test asserts about Redis is what Redis holds.
 */

/** Small deadlines keep every fault short; the replay window is the smallest allowed (≥ 2 deadlines). */
export const FAST = { commandTimeoutMs: 400, replayWindowMs: 5_000 } as const;

/** The two ways a real network loses the reply to one call, named for describe.each. */
export type LostReplyFlavour = readonly [
  name: string,
  lose: (proxy: FaultProxy, match: RequestMatcher) => void,
];
export const LOST_REPLY_FLAVOURS: readonly LostReplyFlavour[] = [
  // the reply and every later one on that connection vanish; only the command deadline notices
  ['deaf until the deadline', (proxy, match) => proxy.loseRepliesWhile(match, { count: 1 })],
  // the reply vanishes and the connection closes right after, the call outstanding
  ['connection closed right after', (proxy, match) => proxy.loseNextReplyThenClose(match)],
];

export async function startProxy(): Promise<FaultProxy> {
  const target = new URL(redisUrl());
  return FaultProxy.start({ target: { host: target.hostname, port: Number(target.port) } });
}

/** The SHA1 ioredis sends with EVALSHA for one of EchoMQ's scripts. */
export function scriptSha(name: ScriptName): string {
  return createHash('sha1').update(SCRIPTS[name].lua).digest('hex');
}

/**
 * Requests that run script `name` on queue `queue`: ioredis sends EVAL with the script's text the
 * first time on each socket, EVALSHA after that (and EVAL again after a NOSCRIPT).
 */
export function runsScript(name: ScriptName, queue: string): RequestMatcher {
  const sha = scriptSha(name);
  const tag = `{${queue}}`;
  return (command) => {
    const verb = command[0]?.toLowerCase();
    const isIt =
      (verb === 'evalsha' && command[1] === sha) || (verb === 'eval' && command[1] === SCRIPTS[name].lua);
    return isIt && command.some((arg) => arg.includes(tag));
  };
}

/** Every reply the proxy swallows, in order, with the request it answered. */
export function recordDrops(proxy: FaultProxy): (readonly string[])[] {
  const dropped: (readonly string[])[] = [];
  proxy.on('replyDropped', (command) => dropped.push(command));
  return dropped;
}

/** Where a job is, read on the real server: the sets holding its id (invariant 1 says at most one). */
export async function setsHolding(direct: Redis, queue: string, id: string): Promise<StateSet[]> {
  const keys = queueKeys(queue);
  const scores = await Promise.all(STATE_SETS.map((state) => direct.zscore(keys.set(state), id)));
  return STATE_SETS.filter((_, index) => scores[index] !== null);
}

/** The members of all four sets of a queue, on the real server. */
export async function members(direct: Redis, queue: string): Promise<Record<StateSet, string[]>> {
  const keys = queueKeys(queue);
  const lists = await Promise.all(STATE_SETS.map((state) => direct.zrange(keys.set(state), 0, -1)));
  return Object.fromEntries(STATE_SETS.map((state, index) => [state, lists[index].sort()])) as Record<
    StateSet,
    string[]
  >;
}

/** The ids of every job row of a queue on the real server (SCAN, so unfinished and retained rows alike). */
export async function rowIds(direct: Redis, queue: string): Promise<string[]> {
  const prefix = queueKeys(queue).jobPrefix;
  const ids: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await direct.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    ids.push(...keys.map((key) => key.slice(prefix.length)));
  } while (cursor !== '0');
  return ids.sort();
}

/** The queue's transition counters on the real server, as numbers. */
export async function metricsOf(direct: Redis, queue: string): Promise<Record<string, number>> {
  const raw = await direct.hgetall(queueKeys(queue).metrics);
  return Object.fromEntries(Object.entries(raw).map(([field, value]) => [field, Number(value)]));
}

/** The queue's events of one type that concern `id`, read from the stream on the real server. */
export async function eventsAbout(direct: Redis, queue: string, type: string, id: string): Promise<number> {
  const entries = await direct.xrange(queueKeys(queue).events, '-', '+');
  let count = 0;
  for (const [, flat] of entries) {
    const fields: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
    if (fields.type === type && (fields.id === id || (fields.ids ?? '').split(',').includes(id))) count += 1;
  }
  return count;
}

/** Resolves once the app's command connection is ready (at once if it is). */
export async function commandConnectionReady(app: INestApplication, timeoutMs = 15_000): Promise<void> {
  const client = app.get(RedisConnections).client;
  if (client.status === 'ready') return;
  await withTimeout(
    new Promise<void>((resolve) => client.once('ready', () => resolve())),
    timeoutMs,
    'the command connection to be ready again',
  );
}

/** Resolves when the app's command connection next closes (its deadline destroyed a silent socket). */
export function commandConnectionClosed(app: INestApplication): Promise<void> {
  const client = app.get(RedisConnections).client;
  return new Promise((resolve) => client.once('close', () => resolve()));
}

export function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
}

/**
 * A configured Snowflake node per app: ids are minted at once, with no node lease to wait for
 * or to renew through the faulty network (the lease has its own tests, issue 8 item 6).
 * Random per process and counted per app; every test uses its own queues, so ids only need to
 * be unique within one queue.
 */
let nodeCounter = randomInt(0, 1024);
export function nextNodeId(): number {
  nodeCounter = (nodeCounter + 1) % 1024;
  return nodeCounter;
}

/**
 * The apps of one test: booted against a URL (the proxy's, or the real server's), with the
 * small deadlines of FAST, closed by closeEvery() in afterEach. The shutdown grace is short so
 * a cleanup never waits long.
 */
export class Apps {
  private readonly apps: INestApplication[] = [];

  async boot(
    providers: Provider[],
    url: string,
    options: Partial<EchoMqModuleOptions> = {},
  ): Promise<INestApplication> {
    const app = await bootApp(providers, {
      connection: { url },
      shutdownGraceMs: 300,
      nodeId: nextNodeId(),
      ...FAST,
      ...options,
    });
    this.apps.push(app);
    return app;
  }

  /** Forgets an app the test closed itself. */
  forget(app: INestApplication): void {
    const at = this.apps.indexOf(app);
    if (at >= 0) this.apps.splice(at, 1);
  }

  async closeEvery(): Promise<void> {
    const apps = this.apps.splice(0);
    const results = await Promise.allSettled(apps.map((app) => app.close()));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/**
 * Stops a proxy once every connection through it has closed by itself (bounded by timeoutMs),
 * for afterEach after the apps closed. Why wait: FaultProxy.stop() resets the connections it
 * still holds, and when Redis has just closed its side of one (after the app's QUIT), Node has
 * already ended our side; resetAndDestroy() on an ended socket never closes its handle (Node
 * 20), which keeps the jest process alive after the run.
 */
export async function stopWhenDrained(proxy: FaultProxy, timeoutMs = 5_000): Promise<void> {
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      proxy.off('closed', check);
      resolve();
    };
    const check = (): void => {
      if (proxy.stats.open === 0) done();
    };
    const timer = setTimeout(done, timeoutMs);
    proxy.on('closed', check);
    check();
  });
  await proxy.stop();
}
