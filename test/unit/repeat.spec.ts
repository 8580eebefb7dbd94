import { OutcomeUnknownError, RedisUnavailableError } from '@app/echomq';
import { repeatUntilKnown, monotonicMs } from '@app/echomq/internal';

/** A call that fails with each error in turn, then answers. */
function failing(...errors: Error[]): { call: () => Promise<string>; tries: () => number } {
  let tries = 0;
  return {
    call: async () => {
      const error = errors[tries++];
      if (error) throw error;
      return 'answered';
    },
    tries: () => tries,
  };
}

const unknown = (): OutcomeUnknownError => new OutcomeUnknownError('EVALSHA', 'connection lost');
const unavailable = (): RedisUnavailableError => new RedisUnavailableError('127.0.0.1:6379', 100);

describe('repeatUntilKnown', () => {
  it('repeats a call whose outcome is unknown until it answers', async () => {
    const { call, tries } = failing(unknown(), unavailable());
    await expect(repeatUntilKnown(call, { untilMs: monotonicMs() + 10_000 })).resolves.toBe('answered');
    expect(tries()).toBe(3);
  });

  it('reports "never sent" only when no earlier try may have taken effect', async () => {
    const { call } = failing(unavailable());
    await expect(
      repeatUntilKnown(call, { untilMs: monotonicMs() + 10_000, retryUnavailable: false }),
    ).rejects.toBeInstanceOf(RedisUnavailableError);
  });

  it('after an unknown outcome, a later "never sent" is still reported as unknown: the first try may have run', async () => {
    const { call, tries } = failing(unknown(), unavailable(), unavailable());
    const repeated = repeatUntilKnown(call, { untilMs: monotonicMs() + 10_000, retryUnavailable: false });
    await expect(repeated).rejects.toBeInstanceOf(OutcomeUnknownError);
    expect(tries()).toBe(2);
  });

  it('the same when the repeats run out of time', async () => {
    const errors = [unknown(), ...Array.from({ length: 50 }, unavailable)];
    const { call } = failing(...errors);
    await expect(repeatUntilKnown(call, { untilMs: monotonicMs() + 200 })).rejects.toBeInstanceOf(
      OutcomeUnknownError,
    );
  });
});
