import type { DurableScriptContext } from '../durability/durable-context';
import { durableEnqueue } from '../durability/durable-enqueue';
import type { JobId } from '../ids';
import type { NewJobRecord } from '../scripts';
import { enqueueKeyed, type KeyedEnqueueResult, type KeyedRule } from '../scripts/enqueue-keyed';
import { repeatUntilKnown, type RepeatOptions } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import type { EnqueueResult } from './dedupe-options';

/**
 * The write of one debounce or throttle job (checked, minted and built by the Enqueuer): one
 * keyed enqueue script call under one request id, repeated under it while its reply is lost for
 * as long as `repeat` says, so a repeat returns the first outcome. With durable writes it
 * resolves once its replicas confirmed it (see durableEnqueue), else rejects naming its job.
 */
export async function writeKeyed(
  ctx: DurableScriptContext,
  record: NewJobRecord,
  rule: KeyedRule,
  named: boolean,
  repeat: RepeatOptions,
): Promise<EnqueueResult> {
  const requestId = newRequestId();
  const write = (): Promise<KeyedEnqueueResult> =>
    repeatUntilKnown(() => enqueueKeyed(ctx, record, rule, named, requestId), repeat);
  const result = ctx.durability
    ? await durableEnqueue(ctx, ctx.durability, requestId, write, repeat.untilMs, (written, errorFor) => {
        throw errorFor([written.id]);
      })
    : await write();
  return { id: result.id as JobId, outcome: result.outcome };
}
