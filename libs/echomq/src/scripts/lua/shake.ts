/**
 * Each script carries only the shared helpers it calls. Redis runs a script's whole text on
 * every call, so every helper defined costs every call something (a closure, a string), used
 * or not: a claim or a complete on a busy queue runs thousands of times a second.
 *
 * The helpers' text is cut into top-level statements (a `local` at the start of a line, with
 * the comment lines above it); a statement is kept when the script's body names one of its
 * names, or a kept statement does, and the kept ones keep their order, so every helper is
 * still defined before anything that calls it. A name seen in a comment keeps a helper it
 * did not need: harmless. A helper a body calls but that is left out would fail at the
 * first call of that script, and every script runs in the suites.
 */

interface Statement {
  readonly text: string;
  readonly names: readonly string[];
}

const STATEMENT_START = /^local\s/;
const DECLARED = /^local\s+(?:function\s+([A-Za-z_]\w*)|([A-Za-z_][\w\s,]*?)\s*=)/;

function statementsOf(helpers: string): Statement[] {
  const statements: Statement[] = [];
  let lines: string[] = [];
  let pending: string[] = [];
  const flush = (): void => {
    if (lines.length === 0) return;
    const declaration = lines.find((line) => STATEMENT_START.test(line)) ?? '';
    const match = DECLARED.exec(declaration);
    if (!match) throw new Error(`A helper statement must declare a local: ${declaration}`);
    const names = match[1] ? [match[1]] : match[2].split(',').map((name) => name.trim());
    statements.push({ text: lines.join('\n'), names });
    lines = [];
  };
  for (const line of helpers.split('\n')) {
    if (STATEMENT_START.test(line)) {
      flush();
      lines = [...pending, line];
      pending = [];
    } else if (line.startsWith('--')) {
      // A comment at the top level belongs to the statement after it.
      flush();
      pending.push(line);
    } else if (lines.length > 0) {
      lines.push(line); // the statement's own lines (a function's body and its 'end', blank lines)
    } else if (line.trim() === '') {
      pending.push(line);
    } else {
      throw new Error(`Helper text outside a statement: ${line}`);
    }
  }
  flush();
  return statements;
}

/** `name` as an identifier: not part of a longer one, not a field (`t.name`; `'x'..name` is). */
function mentions(text: string, name: string): boolean {
  return new RegExp(`(?<!\\w)(?<![^.]\\.)(?<!^\\.)${name}(?!\\w)`, 'm').test(text);
}

/** The helper statements `body` needs, transitively, in their original order. */
export function helpersFor(helpers: string, body: string): string {
  const statements = statementsOf(helpers);
  const kept = new Set<number>();
  const wanted = [body];
  while (wanted.length > 0) {
    const text = wanted.pop()!;
    statements.forEach((statement, index) => {
      if (!kept.has(index) && statement.names.some((name) => mentions(text, name))) {
        kept.add(index);
        wanted.push(statement.text);
      }
    });
  }
  return statements
    .filter((_, index) => kept.has(index))
    .map((statement) => statement.text)
    .join('\n');
}
