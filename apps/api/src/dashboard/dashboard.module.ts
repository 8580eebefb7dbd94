import { Module } from '@nestjs/common';
import { DashboardDataController } from './data.controller';
import { DashboardEventHub } from './events/event-hub';
import { SharedListReads } from './lists/shared-reads';
import { OverviewSampler } from './overview/overview-sampler';
import { DashboardPageController } from './page.controller';
import { DashboardSessionController } from './session.controller';

/**
 * The dashboard at /dashboard (docs/dashboard.md): its page, its login, and the reads and live
 * feed the page uses. One sampler, one event hub and one set of shared list reads per api
 * process, shared by every open page.
 * The session store and the guard that accepts its cookie live in auth/ (AuthModule).
 */
@Module({
  controllers: [DashboardPageController, DashboardSessionController, DashboardDataController],
  providers: [OverviewSampler, DashboardEventHub, SharedListReads],
  exports: [OverviewSampler, DashboardEventHub, SharedListReads],
})
export class DashboardModule {}
