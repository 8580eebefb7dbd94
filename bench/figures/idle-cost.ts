import { sleep } from '../support/clock';
import type { BenchContext } from '../support/context';
import { measurement, type Measurement } from '../support/measurement';
import { MonitorCounter, type MonitorTally } from '../support/monitor-count';
import { BenchRedisServer } from '../support/redis-server';
import { SYSTEM_IDS } from '../systems';
import type { QueueSystem, SystemId } from '../systems/types';
import type { WorkerHost } from '../support/worker-pool';

/** Each queue's worker runs at this concurrency: an idle worker's traffic does not depend on it. */
const IDLE_CONCURRENCY = 1;

/** One system's idle traffic over all rounds, by command (for the tables under the results). */
export interface IdleBreakdown {
  readonly system: SystemId;
  readonly label: string;
  /** Summed over the rounds. */
  readonly windowMs: number;
  readonly total: number;
  readonly commands: readonly { readonly command: string; readonly count: number }[];
}

export interface IdleCost {
  readonly measurements: Measurement[];
  readonly breakdown: readonly IdleBreakdown[];
}

export function idleQueueNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `idle-${i}`);
}

/** Where one system idles in a round: a redis-server of its own and a fresh worker host. */
interface IdleSite {
  readonly system: QueueSystem;
  readonly server: BenchRedisServer;
  readonly host: WorkerHost;
}

/**
 * One round: every system's fresh worker host serves the idle queues on its own redis-server
 * with no jobs; once all have started and settled, MONITOR counts what each sends over the
 * same window.
 */
async function idleRound(ctx: BenchContext): Promise<MonitorTally[]> {
  const { queues, settleMs, windowMs } = ctx.config.idle;
  const servers: BenchRedisServer[] = [];
  const hosts: WorkerHost[] = [];
  try {
    // allSettled: every server and host that did start is in the lists before `finally` runs.
    const settled = await Promise.allSettled(
      ctx.systems.map(async (system): Promise<IdleSite> => {
        const server = await BenchRedisServer.start();
        servers.push(server);
        const [host] = await ctx.pool.spawnFresh(system.id, 1);
        hosts.push(host);
        return { system, server, host };
      }),
    );
    const sites = settled.map((outcome) => {
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    });
    await Promise.all(
      sites.map((site) => site.host.start(site.server.url, IDLE_CONCURRENCY, false, idleQueueNames(queues))),
    );
    await sleep(settleMs);
    const counters = await Promise.all(
      sites.map((site) => MonitorCounter.start(site.server.url, site.system.scriptNames())),
    );
    await sleep(windowMs);
    const tallies = counters.map((counter) => counter.stop());
    const reports = await Promise.all(sites.map((site) => site.host.stop()));
    for (const [index, report] of reports.entries()) {
      if (report.started !== 0)
        throw new Error(`${sites[index].system.label} idle run started ${report.started} jobs`);
    }
    return tallies;
  } finally {
    await ctx.pool.retire(hosts);
    await Promise.all(servers.map((server) => server.stop()));
  }
}

function perMinute(tally: MonitorTally): number {
  return (tally.total * 60_000) / tally.windowMs;
}

/**
 * Figure 6: what one idle worker process serving ten empty queues costs Redis, in commands
 * per minute as MONITOR sees them. Every system runs at once, each on its own redis-server,
 * so a round takes one window whatever the number of systems (idle processes barely share
 * the cores, and their traffic is paced by their own timers and blocking timeouts).
 */
export async function idleCost(ctx: BenchContext): Promise<IdleCost> {
  const { queues, settleMs, windowMs, rounds } = ctx.config.idle;
  const tallies = new Map<SystemId, MonitorTally[]>(SYSTEM_IDS.map((id) => [id, []]));
  for (let round = 0; round < rounds; round++) {
    const runs = await idleRound(ctx);
    for (const [index, system] of ctx.systems.entries()) {
      tallies.get(system.id)!.push(runs[index]);
      ctx.log(
        `[idle] round ${round + 1}/${rounds} ${system.label}: ${Math.round(perMinute(runs[index]))} commands/min`,
      );
    }
  }
  const values = Object.fromEntries(SYSTEM_IDS.map((id) => [id, tallies.get(id)!.map(perMinute)])) as Record<
    SystemId,
    number[]
  >;
  const breakdown = ctx.systems.map((system): IdleBreakdown => {
    const runs = tallies.get(system.id)!;
    const counts = new Map<string, number>();
    for (const run of runs) {
      for (const [command, count] of run.byCommand) counts.set(command, (counts.get(command) ?? 0) + count);
    }
    return {
      system: system.id,
      label: system.label,
      windowMs: runs.reduce((sum, run) => sum + run.windowMs, 0),
      total: runs.reduce((sum, run) => sum + run.total, 0),
      commands: [...counts]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([command, count]) => ({ command, count })),
    };
  });
  const setup = `${queues} empty queues, counted over ${windowMs / 1000} s after ${settleMs / 1000} s of settling`;
  return {
    measurements: [
      measurement(
        'idle.commands_per_minute',
        `idle worker process serving ${setup}: commands it sends per minute (MONITOR lines from clients; commands run inside Lua scripts left out)`,
        'commands/min',
        'lower',
        values,
      ),
    ],
    breakdown,
  };
}
