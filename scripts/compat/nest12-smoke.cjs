// Loads the compiled (CommonJS) library under NestJS 12, which is ESM-only, and runs
// one job end to end. Node >= 20.19 loads ESM packages through require().
require('reflect-metadata');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const lib = require(path.resolve(process.argv[2], 'index.js'));
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const nestVersion = require('@nestjs/core/package.json').version;

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function main() {
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  try {
    class Echo {
      process(job) {
        return { echoed: job.data };
      }
    }
    lib.Processor('compat')(Echo);
    const AppModule = Reflect.decorate(
      [
        Module({
          imports: [lib.EchoMqModule.forRoot({ connection: { port, host: '127.0.0.1' }, nodeId: 1 })],
          providers: [Echo],
        }),
      ],
      class AppModule {},
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
    await app.init();
    const queues = app.get(lib.QueueService);
    const id = await queues.enqueue('compat', 12);
    const result = await queues.waitFor('compat', id, 10_000);
    await app.close();
    if (JSON.stringify(result) !== '{"echoed":12}')
      throw new Error(`unexpected result ${JSON.stringify(result)}`);
    console.log(`EchoMQ runs on NestJS ${nestVersion}: job ${id} -> ${JSON.stringify(result)}`);
  } finally {
    redis.kill('SIGKILL');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
