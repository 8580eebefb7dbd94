import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { ApiConfig } from '../config/api-config';
import { isForeignWrite, passesCsrfRule } from './csrf';
import { DashboardSessions, type LiveSession } from './dashboard-sessions';
import { IS_PUBLIC } from './public.decorator';
import { attachSession } from './request-session';
import { sessionCookieOf } from './session-cookie';
import { bearerToken, tokensMatch } from './token-match';

/**
 * Global guard. First, on every route and whether or not a token is set, a write that a
 * browser sent for another site's page (Sec-Fetch-Site or Origin say so, see isForeignWrite)
 * is refused with 403. Then, when EMQ_API_TOKEN is set, every route not marked @Public() needs
 * either `Authorization: Bearer <token>` or a live dashboard session cookie (a browser cannot
 * put a bearer header on a page load or an EventSource). A request that sends an Authorization
 * header is judged by it alone. A write authenticated by the cookie must also carry the
 * dashboard's CSRF header (403 without it). Guards run before pipes and handlers, so a
 * rejected request never reaches Redis.
 */
@Injectable()
export class ApiAuthGuard implements CanActivate {
  constructor(
    private readonly config: ApiConfig,
    private readonly reflector: Reflector,
    private readonly sessions: DashboardSessions,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    if (isForeignWrite(request)) {
      throw new ForbiddenException(
        "A write sent by another site's page is refused (its Origin or Sec-Fetch-Site says so)",
      );
    }
    const expected = this.config.apiToken;
    if (expected === undefined) return true;
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    const header = request.headers.authorization;
    const session = header === undefined ? this.sessionOf(request) : undefined;
    if (session !== undefined) {
      if (!passesCsrfRule(request)) {
        throw new ForbiddenException(
          'A write authenticated by the dashboard session must send the header X-EMQ-Dashboard: 1',
        );
      }
      // The event stream ends itself when this session does (logout, expiry).
      attachSession(request, session);
      return true;
    }
    const presented = bearerToken(header);
    if (presented === undefined || !tokensMatch(presented, expected)) {
      // RFC 6750: tell the client which scheme the resource expects.
      http.getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer realm="echomq"');
      throw new UnauthorizedException('A valid bearer token is required (Authorization: Bearer <token>)');
    }
    return true;
  }

  private sessionOf(request: Request): LiveSession | undefined {
    if (!this.config.dashboardEnabled) return undefined;
    return this.sessions.session(sessionCookieOf(request));
  }
}
