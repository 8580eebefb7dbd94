// Compile-time checks of the typed queue surface: `npm run typecheck` fails if a line
// marked as an expected error compiles (the type would let a mistake through) or if an
// unmarked line does not (the type refuses correct code). Nothing here runs.
import { Injectable } from '@nestjs/common';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import {
  defineQueue,
  Handle,
  InjectQueue,
  Processor,
  QueueService,
  type Job,
  type JobId,
  type QueueHandle,
} from '@app/echomq';

interface EmailData {
  readonly to: string;
}
interface EmailResult {
  readonly messageId: string;
}

const Emails = defineQueue<EmailData, EmailResult>('emails');

@Processor(Emails)
export class EmailProcessor {
  process(job: Job<EmailData>): EmailResult {
    return { messageId: job.data.to };
  }
}

@Processor(Emails)
export class AsyncEmailProcessor {
  async process(job: Job<EmailData>): Promise<EmailResult> {
    return { messageId: job.data.to };
  }
}

// @ts-expect-error process() takes another payload type
@Processor(Emails)
export class WrongPayloadProcessor {
  process(job: Job<{ readonly to: number }>): EmailResult {
    return { messageId: String(job.data.to) };
  }
}

// @ts-expect-error process() returns another result type
@Processor(Emails)
export class WrongResultProcessor {
  process(): { readonly id: number } {
    return { id: 1 };
  }
}

@Processor(Emails)
export class NamedHandlers {
  @Handle(Emails, 'welcome')
  welcome(job: Job<EmailData>): EmailResult {
    return { messageId: job.data.to };
  }

  // @ts-expect-error a typed @Handle method must return the queue's result
  @Handle(Emails, 'digest')
  digest(): number {
    return 1;
  }
}

// Plain names still work, untyped.
@Processor('reports')
export class ReportProcessor {
  process(job: Job): unknown {
    return job.data;
  }
}

@Injectable()
export class Producer {
  constructor(
    @InjectQueue(Emails) private readonly emails: QueueHandle<typeof Emails>,
    private readonly queues: QueueService,
  ) {}

  async send(): Promise<EmailResult> {
    const id: JobId = await this.emails.enqueue({ to: 'a@example.com' });
    // @ts-expect-error the payload must be EmailData
    await this.emails.enqueue({ to: 42 });
    // @ts-expect-error the payload must be EmailData
    await this.emails.enqueueMany([{ data: { recipient: 'a' } }]);
    const view = await this.emails.getJob(id);
    const to: string | undefined = view?.data.to;
    const messageId: string | undefined = view?.result?.messageId;
    void [to, messageId];
    // The typed handle from QueueService, without injection.
    await this.queues.queue(Emails).enqueue({ to: 'b@example.com' });
    return this.emails.waitFor(id);
  }

  async administer(id: JobId): Promise<void> {
    await this.emails.upsertSchedule(
      'digest',
      { cron: '0 8 * * *', tz: 'Europe/Paris' },
      { data: { to: 'a@example.com' } },
    );
    // @ts-expect-error a schedule's occurrences carry EmailData
    await this.emails.upsertSchedule('digest', { everyMs: 60_000 }, { data: { to: 42 } });
    await this.emails.update(id, { data: { to: 'c@example.com' }, priority: 3 });
    // @ts-expect-error an update's data must be EmailData
    await this.emails.update(id, { data: { recipient: 'c' } });
    const schedules = await this.emails.listSchedules();
    const recipient: string | undefined = schedules[0]?.template.data?.to;
    const recent = await this.emails.recentCompleted({ limit: 10 });
    const sent: string | undefined = recent[0]?.result?.messageId;
    const { outcome } = await this.emails.submit(
      { to: 'd@example.com' },
      { throttle: { key: 'd', windowMs: 1_000 } },
    );
    void [recipient, sent, outcome];
  }

  async wrongResult(id: JobId): Promise<void> {
    // @ts-expect-error waitFor resolves with EmailResult
    const count: number = await this.emails.waitFor(id);
    void count;
  }
}

// Types come from a Standard Schema when one is given: producers enqueue its input type,
// handlers receive its output type.
declare const signupSchema: StandardSchemaV1<
  { readonly email: string; readonly at: string },
  { readonly email: string; readonly at: number }
>;
const Signups = defineQueue('signups', { data: signupSchema });

export async function enqueueSignup(queues: QueueService): Promise<void> {
  await queues.queue(Signups).enqueue({ email: 'a@example.com', at: '2026-12-01' });
  // @ts-expect-error the schema's input type is the payload type
  await queues.queue(Signups).enqueue({ mail: 'a@example.com', at: '2026-12-01' });
  // @ts-expect-error producers give the input (a string), not the output (a number)
  await queues.queue(Signups).enqueue({ email: 'a@example.com', at: 1 });
}

@Processor(Signups)
export class SignupProcessor {
  process(job: Job<{ readonly email: string; readonly at: number }>): number {
    return job.data.at;
  }
}

// @ts-expect-error the handler receives the output (at: number), not the input
@Processor(Signups)
export class SignupInputProcessor {
  process(job: Job<{ readonly email: string; readonly at: string }>): string {
    return job.data.at;
  }
}
