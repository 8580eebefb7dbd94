import { InvalidArgumentError } from '../errors';
import { assertJobId, assertLaneName, assertPriority, DEFAULT_LANE } from '../keyspace';
import { replayWindow, type ScriptContext } from './context';
import type { NewJobRecord } from './enqueue';
import { DEBOUNCE_KEY_MARGIN_MS } from './lua/enqueue-keyed.lua';
import { newRequestId } from './request-id';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

/** What an enqueue did: made a new job, found the job a key holds, or replaced a waiting job's data. */
export type EnqueueOutcomeKind = 'created' | 'matched' | 'replaced';

/**
 * The key a job is enqueued under, and what a later job with the same key does:
 * debounce replaces the waiting job and pushes its run-at back (capped at maxWaitMs after its
 * first enqueue, the maxWaitMs of the call that created it); throttle admits one job per
 * window and answers later ones with it.
 */
export type KeyedRule =
  | { readonly kind: 'debounce'; readonly key: string; readonly delayMs: number; readonly maxWaitMs?: number }
  | { readonly kind: 'throttle'; readonly key: string; readonly windowMs: number };

export interface KeyedEnqueueResult {
  readonly id: string;
  readonly outcome: EnqueueOutcomeKind;
}

/** How long a debounce key outlives its job's run-at. */
export { DEBOUNCE_KEY_MARGIN_MS };

type KeyedReply = [EnqueueOutcomeKind, string];

function ruleArguments(ctx: ScriptContext, rule: KeyedRule): { key: string; args: (string | number)[] } {
  if (rule.kind === 'debounce') {
    return {
      key: ctx.keys.debounce(rule.key),
      args: ['debounce', rule.delayMs, rule.maxWaitMs ?? '', rule.key],
    };
  }
  if (rule.kind === 'throttle') {
    return { key: ctx.keys.throttleKey(rule.key), args: ['throttle', rule.windowMs, '', ''] };
  }
  throw new InvalidArgumentError('A keyed enqueue is a debounce or a throttle');
}

/**
 * Enqueues one job under a debounce or throttle key (see enqueue-keyed.lua.ts): 'created'
 * with the job's own id; 'replaced' with the id of the waiting job whose data (and name, when
 * `nameGiven`) it replaced and whose run-at it pushed back; 'matched' with the id of the job
 * that holds the throttle window. The record's other options apply only to a created job.
 * Throws JobExistsError when the id exists. Repeating the call with the same request id
 * returns the first call's answer and writes nothing more.
 */
export async function enqueueKeyed(
  ctx: ScriptContext,
  job: NewJobRecord,
  rule: KeyedRule,
  nameGiven: boolean,
  requestId: string = newRequestId(),
): Promise<KeyedEnqueueResult> {
  const { keys } = ctx;
  assertJobId(job.id);
  if (job.lane !== undefined && job.lane !== '') assertLaneName(job.lane);
  if (job.priority !== undefined) assertPriority(job.priority);
  const { key, args } = ruleArguments(ctx, rule);
  let reply: KeyedReply;
  try {
    reply = (await runScript(
      ctx,
      'emqEnqueueKeyed',
      [keys.fence, keys.reply(requestId), keys.schedule, keys.metrics, keys.events, keys.wake, key],
      [
        args[0],
        ctx.eventsMaxLen,
        replayWindow(ctx),
        args[1],
        args[2],
        args[3],
        job.id,
        job.data,
        job.name,
        nameGiven ? 1 : 0,
        job.maxAttempts ?? '',
        job.delayMs,
        job.runAtMs,
        job.backoff ?? '',
        job.lane === undefined || job.lane === DEFAULT_LANE ? '' : job.lane,
        job.priority ?? '',
        job.timeoutMs ?? '',
        job.traceContext ?? '',
      ],
    )) as KeyedReply;
  } catch (error) {
    translateReplyError(error, job.id);
  }
  return { outcome: reply[0], id: String(reply[1]) };
}
