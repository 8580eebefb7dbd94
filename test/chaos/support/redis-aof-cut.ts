import { readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** How often the AOF's length is sampled. */
const SAMPLE_EVERY_MS = 50;
/** Samples kept: enough to look a few seconds back. */
const SAMPLES_KEPT = 200;

/**
 * A power cut, simulated on a Redis with `appendfsync everysec`. A SIGKILL of redis-server
 * loses nothing the kernel has: Redis write()s the AOF before it replies, and only the fsync is
 * once a second. A host that loses power loses what was not fsynced yet, up to about a second.
 * This watcher samples the length of the AOF's newest incremental file, and after the kill cuts
 * it back to the length it had `ms` earlier, as the disk would hold it after the power cut.
 * Redis loads a cut AOF (aof-load-truncated, its default), dropping a command or MULTI block
 * left half-written.
 */
export class AofTail {
  private readonly samples: { at: number; file: string; bytes: number }[] = [];
  private readonly timer: NodeJS.Timeout;

  private constructor(private readonly folder: string) {
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
    this.sample();
  }

  /** Finds the AOF through the server's own configuration (CONFIG GET dir, appenddirname). */
  static async watch(url: string): Promise<AofTail> {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      const [, dir] = (await redis.config('GET', 'dir')) as string[];
      const [, appendDir] = (await redis.config('GET', 'appenddirname')) as string[];
      return new AofTail(join(dir, appendDir));
    } finally {
      redis.disconnect();
    }
  }

  /** Cuts the file back to its length `ms` ago (the server must be down); the bytes cut. */
  cutBack(ms: number): number {
    const now = this.current();
    if (now === undefined) return 0;
    // Only samples of the same file count; with none old enough, the oldest of them.
    const same = this.samples.filter((sample) => sample.file === now.file);
    const then = [...same].reverse().find((sample) => sample.at <= Date.now() - ms) ?? same[0];
    if (then === undefined || then.bytes >= now.bytes) return 0;
    truncateSync(now.file, then.bytes);
    this.samples.length = 0;
    return now.bytes - then.bytes;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The incremental file being appended to (the highest sequence number) and its length. */
  private current(): { file: string; bytes: number } | undefined {
    try {
      const incr = readdirSync(this.folder)
        .filter((name) => name.endsWith('.incr.aof'))
        .sort((a, b) => sequenceOf(b) - sequenceOf(a))[0];
      if (incr === undefined) return undefined;
      const file = join(this.folder, incr);
      return { file, bytes: statSync(file).size };
    } catch {
      return undefined; // the folder is being rewritten: the next sample sees it
    }
  }

  private sample(): void {
    const now = this.current();
    if (now === undefined) return;
    this.samples.push({ at: Date.now(), ...now });
    if (this.samples.length > SAMPLES_KEPT) this.samples.shift();
  }
}

function sequenceOf(name: string): number {
  return Number(/\.(\d+)\.incr\.aof$/.exec(name)?.[1] ?? 0);
}
