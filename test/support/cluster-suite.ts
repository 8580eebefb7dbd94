import type { EchoMqConnection } from '@app/echomq';
import { RedisCluster, type RedisClusterOptions } from './redis-cluster';

/** How long a suite's cluster may take to start (6 nodes with replicas, each step a bounded poll). */
const START_TIMEOUT_MS = 60_000;
/** How long afterAll waits for a start still under way, and the destroy after it. */
const FINISH_TIMEOUT_MS = 120_000;

/** The cluster of one describe block. */
export interface SuiteCluster {
  /** The started cluster; read inside tests and hooks (it does not exist before beforeAll). */
  readonly cluster: RedisCluster;
}

/**
 * Starts a cluster in the describe block's beforeAll and destroys it in its afterAll, also
 * when the start outlived the beforeAll's timeout (a slow machine: with replicas, formation
 * polls six nodes): afterAll then waits for that start to end and destroys what it made, so no
 * redis-server outlives the suite. `closeFirst` closes what uses the cluster (applications,
 * clients) before it goes: jest runs afterAll hooks in the order they were declared, so a hook
 * of the block's own would run after the destroy. Declare it before the block's own beforeAll
 * hooks that use the cluster.
 */
export function clusterPerSuite(
  masters = 3,
  options: RedisClusterOptions = {},
  closeFirst?: () => Promise<unknown>,
): SuiteCluster {
  let starting: Promise<RedisCluster | undefined> | undefined;
  let started: RedisCluster | undefined;
  beforeAll(async () => {
    const start = RedisCluster.start(masters, options);
    // afterAll's copy: a start that failed destroyed its own nodes already.
    starting = start.catch(() => undefined);
    started = await start;
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    try {
      await closeFirst?.();
    } finally {
      await (await starting)?.destroy();
    }
  }, FINISH_TIMEOUT_MS);
  return {
    get cluster(): RedisCluster {
      if (!started) throw new Error('the suite cluster is not started (its beforeAll failed or has not run)');
      return started;
    },
  };
}

/**
 * How long ioredis waits for a socket it ends to close before it destroys it (disconnectTimeout,
 * 2 s by default). Its timer is cleared only by a close that comes after the end: the cluster
 * client's slot-map refreshes open a connection per try and end it, and one that tried a node
 * the test killed was closed already, so its timer runs out in full and holds jest past the
 * run ("Jest did not exit one second after the test run has completed", seen with
 * failover.spec at 2 s and gone at 100 ms).
 */
const DISCONNECT_TIMEOUT_MS = 100;

/** The module option `connection` for an application on `cluster` in a test. */
export function clusterConnection(cluster: RedisCluster): EchoMqConnection {
  return {
    cluster: {
      nodes: cluster.nodes,
      options: { redisOptions: { disconnectTimeout: DISCONNECT_TIMEOUT_MS } },
    },
  };
}
