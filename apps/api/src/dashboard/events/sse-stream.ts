import type { Response } from 'express';

/** Job messages one page may have waiting between two bursts; past it they are dropped and counted. */
export const PAGE_BUFFER_MAX = 200;

function frame(event: string, json: string): string {
  // JSON.stringify escapes newlines inside strings, so one data line holds the whole message.
  return `event: ${event}\ndata: ${json}\n\n`;
}

/**
 * One open page's server-sent event stream, with a bounded buffer. Messages wait here until
 * the hub's next burst; only the latest overview is kept (a newer one replaces it), job
 * messages up to PAGE_BUFFER_MAX, and what does not fit is counted and announced once as
 * `lagged` (the page then reads afresh). While the socket cannot take more (a slow client:
 * write returned false), nothing is written until it drains, so a slow page holds at most one
 * socket buffer and this buffer, never a growing queue.
 */
export class SseStream {
  private overview?: string;
  private jobs: string[] = [];
  private dropped = 0;
  private congested = false;
  private ended = false;

  constructor(private readonly response: Response) {}

  /** Sends the headers, the reconnect delay and, when there is one, the current overview. */
  open(retryMs: number, overview: string | undefined): void {
    this.response.status(200);
    this.response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.response.setHeader('Cache-Control', 'no-cache, no-transform');
    this.response.setHeader('Connection', 'keep-alive');
    // Proxies such as nginx would otherwise hold the stream back in their buffers.
    this.response.setHeader('X-Accel-Buffering', 'no');
    this.response.flushHeaders();
    this.response.socket?.setNoDelay(true);
    this.write(`retry: ${retryMs}\n\n${overview === undefined ? '' : frame('overview', overview)}`);
  }

  offerOverview(json: string): void {
    this.overview = json;
  }

  /** Takes what fits of these job messages; the rest, and `alsoDropped` more, are counted as dropped. */
  offerJobs(messages: readonly string[], alsoDropped = 0): void {
    const room = Math.max(0, PAGE_BUFFER_MAX - this.jobs.length);
    const taken = messages.length <= room ? messages : messages.slice(0, room);
    this.jobs.push(...taken);
    this.dropped += messages.length - taken.length + alsoDropped;
  }

  /** Writes what waits as one burst, unless the socket is still full. */
  flush(): void {
    if (this.ended || this.congested) return;
    let burst = this.overview === undefined ? '' : frame('overview', this.overview);
    for (const job of this.jobs) burst += frame('job', job);
    if (this.dropped > 0) burst += frame('lagged', JSON.stringify({ dropped: this.dropped }));
    this.overview = undefined;
    this.jobs = [];
    this.dropped = 0;
    if (burst !== '') this.write(burst);
  }

  /** A comment line: keeps proxies and the browser from closing an idle stream. */
  heartbeat(): void {
    if (!this.ended && !this.congested) this.write(': heartbeat\n\n');
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.response.end();
  }

  private write(chunk: string): void {
    if (this.response.write(chunk)) return;
    this.congested = true;
    this.response.once('drain', () => {
      this.congested = false;
    });
  }
}
