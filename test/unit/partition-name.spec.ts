import fc from 'fast-check';
import {
  InvalidArgumentError,
  InvalidQueueNameError,
  MAX_PARTITIONS,
  assertPhysicalQueueName,
  isPhysicalQueueName,
  logicalQueueOf,
  parsePhysicalQueue,
  partitionQueueName,
  partitionRegistryFields,
  queueKeys,
} from '@app/echomq/internal';

const QUEUE_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-';
const queueName = fc
  .array(fc.constantFrom(...QUEUE_CHARS.split('')), { minLength: 1, maxLength: 64 })
  .map((chars) => chars.join(''));
const partitionIndex = fc.integer({ min: 0, max: MAX_PARTITIONS - 1 });

describe('partition names', () => {
  it('allows as many partitions as a job id can name: 16', () => {
    expect(MAX_PARTITIONS).toBe(16);
  });

  it('names partition k of q as q#k and parses it back, for every queue name and index', () => {
    fc.assert(
      fc.property(queueName, partitionIndex, (queue, index) => {
        const physical = partitionQueueName(queue, index);
        expect(physical).toBe(`${queue}#${index}`);
        expect(parsePhysicalQueue(physical)).toEqual({ queue, partition: index });
        expect(logicalQueueOf(physical)).toBe(queue);
        expect(isPhysicalQueueName(physical)).toBe(true);
        expect(assertPhysicalQueueName(physical)).toBe(physical);
      }),
    );
  });

  it('parses a plain queue name as itself, with no partition', () => {
    fc.assert(
      fc.property(queueName, (queue) => {
        expect(parsePhysicalQueue(queue)).toEqual({ queue });
        expect(logicalQueueOf(queue)).toBe(queue);
      }),
    );
  });

  it('refuses partition indices outside 0..15 and invalid queue names when naming a partition', () => {
    for (const index of [-1, 16, 1.5, Number.NaN, 99]) {
      expect(() => partitionQueueName('emails', index)).toThrow(InvalidArgumentError);
    }
    for (const queue of ['', 'a#1', 'a b', '{x}', 'a:b', 'x'.repeat(65)]) {
      expect(() => partitionQueueName(queue, 0)).toThrow(InvalidQueueNameError);
    }
  });

  it('reads nothing into names that are neither a queue nor one of its partitions', () => {
    const refused = [
      'emails#16', // past the last partition
      'emails#99',
      'emails#01', // no leading zero: one spelling per partition
      'emails#-1',
      'emails#',
      '#3',
      'emails#1#2',
      'emails#a',
      'em ails#1',
      '{emails}#1',
      `${'x'.repeat(65)}#1`,
      42,
      null,
      undefined,
      { queue: 'emails' },
    ];
    for (const name of refused) {
      expect(parsePhysicalQueue(name)).toBeUndefined();
      expect(isPhysicalQueueName(name)).toBe(false);
      expect(() => assertPhysicalQueueName(name)).toThrow(InvalidQueueNameError);
    }
  });

  it('gives each partition its own hashtag, and a queue name can never spell one', () => {
    const keys = queueKeys(partitionQueueName('emails', 2));
    expect(keys.pending).toBe('emq:{emails#2}:pending');
    expect(keys.job('JOB0000000000A')).toBe('emq:{emails#2}:job:JOB0000000000A');
    fc.assert(
      fc.property(queueName, partitionIndex, (queue, index) => {
        // '#' is outside the queue-name alphabet, so no queue's own name equals a partition's.
        expect(partitionQueueName(queue, index)).not.toMatch(/^[A-Za-z0-9._-]+$/);
      }),
    );
  });

  it("names a queue's two registry fields, which no queue's own name can be", () => {
    expect(partitionRegistryFields('emails')).toEqual({ count: 'emails', most: 'emails#max' });
    expect(isPhysicalQueueName(partitionRegistryFields('emails').most)).toBe(false);
    expect(() => partitionRegistryFields('emails#1')).toThrow(InvalidQueueNameError);
  });
});
