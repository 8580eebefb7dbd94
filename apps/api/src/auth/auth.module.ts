import { Global, Module } from '@nestjs/common';
import { DashboardSessions } from './dashboard-sessions';

/** Who may call the api: the dashboard's sessions, shared by the global guard and the session routes. */
@Global()
@Module({ providers: [DashboardSessions], exports: [DashboardSessions] })
export class AuthModule {}
