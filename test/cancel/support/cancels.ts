import type { Redis } from 'ioredis';

/** Server-side clients (CLIENT LIST) with this connection name blocked in an XREAD: the cancel readers. */
export async function blockedReaders(redis: Redis, name: string): Promise<string[]> {
  const list = (await redis.client('LIST')) as string;
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${name} `) && / cmd=xread( |$)/.test(line))
    .map((line) => /(?:^| )id=(\d+)/.exec(line)?.[1] ?? '')
    .filter((id) => id !== '');
}

/** Kills those connections, as a network fault or a Redis-side timeout would. */
export async function killReaders(redis: Redis, name: string): Promise<number> {
  const ids = await blockedReaders(redis, name);
  for (const id of ids) await redis.client('KILL', 'ID', id);
  return ids.length;
}

/** The Redis server clock in ms when it runs this (one script: TIME, then the write). */
const STAMP_LUA = `
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('RPUSH', KEYS[1], string.format('%d', ms))
return ms
`;

/** Appends the server's time to a list: what a handler's abort listener records. */
export async function stampServerTime(redis: Redis, key: string): Promise<number> {
  return Number(await redis.eval(STAMP_LUA, 1, key));
}

/** The server time of the 'removed' event of a job: when its remove ran. */
export async function removedAt(redis: Redis, eventsKey: string, id: string): Promise<number> {
  const entries = await redis.xrevrange(eventsKey, '+', '-', 'COUNT', 100);
  for (const [entryId, flat] of entries) {
    const fields: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
    if (fields.type === 'removed' && fields.ids === id) return Number(entryId.split('-')[0]);
  }
  throw new Error(`no 'removed' event for ${id}`);
}
