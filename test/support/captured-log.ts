import type { LoggerService } from '@nestjs/common';

export type LogLevel = 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';

export interface LogLine {
  readonly level: LogLevel;
  readonly message: string;
  readonly context?: string;
}

interface Waiter {
  readonly matches: (line: LogLine) => boolean;
  readonly count: number;
  readonly resolve: (lines: LogLine[]) => void;
}

/**
 * A Nest LoggerService that keeps every line, so a test reads what an operator would
 * see, and can await a line (an event) instead of sleeping until it has probably come.
 * Give it to Test.createTestingModule(...).setLogger() so lines logged while the module
 * compiles are kept too.
 */
export class CapturedLog implements LoggerService {
  readonly lines: LogLine[] = [];
  private waiters: Waiter[] = [];

  log(message: unknown, ...rest: unknown[]): void {
    this.add('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.add('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.add('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.add('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.add('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.add('fatal', message, rest);
  }

  matching(matches: (line: LogLine) => boolean): LogLine[] {
    return this.lines.filter(matches);
  }

  /** Resolves with the matching lines once `count` of them were logged; fails after timeoutMs. */
  waitFor(matches: (line: LogLine) => boolean, count = 1, timeoutMs = 20_000): Promise<LogLine[]> {
    const found = this.matching(matches);
    if (found.length >= count) return Promise.resolve(found);
    return new Promise<LogLine[]>((resolve, reject) => {
      const waiter: Waiter = {
        matches,
        count,
        resolve: (lines) => {
          clearTimeout(timer);
          resolve(lines);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        const lines = this.lines.map((line) => `  ${line.level} ${line.message}`).join('\n');
        reject(new Error(`Fewer than ${count} matching log lines within ${timeoutMs} ms; got:\n${lines}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private add(level: LogLevel, message: unknown, rest: unknown[]): void {
    // Nest passes the context last; an error's stack, when given, comes before it.
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : undefined;
    const line: LogLine = { level, message: String(message), context };
    this.lines.push(line);
    for (const waiter of [...this.waiters]) {
      const found = this.matching(waiter.matches);
      if (found.length < waiter.count) continue;
      this.waiters = this.waiters.filter((other) => other !== waiter);
      waiter.resolve(found);
    }
  }
}
