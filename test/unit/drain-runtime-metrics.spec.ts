import { Registry } from 'prom-client';
import { partitionQueueName, type ClaimedJobRecord } from '@app/echomq/internal';
import { RuntimeMetrics } from '@app/echomq/metrics/runtime-metrics';
import { parseExposition, valueOf } from '../metrics/support/exposition';

/** Settlements are counted per job in the metrics' own cells and reach the counter at each scrape. */
describe('drain: settlement counts between scrapes', () => {
  const record = {} as ClaimedJobRecord;

  it('shows every settlement at the next scrape, once, by queue and outcome', async () => {
    const registry = new Registry();
    const metrics = new RuntimeMetrics(registry);
    const settled = async (labels: { queue: string; outcome: string }): Promise<number | undefined> =>
      valueOf(parseExposition(await registry.metrics()), 'echomq_settlements_total', labels);
    for (let i = 0; i < 5; i++) metrics.settled('emails', record, 'completed', 2);
    metrics.settled(partitionQueueName('emails', 1), record, 'completed', 2);
    metrics.settled('emails', record, 'stale');

    expect(await settled({ queue: 'emails', outcome: 'completed' })).toBe(6);
    expect(await settled({ queue: 'emails', outcome: 'completed' })).toBe(6);
    expect(await settled({ queue: 'emails', outcome: 'stale' })).toBe(1);
    metrics.settled('emails', record, 'completed', 1);
    expect(await settled({ queue: 'emails', outcome: 'completed' })).toBe(7);
    const scrape = parseExposition(await registry.metrics());
    // Every completion here came with its handler's time; the stale one, without one, is not timed.
    expect(
      valueOf(scrape, 'echomq_handler_duration_seconds_count', { queue: 'emails', outcome: 'completed' }),
    ).toBe(7);
    expect(
      valueOf(scrape, 'echomq_handler_duration_seconds_count', { queue: 'emails', outcome: 'stale' }),
    ).toBeUndefined();
  });
});
