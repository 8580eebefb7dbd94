import { EchoMqError, EchoMqExceptionFilter } from '@app/echomq';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Logger,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Response } from 'express';
import { errorBody, type ErrorBody } from './error-body';
import { bodyParserMessage, isBodyParserError, isRedisUnavailable } from './error-status';

/**
 * One place that turns anything thrown into a JSON error response, so a client
 * mistake is never reported as a 500 and a 500 never leaks internals.
 * EchoMQ's own errors are answered by the library's EchoMqExceptionFilter (status and
 * stable `code`); this filter adds what only the api meets: Nest's HttpExceptions
 * (validation, guards, unknown routes), body-parser's errors and ioredis giving up.
 * It also sees errors raised before routing (body-parser, unknown routes), because
 * Nest passes Express's errors through the global filters.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Api');
  private readonly echoMq: EchoMqExceptionFilter;

  constructor(@Optional() adapterHost?: HttpAdapterHost) {
    this.echoMq = new EchoMqExceptionFilter(adapterHost);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (exception instanceof EchoMqError) return this.echoMq.catch(exception, host);
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) {
      // Too late for a status: end what was started rather than leave the client hanging.
      response.end();
      return;
    }
    const [status, body] = this.describe(exception);
    if (status === 503) this.logger.warn(`Redis unavailable: ${(exception as Error).message}`);
    else if (status >= 500) {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
    }
    response.status(status).json(body);
  }

  private describe(exception: unknown): [number, ErrorBody | object] {
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const payload = exception.getResponse();
      if (typeof payload === 'string') return [status, errorBody(status, payload)];
      const message = (payload as { message?: unknown }).message;
      if (typeof message === 'string' || Array.isArray(message)) {
        return [status, errorBody(status, message as string | string[])];
      }
      // A body built on purpose (Terminus's health report): send it untouched.
      return [status, payload];
    }
    if (isBodyParserError(exception)) {
      return [exception.status, errorBody(exception.status, bodyParserMessage(exception))];
    }
    if (isRedisUnavailable(exception)) {
      return [503, errorBody(503, 'Redis is unavailable; try again later')];
    }
    return [500, errorBody(500, 'Internal server error')];
  }
}
