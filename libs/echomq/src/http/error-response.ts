import { STATUS_CODES } from 'node:http';
import type { EchoMqError } from '../errors';
import { httpMappingOf } from './http-error-map';

/**
 * The JSON body of an EchoMQ error answered over HTTP. `code` is the error's stable code,
 * the field a client switches on; `message` is for people and may change between releases.
 * Some errors add fields a client can act on: `limitBytes` and `payloadBytes`
 * (PAYLOAD_TOO_LARGE), `issues` and `index` (INVALID_JOB_DATA), `jobId`, `expectedState`
 * (JOB_STATE), `timeoutMs` (WAIT_TIMEOUT), `option` (INVALID_OPTION), `attempt` (STALE).
 */
export interface EchoMqErrorBody {
  readonly statusCode: number;
  readonly code: string;
  readonly message: string;
  /** The HTTP reason phrase, e.g. 'Not Found'. */
  readonly error: string;
  readonly [detail: string]: unknown;
}

/** Everything an HTTP answer to one EchoMQ error needs, whatever the platform sends it. */
export interface EchoMqErrorResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: EchoMqErrorBody;
}

/**
 * The HTTP status EchoMqExceptionFilter answers an EchoMQ error with, for an application
 * that keeps its own exception filter and wants to map the library's errors the same way.
 * An EchoMqError of a class EchoMQ does not define is a 500.
 */
export function httpStatusOf(error: EchoMqError): number {
  return httpMappingOf(error).status;
}

/** The status, headers and body for an error; a 5xx never carries the error's own message. */
export function errorResponseOf(error: EchoMqError): EchoMqErrorResponse {
  const mapping = httpMappingOf(error);
  const status = mapping.status;
  const message = mapping.publicMessage?.(error) ?? (status >= 500 ? 'Internal server error' : error.message);
  const body: EchoMqErrorBody = {
    statusCode: status,
    code: error.code,
    message,
    error: STATUS_CODES[status] ?? 'Error',
    ...mapping.details?.(error),
  };
  const seconds = mapping.retryAfterSeconds?.(error);
  const headers: Record<string, string> = seconds === undefined ? {} : { 'Retry-After': String(seconds) };
  return { status, headers, body };
}
