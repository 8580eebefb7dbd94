import type { DynamicModule } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { ScheduleModule, type ScheduleModuleOptions } from '@nestjs/schedule';

/** Every kind of handler off: the explorer of this import then registers nothing. */
const INERT: ScheduleModuleOptions = { cronJobs: false, intervals: false, timeouts: false };

/**
 * Runs the application's own @Cron, @Interval and @Timeout handlers exactly once.
 *
 * EchoMQ needs no scheduler itself (the reaper keeps its own timer), but earlier releases
 * imported ScheduleModule.forRoot(), so applications may rely on it to run their handlers.
 * Each ScheduleModule import brings its own explorer, and an application that also
 * imports it would run every handler twice. This import decides once the application's
 * modules are known: when the application imports ScheduleModule itself, this one stays
 * inert; otherwise it schedules the application's handlers as before. (The handlers then
 * run, but the application cannot inject this import's SchedulerRegistry: an application
 * that manages jobs at run time imports ScheduleModule.forRoot() itself.)
 */
export const appScheduleModule: DynamicModule = {
  ...ScheduleModule.forRootAsync({
    inject: [ModulesContainer],
    useFactory: (modules: ModulesContainer): ScheduleModuleOptions => {
      let imports = 0;
      for (const module of modules.values()) if (module.metatype === ScheduleModule) imports++;
      return imports > 1 ? INERT : {};
    },
  }),
  // Not global: its SchedulerRegistry (empty when inert) must never be the one the
  // application's own modules are given. Its explorer still finds handlers in every module.
  global: false,
};
