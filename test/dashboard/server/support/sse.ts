import { request, type IncomingMessage } from 'node:http';

export interface SseMessage {
  readonly event: string;
  readonly data: string;
}

/**
 * A server-sent event stream read over real HTTP, parsed as EventSource would (event and data
 * lines, a blank line ends a message, comment lines counted apart). `messages` grows as they come.
 */
export class SseReader {
  readonly messages: SseMessage[] = [];
  comments = 0;
  retry?: number;
  private buffer = '';
  private response?: IncomingMessage;
  private closedFlag = false;
  private readonly abort = new AbortController();

  private constructor() {}

  static open(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const reader = new SseReader();
    const url = new URL(path, baseUrl);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        { headers: { accept: 'text/event-stream', ...headers }, signal: reader.abort.signal },
        (res) => {
          reader.response = res;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => reader.take(chunk));
          res.on('close', () => (reader.closedFlag = true));
          res.on('error', () => (reader.closedFlag = true));
          resolve(reader);
        },
      );
      req.on('error', (error) => {
        reader.closedFlag = true;
        if (!reader.response) reject(error);
      });
      req.end();
    });
  }

  get status(): number {
    return this.response?.statusCode ?? 0;
  }

  header(name: string): string | undefined {
    const value = this.response?.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** The parsed data of every message of this event type so far. */
  data<T>(event: string): T[] {
    return this.messages.filter((m) => m.event === event).map((m) => JSON.parse(m.data) as T);
  }

  /** Resolves once a message matches; fails after `timeoutMs`. */
  async next<T>(event: string, match: (data: T) => boolean = () => true, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.data<T>(event).find(match);
      if (found !== undefined) return found;
      if (this.closedFlag) throw new Error(`stream closed before a matching ${event} event`);
      if (Date.now() > deadline) throw new Error(`no matching ${event} event within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.abort.abort();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      let isMessage = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments += 1;
        else if (line.startsWith('retry: ')) this.retry = Number(line.slice(7));
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) {
          data.push(line.slice(6));
          isMessage = true;
        }
      }
      if (isMessage) this.messages.push({ event, data: data.join('\n') });
    }
  }
}
