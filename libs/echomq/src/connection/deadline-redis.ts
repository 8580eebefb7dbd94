import { Command, Redis, type RedisOptions } from 'ioredis';
import { OutcomeUnknownError, RedisUnavailableError } from '../errors';
import { describeTarget } from './describe-target';
import { monotonicMs } from '../monotonic';

type WriteableStream = Parameters<Redis['sendCommand']>[1];

/**
 * Whether ioredis writes this command now. While the connection is 'connect' (the socket is
 * up, the handshake is running) only its own handshake commands go out; anything else would
 * sit in ioredis's offline queue, which sends it later even after its caller gave up.
 */
function goesOutNow(status: string, command: Command): boolean {
  return (
    status === 'ready' || (status === 'connect' && Command.checkFlag('HANDSHAKE_COMMANDS', command.name))
  );
}

/**
 * The command connection, with a deadline on every command. Without one, a socket that
 * went silent (a dropped NAT entry, a half-open connection, a stalled proxy) holds every
 * caller until the kernel gives up, about 15 minutes later. Here:
 *
 * - a command sent while the connection is down waits for it, at most until its deadline,
 *   and then fails with RedisUnavailableError: it was never sent, nothing was written;
 * - a command on the wire that has no reply by its deadline fails with OutcomeUnknownError
 *   and the socket is destroyed, so ioredis connects a fresh one;
 * - a command on the wire when the connection closes fails with OutcomeUnknownError at once.
 *
 * ioredis's own resend of unanswered commands after a reconnect is turned off: a resend
 * could arrive long after its caller stopped waiting (a claim that hands jobs to nobody).
 * Repeating is the caller's decision, and every EchoMQ write is safe to repeat.
 */
export class DeadlineRedis extends Redis {
  /**
   * Commands on the wire and when each is due, in send order. The deadline is the same for
   * every command, so send order is due order, and one timer, armed for the oldest, watches
   * them all: no timer per command on the hot path.
   */
  private readonly onWire = new Map<Command, number>();
  private deadlineTimer?: NodeJS.Timeout;
  private held: { command: Command; stream?: WriteableStream; timer: NodeJS.Timeout }[] = [];
  /** Set by failHeld (shutdown): from then on nothing waits for the connection. */
  private closing = false;

  /** How the target is named in errors and logs: host:port or socket path, never credentials. */
  readonly target: string;

  constructor(
    url: string | undefined,
    options: RedisOptions,
    readonly deadlineMs: number,
  ) {
    // ioredis skips an undefined first argument, so one call serves both forms.
    super(url as string, { ...options, autoResendUnfulfilledCommands: false });
    this.target = describeTarget(url, options);
    this.on('ready', () => this.sendHeld());
    this.on('close', () => this.failOnWire('the connection closed'));
  }

  override sendCommand(command: Command, stream?: WriteableStream): unknown {
    if (!goesOutNow(this.status, command) && this.status !== 'end') {
      this.hold(command, stream);
      return command.promise;
    }
    const sent = super.sendCommand(command, stream);
    if (!command.isResolved) this.track(command);
    return sent;
  }

  private hold(command: Command, stream?: WriteableStream): void {
    if (this.closing) {
      // A command that would wait on a connection being closed is refused at once: ioredis's
      // ready check on a reconnect that lands during shutdown would otherwise arm a timer for
      // the whole deadline, and keep the process alive that long after everything else ended.
      command.reject(new RedisUnavailableError(this.target, 0));
      return;
    }
    const entry = {
      command,
      stream,
      timer: setTimeout(() => {
        this.held = this.held.filter((other) => other !== entry);
        command.reject(new RedisUnavailableError(this.target, this.deadlineMs));
      }, this.deadlineMs),
    };
    this.held.push(entry);
    if (this.status === 'wait') this.connect().catch(() => undefined);
  }

  private sendHeld(): void {
    const held = this.held;
    this.held = [];
    for (const { command, stream, timer } of held) {
      clearTimeout(timer);
      this.sendCommand(command, stream);
    }
  }

  private track(command: Command): void {
    this.onWire.set(command, monotonicMs() + this.deadlineMs);
    const settled = (): void => {
      this.onWire.delete(command);
    };
    command.promise.then(settled, settled);
    // unref: a deadline watch never keeps a process alive (a caller awaiting the command does).
    this.deadlineTimer ??= setTimeout(() => this.failLateCommands(), this.deadlineMs).unref();
  }

  /** Fails the commands past their deadline and destroys the socket; re-arms for the next due. */
  private failLateCommands(): void {
    this.deadlineTimer = undefined;
    const now = monotonicMs();
    const late: Command[] = [];
    for (const [command, due] of this.onWire) {
      if (due > now) {
        this.deadlineTimer = setTimeout(() => this.failLateCommands(), due - now).unref();
        break;
      }
      late.push(command);
    }
    if (late.length === 0) return;
    for (const command of late) {
      this.onWire.delete(command);
      if (!command.isResolved) {
        command.reject(new OutcomeUnknownError(command.name, `no reply within ${this.deadlineMs} ms`));
      }
    }
    // The socket is presumed dead: destroy it so the next command gets a fresh one.
    this.stream?.destroy();
  }

  private failOnWire(reason: string): void {
    const commands = [...this.onWire.keys()];
    this.onWire.clear();
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    for (const command of commands) {
      if (!command.isResolved) command.reject(new OutcomeUnknownError(command.name, reason));
    }
  }

  /**
   * Fails held commands at once, and every command that would wait from now on (used at
   * shutdown, when waiting for Redis is pointless).
   */
  failHeld(): void {
    this.closing = true;
    const held = this.held;
    this.held = [];
    for (const { command, timer } of held) {
      clearTimeout(timer);
      command.reject(new RedisUnavailableError(this.target, 0));
    }
  }
}
