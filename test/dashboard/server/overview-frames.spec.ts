import type { Overview, OverviewTail } from '../../../apps/api/src/dashboard/overview/overview.types';
import { TAIL_SAMPLES } from '../../../apps/api/src/dashboard/events/sse-stream';
import { HISTORY_SPAN_MS } from '../../../apps/api/src/dashboard/overview/counter-history';
import { uniqueQueue } from '../../support/redis';
import { completeSome, startDashboardApi, until } from './support/dashboard-api';
import { SseReader } from './support/sse';

type Frame = Overview | OverviewTail;

/** What the page does with a tail (page/client/overview-merge.js), written again here to check the server's half. */
function merge(previous: Overview, frame: OverviewTail): Overview {
  const before = new Map(previous.queues.map((queue) => [queue.queue, queue.history]));
  const atMs = Date.parse(frame.at);
  const { tail: _tail, queues, ...rest } = frame;
  return {
    ...rest,
    queues: queues.map(({ historyTail, ...queue }) => {
      const first = historyTail[0];
      const kept =
        first === undefined || historyTail.length < TAIL_SAMPLES
          ? []
          : (before.get(queue.queue) ?? []).filter((point) => point.at < first.at);
      const history = [...kept, ...historyTail].filter(
        (point) => Date.parse(point.at) + frame.bucketMs > atMs - HISTORY_SPAN_MS,
      );
      return { ...queue, history };
    }),
  };
}

describe('dashboard overview frames', () => {
  it('sends the whole history once, then only each queue’s newest bucket, which rebuild it exactly', async () => {
    const api = await startDashboardApi();
    const samples = new Map<number, string>();
    const stop = api.sampler.onSample(({ overview }) => samples.set(overview.seq, JSON.stringify(overview)));
    const stream = await SseReader.open(api.url, '/dashboard/api/events');
    try {
      const queue = uniqueQueue('frames');
      await api.queues.enqueueMany(queue, [{ data: 0 }]);
      let seq = (await stream.next<Frame>('overview', (o) => o.queues.some((q) => q.queue === queue))).seq;
      // Three rounds of work at least, and on until six tails came: a burst (every 250 ms) may
      // carry two samples (every 200 ms) as one tail, most often on a busy machine.
      for (let n = 1; n <= 3 || stream.data<Frame>('overview').length < 7; n++) {
        await api.queues.enqueueMany(queue, [{ data: n }, { data: -n }]);
        await completeSome(api, queue, 2);
        seq = (await stream.next<Frame>('overview', (o) => o.seq >= seq + 2)).seq;
      }
      const [whole, ...tails] = stream.data<Frame>('overview');
      // The stream's first overview is whole; every later one follows the one before it.
      expect('tail' in whole).toBe(false);
      let rebuilt = whole as Overview;
      for (const frame of tails) {
        // A page keeps up here, so every later overview is a tail covering the samples since the last.
        expect(frame.seq - rebuilt.seq).toBeGreaterThanOrEqual(1);
        expect(frame.seq - rebuilt.seq).toBeLessThanOrEqual(TAIL_SAMPLES);
        expect('tail' in frame && frame.tail).toBe(true);
        const tail = frame as OverviewTail;
        expect(tail.queues.every((q) => !('history' in q) && q.historyTail.length <= TAIL_SAMPLES)).toBe(
          true,
        );
        rebuilt = merge(rebuilt, tail);
        expect(JSON.stringify(rebuilt)).toBe(samples.get(frame.seq));
      }
      const mine = rebuilt.queues.find((q) => q.queue === queue);
      expect(mine?.history.reduce((sum, point) => sum + point.completed, 0)).toBeGreaterThan(0);
    } finally {
      stop();
      stream.close();
      await until('the page to close', () => (api.hub.pageCount === 0 ? true : undefined));
      await api.close();
    }
  });
});
