import type { Response } from 'express';

/** Job messages one page may have waiting between two bursts; past it they are dropped and counted. */
export const PAGE_BUFFER_MAX = 200;
/** The longest delay a Node timer takes (about 24.8 days); a session ends long before. */
const TIMER_MAX_MS = 2 ** 31 - 1;

/**
 * How many samples a tail covers: each sample changes at most its queue's newest history bucket,
 * so the newest TAIL_SAMPLES buckets hold every change of the last TAIL_SAMPLES samples. Three,
 * because bursts (BURST_MS, 250 ms) are at most three samples apart at the shortest refresh
 * (100 ms): a page that is keeping up always gets tails.
 */
export const TAIL_SAMPLES = 3;

/** One overview as the stream sends it: the whole of it, or only what the last samples changed. */
export interface OverviewFrames {
  readonly seq: number;
  /** Every queue's whole history. */
  readonly json: string;
  /** Each queue's newest TAIL_SAMPLES history buckets: enough for a page that has sample `seq - TAIL_SAMPLES` or later. */
  readonly tailJson: string;
}

/** The dashboard session a stream was opened with: it ends when the session does. */
export interface StreamSession {
  readonly expiresAt: number;
  /** False once the session is logged out (or past its expiry). */
  isLive(): boolean;
}

export interface StreamOptions {
  /** The queue whose job events this page wants (its queue or job view); none for the overview. */
  readonly queue?: string;
  readonly session?: StreamSession;
}

function frame(event: string, json: string): string {
  // JSON.stringify escapes newlines inside strings, so one data line holds the whole message.
  return `event: ${event}\ndata: ${json}\n\n`;
}

/**
 * One open page's server-sent event stream, with a bounded buffer. Messages wait here until
 * the hub's next burst; only the latest overview is kept (a newer one replaces it), job
 * messages up to PAGE_BUFFER_MAX, and what does not fit is counted and announced once as
 * `lagged` (the page then reads afresh). An overview goes out whole the first time, and when
 * more than TAIL_SAMPLES samples passed since the last one sent (a stalled page); otherwise only
 * each queue's newest history buckets, which the page merges into what it holds. While the socket cannot take more (a slow
 * client: write returned false), nothing is written until it drains, so a slow page holds at
 * most one socket buffer and this buffer, never a growing queue.
 */
export class SseStream {
  readonly queue?: string;
  private readonly session?: StreamSession;
  private overview?: OverviewFrames;
  private sentSeq?: number;
  private jobs: string[] = [];
  private dropped = 0;
  private congested = false;
  private ended = false;
  private expiry?: NodeJS.Timeout;

  constructor(
    private readonly response: Response,
    options: StreamOptions = {},
  ) {
    this.queue = options.queue;
    this.session = options.session;
  }

  /** Sends the headers, the reconnect delay and, when there is one, the current overview (whole). */
  open(retryMs: number, overview: OverviewFrames | undefined): void {
    this.response.status(200);
    this.response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.response.setHeader('Cache-Control', 'no-cache, no-transform');
    this.response.setHeader('Connection', 'keep-alive');
    // Proxies such as nginx would otherwise hold the stream back in their buffers.
    this.response.setHeader('X-Accel-Buffering', 'no');
    this.response.flushHeaders();
    this.response.socket?.setNoDelay(true);
    this.sentSeq = overview?.seq;
    this.write(`retry: ${retryMs}\n\n${overview === undefined ? '' : frame('overview', overview.json)}`);
  }

  /** Calls `end` when the stream's session expires. */
  endAtExpiry(end: () => void): void {
    if (this.session === undefined) return;
    this.expiry = setTimeout(end, Math.min(TIMER_MAX_MS, Math.max(0, this.session.expiresAt - Date.now())));
    this.expiry.unref();
  }

  /** False once the session it was opened with is logged out or expired (a stream without one stays). */
  get authorised(): boolean {
    return this.session === undefined || this.session.isLive();
  }

  offerOverview(overview: OverviewFrames): void {
    this.overview = overview;
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
    let burst = '';
    const overview = this.overview;
    if (overview !== undefined) {
      const since = this.sentSeq === undefined ? Infinity : overview.seq - this.sentSeq;
      burst = frame('overview', since >= 1 && since <= TAIL_SAMPLES ? overview.tailJson : overview.json);
      this.sentSeq = overview.seq;
    }
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
    clearTimeout(this.expiry);
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
