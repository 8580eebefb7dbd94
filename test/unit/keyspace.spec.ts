import fc from 'fast-check';
// Pure modules only: the unit suites do not load Nest, ioredis or the scripts.
import { InvalidArgumentError, InvalidJobIdError, InvalidQueueNameError } from '@app/echomq/errors';
import { JOB_IDS, UINT64_MAX } from '@app/echomq/ids';
import {
  DEFAULT_KEY_PREFIX,
  QUEUE_REGISTRY_KEY,
  QueueKeys,
  STATE_SETS,
  assertJobId,
  assertKeyPrefix,
  assertQueueName,
  isValidKeyPrefix,
  isValidQueueName,
  nodeLeaseKey,
  queueKeys,
  queueRegistryKey,
} from '@app/echomq/keyspace';

const NAME_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-';
const validName = fc
  .array(fc.constantFrom(...NAME_CHARS), { minLength: 1, maxLength: 64 })
  .map((chars) => chars.join(''));
const validPrefix = fc
  .array(fc.constantFrom(...NAME_CHARS), { minLength: 1, maxLength: 32 })
  .map((chars) => chars.join(''));

/** Cluster slot hashtag: the substring between the first { and the next }. */
function hashtag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return key.slice(open + 1, close);
}

describe('keyspace', () => {
  describe('key grammar', () => {
    it('builds the exact keys of a queue', () => {
      const keys = queueKeys('emails');
      expect(keys.queue).toBe('emails');
      expect(keys.base).toBe('emq:{emails}:');
      expect(keys.pending).toBe('emq:{emails}:pending');
      expect(keys.active).toBe('emq:{emails}:active');
      expect(keys.schedule).toBe('emq:{emails}:schedule');
      expect(keys.dead).toBe('emq:{emails}:dead');
      expect(keys.metrics).toBe('emq:{emails}:metrics');
      expect(keys.events).toBe('emq:{emails}:events');
      expect(keys.wake).toBe('emq:{emails}:wake');
      expect(keys.paused).toBe('emq:{emails}:paused');
      expect(keys.format).toBe('emq:{emails}:format');
      expect(keys.prefix).toBe('emq');
      expect(keys.jobPrefix).toBe('emq:{emails}:job:');
      expect(keys.idempotencyPrefix).toBe('emq:{emails}:idem:');
      expect(keys.job('JOB0Ah3kPz9QwE')).toBe('emq:{emails}:job:JOB0Ah3kPz9QwE');
      expect(keys.idempotency('order-42')).toBe('emq:{emails}:idem:order-42');
      expect(STATE_SETS).toEqual(['pending', 'active', 'schedule', 'dead']);
      for (const state of STATE_SETS) expect(keys.set(state)).toBe(`emq:{emails}:${state}`);
      expect(QUEUE_REGISTRY_KEY).toBe('emq:queues');
      expect(queueRegistryKey()).toBe('emq:queues');
      expect(nodeLeaseKey(12)).toBe('emq:node:12');
    });

    it('puts every key of one queue in the same cluster hashtag, the queue name', () => {
      fc.assert(
        fc.property(validName, fc.bigInt({ min: 0n, max: UINT64_MAX }), (name, value) => {
          const keys = new QueueKeys(name);
          const all = [
            ...STATE_SETS.map((state) => keys.set(state)),
            keys.metrics,
            keys.events,
            keys.wake,
            keys.paused,
            keys.format,
            keys.job(JOB_IDS.format(value)),
            keys.idempotency('k'),
          ];
          const strays = all.filter((key) => !key.startsWith(`emq:{${name}}:`) || hashtag(key) !== name);
          expect(strays).toEqual([]);
          expect(new Set(all).size).toBe(all.length);
        }),
        { numRuns: 100 },
      );
    });

    it('different queues never share a key', () => {
      fc.assert(
        fc.property(validName, validName, (a, b) => {
          fc.pre(a !== b);
          const ka = queueKeys(a);
          const kb = queueKeys(b);
          return (
            STATE_SETS.every((state) => ka.set(state) !== kb.set(state)) && !ka.jobPrefix.startsWith(kb.base)
          );
        }),
      );
    });

    it('caches the keys of one queue', () => {
      expect(queueKeys('cached-q')).toBe(queueKeys('cached-q'));
    });
  });

  describe('key prefixes', () => {
    it('builds every key under the given prefix', () => {
      const keys = queueKeys('emails', 'tenant-a');
      expect(keys.prefix).toBe('tenant-a');
      expect(keys.base).toBe('tenant-a:{emails}:');
      for (const state of STATE_SETS) expect(keys.set(state)).toBe(`tenant-a:{emails}:${state}`);
      expect(keys.format).toBe('tenant-a:{emails}:format');
      expect(keys.jobPrefix).toBe('tenant-a:{emails}:job:');
      expect(keys.job('JOB0Ah3kPz9QwE')).toBe('tenant-a:{emails}:job:JOB0Ah3kPz9QwE');
      expect(keys.reply('req-1')).toBe('tenant-a:{emails}:reply:req-1');
      expect(queueRegistryKey('tenant-a')).toBe('tenant-a:queues');
      expect(nodeLeaseKey(7, 'tenant-a')).toBe('tenant-a:node:7');
      expect(DEFAULT_KEY_PREFIX).toBe('emq');
    });

    it("keeps two prefixes' keys apart: each key matches only its own prefix's ACL pattern", () => {
      const everyKey = (prefix: string, queue: string): string[] => {
        const keys = queueKeys(queue, prefix);
        return [
          ...STATE_SETS.map((state) => keys.set(state)),
          keys.metrics,
          keys.events,
          keys.wake,
          keys.paused,
          keys.format,
          keys.fence,
          keys.job('JOB0Ah3kPz9QwE'),
          keys.idempotency('k'),
          keys.reply('r'),
          queueRegistryKey(prefix),
          nodeLeaseKey(0, prefix),
        ];
      };
      fc.assert(
        fc.property(validPrefix, validPrefix, validName, validName, (pa, pb, qa, qb) => {
          fc.pre(pa !== pb);
          const a = everyKey(pa, qa);
          const b = everyKey(pb, qb);
          // `~<prefix>:*` is the ACL pattern of docs/upgrading.md; a prefix holds no glob character.
          expect(a.every((key) => key.startsWith(`${pa}:`) && !key.startsWith(`${pb}:`))).toBe(true);
          expect(b.every((key) => key.startsWith(`${pb}:`) && !key.startsWith(`${pa}:`))).toBe(true);
          // The queue name stays the cluster hashtag whatever the prefix.
          for (const key of a.slice(0, -2)) expect(hashtag(key)).toBe(qa);
        }),
        { numRuns: 200 },
      );
    });

    it('reads an undefined prefix as the default', () => {
      expect(isValidKeyPrefix(undefined)).toBe(false);
      expect(queueKeys('emails', undefined).base).toBe('emq:{emails}:');
      expect(queueRegistryKey(undefined)).toBe('emq:queues');
    });

    it('caches keys per prefix and queue', () => {
      expect(queueKeys('cached-q', 'a')).toBe(queueKeys('cached-q', 'a'));
      expect(queueKeys('cached-q', 'a')).not.toBe(queueKeys('cached-q', 'b'));
      expect(queueKeys('cached-q')).toBe(queueKeys('cached-q', 'emq'));
    });

    it('accepts 1 to 32 characters from A-Z a-z 0-9 . _ -', () => {
      for (const prefix of ['a', 'emq', 'emq-staging', 'App_2.prod', 'x'.repeat(32)]) {
        expect(isValidKeyPrefix(prefix)).toBe(true);
        expect(assertKeyPrefix(prefix)).toBe(prefix);
      }
    });

    it('refuses braces, colons, glob characters, whitespace, empty, 33+ characters and non-strings', () => {
      const bad: unknown[] = [
        '',
        'x'.repeat(33),
        'a:b',
        'emq:',
        '{a}',
        'a{',
        'a*',
        'a?',
        '[a]',
        'a b',
        'é',
        'a\nb',
      ];
      bad.push(null, 3, {}, ['emq'], 10n); // undefined means the default, as for every option
      for (const prefix of bad) {
        expect(isValidKeyPrefix(prefix)).toBe(false);
        expect(() => assertKeyPrefix(prefix)).toThrow(InvalidArgumentError);
        expect(() => queueKeys('emails', prefix as string)).toThrow(InvalidArgumentError);
        expect(() => queueRegistryKey(prefix as string)).toThrow(InvalidArgumentError);
        expect(() => nodeLeaseKey(1, prefix as string)).toThrow(InvalidArgumentError);
      }
    });
  });

  describe('queue names', () => {
    it('accepts 1 to 64 characters from A-Z a-z 0-9 . _ -', () => {
      for (const name of ['a', 'A', '0', '.', '_', '-', 'emails.v2_high-priority', 'x'.repeat(64)]) {
        expect(isValidQueueName(name)).toBe(true);
        expect(assertQueueName(name)).toBe(name);
        expect(() => queueKeys(name)).not.toThrow();
      }
    });

    it('refuses braces, colons, whitespace, empty, 65+ characters and other characters', () => {
      const bad = [
        '',
        'x'.repeat(65),
        'x'.repeat(1000),
        'a{b',
        'a}b',
        '{q}',
        'a:b',
        ':',
        'a b',
        ' a',
        'a ',
        'a\tb',
        'a\nb',
        'emails\n',
        'a*b',
        'a?b',
        'a[b]',
        'a/b',
        'é',
        'queue😀',
        'a\u0000b',
      ];
      for (const name of bad) {
        expect({ name, valid: isValidQueueName(name) }).toEqual({ name, valid: false });
        expect(() => queueKeys(name)).toThrow(InvalidQueueNameError);
        expect(() => new QueueKeys(name)).toThrow(InvalidQueueNameError);
      }
    });

    it('refuses non-strings with InvalidQueueNameError', () => {
      const notStrings: unknown[] = [
        undefined,
        null,
        0,
        42,
        true,
        {},
        [],
        ['emails'],
        () => 'emails',
        Symbol('q'),
      ];
      for (const value of notStrings) {
        expect(isValidQueueName(value)).toBe(false);
        expect(() => queueKeys(value as string)).toThrow(InvalidQueueNameError);
      }
    });

    it('refuses values JSON cannot print (BigInt, circular) with InvalidQueueNameError, not a TypeError', () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      for (const value of [10n, circular] as unknown[]) {
        expect(() => queueKeys(value as string)).toThrow(InvalidQueueNameError);
      }
    });

    it('agrees with the grammar on arbitrary strings and never throws anything but InvalidQueueNameError', () => {
      fc.assert(
        fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), validName), (name) => {
          const expected = /^[A-Za-z0-9._-]{1,64}$/.test(name);
          let outcome: string;
          try {
            outcome = queueKeys(name).pending;
          } catch (error) {
            outcome = error instanceof InvalidQueueNameError ? 'refused' : `threw ${String(error)}`;
          }
          return (
            isValidQueueName(name) === expected &&
            outcome === (expected ? `emq:{${name}}:pending` : 'refused')
          );
        }),
        { numRuns: 400 },
      );
    });

    it('the error carries a stable code and the refused name', () => {
      try {
        queueKeys('a:b');
        throw new Error('queueKeys accepted a:b');
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidQueueNameError);
        expect((error as InvalidQueueNameError).code).toBe('INVALID_QUEUE_NAME');
        expect((error as InvalidQueueNameError).queue).toBe('a:b');
      }
    });
  });

  describe('job row keys', () => {
    const keys = queueKeys('rows');

    it('refuses malformed ids with InvalidJobIdError', () => {
      for (const id of [
        '',
        'JOB',
        'JOB0000000000',
        'JOB000000000000',
        'job00000000000',
        'JOBzzzzzzzzzzz',
        'JOB0000000000:',
        'JOB000000000}{',
        '*',
        'JOB0000000000*',
      ]) {
        expect(() => keys.job(id)).toThrow(InvalidJobIdError);
        expect(() => assertJobId(id)).toThrow(InvalidJobIdError);
      }
      const notStrings: unknown[] = [undefined, null, 12, {}, ['JOB00000000000']];
      for (const id of notStrings) {
        expect(() => keys.job(id as string)).toThrow(InvalidJobIdError);
      }
    });

    it('refuses values JSON cannot print (BigInt, circular) with InvalidJobIdError, not a TypeError', () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      for (const value of [10n, circular] as unknown[]) {
        expect(() => assertJobId(value)).toThrow(InvalidJobIdError);
        expect(() => keys.job(value as string)).toThrow(InvalidJobIdError);
      }
    });

    it('composes the row key only from valid ids', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.string(),
            fc.bigInt({ min: 0n, max: UINT64_MAX }).map((v) => JOB_IDS.format(v)),
          ),
          (id) => {
            let outcome: string;
            try {
              outcome = keys.job(id);
            } catch (error) {
              outcome = error instanceof InvalidJobIdError ? 'refused' : `threw ${String(error)}`;
            }
            return outcome === (JOB_IDS.valid(id) ? `emq:{rows}:job:${id}` : 'refused');
          },
        ),
        { numRuns: 500 },
      );
    });

    it('gates idempotency keys: 1 to 256 characters', () => {
      expect(keys.idempotency('x'.repeat(256))).toBe(`emq:{rows}:idem:${'x'.repeat(256)}`);
      expect(() => keys.idempotency('')).toThrow(InvalidArgumentError);
      expect(() => keys.idempotency('x'.repeat(257))).toThrow(InvalidArgumentError);
      expect(() => keys.idempotency(7 as unknown as string)).toThrow(InvalidArgumentError);
    });

    it('refuses invalid node numbers for node leases', () => {
      expect(() => nodeLeaseKey(-1)).toThrow(InvalidArgumentError);
      expect(() => nodeLeaseKey(1.5)).toThrow(InvalidArgumentError);
    });
  });
});
