import { helpersFor } from '@app/echomq/scripts/lua/shake';
import { SCRIPTS } from '@app/echomq/internal';
import { FLOW_PRELUDE } from '@app/echomq/scripts/lua/flow';
import { PRELUDE } from '@app/echomq/scripts/lua/prelude';
import { JOB_ROW_PRELUDE } from '@app/echomq/scripts/lua/job-row';
import { RETENTION_PRELUDE } from '@app/echomq/scripts/lua/retention';

const HELPERS = `
local LIMIT = 5
local A, B = 'a', 'b'

-- doubles
local function double(x)
  return x * 2

end

-- uses double and LIMIT
local function capped(x)
  if double(x) > LIMIT then return LIMIT end
  return double(x)
end

local function unused()
  return A
end
`;

describe('the helpers a script carries', () => {
  it('keeps what the body calls, and what those call, in their order, with their comments', () => {
    const kept = helpersFor(HELPERS, 'return capped(ARGV[1])');
    expect(kept).toContain('local LIMIT = 5');
    expect(kept).toContain('-- doubles\nlocal function double(x)');
    expect(kept.indexOf('local function double')).toBeLessThan(kept.indexOf('local function capped'));
    expect(kept).not.toContain('unused');
    expect(kept).not.toContain("local A, B = 'a', 'b'");
  });

  it('keeps a statement of several names when the body names one of them', () => {
    expect(helpersFor(HELPERS, 'return B')).toBe("local A, B = 'a', 'b'\n");
  });

  it('keeps nothing for a body that calls no helper', () => {
    expect(helpersFor(HELPERS, 'return 1')).toBe('');
  });

  it('refuses helper text that is not a local statement', () => {
    expect(() => helpersFor('x = 1\n', 'return x')).toThrow(/outside a statement/);
  });

  it('leaves no script using a shared helper it does not define', () => {
    // Every name the shared helpers declare that a script's code uses (comments and strings
    // left out; `t.name` is a field, `'x'..name` is not) is declared in that script.
    const helperNames = [
      ...`${PRELUDE}\n${RETENTION_PRELUDE}\n${FLOW_PRELUDE}\n${JOB_ROW_PRELUDE}`.matchAll(
        /^local\s+(?:function\s+(\w+)|([\w\s,]+?)\s*=)/gm,
      ),
    ].flatMap((m) => (m[1] ? [m[1]] : m[2].split(',').map((name) => name.trim())));
    for (const [name, script] of Object.entries(SCRIPTS)) {
      const code = script.lua.replace(/--[^\n]*/g, '').replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''");
      const declared = new Set(
        [...code.matchAll(/^local\s+(?:function\s+(\w+)|([\w\s,]+?)\s*=)/gm)].flatMap((m) =>
          m[1] ? [m[1]] : m[2].split(',').map((n) => n.trim()),
        ),
      );
      for (const helper of helperNames) {
        const used = new RegExp(`(?<!\\w)(?<![^.]\\.)${helper}(?!\\w)`).test(code);
        if (used) expect([name, helper, declared.has(helper)]).toEqual([name, helper, true]);
      }
    }
  });
});
