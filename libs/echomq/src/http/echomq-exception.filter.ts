import { type ArgumentsHost, Catch, type ExceptionFilter, Logger, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { EchoMqError } from '../errors';
import { errorResponseOf } from './error-response';
import { sendErrorResponse } from './send-response';

/**
 * Answers every EchoMqError thrown by an HTTP route with its status and a JSON body
 * `{ statusCode, code, message, error }` (plus details such as `limitBytes`), so a
 * malformed id is a 400 INVALID_JOB_ID rather than a 500, and a 5xx never shows
 * internals (Redis addresses, handler error text): those go to the log.
 * The statuses are those of `httpStatusOf`; docs/http.md lists them.
 *
 * Register it either way; both work on Express and Fastify:
 *
 *   app.useGlobalFilters(new EchoMqExceptionFilter());          // in main.ts
 *   providers: [{ provide: APP_FILTER, useClass: EchoMqExceptionFilter }]  // in a module
 *
 * As an APP_FILTER it receives Nest's HttpAdapterHost and replies through the adapter,
 * as Nest's own BaseExceptionFilter does; made with `new` it recognises the platform's
 * reply object instead. It catches EchoMqError only: other errors reach the filters that
 * handle them, or Nest's default one.
 */
@Catch(EchoMqError)
export class EchoMqExceptionFilter implements ExceptionFilter<EchoMqError> {
  constructor(@Optional() private readonly adapterHost?: HttpAdapterHost) {}

  catch(error: EchoMqError, host: ArgumentsHost): void {
    // Registered app-wide, it also meets errors of GraphQL resolvers and microservice
    // handlers, which have no HTTP response: give those back untouched, typed error and all.
    if (host.getType() !== 'http') throw error;
    const answer = errorResponseOf(error);
    logServerFault(error, answer.status);
    sendErrorResponse(host.switchToHttp().getResponse(), answer, this.adapterHost?.httpAdapter);
  }
}

const logger = new Logger('EchoMqExceptionFilter');

/**
 * What the client is not told, the operator is. Redis being away (503) and a wait running
 * out (504) are conditions, logged as one-line warnings; any other 5xx is a bug, with its stack.
 */
function logServerFault(error: EchoMqError, status: number): void {
  if (status < 500) return;
  if (status === 503 || status === 504) logger.warn(`${error.code}: ${error.message}`);
  else logger.error(error.stack ?? `${error.code}: ${error.message}`);
}
