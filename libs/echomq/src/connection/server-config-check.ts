import type { Logger } from '@nestjs/common';
import { EvictionPolicyError } from '../redis-errors';
import type { RedisClient } from '../scripts';
import { ConnectionCheck, isServerRefusal, RECHECK_REFUSED_MS } from './connection-check';

/** The settings read on each connection: what decides whether Redis can lose jobs by itself. */
export const CHECKED_SETTINGS = [
  'maxmemory-policy',
  'maxmemory',
  'appendonly',
  'appendfsync',
  'save',
] as const;

export type CheckedSetting = (typeof CHECKED_SETTINGS)[number];

/** The only policy under which a full Redis refuses writes instead of deleting keys. */
export const NO_EVICTION = 'noeviction';

/** Settings by name from CONFIG GET replies ([name, value, ...] each); names Redis did not return are absent. */
export function parseConfigReplies(replies: readonly unknown[]): Partial<Record<CheckedSetting, string>> {
  const settings: Partial<Record<CheckedSetting, string>> = {};
  for (const reply of replies) {
    if (!Array.isArray(reply)) continue;
    for (let i = 0; i + 1 < reply.length; i += 2) {
      const name = String(reply[i]).toLowerCase();
      if ((CHECKED_SETTINGS as readonly string[]).includes(name)) {
        settings[name as CheckedSetting] = String(reply[i + 1]);
      }
    }
  }
  return settings;
}

/** maxmemory as an operator reads it: '4.0 MB', or 'no limit' for 0. */
export function describeMaxmemory(value: string | undefined): string {
  const bytes = Number(value);
  if (!Number.isFinite(bytes) || bytes <= 0) return 'no limit';
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

/** What survives a restart of Redis, by its settings: `none` when nothing does. */
export function describePersistence(settings: Partial<Record<CheckedSetting, string>>): {
  readonly none: boolean;
  readonly text: string;
} {
  const aof = settings.appendonly === 'yes';
  const save = (settings.save ?? '').trim();
  const parts: string[] = [];
  if (aof) parts.push(`AOF (appendfsync ${settings.appendfsync ?? 'unknown'})`);
  if (save !== '') parts.push(`RDB snapshots (save ${save})`);
  if (parts.length > 0) return { none: false, text: parts.join(' and ') };
  return { none: true, text: `appendonly ${settings.appendonly ?? 'unknown'} and no RDB save rules` };
}

/**
 * Lines already logged, per target and subject, with the finding each said: a line is logged
 * again only when its finding changes (a policy set at runtime), not on every reconnect.
 * Shared by the whole process unless a check is given its own.
 */
const SAID_IN_THIS_PROCESS = new Map<string, string>();

export interface ServerConfigCheckOptions {
  /** Refuse (EvictionPolicyError) a Redis whose maxmemory-policy is not noeviction. */
  readonly requireNoEviction?: boolean;
  /** What was said already (see SAID_IN_THIS_PROCESS); tests give a check its own. */
  readonly said?: Map<string, string>;
  /** How long a refusal stands before the next caller has the server checked again (see ConnectionCheck). */
  readonly recheckRefusedMs?: number;
}

/**
 * Reads the settings that decide whether Redis can lose jobs by itself, on every connection of
 * the command client (see ConnectionCheck), and says what it found:
 *
 * - a `maxmemory-policy` other than noeviction: one error line, since a full Redis then evicts
 *   keys, job rows and state sets among them, without a word. With `requireNoEviction` the
 *   verdict is EvictionPolicyError: enqueue fails having written nothing, a worker does not
 *   start serving. Found on a reconnect, it refuses from then on (a Sentinel failover to a
 *   replica configured otherwise); a policy set back to noeviction lifts it at the next check,
 *   at most RECHECK_REFUSED_MS later, with one line. Workers already serving go on: stopping
 *   them would keep the jobs in Redis longer, where eviction can reach them;
 * - the persistence found (AOF with its appendfsync, RDB save rules): one line, a warning
 *   when there is none, since a restart of Redis then loses every job;
 * - CONFIG refused (an ACL without it, a managed Redis that renamed it): one warning that the
 *   checks are skipped, and nothing is refused, even with requireNoEviction: it cannot know.
 *
 * The five settings go as five CONFIG GETs sent together (Redis 6.2 takes one pattern per call).
 */
export class ServerConfigCheck extends ConnectionCheck {
  private readonly requireNoEviction: boolean;
  private readonly said: Map<string, string>;

  constructor(
    client: RedisClient,
    private readonly logger: Pick<Logger, 'log' | 'warn' | 'error'>,
    options: ServerConfigCheckOptions = {},
  ) {
    super(client, options.recheckRefusedMs ?? RECHECK_REFUSED_MS);
    this.requireNoEviction = options.requireNoEviction === true;
    this.said = options.said ?? SAID_IN_THIS_PROCESS;
  }

  protected refuses(error: unknown): boolean {
    return error instanceof EvictionPolicyError;
  }

  protected async checkNode(node: RedisClient, target: string): Promise<void> {
    let replies: unknown[];
    try {
      replies = await Promise.all(CHECKED_SETTINGS.map((name) => node.config('GET', name)));
    } catch (error) {
      if (!isServerRefusal(error)) throw error;
      this.sayOnce(target, 'refused', 'refused', () =>
        this.logger.warn(
          `Redis at ${target} refuses CONFIG GET (${(error as Error).message}): the maxmemory-policy and ` +
            'persistence checks are skipped' +
            (this.requireNoEviction ? ', and requireNoEviction cannot be enforced' : '') +
            '. Make sure its maxmemory-policy is noeviction: eviction deletes jobs without a word',
        ),
      );
      return;
    }
    const settings = parseConfigReplies(replies);
    this.checkPersistence(target, settings);
    this.checkPolicy(target, settings);
  }

  private checkPolicy(target: string, settings: Partial<Record<CheckedSetting, string>>): void {
    const policy = settings['maxmemory-policy'];
    if (policy === undefined) return;
    const maxmemory = describeMaxmemory(settings.maxmemory);
    if (policy === NO_EVICTION) {
      const before = this.said.get(`${target} policy`);
      // A policy changed back and forth at runtime is said again.
      this.said.set(`${target} policy`, policy);
      if (this.requireNoEviction && before !== undefined && before !== NO_EVICTION) {
        this.logger.log(
          `Redis at ${target} has maxmemory-policy noeviction now (it had ${before}): requireNoEviction ` +
            'no longer refuses it, and enqueue is accepted again',
        );
      }
      return;
    }
    this.sayOnce(target, 'policy', policy, () =>
      this.logger.error(
        this.requireNoEviction
          ? `Redis at ${target} has maxmemory-policy ${policy} (maxmemory ${maxmemory}): it may evict jobs. ` +
              'requireNoEviction is on: enqueue is refused (REDIS_EVICTION_POLICY) until its policy is ' +
              `noeviction (checked again every ${this.recheckRefusedMs / 1_000} s while refused) and a worker ` +
              'booting now does not serve; workers already serving go on, which drains what it holds. Set ' +
              'maxmemory-policy noeviction'
          : `Redis at ${target} has maxmemory-policy ${policy} (maxmemory ${maxmemory}): ` +
              'once full it evicts keys, job rows and state sets among them, and jobs are lost without a word. ' +
              'Set maxmemory-policy noeviction (a full Redis then refuses enqueue with REDIS_OUT_OF_MEMORY ' +
              'and loses nothing), or set requireNoEviction: true to refuse such a Redis',
      ),
    );
    if (this.requireNoEviction) throw new EvictionPolicyError(target, policy);
  }

  private checkPersistence(target: string, settings: Partial<Record<CheckedSetting, string>>): void {
    if (settings.appendonly === undefined && settings.save === undefined) return;
    const { none, text } = describePersistence(settings);
    this.sayOnce(target, 'persistence', text, () => {
      if (none) {
        this.logger.warn(
          `Redis at ${target} persists nothing (${text}): a restart of Redis loses every job. ` +
            'Turn on AOF (appendonly yes, appendfsync everysec) for jobs to survive one',
        );
      } else {
        this.logger.log(
          `Redis at ${target} persists with ${text}; maxmemory ${describeMaxmemory(settings.maxmemory)}, ` +
            `maxmemory-policy ${settings['maxmemory-policy'] ?? 'unknown'}`,
        );
      }
    });
  }

  private sayOnce(target: string, subject: string, finding: string, say: () => void): void {
    const key = `${target} ${subject}`;
    if (this.said.get(key) === finding) return;
    this.said.set(key, finding);
    say();
  }
}
