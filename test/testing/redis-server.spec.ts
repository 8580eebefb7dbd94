import { createServer } from 'node:net';
import { Test } from '@nestjs/testing';
import { EchoMqModule, InvalidArgumentError, Processor, QueueService } from '@app/echomq';
import { EchoMqTestKit, RedisServerNotFoundError, startRedis } from '@app/echomq/testing';

// The throwaway redis-server of the kit: started on a free loopback port, and gone,
// port and all, after stop().

@Processor('pings')
class PingProcessor {
  process(): string {
    return 'pong';
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the kit's own redis-server", () => {
  it('serves an application, and after stop() its process is gone and its port is free', async () => {
    const redis = await startRedis({ url: false });
    const { pid, port } = redis as { pid: number; port: number };
    expect(processExists(pid)).toBe(true);
    expect(await portIsFree(port)).toBe(false);

    const moduleRef = await Test.createTestingModule({
      imports: [EchoMqModule.forRoot({ ...redis.moduleOptions, startProcessors: false })],
      providers: [PingProcessor],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await app.get(QueueService).enqueue('pings', {});
    const summary = await EchoMqTestKit.from(app).runUntilIdle('pings');
    expect(summary.outcomes).toEqual([expect.objectContaining({ outcome: 'completed', result: 'pong' })]);
    await app.close();

    await redis.stop();
    expect(processExists(pid)).toBe(false);
    expect(await portIsFree(port)).toBe(true);
    await redis.stop(); // again: nothing more to do
  });

  it('names the package to install when redis-server is not on PATH', async () => {
    const failure = await startRedis({ url: false, command: 'redis-server-not-installed' }).catch((e) => e);
    expect(failure).toBeInstanceOf(RedisServerNotFoundError);
    expect((failure as RedisServerNotFoundError).code).toBe('REDIS_SERVER_NOT_FOUND');
    expect((failure as Error).message).toContain(
      'redis-server-not-installed was not found on PATH: install Redis',
    );
  });

  it('refuses options out of range before starting anything', async () => {
    await expect(startRedis({ url: '' })).rejects.toThrow(InvalidArgumentError);
    await expect(startRedis({ url: false, readyTimeoutMs: 0 })).rejects.toThrow(
      'readyTimeoutMs must be an integer from 1',
    );
  });
});
