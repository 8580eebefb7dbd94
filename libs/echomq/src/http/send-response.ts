import type { HttpServer } from '@nestjs/common';
import type { EchoMqErrorResponse } from './error-response';

/**
 * Sends an error answer on whichever HTTP platform serves the request, without importing
 * one. Nest's adapter is the first choice (as BaseExceptionFilter uses it); a filter made
 * with `new` outside dependency injection has none, so the reply object is recognised by
 * its own API: Fastify's reply (`code` / `header` / `send`) or Node's ServerResponse,
 * which Express's response is.
 */
export function sendErrorResponse(
  response: unknown,
  answer: EchoMqErrorResponse,
  adapter: HttpServer | undefined,
): void {
  if (adapter) return sendThroughAdapter(adapter, response, answer);
  if (isFastifyReply(response)) return sendThroughFastify(response, answer);
  if (isServerResponse(response)) return sendThroughNode(response, answer);
  throw new TypeError(
    'EchoMqExceptionFilter: the response is neither an Express, a Fastify nor a Node response',
  );
}

function sendThroughAdapter(adapter: HttpServer, response: unknown, answer: EchoMqErrorResponse): void {
  // Too late for a status: end what was started rather than leave the client hanging.
  if (adapter.isHeadersSent(response)) return void adapter.end(response);
  for (const [name, value] of Object.entries(answer.headers)) adapter.setHeader(response, name, value);
  adapter.reply(response, answer.body, answer.status);
}

/** The part of Fastify's reply used here. */
interface FastifyReplyLike {
  readonly sent: boolean;
  readonly raw: { end(): void };
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: unknown): FastifyReplyLike;
}

function isFastifyReply(response: unknown): response is FastifyReplyLike {
  const candidate = response as Partial<Record<keyof FastifyReplyLike, unknown>> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.code === 'function' &&
    typeof candidate.header === 'function' &&
    typeof candidate.send === 'function' &&
    typeof candidate.raw === 'object'
  );
}

function sendThroughFastify(reply: FastifyReplyLike, answer: EchoMqErrorResponse): void {
  if (reply.sent) return reply.raw.end();
  reply.code(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
  reply.send(answer.body);
}

/** The part of Node's ServerResponse used here (Express's response extends it). */
interface ServerResponseLike {
  readonly headersSent: boolean;
  statusCode: number;
  setHeader(name: string, value: string | number): unknown;
  end(body?: string): unknown;
}

function isServerResponse(response: unknown): response is ServerResponseLike {
  const candidate = response as Partial<Record<keyof ServerResponseLike, unknown>> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.headersSent === 'boolean' &&
    typeof candidate.setHeader === 'function' &&
    typeof candidate.end === 'function'
  );
}

function sendThroughNode(response: ServerResponseLike, answer: EchoMqErrorResponse): void {
  if (response.headersSent) return void response.end();
  const text = JSON.stringify(answer.body);
  response.statusCode = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(text));
  response.end(text);
}
