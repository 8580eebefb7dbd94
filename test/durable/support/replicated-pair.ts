import type { INestApplication, Provider } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { DurableOptions, EchoMqModuleOptions } from '@app/echomq';
import { bootApp } from '../../support/nest';
import { RedisServer } from '../../support/redis-server';
import { NODE_ARGS, signalNode, startReplica } from '../../support/sentinel-replica';
import { closeAll, waitUntil } from '../../worker/fixtures/support';

/**
 * A master and one replica (redis-server --replicaof) on loopback, for the durable-write suites,
 * with direct clients on both: what a test asserts about replication it reads on the replica
 * itself. A replica that stops acknowledging is a real one stopped with SIGSTOP (pause) and
 * resumed with SIGCONT (resume): the master keeps its link and simply hears nothing.
 */
export class ReplicatedPair {
  readonly onMaster: Redis;
  readonly onReplica: Redis;
  private readonly apps: INestApplication[] = [];
  private paused = false;

  private constructor(
    readonly master: RedisServer,
    readonly replica: RedisServer,
  ) {
    this.onMaster = new Redis(master.url);
    this.onReplica = new Redis(replica.url);
  }

  static async start(): Promise<ReplicatedPair> {
    // AOF on the master: apps connected to it would otherwise warn that it persists nothing.
    const master = await RedisServer.start({ args: [...NODE_ARGS, '--appendonly', 'yes'] });
    try {
      return new ReplicatedPair(master, await startReplica(master.port));
    } catch (error) {
      await master.destroy();
      throw error;
    }
  }

  /** Boots an app on the master with durable writes (1 replica unless told) and a configured node. */
  async boot(
    providers: Provider[],
    durable: DurableOptions | undefined,
    options: Partial<EchoMqModuleOptions> = {},
  ): Promise<INestApplication> {
    const app = await bootApp(providers, {
      connection: { url: this.master.url },
      nodeId: 7,
      shutdownGraceMs: 300,
      ...(durable ? { durable } : {}),
      ...options,
    });
    this.apps.push(app);
    return app;
  }

  /**
   * Stops the replica, once it has acknowledged everything written so far: its acknowledged
   * offset is then as recent as it gets, so a WAIT that covers no new write would count it at
   * once (the trap a confirmation must not fall into), and only a WAIT after a new write waits.
   */
  async pause(): Promise<void> {
    await this.onMaster.set('pair:acknowledged', Date.now());
    const acknowledged = await this.onMaster.wait(1, 10_000);
    if (acknowledged !== 1) throw new Error('the replica did not acknowledge before the pause');
    signalNode(this.replica, 'SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    signalNode(this.replica, 'SIGCONT');
    this.paused = false;
  }

  resumeIfPaused(): void {
    if (this.paused) this.resume();
  }

  /** Clients on the master blocked in WAIT right now (CLIENT LIST: cmd=wait, flag b). */
  async blockedInWait(): Promise<number> {
    const list = await this.onMaster.client('LIST');
    return String(list)
      .split('\n')
      .filter((line) => / cmd=wait /.test(line) && / flags=\S*b/.test(line)).length;
  }

  /** Waits until some connection waits in WAIT for the replica. */
  async untilSomeoneWaits(message: string): Promise<void> {
    await waitUntil(async () => (await this.blockedInWait()) > 0, message);
  }

  /**
   * Closes one app now, the replica left as it is: a shutdown while the replica is stopped (what
   * closeApps, which resumes it first, never shows).
   */
  async close(app: INestApplication): Promise<void> {
    const at = this.apps.indexOf(app);
    if (at >= 0) this.apps.splice(at, 1);
    await app.close();
  }

  /** Closes the apps of the last test (the replica resumed first, so nothing waits on it). */
  async closeApps(): Promise<void> {
    this.resumeIfPaused();
    await closeAll(this.apps.splice(0));
  }

  async destroy(): Promise<void> {
    await this.closeApps();
    this.onMaster.disconnect();
    this.onReplica.disconnect();
    await Promise.all([this.replica.destroy(), this.master.destroy()]);
  }
}
