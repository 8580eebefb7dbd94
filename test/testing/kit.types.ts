// Compile-time checks of the testing kit's types: `npm run typecheck` fails if a line
// marked as an expected error compiles, or if an unmarked line does not. Nothing here runs.
import { defineQueue } from '@app/echomq';
import type { EchoMqTestKit, RunSummary } from '@app/echomq/testing';

interface Email {
  readonly to: string;
  readonly tags: readonly string[];
}
const Emails = defineQueue<Email, { sent: string }>('emails');

export async function typedByTheDefinition(kit: EchoMqTestKit): Promise<void> {
  // Views and summaries carry the definition's data and result types.
  const [view] = await kit.enqueued(Emails);
  const to: string = view.data.to;
  const summary: RunSummary<{ sent: string }> = await kit.runUntilIdle(Emails);
  for (const outcome of summary.outcomes) if (outcome.outcome === 'completed') void outcome.result.sent;

  // Patterns are deep partials of the view: strings also by RegExp, arrays element by element.
  await kit.expectEnqueued(Emails, { name: /^wel/, data: { to, tags: ['vip'] } });
  await kit.expectEnqueued(Emails, { id: 'JOB0Ah3kPz9QwE', state: 'schedule' });
  await kit.expectDead(Emails, (job) => job.data.to === to && job.attempts > 1);

  // @ts-expect-error 'recipient' is not a field of Email
  await kit.expectEnqueued(Emails, { data: { recipient: 'x' } });
  // @ts-expect-error to is a string
  await kit.enqueued(Emails, { data: { to: 42 } });
  // @ts-expect-error 'sleeping' is not a job state
  await kit.enqueued(Emails, { state: 'sleeping' });
  // @ts-expect-error the result of this queue has no field 'id'
  await kit.expectCompleted(Emails, { result: { id: 1 } });
}

export async function untypedByName(kit: EchoMqTestKit): Promise<void> {
  // A queue given by name: data and results are unknown, any pattern goes.
  const [view] = await kit.enqueued('reports', { data: { month: 'may' } });
  const data: unknown = view.data;
  void data;
  const summary: RunSummary = await kit.runUntilIdle('reports', { includeDelayed: true, timeoutMs: 1_000 });
  void summary.dead;
}
