import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { redisUrl } from '../../support/redis';

/** The users docs/upgrading.md documents a line for. */
export type DocumentedUser = 'emq-worker' | 'emq-api';

/** The placeholders every documented line uses, replaced by each test's own user, password and prefix. */
const PLACEHOLDERS = ['on', '>change-me', 'resetkeys', '~emq:*'];

function upgradingDoc(): string {
  return readFileSync(join(__dirname, '../../../docs/upgrading.md'), 'utf8');
}

/** The documented `ACL SETUSER <user> ...` line, exactly as written in docs/upgrading.md. */
export function documentedAclLine(user: DocumentedUser): string {
  const line = upgradingDoc()
    .split('\n')
    .find((text) => text.startsWith(`ACL SETUSER ${user} `));
  if (!line) throw new Error(`docs/upgrading.md documents no ACL SETUSER line for ${user}`);
  return line;
}

/**
 * The rights a documented line grants after its key pattern (`resetchannels -@all +...`). A
 * line that strays from the documented shape (another key pattern, a category) fails here.
 */
export function documentedRights(user: DocumentedUser): string[] {
  const words = documentedAclLine(user).split(' ').slice(2);
  if (words[0] !== user || words.slice(1, 5).join(' ') !== PLACEHOLDERS.join(' ')) {
    throw new Error(`The ${user} line must start "ACL SETUSER ${user} ${PLACEHOLDERS.join(' ')}"`);
  }
  const rights = words.slice(5);
  if (rights[0] !== 'resetchannels' || rights[1] !== '-@all') {
    throw new Error(`The ${user} line must grant resetchannels -@all before its commands`);
  }
  const granted = rights.slice(2);
  const loose = granted.filter((right) => !/^\+[a-z]+(\|[a-z-]+)?$/.test(right));
  if (loose.length > 0)
    throw new Error(`The ${user} line grants more than single commands: ${loose.join(' ')}`);
  return rights;
}

/** The optional additions docs/upgrading.md lists (bullets that start with the rights they add). */
export function documentedOptionalRights(): string[] {
  const section = upgradingDoc().split('### Optional additions')[1]?.split('\n## ')[0];
  if (!section) throw new Error('docs/upgrading.md has no "Optional additions" section');
  const rights: string[] = [];
  for (const bullet of section.split('\n').filter((text) => text.startsWith('- '))) {
    const lead = bullet.split(':')[0];
    for (const code of lead.matchAll(/`(\+[a-z|-]+)`/g)) rights.push(code[1]);
  }
  return rights;
}

/**
 * A documented line for one test user, password and prefix, as ACL SETUSER arguments: `extra`
 * rights are added (optional additions) and `without` ones taken out.
 */
export function aclArguments(
  documented: DocumentedUser,
  user: string,
  password: string,
  prefix: string,
  changes: { readonly extra?: readonly string[]; readonly without?: readonly string[] } = {},
): string[] {
  const rights = documentedRights(documented).filter((right) => !changes.without?.includes(right));
  return [user, 'on', `>${password}`, 'resetkeys', `~${prefix}:*`, ...rights, ...(changes.extra ?? [])];
}

/** The suite's Redis URL, logged in as `user`. */
export function urlAs(user: string, password: string, base: string = redisUrl()): string {
  const url = new URL(base);
  url.username = user;
  url.password = password;
  return url.href;
}

export interface AclRefusal {
  /** 'command', 'key' or 'channel' */
  readonly reason: string;
  /** The refused command (`config|get` for a subcommand) or key. */
  readonly object: string;
  readonly username: string;
}

/** Entries of ACL LOG (refused commands and keys) for one user; other suites' users are not ours to judge. */
export async function refusalsOf(admin: Redis, user: string): Promise<AclRefusal[]> {
  const log = (await admin.call('ACL', 'LOG', '128')) as unknown[][];
  return log
    .map((entry) => {
      const fields: Record<string, string> = {};
      for (let i = 0; i < entry.length; i += 2) fields[String(entry[i])] = String(entry[i + 1]);
      return { reason: fields.reason, object: fields.object, username: fields.username };
    })
    .filter((fields) => fields.username === user);
}

/**
 * Refusals a process meets under the bare line and carries on after, each documented as an
 * optional addition: the server settings check reads CONFIG GET once per connection where
 * the server allows it, and logs one line where it does not.
 */
export const CARRIED_ON_WITHOUT = ['config|get'] as const;

/** The refusals of `user` other than those it is documented to carry on without. */
export async function unexpectedRefusalsOf(admin: Redis, user: string): Promise<AclRefusal[]> {
  const optional = documentedOptionalRights();
  for (const command of CARRIED_ON_WITHOUT) {
    if (!optional.includes(`+${command}`)) throw new Error(`+${command} is not documented as optional`);
  }
  const tolerated = new Set<string>(CARRIED_ON_WITHOUT);
  return (await refusalsOf(admin, user)).filter(
    (refusal) => refusal.reason !== 'command' || !tolerated.has(refusal.object),
  );
}
