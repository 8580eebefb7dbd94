import { Injectable, Module, type INestApplication, type Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { EchoMqModule, Processor } from '@app/echomq';
import { Reaper } from '@app/echomq/internal';
import { redisUrl, uniqueQueue } from '../support/redis';

const PERIOD_MS = 60;
const FIRINGS = 6;

/** Records when the application's own @Interval handler runs, and says when it ran FIRINGS times. */
class Ticks {
  readonly at: number[] = [];
  private reached!: () => void;
  readonly done = new Promise<void>((resolve) => (this.reached = resolve));

  record(): void {
    this.at.push(performance.now());
    if (this.at.length === FIRINGS) this.reached();
  }

  /** The shortest time between two firings: a handler registered twice fires in pairs, a few ms apart. */
  shortestGap(): number {
    const gaps = this.at.slice(1, FIRINGS).map((at, index) => at - this.at[index]);
    return Math.min(...gaps);
  }
}

let ticks = new Ticks();

@Injectable()
class AppHeartbeat {
  @Interval(PERIOD_MS)
  beat(): void {
    ticks.record();
  }
}

/** A provider of a feature module that manages the app's schedules at run time, as apps do. */
@Injectable()
class Jobs {
  constructor(readonly registry: SchedulerRegistry) {}
}

@Module({ providers: [Jobs], exports: [Jobs] })
class JobsModule {}

const apps: INestApplication[] = [];

async function boot(imports: Type[] | unknown[], providers: Type[]): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: imports as never[],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  apps.push(app);
  await app.init();
  return app;
}

function makeProcessor(queue: string): Type {
  @Processor(queue)
  class Noop {
    process(): void {}
  }
  return Noop;
}

function reapersIn(app: INestApplication): Reaper[] {
  return app
    .get(DiscoveryService)
    .getProviders()
    .filter((wrapper) => wrapper.instance instanceof Reaper)
    .map((wrapper) => wrapper.instance as Reaper);
}

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

describe('the application’s own schedules next to EchoMQ', () => {
  const echomq = (): unknown =>
    EchoMqModule.forRoot({ connection: { url: redisUrl() }, reaper: { intervalMs: 100 } });

  it.each([
    ['imports ScheduleModule.forRoot() itself', () => [ScheduleModule.forRoot(), echomq()]],
    ['imports it after EchoMqModule', () => [echomq(), ScheduleModule.forRoot()]],
    ['does not import ScheduleModule', () => [echomq()]],
  ])('an @Interval handler fires once per period when the app %s', async (_case, imports) => {
    ticks = new Ticks();
    await boot(imports(), [AppHeartbeat, makeProcessor(uniqueQueue('sched'))]);
    await ticks.done;
    // Registered twice, the handler would fire in pairs (gaps of a few ms, never near the period).
    expect(ticks.shortestGap()).toBeGreaterThan(PERIOD_MS / 2);
  });

  it.each([
    ['with ScheduleModule imported by the app', () => [ScheduleModule.forRoot(), echomq()]],
    ['without it', () => [echomq()]],
  ])('one reaper runs per process %s, and it cannot be started twice', async (_case, imports) => {
    const app = await boot(imports(), [makeProcessor(uniqueQueue('sched'))]);
    const reapers = reapersIn(app);
    expect(reapers).toHaveLength(1);
    expect(reapers[0].running).toBe(true);
    expect(() => reapers[0].start([])).toThrow('already running');
  });

  it.each([
    ['before EchoMqModule', () => [ScheduleModule.forRoot(), echomq()]],
    ['after EchoMqModule', () => [echomq(), ScheduleModule.forRoot()]],
  ])('the app’s SchedulerRegistry, imported %s, is the one holding its handlers', async (_case, imports) => {
    ticks = new Ticks();
    const app = await boot([...imports(), JobsModule], [AppHeartbeat]);
    // What a feature module's provider is injected with: the global registry.
    expect(app.get(Jobs).registry.getIntervals()).toHaveLength(1);
  });
});
