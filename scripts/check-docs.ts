/**
 * `npm run docs:check`: type-checks every ```ts / ```typescript block of README.md and
 * docs/**\/*.md, so an example that stops compiling fails the test run instead of misleading
 * a reader. Each block is its own module, compiled in one program (strict, with decorators)
 * against the repository's node_modules. The only EchoMQ imports a block can use are the
 * published entries, `@echomq/nestjs` and `@echomq/nestjs/testing`, mapped to their sources:
 * a reader cannot import anything else, so neither can an example.
 *
 * There is no skip marker: a block that is deliberately not a complete module (a fragment,
 * pseudo-code) is fenced as ```text, so a reader can tell too.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import * as ts from 'typescript';

/** One TypeScript block of a markdown file. */
export interface DocBlock {
  /** The markdown file, relative to the repository root (as printed). */
  readonly file: string;
  /** 1-based line of the block's first code line in that file. */
  readonly line: number;
  readonly code: string;
}

/** A compile error, or a malformed fence, at a line of a markdown file. */
export interface DocProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

const TYPESCRIPT_FENCES = new Set(['ts', 'typescript']);
const OPENING_FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** Every ```ts / ```typescript block of one markdown text; an unclosed fence is a problem. */
export function extractBlocks(
  file: string,
  markdown: string,
): { blocks: DocBlock[]; problems: DocProblem[] } {
  const lines = markdown.split(/\r?\n/);
  const blocks: DocBlock[] = [];
  const problems: DocProblem[] = [];
  for (let index = 0; index < lines.length; index++) {
    const opening = OPENING_FENCE.exec(lines[index]);
    if (!opening) continue;
    const [, indent, fence, info] = opening;
    // A backtick fence's info string cannot hold a backtick (that is inline code).
    if (fence[0] === '`' && info.includes('`')) continue;
    const language = info.trim().split(/\s+/)[0].toLowerCase();
    const closing = new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`);
    const start = index + 1;
    let end = start;
    while (end < lines.length && !closing.test(lines[end])) end++;
    if (end === lines.length) {
      problems.push({ file, line: index + 1, message: `the ${fence} fence opened here is never closed` });
      break;
    }
    if (TYPESCRIPT_FENCES.has(language)) {
      // Content lines lose the fence's own indentation, as a markdown renderer removes it.
      const strip = new RegExp(`^ {0,${indent.length}}`);
      const code = lines
        .slice(start, end)
        .map((line) => line.replace(strip, ''))
        .join('\n');
      blocks.push({ file, line: start + 1, code });
    }
    index = end;
  }
  return { blocks, problems };
}

/** README.md and every markdown file under docs/, relative to root, in a stable order. */
export function findDocs(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return ['README.md', ...found.sort()];
}

/** The package entries a reader imports, mapped to the sources they are built from. */
function publicEntries(root: string): ReadonlyMap<string, string> {
  return new Map([
    ['@echomq/nestjs', join(root, 'libs/echomq/src/index.ts')],
    ['@echomq/nestjs/testing', join(root, 'libs/echomq/src/testing/index.ts')],
    ['@echomq/nestjs/health', join(root, 'libs/echomq/src/health/index.ts')],
  ]);
}

function compilerOptions(root: string): ts.CompilerOptions {
  return {
    strict: true,
    noImplicitOverride: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ['lib.es2022.d.ts'],
    types: ['node', 'jest'],
    typeRoots: [join(root, 'node_modules/@types')],
    skipLibCheck: true,
    noEmit: true,
  };
}

/**
 * Type-checks every block as its own module, all in one program. Problems point at the
 * markdown line of the error; only the blocks' own errors are reported (the library is
 * checked by the project's typecheck).
 */
export function checkBlocks(blocks: readonly DocBlock[], root: string): DocProblem[] {
  if (blocks.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'echomq-docs-'));
  try {
    const byFile = new Map<string, DocBlock>();
    blocks.forEach((block, index) => {
      const path = join(dir, `block-${String(index).padStart(4, '0')}.ts`);
      // The trailing export makes a block without imports a module too, so blocks never share a scope.
      writeFileSync(path, `${block.code}\nexport {};\n`);
      byFile.set(path, block);
    });
    const options = compilerOptions(root);
    const host = ts.createCompilerHost(options);
    const entries = publicEntries(root);
    // Blocks resolve packages as a file at the repository root would; nothing of the repo but the entries.
    const blockImporter = join(root, 'docs-block.ts');
    host.resolveModuleNameLiterals = (literals, containingFile, redirect, resolvedOptions) =>
      literals.map(({ text }) => {
        if (!byFile.has(containingFile)) {
          return ts.resolveModuleName(text, containingFile, resolvedOptions, host, undefined, redirect);
        }
        const entry = entries.get(text);
        if (entry !== undefined) {
          return ts.sys.fileExists(entry)
            ? { resolvedModule: { resolvedFileName: entry, extension: ts.Extension.Ts } }
            : { resolvedModule: undefined };
        }
        const intoTheRepo = text.startsWith('.') || isAbsolute(text) || /^@(echomq|app)\//.test(text);
        if (intoTheRepo) {
          return { resolvedModule: undefined };
        }
        return ts.resolveModuleName(text, blockImporter, resolvedOptions, host);
      });
    const program = ts.createProgram([...byFile.keys()], options, host);
    const problems: DocProblem[] = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file === undefined)
      .map((diagnostic) => ({ file: '(compiler options)', line: 0, message: messageOf(diagnostic) }));
    for (const [path, block] of byFile) {
      const source = program.getSourceFile(path);
      if (!source) continue;
      const diagnostics = [
        ...program.getSyntacticDiagnostics(source),
        ...program.getSemanticDiagnostics(source),
      ];
      for (const diagnostic of diagnostics) {
        const offset = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line;
        problems.push({ file: block.file, line: block.line + offset, message: messageOf(diagnostic) });
      }
    }
    return problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function messageOf(diagnostic: ts.Diagnostic): string {
  return `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
}

export function formatProblem(problem: DocProblem): string {
  return `${problem.file}:${problem.line}: ${problem.message}`;
}

/** Extracts and checks every block of the repository's docs. */
export function checkDocs(root: string): { blocks: number; problems: DocProblem[] } {
  const blocks: DocBlock[] = [];
  const problems: DocProblem[] = [];
  for (const file of findDocs(root)) {
    const extracted = extractBlocks(file, readFileSync(join(root, file), 'utf8'));
    blocks.push(...extracted.blocks);
    problems.push(...extracted.problems);
  }
  problems.push(...checkBlocks(blocks, root));
  return { blocks: blocks.length, problems };
}

function main(): void {
  const root = resolve(__dirname, '..');
  const { blocks, problems } = checkDocs(root);
  for (const problem of problems) console.error(formatProblem(problem));
  if (problems.length > 0) {
    console.error(`docs:check: ${problems.length} problem(s) in ${blocks} TypeScript block(s)`);
    process.exitCode = 1;
  } else {
    console.log(`docs:check: ${blocks} TypeScript block(s) compile`);
  }
}

if (require.main === module) main();
