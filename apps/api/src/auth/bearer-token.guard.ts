import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { ApiConfig } from '../config/api-config';
import { IS_PUBLIC } from './public.decorator';
import { bearerToken, tokensMatch } from './token-match';

/**
 * Global guard: when EMQ_API_TOKEN is set, every route not marked @Public() needs
 * `Authorization: Bearer <token>`. Guards run before pipes and handlers, so a
 * rejected request never reaches Redis.
 */
@Injectable()
export class BearerTokenGuard implements CanActivate {
  constructor(
    private readonly config: ApiConfig,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const expected = this.config.apiToken;
    if (expected === undefined) return true;
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    const http = context.switchToHttp();
    const presented = bearerToken(http.getRequest<Request>().headers.authorization);
    if (presented === undefined || !tokensMatch(presented, expected)) {
      // RFC 6750: tell the client which scheme the resource expects.
      http.getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer realm="echomq"');
      throw new UnauthorizedException('A valid bearer token is required (Authorization: Bearer <token>)');
    }
    return true;
  }
}
