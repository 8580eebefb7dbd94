import {
  EchoMqExceptionFilter,
  EchoMqModule,
  Processor,
  QueueService,
  UnrecoverableError,
} from '@app/echomq';
import {
  type ArgumentsHost,
  Body,
  Controller,
  Get,
  type INestApplication,
  type LoggerService,
  NotFoundException,
  Param,
  Post,
  type Provider,
  Res,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { Response } from 'express';
import request from 'supertest';
import { redisUrl, uniqueQueue } from '../support/redis';
import { ERROR_SAMPLES } from './support/error-samples';

/**
 * EchoMqExceptionFilter in a real Nest HTTP app, registered both ways a user can: every
 * library error thrown by a route comes back with its status, code and public message,
 * and errors raised by the real QueueService are answered the same way.
 */

const IDLE = uniqueQueue('http-idle'); // no processor: waits on it time out
const DOOMED = uniqueQueue('http-doomed'); // its handler sends every job to dead
const MAX_PAYLOAD_BYTES = 1024;
const HANDLER_SECRET = 'password=hunter2';

@Controller()
class ThrowingController {
  @Get('throw/:index')
  throwSample(@Param('index') index: string): never {
    throw ERROR_SAMPLES[Number(index)].error;
  }

  /** Fails after the status line went out: the filter can only end the response. */
  @Get('late')
  late(@Res() res: Response): never {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('partial');
    throw ERROR_SAMPLES[0].error;
  }

  @Get('not-ours')
  notOurs(): never {
    throw new NotFoundException('No such widget');
  }
}

@Controller('jobs')
class JobsController {
  constructor(private readonly queues: QueueService) {}

  @Get(':id')
  async get(@Param('id') id: string): Promise<{ state: string | null }> {
    return { state: (await this.queues.getJob(IDLE, id))?.state ?? null };
  }

  @Post()
  async enqueue(@Body() body: unknown): Promise<{ id: string }> {
    return { id: await this.queues.enqueue(IDLE, body) };
  }

  @Post(':id/retry')
  async retry(@Param('id') id: string): Promise<void> {
    await this.queues.retry(IDLE, id);
  }

  @Post(':id/wait')
  async wait(@Param('id') id: string): Promise<unknown> {
    return this.queues.waitFor(IDLE, id, 50);
  }

  @Post('doomed')
  async runDoomed(): Promise<unknown> {
    const id = await this.queues.enqueue(DOOMED, { to: 'x' });
    return this.queues.waitFor(DOOMED, id);
  }
}

@Processor(DOOMED)
class DoomedProcessor {
  process(): never {
    throw new UnrecoverableError(`cannot log in with ${HANDLER_SECRET}`);
  }
}

/** Keeps what the app logs, to show the operator is told what the client is not. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log(): void {}
  error(message: unknown): void {
    this.lines.push(String(message));
  }
  warn(message: unknown): void {
    this.lines.push(String(message));
  }
}

type Registration = 'useGlobalFilters(new EchoMqExceptionFilter())' | 'an APP_FILTER provider';

async function boot(registration: Registration, logger: LoggerService): Promise<INestApplication> {
  const filterProvider: Provider[] =
    registration === 'an APP_FILTER provider'
      ? [{ provide: APP_FILTER, useClass: EchoMqExceptionFilter }]
      : [];
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, maxPayloadBytes: MAX_PAYLOAD_BYTES })],
    controllers: [ThrowingController, JobsController],
    providers: [DoomedProcessor, ...filterProvider],
  }).compile();
  const app = moduleRef.createNestApplication({ logger });
  if (registration !== 'an APP_FILTER provider') app.useGlobalFilters(new EchoMqExceptionFilter());
  await app.init();
  return app;
}

describe.each<Registration>(['useGlobalFilters(new EchoMqExceptionFilter())', 'an APP_FILTER provider'])(
  'EchoMqExceptionFilter registered with %s',
  (registration) => {
    let app: INestApplication;
    const logger = new CapturingLogger();
    const http = () => request(app.getHttpServer());

    beforeAll(async () => {
      app = await boot(registration, logger);
    });
    afterAll(async () => {
      await app.close();
    });

    it.each(ERROR_SAMPLES.map((sample, index) => [sample.error.constructor.name, sample, index] as const))(
      'answers %s thrown by a route with its status, code and public message',
      async (_name, sample, index) => {
        const res = await http().get(`/throw/${index}`);
        expect(res.status).toBe(sample.status);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toEqual({
          statusCode: sample.status,
          code: sample.error.code,
          message: sample.message ?? sample.error.message,
          error: expect.any(String),
          ...sample.details,
        });
        expect(res.headers['retry-after']).toBe(sample.retryAfter);
        if (sample.secret !== undefined) expect(res.text).not.toContain(sample.secret);
      },
    );

    it('tells the log what it keeps from the client', async () => {
      const index = ERROR_SAMPLES.findIndex((sample) => sample.error.code === 'REDIS_UNAVAILABLE');
      const res = await http().get(`/throw/${index}`).expect(503);
      expect(res.text).not.toContain('10.1.2.3');
      expect(
        logger.lines.some((line) => line.includes('REDIS_UNAVAILABLE') && line.includes('10.1.2.3')),
      ).toBe(true);
    });

    it('ends a response whose status was already sent instead of leaving it hanging', async () => {
      const res = await http().get('/late');
      expect(res.status).toBe(200);
      expect(res.text).toBe('partial');
    });

    it("leaves errors that are not EchoMQ's to Nest", async () => {
      const res = await http().get('/not-ours').expect(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'No such widget', error: 'Not Found' });
    });

    it('answers a malformed id given to QueueService.getJob with 400 INVALID_JOB_ID', async () => {
      const res = await http().get('/jobs/JOB-not-an-id').expect(400);
      expect(res.body).toEqual({
        statusCode: 400,
        code: 'INVALID_JOB_ID',
        message: 'Invalid job id "JOB-not-an-id": expected JOB followed by 11 Base62 characters',
        error: 'Bad Request',
      });
    });

    it('answers a payload over the limit with 413 and the limit', async () => {
      const res = await http()
        .post('/jobs')
        .send({ text: 'x'.repeat(MAX_PAYLOAD_BYTES) })
        .expect(413);
      expect(res.body).toMatchObject({
        statusCode: 413,
        code: 'PAYLOAD_TOO_LARGE',
        limitBytes: MAX_PAYLOAD_BYTES,
        payloadBytes: expect.any(Number),
      });
      expect(res.body.payloadBytes).toBeGreaterThan(MAX_PAYLOAD_BYTES);
    });

    it('answers a retry of an unknown job with 404 and of a pending job with 409', async () => {
      const unknown = await http().post('/jobs/JOB00000000001/retry').expect(404);
      expect(unknown.body).toMatchObject({ code: 'JOB_NOT_FOUND', jobId: 'JOB00000000001' });

      const { id } = (await http().post('/jobs').send({ n: 1 }).expect(201)).body as { id: string };
      const pending = await http().post(`/jobs/${id}/retry`).expect(409);
      expect(pending.body).toMatchObject({ code: 'JOB_STATE', jobId: id, message: `Job ${id} is not dead` });
    });

    it('answers a waitFor that runs out with 504 WAIT_TIMEOUT', async () => {
      // IDLE has no processor, so the job stays pending and the wait can only time out.
      const { id } = (await http().post('/jobs').send({ n: 2 }).expect(201)).body as { id: string };
      const res = await http().post(`/jobs/${id}/wait`).expect(504);
      expect(res.body).toEqual({
        statusCode: 504,
        code: 'WAIT_TIMEOUT',
        message: `Job ${id} did not finish within 50 ms`,
        error: 'Gateway Timeout',
        jobId: id,
        timeoutMs: 50,
      });
    });

    it("answers a job that died with 422 JOB_FAILED, keeping its handler's error text out", async () => {
      const res = await http().post('/jobs/doomed').expect(422);
      expect(res.body).toMatchObject({ statusCode: 422, code: 'JOB_FAILED', error: 'Unprocessable Entity' });
      expect(res.body.message).toBe(`Job ${res.body.jobId} failed`);
      expect(res.text).not.toContain(HANDLER_SECRET);
    });
  },
);

describe('EchoMqExceptionFilter outside HTTP', () => {
  it.each(['rpc', 'ws', 'graphql'])('gives a %s error back untouched, typed and with its code', (type) => {
    const error = new UnrecoverableError('no HTTP here');
    const host = {
      getType: () => type,
      switchToHttp: () => {
        throw new Error('an HTTP response was asked for outside HTTP');
      },
    } as unknown as ArgumentsHost;
    expect(() => new EchoMqExceptionFilter().catch(error, host)).toThrow(error);
  });
});
