import { join } from 'node:path';
import { checkBlocks, extractBlocks, formatProblem, type DocBlock } from '../../scripts/check-docs';

const root = join(__dirname, '..', '..');

describe('the docs checker', () => {
  describe('extracting blocks', () => {
    const markdown = [
      '# Title', // 1
      '', // 2
      '```ts', // 3
      'const a: number = 1;', // 4
      '```', // 5
      '', // 6
      '```bash', // 7
      'npm test', // 8
      '```', // 9
      '', // 10
      '````typescript title="nested"', // 11
      '```ts', // 12
      '```', // 13
      '````', // 14
      '', // 15
      '- a list item', // 16
      '  ```ts', // 17
      '  const b = 2;', // 18
      '  ```', // 19
      '', // 20
      '```text', // 21
      'const not: checked = 0;', // 22
      '```', // 23
    ].join('\n');

    it('takes ts and typescript fences with the line of their first code line, and nothing else', () => {
      const { blocks, problems } = extractBlocks('docs/x.md', markdown);
      expect(problems).toEqual([]);
      expect(blocks).toEqual([
        { file: 'docs/x.md', line: 4, code: 'const a: number = 1;' },
        { file: 'docs/x.md', line: 12, code: '```ts\n```' },
        { file: 'docs/x.md', line: 18, code: 'const b = 2;' },
      ]);
    });

    it('reports a fence that is never closed at the line that opens it', () => {
      const { problems } = extractBlocks('docs/x.md', '# T\n\n```ts\nconst a = 1;\n');
      expect(problems).toEqual([expect.objectContaining({ file: 'docs/x.md', line: 3 })]);
    });
  });

  describe('type-checking blocks', () => {
    // One program for every case below, as the real run uses one program for all the docs.
    const clean: DocBlock = {
      file: 'docs/clean.md',
      line: 10,
      code: [
        "import { Module } from '@nestjs/common';",
        "import { EchoMqModule, QueueService, isJobId } from '@echomq/nestjs';",
        "@Module({ imports: [EchoMqModule.forRoot({ connection: { url: 'redis://127.0.0.1:6379' } })] })",
        'export class AppModule {}',
        'export async function send(queues: QueueService): Promise<boolean> {',
        "  return isJobId(await queues.enqueue('emails', { to: 'a@example.com' }));",
        '}',
        // The same name as in the other blocks: each block is its own module.
        'const shared = 1;',
        'export { shared };',
      ].join('\n'),
    };
    const wrongType: DocBlock = {
      file: 'docs/broken.md',
      line: 20,
      code: "const shared = 1;\n\nconst count: number = 'three';\nexport { shared, count };",
    };
    const internals: DocBlock = {
      file: 'README.md',
      line: 30,
      code: "import { queueKeys } from '@app/echomq/internal';\nimport { RedisConnections } from '@echomq/nestjs/internal';\nexport { queueKeys, RedisConnections };",
    };
    let problems: ReturnType<typeof checkBlocks>;

    beforeAll(() => {
      problems = checkBlocks([clean, wrongType, internals], root);
    }, 60_000);

    it('passes a block that uses the public entry correctly', () => {
      expect(problems.filter((problem) => problem.file === clean.file)).toEqual([]);
    });

    it('reports a type error with its markdown file and the line it is on', () => {
      const broken = problems.filter((problem) => problem.file === wrongType.file);
      expect(broken).toHaveLength(1);
      expect(formatProblem(broken[0])).toMatch(
        /^docs\/broken\.md:22: TS2322: Type 'string' is not assignable to type 'number'/,
      );
    });

    it('refuses imports of anything but the public entries', () => {
      const refused = problems.filter((problem) => problem.file === internals.file);
      expect(refused.map((problem) => problem.line)).toEqual([30, 31]);
      expect(refused.every((problem) => problem.message.startsWith('TS2307'))).toBe(true);
    });
  });
});
