import { EchoMqError, OutcomeUnknownError, type Completion, monotonicMs } from '@app/echomq/internal';
import { SCRIPT_BATCH_MAX } from '@app/echomq/scripts/limits';
import { Completer, type CompletionSend } from '@app/echomq/worker/completer';

/**
 * The Completer's repeat rule (issue 8, item 2), driven through its send function: a fake
 * of the one call it makes, standing in for Redis only as far as "this call's reply was
 * lost" goes. What Redis does with a repeated request id is the lifecycle suites' business.
 */
interface Call {
  readonly ids: string[];
  readonly requestId: string;
}

function completion(n: number): Completion {
  return { claim: { id: `JOB${String(n).padStart(11, '0')}`, attempt: 1, claimant: `c.${n}` }, result: '' };
}

/** A send that answers from a script of replies (an Error is thrown), recording every call. */
function scriptedSend(replies: (boolean[] | Error | ((size: number) => boolean[]))[]): {
  send: CompletionSend;
  calls: Call[];
} {
  const calls: Call[] = [];
  const send: CompletionSend = async (completions, requestId) => {
    calls.push({ ids: completions.map((c) => c.claim.id), requestId });
    const reply = replies.length > 1 ? replies.shift() : replies[0];
    if (reply instanceof Error) throw reply;
    return typeof reply === 'function' ? reply(completions.length) : (reply as boolean[]);
  };
  return { send, calls };
}

const lost = (): OutcomeUnknownError => new OutcomeUnknownError('evalsha', 'the connection closed');
const LATER = monotonicMs() + 3_600_000;

describe('Completer', () => {
  it('repeats a batch whose reply was lost as the same batch under the same request id, and takes its answer', async () => {
    const { send, calls } = scriptedSend([lost(), lost(), [true, false]]);
    const completer = new Completer(send, { repeatForMs: 60_000 });

    const results = await Promise.all([
      completer.complete(completion(1), LATER),
      completer.complete(completion(2), LATER),
    ]);

    expect(results).toEqual([true, false]);
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((call) => call.requestId)).size).toBe(1);
    for (const call of calls) expect(call.ids).toEqual([completion(1).claim.id, completion(2).claim.id]);
  });

  it('gives every new batch its own request id', async () => {
    const { send, calls } = scriptedSend([[true]]);
    const completer = new Completer(send, { repeatForMs: 60_000 });
    await completer.complete(completion(1), LATER);
    await completer.complete(completion(2), LATER);
    expect(calls).toHaveLength(2);
    expect(calls[0].requestId).not.toBe(calls[1].requestId);
  });

  it('stops repeating at the earliest local lease end among the batch’s jobs and rejects every job with the unknown outcome', async () => {
    const { send, calls } = scriptedSend([lost()]);
    const completer = new Completer(send, { repeatForMs: 60_000 });
    const ended = monotonicMs() - 1; // this job's lease already ran out locally

    const outcomes = await Promise.allSettled([
      completer.complete(completion(1), LATER),
      completer.complete(completion(2), ended),
    ]);

    expect(calls).toHaveLength(1);
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ status: 'rejected', reason: expect.any(OutcomeUnknownError) });
    }
  });

  it('stops repeating at the end of the repeat window and at the shutdown deadline', async () => {
    const noWindow = scriptedSend([lost()]);
    await expect(
      new Completer(noWindow.send, { repeatForMs: 0 }).complete(completion(1), LATER),
    ).rejects.toBeInstanceOf(OutcomeUnknownError);
    expect(noWindow.calls).toHaveLength(1);

    const shutdown = scriptedSend([lost()]);
    const completer = new Completer(shutdown.send, { repeatForMs: 60_000 });
    completer.stopRepeatingAt(monotonicMs() - 1);
    await expect(completer.complete(completion(1), LATER)).rejects.toBeInstanceOf(OutcomeUnknownError);
    expect(shutdown.calls).toHaveLength(1);
  });

  it('does not repeat a call Redis refused (nothing was written)', async () => {
    const { send, calls } = scriptedSend([new EchoMqError('BAD_ARG', 'refused')]);
    const completer = new Completer(send, { repeatForMs: 60_000 });
    await expect(completer.complete(completion(1), LATER)).rejects.toThrow('refused');
    expect(calls).toHaveLength(1);
  });

  it(`never sends more than SCRIPT_BATCH_MAX (${SCRIPT_BATCH_MAX}) completions in one call, whatever maxBatch asks`, async () => {
    const { send, calls } = scriptedSend([(size) => new Array<boolean>(size).fill(true)]);
    const completer = new Completer(send, { repeatForMs: 60_000, maxBatch: 10 * SCRIPT_BATCH_MAX });
    const total = 2 * SCRIPT_BATCH_MAX + 500;

    const results = await Promise.all(
      Array.from({ length: total }, (_, n) => completer.complete(completion(n), LATER)),
    );

    expect(results.every(Boolean)).toBe(true);
    expect(calls.reduce((sum, call) => sum + call.ids.length, 0)).toBe(total);
    expect(Math.max(...calls.map((call) => call.ids.length))).toBe(SCRIPT_BATCH_MAX);
  });
});
