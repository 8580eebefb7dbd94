/**
 * The files of a small Nest application that uses the installed package the way a user's
 * does: its own package.json, no path aliases, strict TypeScript. Kept as text because it
 * only compiles once the package is installed next to it, outside this repository.
 */

/** Under module nodenext, as Nest's starter writes it; built and run. */
const TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2023',
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    // The package's declarations are checked too: they must compile in a user's project.
    skipLibCheck: false,
    types: ['node'],
    rootDir: 'src',
    outDir: 'dist',
    noEmitOnError: true,
  },
  include: ['src'],
};

/**
 * Under the older resolution, which ignores `exports` and which many existing apps still
 * use; checked only. It checks how the entries resolve: the declarations themselves were
 * checked by the build above, so the libraries' are skipped here to keep it quick.
 */
const TSCONFIG_NODE10 = {
  extends: './tsconfig.json',
  compilerOptions: { module: 'commonjs', moduleResolution: 'node10', noEmit: true, skipLibCheck: true },
};

const MAIN = `import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { defineQueue, EchoMqModule, Processor, QueueService, type Job } from '@echomq/nestjs';

interface Greeting {
  readonly name: string;
  readonly times: number;
}

interface Greeted {
  readonly message: string;
}

function required(variable: string): string {
  const value = process.env[variable];
  if (!value) throw new Error(\`set \${variable}\`);
  return value;
}

const url = required('REDIS_URL');
const queue = required('QUEUE');
const Greetings = defineQueue<Greeting, Greeted>(queue);

@Processor(Greetings)
class GreetingProcessor {
  process(job: Job<Greeting>): Greeted {
    return { message: \`hello \${job.data.name}\`.repeat(job.data.times) };
  }
}

@Injectable()
class Greeter {
  constructor(private readonly queues: QueueService) {}

  async greet(greeting: Greeting): Promise<Greeted> {
    // The typed handle: a payload other than Greeting, or a result other than Greeted, would not compile.
    const greetings = this.queues.queue(Greetings);
    const id = await greetings.enqueue(greeting);
    return greetings.waitFor(id, 20_000);
  }
}

@Module({
  imports: [EchoMqModule.forRoot({ connection: { url } })],
  providers: [GreetingProcessor, Greeter],
})
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  try {
    const result = await app.get(Greeter).greet({ name: 'scratch', times: 2 });
    console.log(\`RESULT \${JSON.stringify(result)}\`);
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

/**
 * Which of the package's paths resolve for a user's code: the entries its exports map
 * opens, and deep paths it must keep closed. The internal entry is imported for real, so
 * its declarations are type-checked as well.
 */
const ENTRIES = `import * as internal from '@echomq/nestjs/internal';

const specifiers = JSON.parse(process.argv[2] ?? '[]') as string[];
const resolution: Record<string, string> = {};
for (const specifier of specifiers) {
  try {
    require.resolve(specifier);
    resolution[specifier] = 'resolves';
  } catch (error) {
    resolution[specifier] = (error as NodeJS.ErrnoException).code ?? String(error);
  }
}
const version = (require('@echomq/nestjs/package.json') as { version: string }).version;
console.log(JSON.stringify({ resolution, version, queueKeys: typeof internal.queueKeys }));
`;

/** Type-checks the testing kit's entry, when the package has one, without running it. */
const TESTING_TYPES = `export type TestingKit = typeof import('@echomq/nestjs/testing');
`;

export interface ScratchApp {
  readonly packageJson: object;
  readonly files: Readonly<Record<string, string>>;
}

/**
 * The app's package.json depends on the tarball (copied next to it as `tarballFile`) and on
 * `versions`: the peers at the versions this repository locks, TypeScript and Node's types.
 */
export function scratchApp(
  name: string,
  tarballFile: string,
  versions: Readonly<Record<string, string>>,
  hasTesting: boolean,
): ScratchApp {
  const files: Record<string, string> = {
    'tsconfig.json': JSON.stringify(TSCONFIG, null, 2),
    'tsconfig.node10.json': JSON.stringify(TSCONFIG_NODE10, null, 2),
    'src/main.ts': MAIN,
    'src/entries.ts': ENTRIES,
  };
  if (hasTesting) files['src/testing-types.ts'] = TESTING_TYPES;
  return {
    packageJson: {
      name,
      version: '1.0.0',
      private: true,
      dependencies: { '@echomq/nestjs': `file:${tarballFile}`, ...versions },
    },
    files,
  };
}
