/**
 * Errors raised by body-parser (via http-errors) carry a 4xx `status`, `expose: true`
 * and a `type` such as 'entity.too.large'. They happen before Nest's router, so Nest
 * hands them over as they are (only a JSON SyntaxError is turned into a 400 by Nest).
 */
export interface BodyParserError extends Error {
  readonly status: number;
  readonly type: string;
  readonly limit?: number;
  readonly length?: number;
}

export function isBodyParserError(error: unknown): error is BodyParserError {
  if (!(error instanceof Error)) return false;
  const candidate = error as Partial<BodyParserError> & { expose?: unknown };
  return (
    typeof candidate.type === 'string' &&
    typeof candidate.status === 'number' &&
    candidate.status >= 400 &&
    candidate.status < 500 &&
    candidate.expose === true
  );
}

export function bodyParserMessage(error: BodyParserError): string {
  if (error.type === 'entity.too.large' && error.limit !== undefined) {
    return `Request body is larger than the limit of ${error.limit} bytes`;
  }
  return error.message;
}

/**
 * ioredis gives up on a command after its reconnect retries (MaxRetriesPerRequestError)
 * or when the connection is closed under it. That is Redis being unreachable, not a bug:
 * 503 tells clients and load balancers to come back later.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'MaxRetriesPerRequestError' || error.message === 'Connection is closed.';
}
