import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Post,
  Req,
  Res,
  UnauthorizedException,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { DashboardSessions } from '../auth/dashboard-sessions';
import { Public } from '../auth/public.decorator';
import { sessionCookieName, sessionCookieOf, sessionCookieOptions } from '../auth/session-cookie';
import { bearerToken, tokensMatch } from '../auth/token-match';
import { ApiConfig } from '../config/api-config';
import { LoginDto } from './dto/login.dto';

/**
 * The dashboard's login: the page sends the api token once and gets a session cookie
 * (HttpOnly, SameSite=Strict), because a browser cannot put a bearer header on a page load or
 * an EventSource. Public: these routes are how one gets past the guard.
 */
@ApiExcludeController()
@Public()
@Controller('dashboard/session')
export class DashboardSessionController {
  constructor(
    private readonly sessions: DashboardSessions,
    private readonly config: ApiConfig,
  ) {}

  @Get()
  state(@Req() request: Request): { required: boolean; authenticated: boolean } {
    const required = this.sessions.required;
    return { required, authenticated: !required || this.authenticated(request) };
  }

  @Post()
  @HttpCode(HttpStatus.NO_CONTENT)
  login(
    @Body() body: LoginDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): void {
    const expected = this.config.apiToken;
    if (expected === undefined) return;
    if (!tokensMatch(body.token, expected)) throw new UnauthorizedException('That is not the api token');
    const ttlMs = this.sessions.ttlMs;
    response.cookie(sessionCookieName(request), this.sessions.issue(), sessionCookieOptions(request, ttlMs));
  }

  @Delete()
  @HttpCode(HttpStatus.NO_CONTENT)
  logout(@Req() request: Request, @Res({ passthrough: true }) response: Response): void {
    this.sessions.revoke(sessionCookieOf(request));
    response.clearCookie(sessionCookieName(request), sessionCookieOptions(request));
  }

  private authenticated(request: Request): boolean {
    const expected = this.config.apiToken;
    const presented = bearerToken(request.headers.authorization);
    if (expected !== undefined && presented !== undefined && tokensMatch(presented, expected)) return true;
    return this.sessions.verify(sessionCookieOf(request));
  }
}
