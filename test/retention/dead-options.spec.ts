import {
  DEAD_RETENTION_DEFAULTS,
  InvalidOptionError,
  QUEUE_DEFAULTS,
  QUEUE_OPTION_RANGES,
  assertQueueOptions,
  resolveQueueOptions,
  type ClaimedJobRecord,
} from '@app/echomq/internal';
import { failRequest } from '@app/echomq/worker/fail-request';

/** The dead set's limits as queue options: defaults, ranges, and what a failing worker sends. */
describe('retention: deadMaxJobs and deadMaxAgeMs', () => {
  it('default to 10,000 jobs and no age limit', () => {
    expect(QUEUE_DEFAULTS).toMatchObject({ deadMaxJobs: 10_000, deadMaxAgeMs: null });
    expect(DEAD_RETENTION_DEFAULTS).toEqual({ deadMaxJobs: 10_000, deadMaxAgeMs: null });
    expect(resolveQueueOptions({ deadMaxJobs: 5 }, { deadMaxAgeMs: 60_000 })).toMatchObject({
      deadMaxJobs: 5,
      deadMaxAgeMs: 60_000,
    });
  });

  it.each([
    [{ deadMaxJobs: -1 }, 'deadMaxJobs'],
    [{ deadMaxJobs: 1.5 }, 'deadMaxJobs'],
    [{ deadMaxJobs: QUEUE_OPTION_RANGES.deadMaxJobs.max + 1 }, 'deadMaxJobs'],
    [{ deadMaxAgeMs: 999 }, 'deadMaxAgeMs'],
    [{ deadMaxAgeMs: '1d' }, 'deadMaxAgeMs'],
  ])('refuses %j', (options, option) => {
    expect(() => assertQueueOptions(options, 'queues.emails')).toThrow(InvalidOptionError);
    expect(() => assertQueueOptions(options, '')).toThrow(new RegExp(`^Option ${option}: `));
  });

  it('accept 0 jobs (keep none), null (no age limit) and the merged defaults', () => {
    expect(() => assertQueueOptions({ deadMaxJobs: 0, deadMaxAgeMs: null }, '')).not.toThrow();
    expect(() => assertQueueOptions({ ...QUEUE_DEFAULTS }, '')).not.toThrow();
  });

  it('are what a failing worker sends with its fail (its own resolved options, else the defaults)', () => {
    const record = { id: 'JOB00000000001', attempt: 1, budgetBase: 0, backoff: null } as ClaimedJobRecord;
    const policy = QUEUE_DEFAULTS.backoff;
    expect(failRequest(policy, record, new Error('x')).dead).toEqual(DEAD_RETENTION_DEFAULTS);
    const options = resolveQueueOptions({ deadMaxJobs: 7, deadMaxAgeMs: 3_600_000 });
    expect(failRequest(policy, record, new Error('x'), options).dead).toEqual({
      deadMaxJobs: 7,
      deadMaxAgeMs: 3_600_000,
    });
  });
});
