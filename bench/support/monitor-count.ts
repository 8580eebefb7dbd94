import { connect, type Socket } from 'node:net';

/** What MONITOR saw from clients over a window: the total, and counts by command. */
export interface MonitorTally {
  readonly total: number;
  readonly windowMs: number;
  /** Command -> count; an EVALSHA is named by its script where the SHA1 is known. */
  readonly byCommand: ReadonlyMap<string, number>;
}

/**
 * One MONITOR line: `<time> [<db> <source>] "<command>" "<arg>" ...`, the source an address
 * (a client) or `lua` (a command a script ran). Redis quotes and escapes every argument, so a
 * line never holds a raw line break.
 */
const LINE = /^\S+ \[\d+ (\S+)\] "((?:[^"\\]|\\.)*)"(?: "((?:[^"\\]|\\.)*)")?/;

/** A MONITOR line's name: the command, and for EVALSHA the script it ran. */
function commandName(command: string, firstArg: string, scripts: ReadonlyMap<string, string>): string {
  const name = command.toUpperCase();
  if (name !== 'EVALSHA' && name !== 'EVALSHA_RO') return name;
  const sha = firstArg.toLowerCase();
  return `${name} ${scripts.get(sha) ?? sha.slice(0, 12)}`;
}

/**
 * Counts the commands a redis-server receives from its clients, as MONITOR reports them.
 * Lines whose source is `lua` are the commands a script ran inside Redis, not commands a
 * client sent: they are left out. A plain socket, not a Redis client: ioredis's monitor mode
 * reads the lines that arrive in the same packet as MONITOR's +OK as replies to commands it
 * never sent, and fails (on a busy server, where lines follow the +OK at once).
 */
export class MonitorCounter {
  private total = 0;
  private readonly counts = new Map<string, number>();
  private startedAt = 0;
  private stopped = false;
  private failure?: Error;
  private buffered = '';

  private constructor(
    private readonly socket: Socket,
    private readonly scripts: ReadonlyMap<string, string>,
  ) {}

  /** Resolves once Redis answered MONITOR: the window starts there. */
  static start(url: string, scripts: ReadonlyMap<string, string>): Promise<MonitorCounter> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    const counter = new MonitorCounter(socket, scripts);
    return new Promise((resolve, reject) => {
      socket.setEncoding('utf8');
      socket.once('connect', () => socket.write('MONITOR\r\n'));
      socket.on('error', (error) => {
        if (counter.startedAt === 0) reject(error);
        else if (!counter.stopped) counter.failure ??= error;
      });
      socket.on('data', (chunk: string) => {
        counter.buffered += chunk;
        const lines = counter.buffered.split('\r\n');
        counter.buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (counter.startedAt === 0) {
            if (line !== '+OK') return reject(new Error(`MONITOR answered ${line}`));
            counter.startedAt = Date.now();
            resolve(counter);
          } else {
            counter.count(line);
          }
        }
      });
    });
  }

  private count(line: string): void {
    if (this.stopped) return;
    const match = LINE.exec(line.startsWith('+') ? line.slice(1) : line);
    if (!match) {
      this.failure ??= new Error(`unreadable MONITOR line: ${line.slice(0, 200)}`);
      return;
    }
    const [, source, command, firstArg = ''] = match;
    if (source.startsWith('lua')) return;
    const name = commandName(command, firstArg, this.scripts);
    this.total += 1;
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  /** Ends the count; throws if the monitoring connection failed or sent an unreadable line. */
  stop(): MonitorTally {
    const windowMs = Date.now() - this.startedAt;
    this.stopped = true;
    this.socket.destroy();
    if (this.failure) throw new Error(`MONITOR during the window: ${this.failure.message}`);
    return { total: this.total, windowMs, byCommand: new Map(this.counts) };
  }
}
