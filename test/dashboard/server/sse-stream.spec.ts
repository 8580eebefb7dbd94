import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import {
  SseStream,
  TAIL_SAMPLES,
  type OverviewFrames,
} from '../../../apps/api/src/dashboard/events/sse-stream';

/** The parts of a response a stream uses, recording what was written; `full` makes writes report a full socket. */
class FakeResponse extends EventEmitter {
  readonly chunks: string[] = [];
  full = false;
  ended = false;
  status(): this {
    return this;
  }
  setHeader(): void {}
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return !this.full;
  }
  end(): void {
    this.ended = true;
  }
  /** The overview frames written so far, as `whole N` or `tail N`. */
  overviews(): string[] {
    return this.chunks
      .join('')
      .split('\n\n')
      .filter((block) => block.startsWith('event: overview'))
      .map((block) => (JSON.parse(block.split('data: ')[1]) as { label: string }).label);
  }
}

const sample = (seq: number): OverviewFrames => ({
  seq,
  json: JSON.stringify({ label: `whole ${seq}` }),
  tailJson: JSON.stringify({ label: `tail ${seq}` }),
});

describe('one page’s event stream', () => {
  const start = (overview?: OverviewFrames, session?: { expiresAt: number; isLive(): boolean }) => {
    const response = new FakeResponse();
    const stream = new SseStream(response as unknown as Response, session ? { session } : {});
    stream.open(3000, overview);
    return { response, stream };
  };

  it('sends the overview whole first, then tails while they cover what the page missed, else whole', () => {
    const { response, stream } = start(sample(1));
    stream.offerOverview(sample(2));
    stream.flush();
    for (const seq of [3, 4, 5]) stream.offerOverview(sample(seq)); // 3 and 4 replaced before they were sent
    stream.flush();
    for (const seq of [6, 7, 8, 9]) stream.offerOverview(sample(seq)); // four behind: more than a tail covers
    stream.flush();
    stream.offerOverview(sample(10));
    stream.flush();
    stream.offerOverview(sample(10)); // the same again: whole, nothing to merge it with
    stream.flush();
    expect(response.overviews()).toEqual(['whole 1', 'tail 2', 'tail 5', 'whole 9', 'tail 10', 'whole 10']);
    expect(TAIL_SAMPLES).toBe(3);
  });

  it('sends the first overview whole when it opened without one, and holds back while its socket is full', () => {
    const { response, stream } = start(undefined);
    stream.offerOverview(sample(7));
    stream.flush();
    response.full = true;
    stream.offerOverview(sample(8));
    stream.flush(); // written, but the socket is full: nothing more until it drains
    for (const seq of [9, 10, 11, 12]) {
      stream.offerOverview(sample(seq));
      stream.flush();
    }
    response.full = false;
    response.emit('drain');
    stream.flush();
    expect(response.overviews()).toEqual(['whole 7', 'tail 8', 'whole 12']);
  });

  it('is no longer authorised once its session is not live, and ends itself at the expiry', () => {
    jest.useFakeTimers({ now: Date.UTC(2030, 0, 1) });
    try {
      let live = true;
      const { response, stream } = start(undefined, { expiresAt: Date.now() + 5_000, isLive: () => live });
      expect(stream.authorised).toBe(true);
      live = false;
      expect(stream.authorised).toBe(false);
      const ended = jest.fn(() => stream.end());
      stream.endAtExpiry(ended);
      jest.advanceTimersByTime(4_999);
      expect(ended).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(ended).toHaveBeenCalledTimes(1);
      expect(response.ended).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('has no expiry without a session', () => {
    const { stream } = start(undefined);
    expect(stream.authorised).toBe(true);
    const ended = jest.fn();
    stream.endAtExpiry(ended);
    expect(ended).not.toHaveBeenCalled();
  });
});
