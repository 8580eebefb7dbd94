import { Handle, Processor, QueueService, type Job } from '@app/echomq';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

const queue = uniqueQueue('smoke');

@Processor(queue, { concurrency: 4, retainCompletedMs: 60_000 })
class EchoProcessor {
  @Handle('shout')
  shout(job: Job<{ text: string }>) {
    return job.data.text.toUpperCase();
  }

  process(job: Job<{ text: string }>) {
    return { echoed: job.data.text, attempt: job.attempt };
  }
}

describe('a processor in a Nest application', () => {
  it('processes an enqueued job and routes named jobs', async () => {
    const app = await bootApp([EchoProcessor]);
    try {
      const queues = app.get(QueueService);
      const plain = await queues.enqueue(queue, { text: 'hi' });
      const named = await queues.enqueue(queue, { text: 'hey' }, { name: 'shout' });
      await expect(queues.waitFor(queue, plain, 10_000)).resolves.toEqual({ echoed: 'hi', attempt: 1 });
      await expect(queues.waitFor(queue, named, 10_000)).resolves.toBe('HEY');
      expect((await queues.getJob(queue, named))?.state).toBe('completed');
    } finally {
      await app.close();
    }
  });
});
