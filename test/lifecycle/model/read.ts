/**
 * Bulk reads of the model test, each one read-only script call (so a check of a few thousand
 * rows is one round trip, not thousands of commands). They run at one instant, like a MULTI.
 */
import type { Redis } from 'ioredis';

/** Per key: HGETALL (as a flat list of bytes), then PTTL. */
const READ_ROWS = `
local out = {}
for i = 1, #KEYS do
  out[#out + 1] = redis.call('HGETALL', KEYS[i])
  out[#out + 1] = redis.call('PTTL', KEYS[i])
end
return out
`;

/**
 * Per key: a digest of its whole content (nil when absent), then PTTL. A hash's fields are
 * sorted first (the order HGETALL returns can change when Redis rehashes it); every value is
 * length-prefixed, so the digest is of an unambiguous text. ARGV[1] = '1' returns each text's
 * first 300 bytes instead (for a failure message); ARGV[1 + i] is the type KEYS[i] has if it exists.
 */
const DIGEST_KEYS = `
local function put(parts, s)
  parts[#parts + 1] = #s .. ':' .. s
end
local function flat(parts, list)
  for _, v in ipairs(list) do
    if type(v) == 'table' then flat(parts, v) else put(parts, tostring(v)) end
  end
end
local out = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local kind = ARGV[i + 1]
  if redis.call('EXISTS', key) == 0 then kind = 'none' end
  local parts = { kind }
  if kind == 'hash' then
    local fields = redis.call('HGETALL', key)
    local names, values = {}, {}
    for j = 1, #fields, 2 do
      names[#names + 1] = fields[j]
      values[fields[j]] = fields[j + 1]
    end
    table.sort(names)
    for _, name in ipairs(names) do
      put(parts, name)
      put(parts, values[name])
    end
  elseif kind == 'zset' then
    flat(parts, redis.call('ZRANGE', key, 0, -1, 'WITHSCORES'))
  elseif kind == 'set' then
    local members = redis.call('SMEMBERS', key)
    table.sort(members)
    flat(parts, members)
  elseif kind == 'list' then
    flat(parts, redis.call('LRANGE', key, 0, -1))
  elseif kind == 'string' then
    put(parts, redis.call('GET', key))
  elseif kind == 'stream' then
    flat(parts, redis.call('XRANGE', key, '-', '+'))
  elseif kind ~= 'none' then
    error('model test: no digest for a ' .. kind)
  end
  if kind == 'none' then
    out[#out + 1] = false
  elseif ARGV[1] == '1' then
    out[#out + 1] = string.sub(table.concat(parts, ' '), 1, 300)
  else
    out[#out + 1] = redis.sha1hex(table.concat(parts, ' '))
  end
  out[#out + 1] = redis.call('PTTL', key)
end
return out
`;

export interface RowRead {
  /** The row's fields as bytes (none when there is no row). */
  readonly fields: Record<string, Buffer>;
  readonly pttl: number;
}

export async function readRows(redis: Redis, keys: readonly string[]): Promise<RowRead[]> {
  if (keys.length === 0) return [];
  const flat = (await redis.callBuffer('EVAL', READ_ROWS, keys.length, ...keys)) as (Buffer[] | number)[];
  const rows: RowRead[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const list = flat[i] as Buffer[];
    const fields: Record<string, Buffer> = {};
    for (let j = 0; j < list.length; j += 2) fields[list[j].toString()] = list[j + 1];
    rows.push({ fields, pttl: Number(flat[i + 1]) });
  }
  return rows;
}

export interface KeyDigest {
  /** A digest of the key's content; null when the key is absent. */
  readonly content: string | null;
  readonly pttl: number;
}

export type KeyKind = 'hash' | 'zset' | 'set' | 'list' | 'string' | 'stream';

/** Digests of many keys' content (or, with `text`, their content's first bytes, to show). */
export async function digestKeys(
  redis: Redis,
  keys: readonly { readonly key: string; readonly kind: KeyKind }[],
  text = false,
): Promise<KeyDigest[]> {
  if (keys.length === 0) return [];
  const flat = (await redis.eval(
    DIGEST_KEYS,
    keys.length,
    ...keys.map((k) => k.key),
    text ? '1' : '0',
    ...keys.map((k) => k.kind),
  )) as (string | null | number)[];
  const out: KeyDigest[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    out.push({ content: flat[i] === null ? null : String(flat[i]), pttl: Number(flat[i + 1]) });
  }
  return out;
}
