import { helpersFor } from '@app/echomq/scripts/lua/shake';
import { SCRIPTS } from '@app/echomq/internal';

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

  it('leaves no script with a call to a helper it does not define', () => {
    // Every helper name of the real preludes that a script mentions is defined in it.
    for (const [name, script] of Object.entries(SCRIPTS)) {
      const defined = new Set([...script.lua.matchAll(/^local function (\w+)/gm)].map((m) => m[1]));
      for (const call of script.lua.matchAll(
        /\b(try_restore|offer|into_pending|leaving|holds|wake|emit|bump|record|replayed|now_ms|int_arg|refuse)\(/g,
      )) {
        expect([name, defined.has(call[1])]).toEqual([name, true]);
      }
    }
  });
});
