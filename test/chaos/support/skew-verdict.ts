import type { LedgerLine } from './ledger';
import { median } from './skew-clocks';
import {
  delayWaits,
  early,
  enqueuedSample,
  idReadings,
  inversionsBetween,
  retryWaits,
  tickReadings,
  type SkewFacts,
  type SkewProducer,
} from './skew-checks';
import { basicPromises, outcomeFigures, type Outcome } from './verdict';

/** Enqueues at least this far apart (server time) must keep their order in the ids. */
const FIFO_MARGIN_MS = 250;

export interface SkewInputs {
  readonly params: {
    readonly skewMs: number;
    readonly backoffMs: number;
    readonly delayMs: number;
    readonly everyMs: number;
    readonly ticks: number;
  };
  readonly outcome: Outcome;
  readonly facts: SkewFacts;
  readonly producers: readonly SkewProducer[];
  /** Each schedule's occurrences (their run lines), by schedule key. */
  readonly ticks: ReadonlyMap<string, LedgerLine[]>;
  readonly metrics: Readonly<Record<string, number>>;
}

/** The clock-skew scenario's promises and figures. */
export function judgeSkew(inputs: SkewInputs): {
  figures: Record<string, number | string>;
  broken: string[];
} {
  const { params, outcome, facts, producers, metrics } = inputs;
  const broken = basicPromises(outcome);
  const figures: Record<string, number | string> = { skewMs: params.skewMs, ...outcomeFigures(outcome) };
  const leased = producers.filter((p) => p.leased);
  const configured = producers.filter((p) => !p.leased);

  // Nothing run twice: each job runs once, a fail-once job twice; and no lease expired.
  const failOnce = new Set(leased.flatMap((p) => p.report.failOnce));
  let unexpectedRuns = 0;
  for (const [id, runs] of facts.runs)
    unexpectedRuns += Math.max(0, runs.length - (failOnce.has(id) ? 2 : 1));
  const reaped = metrics.reaped ?? 0;
  const stale = metrics.stale ?? 0;
  Object.assign(figures, { unexpectedRuns, reaped, stale });
  if (unexpectedRuns > 0) broken.push(`${unexpectedRuns} handler runs beyond those planned`);
  if (reaped > 0) broken.push(`${reaped} leases expired and were reaped`);
  if (stale > 0) broken.push(`${stale} calls were refused as stale`);

  // Retries and delays wait out their time on the server's clock.
  const waitsChecked = (what: string, ids: string[], waits: number[], atLeastMs: number): void => {
    const late = waits.filter((wait) => wait >= params.skewMs / 2).length;
    figures[`${what}MinMs`] = waits.length === 0 ? '-' : Math.min(...waits);
    figures[`${what}MaxMs`] = waits.length === 0 ? '-' : Math.max(...waits);
    if (waits.length < ids.length)
      broken.push(`${ids.length - waits.length} ${what} waits could not be measured`);
    const tooEarly = early(waits, atLeastMs);
    if (tooEarly > 0)
      broken.push(`${tooEarly} ${what}s ran before their ${atLeastMs} ms on the server clock`);
    if (late > 0) broken.push(`${late} ${what}s ran minutes late (a skewed clock timed them)`);
  };
  waitsChecked('retry', [...failOnce], retryWaits([...failOnce], facts), params.backoffMs);
  const delayed = leased.flatMap((p) => p.report.delayed);
  waitsChecked('delay', delayed, delayWaits(delayed, facts), params.delayMs);

  // Each schedule upserted by a skewed producer fires on the server's clock.
  for (const producer of leased) {
    const key = producer.report.schedule?.key ?? '';
    const reading = tickReadings(producer, inputs.ticks.get(key) ?? [], params.everyMs, facts);
    figures[`${producer.label}Ticks`] = reading.count;
    figures[`${producer.label}TickGapMs`] = reading.meanGapMs;
    if (reading.count < params.ticks)
      broken.push(`schedule ${key} ran ${reading.count} of ${params.ticks} occurrences`);
    if (reading.early > 0)
      broken.push(`schedule ${key}: ${reading.early} occurrences ran before their run-at`);
    if (!reading.firstRunAtOnServerClock)
      broken.push(`schedule ${key}: its first run-at was set on the upserting process's clock`);
  }

  // The event stream's entries carry server time.
  Object.assign(figures, { events: facts.events.entries, eventLagMaxMs: facts.events.lagMaxMs });
  if (facts.events.entries === 0) broken.push('no events were read');
  if (facts.events.offClock > 0) broken.push(`${facts.events.offClock} event entries carry a skewed time`);

  // Ids: leased nodes mint on the server's clock, a configured nodeId on the process's own.
  for (const producer of producers) {
    const reading = idReadings(producer, facts);
    figures[`${producer.label}IdLagMs`] = median(reading.lags);
    if (reading.lags.length < producer.report.fifo.length)
      broken.push(
        `${producer.label}: ${producer.report.fifo.length - reading.lags.length} enqueues without an event`,
      );
    if (producer.leased && reading.onOwn > 0)
      broken.push(`${producer.label}: ${reading.onOwn} ids minted on its own (skewed) clock`);
    if (!producer.leased && reading.onServer > 0)
      broken.push(`${producer.label}: ${reading.onServer} ids minted on the server clock despite its nodeId`);
  }
  // FIFO across producers is id order: real order for leased producers, skewed for nodeIds.
  const pair = (group: readonly SkewProducer[], name: string): number | undefined => {
    if (group.length < 2) return undefined;
    const { pairs, inversions } = inversionsBetween(group[0], group[1], facts, FIFO_MARGIN_MS);
    figures[`${name}FifoPairs`] = pairs;
    figures[`${name}FifoInversions`] = inversions;
    return inversions;
  };
  const leasedInversions = pair(leased, 'leased');
  if (leasedInversions !== undefined && leasedInversions > 0)
    broken.push(`${leasedInversions} pairs of leased-node jobs are out of enqueue order`);
  pair(configured, 'nodeId');
  figures.fifoSample = producers.reduce((sum, p) => sum + enqueuedSample(p, facts).length, 0);
  return { figures, broken };
}
