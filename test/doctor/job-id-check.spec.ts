import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { BASE62_ALPHABET, encodeBase62, isJobId, UINT64_MAX } from '@app/echomq/internal';
import { repairMissingRows } from '@app/echomq/scripts/repair-missing-rows';
import { connect, uniqueQueue } from '../support/redis';
import { prefixedContext } from './support/doctor';

const LARGEST = encodeBase62(UINT64_MAX); // LygHa16AHYF

/** Candidates near the edge: the largest id with one digit moved up or down, and near-misses of the shape. */
function edgeCandidates(): string[] {
  const out = [`JOB${LARGEST}`, `JOB${'0'.repeat(11)}`, `JOB${'z'.repeat(11)}`, 'JOB', 'job0000000000A'];
  for (let i = 0; i < LARGEST.length; i++) {
    const at = BASE62_ALPHABET.indexOf(LARGEST[i]);
    for (const step of [-1, 1]) {
      const digit = BASE62_ALPHABET[at + step];
      if (digit !== undefined) out.push(`JOB${LARGEST.slice(0, i)}${digit}${LARGEST.slice(i + 1)}`);
    }
  }
  out.push(`JOB${LARGEST}0`, `JOB${LARGEST.slice(1)}`, `JOB${LARGEST.slice(0, 10)}-`, `XOB${LARGEST}`);
  return out;
}

/**
 * The doctor's Lua test of "is this member a job id" decides as isJobId does, so a member the
 * keyspace would refuse is reported malformed and no row key is ever composed for it.
 */
describe("the doctor's job-id check in Lua", () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });

  afterAll(() => {
    redis?.disconnect();
  });

  /** Which of `members` the script calls malformed (none has a row, so the others are "missing"). */
  async function malformedOf(members: readonly string[]): Promise<string[]> {
    const ctx = prefixedContext(redis, uniqueQueue('idcheck'), 'cliid');
    await redis.zadd(ctx.keys.dead, ...members.flatMap((member) => [0, member]));
    const { missing, malformed } = await repairMissingRows(ctx, 'check', { state: 'dead' }, members);
    await redis.del(ctx.keys.dead);
    expect([...missing, ...malformed].sort()).toEqual([...new Set(members)].sort());
    return malformed.sort();
  }

  it('agrees with isJobId at the 2^64-1 edge and on near-misses of the shape', async () => {
    const candidates = edgeCandidates();
    expect(await malformedOf(candidates)).toEqual(candidates.filter((c) => !isJobId(c)).sort());
    expect(candidates.filter((c) => isJobId(c)).length).toBeGreaterThan(5);
  });

  it('agrees with isJobId on random brand-and-Base62 strings', async () => {
    const digit = fc.constantFrom(...BASE62_ALPHABET);
    const body = fc.array(digit, { minLength: 11, maxLength: 11 }).map((digits) => digits.join(''));
    await fc.assert(
      fc.asyncProperty(fc.array(body, { minLength: 1, maxLength: 50 }), async (bodies) => {
        const candidates = [...new Set(bodies.map((b) => `JOB${b}`))];
        expect(await malformedOf(candidates)).toEqual(candidates.filter((c) => !isJobId(c)).sort());
      }),
      { numRuns: 40 },
    );
  });
});
