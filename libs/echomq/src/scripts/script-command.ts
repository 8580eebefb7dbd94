import { createHash } from 'node:crypto';
import { Command, type RedisOptions } from 'ioredis';
import { SCRIPTS, type RedisClient, type ScriptName } from './registry';

/**
 * One script call as ioredis sends it: EVALSHA of a script in SCRIPTS, with its arguments as
 * the text Redis receives.
 *
 * Why not the client's own script command (`client.emqEnqueue(...)`): ioredis copies its
 * arguments three times and flattens them with Array.prototype.flat, about 90 ns per value,
 * then measures every value's UTF-8 length as it writes. An enqueue of 64 jobs sends 800
 * values, so that was about 2 µs of this process's CPU per job, more than the rest of the
 * enqueue path's own work. Here the values are copied once, already as text, and an empty one
 * (most of a job's settings) is written without measuring it. What Redis receives is the same.
 */
export class ScriptCommand extends Command {
  constructor(
    name: 'evalsha' | 'eval',
    script: string,
    keys: readonly string[],
    args: readonly (string | number)[],
  ) {
    // Nothing for the constructor to flatten: the values are put in place below, all of them strings.
    super(name, [], { replyEncoding: 'utf8' });
    const values = new Array<string>(2 + keys.length + args.length);
    values[0] = script;
    values[1] = String(keys.length);
    let at = 2;
    for (const key of keys) values[at++] = key;
    for (const arg of args) values[at++] = typeof arg === 'string' ? arg : String(arg);
    this.args = values;
  }

  /** RESP, as ioredis writes it, without measuring the empty values. */
  override toWritable(): string {
    const values = this.args as string[];
    let out = `*${values.length + 1}\r\n$${this.name.length}\r\n${this.name}\r\n`;
    for (const value of values) {
      out += value === '' ? '$0\r\n\r\n' : `$${Buffer.byteLength(value)}\r\n${value}\r\n`;
    }
    return out;
  }
}

interface LoadedScript {
  readonly sha: string;
  readonly lua: string;
  readonly keys: number;
}

const loaded = new Map<ScriptName, LoadedScript>();

/**
 * The scripts each client has sent whole (EVAL) at least once. A first call sends the text, as
 * ioredis does for a connection's first use of a script, so a fresh Redis costs no NOSCRIPT
 * round trip; later calls send the SHA1 only.
 */
const sentWhole = new WeakMap<RedisClient, Set<ScriptName>>();

function scriptOf(name: ScriptName): LoadedScript {
  let script = loaded.get(name);
  if (!script) {
    const { lua, keys } = SCRIPTS[name];
    script = { sha: createHash('sha1').update(lua).digest('hex'), lua, keys };
    loaded.set(name, script);
  }
  return script;
}

/**
 * Sends script `name` with `keys` and `args` on `client` (a Redis or a Cluster, which routes it
 * by its first key): EVAL with its text the first time this client sends it, then EVALSHA; when
 * Redis does not have the script (NOSCRIPT: a restarted or failed-over server) EVAL again, which
 * loads it. A NOSCRIPT reply ran nothing, so sending the script then is the same call, not a
 * repeat. A client with ioredis's own keyPrefix takes the script command ioredis defines
 * (installScripts), which applies the prefix.
 */
export async function sendScript(
  client: RedisClient & { readonly [K in ScriptName]: (...args: (string | number)[]) => Promise<unknown> },
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  if ((client.options as RedisOptions).keyPrefix) return client[name](...keys, ...args);
  const script = scriptOf(name);
  if (keys.length !== script.keys)
    throw new RangeError(`${name} takes ${script.keys} keys, got ${keys.length}`);
  let sent = sentWhole.get(client);
  if (!sent) sentWhole.set(client, (sent = new Set()));
  if (!sent.has(name)) {
    sent.add(name);
    return client.sendCommand(new ScriptCommand('eval', script.lua, keys, args));
  }
  try {
    return await client.sendCommand(new ScriptCommand('evalsha', script.sha, keys, args));
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
    return client.sendCommand(new ScriptCommand('eval', script.lua, keys, args));
  }
}
