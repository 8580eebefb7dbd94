import { inspect } from 'node:util';
import { EchoMqError } from '@app/echomq';
import type { RawResponse } from '../../api/support/raw-http';
import type { HttpCase } from './hostile-http-jobs';
import type { LibraryCall } from './hostile-library-calls';

/** How many samples of each kind of broken answer the report keeps. */
const SAMPLES = 3;

/** A value as a short line, whatever it is (cycles, BigInt, symbols, functions). */
export function shown(value: unknown, max = 160): string {
  const text = inspect(value, { depth: 2, breakLength: Infinity, maxStringLength: 40, maxArrayLength: 5 });
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

function isErrorBody(status: number, response: RawResponse): boolean {
  if (!/^application\/json/.test(response.contentType)) return false;
  try {
    const body = JSON.parse(response.text) as { statusCode?: unknown; message?: unknown };
    const message = body.message;
    return body.statusCode === status && (typeof message === 'string' || Array.isArray(message));
  } catch {
    return false;
  }
}

/**
 * What the hostile-input scenario saw: every HTTP answer by status and route family, every
 * library call by outcome, and a few samples of each kind of answer that breaks a promise
 * (with the input that drew it, so a failure can be read and replayed).
 */
export class HostileTally {
  readonly byStatus = new Map<number, number>();
  readonly byFamily = new Map<string, number>();
  readonly byCode = new Map<string, number>();
  requests = 0;
  /** Answers outside 4xx, or a connection that ended without one. */
  non4xx = 0;
  /** 4xx answers without a JSON error body. */
  notJsonError = 0;
  calls = 0;
  typed = 0;
  untyped = 0;
  /** Malformed calls the library carried out instead of refusing. */
  accepted = 0;
  /** Calls that neither settled nor failed in time. */
  hung = 0;
  readonly samples = new Map<string, string[]>();

  http(item: HttpCase, outcome: RawResponse | Error): void {
    this.requests += 1;
    this.byFamily.set(item.family, (this.byFamily.get(item.family) ?? 0) + 1);
    const { method, path, body } = item.req;
    const input = `${item.family}: ${method} ${shown(path, 120)} ${body === undefined ? '' : shown(body, 120)}`;
    if (outcome instanceof Error) {
      this.non4xx += 1;
      return this.sample('dropped connection', `${input} -> ${outcome.message}`);
    }
    const status = outcome.status;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    if (status < 400 || status > 499) {
      this.non4xx += 1;
      this.sample(`HTTP ${status}`, `${input} -> ${shown(outcome.text, 200)}`);
    } else if (!isErrorBody(status, outcome)) {
      this.notJsonError += 1;
      this.sample(
        '4xx without a JSON error body',
        `${input} -> ${outcome.contentType} ${shown(outcome.text, 120)}`,
      );
    }
  }

  library(item: LibraryCall, outcome: { settled: 'resolved' | 'rejected' | 'hung'; value?: unknown }): void {
    this.calls += 1;
    const input = `${item.method}(${item.args.map((arg) => shown(arg, 80)).join(', ')})`;
    if (outcome.settled === 'hung') {
      this.hung += 1;
      return this.sample('hung call', input);
    }
    if (outcome.settled === 'resolved') {
      this.accepted += 1;
      return this.sample(`accepted ${item.method}`, `${input} -> ${shown(outcome.value, 80)}`);
    }
    const error = outcome.value;
    if (error instanceof EchoMqError) {
      this.typed += 1;
      this.byCode.set(error.code, (this.byCode.get(error.code) ?? 0) + 1);
      return;
    }
    this.untyped += 1;
    const stack =
      error instanceof Error ? (error.stack ?? '').split('\n').slice(0, 4).join(' | ') : shown(error);
    this.sample(`untyped ${item.method}`, `${input} -> ${stack}`);
  }

  /** Every kind of broken answer with its count in samples, one line each. */
  findings(): string[] {
    return [...this.samples].map(([kind, list]) => `${kind}: ${list.join(' || ')}`);
  }

  private sample(kind: string, text: string): void {
    const list = this.samples.get(kind) ?? [];
    if (list.length < SAMPLES) list.push(text);
    this.samples.set(kind, list);
  }
}
