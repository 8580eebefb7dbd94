import { EventEmitter } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './redis-server';

/**
 * A TCP proxy on loopback that puts real network faults between a client and a real redis-server
 * (DESIGN.md §8, issue 8): lost replies, silent sockets, reset and refused connections.
 *
 * Granularity: whole RESP replies, not TCP chunks. The proxy splits each direction into RESP frames
 * and pairs every reply with the oldest unanswered request on that connection (one reply per request:
 * true for all EchoMQ sends, not for pub/sub, MONITOR or CLIENT REPLY OFF; RESP3 pushes are unpaired).
 * So "lose the reply to EVALSHA" hits exactly that reply even when heartbeats and claims are pipelined
 * over one socket. Requests always reach the server unchanged and at once; replies are passed on as
 * each frame completes. A stream that is not RESP falls back to plain forwarding without reply faults.
 *
 * A lost reply makes its connection deaf: that reply and every later one on it are swallowed, while
 * requests still reach the server and run. TCP delivers in order, so a real connection cannot skip
 * one reply and go on; and ioredis pairs replies with commands by position, so delivering the next
 * reply would hand it to the wrong command. A deaf connection stays deaf until the client destroys
 * it (its deadline), or thenClose / closeAll / stop ends it.
 */

/** Which requests a lose rule applies to: a case-insensitive substring of the raw request, a RegExp
 * (without the g flag) over it as latin1, or a predicate over the decoded command (`command[0]` is the
 * name as the client sent it; ioredis sends lower case, e.g. 'evalsha'). */
export type RequestMatcher = string | RegExp | ((command: readonly string[]) => boolean);

export interface LoseOptions {
  /** How many times the rule fires, over all connections (each hit loses one reply and makes its
   * connection deaf; the later replies lost on it do not count); default Infinity (until heal()). */
  readonly count?: number;
  /** End the client's connection right after losing the reply (FIN after the replies before it). */
  readonly thenClose?: boolean;
}

export interface FaultProxyOptions {
  readonly target: { readonly host: string; readonly port: number };
  /** Port to listen on (127.0.0.1); default a free one. */
  readonly port?: number;
}

/** `accepted`: every connection accepted, refused ones included; `refused`: those reset at once by
 * refuseNew(true, 'reset'); `open`: open now, silenced and deaf ones included; bytes: those forwarded;
 * `repliesDropped`: each reply a rule hit plus every later reply its deaf connection swallowed. */
export interface FaultProxyStats {
  accepted: number;
  refused: number;
  open: number;
  bytesToServer: number;
  bytesToClient: number;
  repliesDropped: number;
}

export interface FaultProxyEvents {
  /** A client connected; `id` numbers the proxy's connections from 1. */
  connection: [id: number];
  /** A reply was swallowed; `command` is the request it answered. */
  replyDropped: [command: readonly string[], id: number];
  /** Both sockets of a connection are closed. */
  closed: [id: number];
}

interface Link {
  readonly id: number;
  readonly client: Socket;
  readonly server?: Socket;
  state: 'open' | 'deaf' | 'silenced' | 'dropped';
  raw: boolean;
  requests: Buffer;
  replies: Buffer;
  readonly pending: Buffer[];
}

const INCOMPLETE = -1;

/** Index just past the RESP2/RESP3 frame starting at `at`, or INCOMPLETE; throws if it is not RESP. */
function frameEnd(buf: Buffer, at: number): number {
  const eol = buf.indexOf('\r\n', at);
  if (at >= buf.length || eol < 0) return INCOMPLETE;
  const type = String.fromCharCode(buf[at]);
  if ('+-:,#_('.includes(type)) return eol + 2;
  const n = Number(buf.toString('latin1', at + 1, eol));
  if (!Number.isInteger(n)) throw new Error(`not RESP: ${type}`);
  if ('$!='.includes(type)) {
    const end = n < 0 ? eol + 2 : eol + 2 + n + 2;
    return end <= buf.length ? end : INCOMPLETE;
  }
  if (!'*~>%|'.includes(type)) throw new Error(`not RESP: ${type}`);
  let end = eol + 2;
  for (let i = 0; i < (n < 0 ? 0 : '%|'.includes(type) ? 2 * n : n) && end !== INCOMPLETE; i++) {
    end = frameEnd(buf, end);
  }
  // An attribute map is a prefix: the reply it describes follows it.
  return type === '|' && end !== INCOMPLETE ? frameEnd(buf, end) : end;
}

/** A request is a RESP array of bulk strings, or an inline command ending at '\n'. */
function requestEnd(buf: Buffer): number {
  if (buf.length === 0 || buf[0] === 0x2a) return frameEnd(buf, 0);
  const eol = buf.indexOf('\n');
  return eol < 0 ? INCOMPLETE : eol + 1;
}

function decode(raw: Buffer): string[] {
  if (raw[0] !== 0x2a) return raw.toString('latin1').trim().split(/\s+/);
  const args: string[] = [];
  for (let at = raw.indexOf('\r\n') + 2; at < raw.length;) {
    const eol = raw.indexOf('\r\n', at);
    const len = Number(raw.toString('latin1', at + 1, eol));
    args.push(raw.toString('utf8', eol + 2, eol + 2 + len));
    at = eol + 2 + len + 2;
  }
  return args;
}

function matches(match: RequestMatcher, raw: Buffer): boolean {
  if (typeof match === 'function') return match(decode(raw));
  const text = raw.toString('latin1');
  return typeof match === 'string' ? text.toLowerCase().includes(match.toLowerCase()) : match.test(text);
}

export class FaultProxy extends EventEmitter<FaultProxyEvents> {
  private readonly counts: FaultProxyStats = {
    accepted: 0,
    refused: 0,
    open: 0,
    bytesToServer: 0,
    bytesToClient: 0,
    repliesDropped: 0,
  };
  private readonly links = new Set<Link>();
  private rules: { readonly match: RequestMatcher; remaining: number; readonly thenClose: boolean }[] = [];
  private silenceNew = false;
  private refusing: false | 'unlisten' | 'reset' = false;
  private listener?: Server;
  private stopped = false;
  private nextId = 1;

  private constructor(
    readonly port: number,
    private readonly target: FaultProxyOptions['target'],
  ) {
    super();
  }

  /** A snapshot of the counters. */
  get stats(): Readonly<FaultProxyStats> {
    return { ...this.counts };
  }

  /** 'redis://127.0.0.1:<port>', for ioredis or EchoMQ's connection option. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const proxy = new FaultProxy(options.port ?? (await freePort()), options.target);
    await proxy.listen();
    return proxy;
  }

  /** Lose the next `count` replies (default: every reply until heal()), whatever their requests. */
  loseReplies(count = Infinity): void {
    this.loseRepliesWhile(() => true, { count });
  }

  /** Lose replies to requests that match. Rules add up; a reply uses the oldest rule that matches it. */
  loseRepliesWhile(match: RequestMatcher, options: LoseOptions = {}): void {
    const remaining = options.count ?? Infinity;
    if (remaining > 0) this.rules.push({ match, remaining, thenClose: options.thenClose ?? false });
  }

  /** Lose the next reply (to a matching request; default any), then end that connection: the command
   * ran, and the client sees its connection close with the reply outstanding. */
  loseNextReplyThenClose(match: RequestMatcher = () => true): void {
    this.loseRepliesWhile(match, { count: 1, thenClose: true });
  }

  /** Stop forwarding both ways on every current connection and keep its sockets open: no data, no FIN,
   * no RST, like a dropped NAT entry. The proxy stops reading, so it does not see the client's close
   * either. TCP keepalive probes are still answered by this host's kernel: only the client's deadlines
   * notice. With `newConnections` (default true), later connections are silenced too until heal():
   * accepted, never connected upstream. */
  silence(options: { readonly newConnections?: boolean } = {}): void {
    for (const link of this.links) this.mute(link);
    this.silenceNew = options.newConnections ?? true;
  }

  /** Reset both sockets of every current connection, silenced and deaf ones included (ECONNRESET). */
  closeAll(): void {
    for (const link of [...this.links]) this.drop(link, 'reset');
  }

  /** While on, connecting fails. 'unlisten' (default) closes the listening socket: ECONNREFUSED.
   * 'reset' accepts and resets at once: connect, then ECONNRESET. Open connections are left alone. */
  async refuseNew(on = true, how: 'unlisten' | 'reset' = 'unlisten'): Promise<void> {
    this.refusing = on ? how : false;
    if (this.refusing === 'unlisten') {
      this.listener?.close(); // stops accepting at once; its callback would wait for open connections
      this.listener = undefined;
    } else await this.listen();
  }

  /** Clear every fault for what comes next: lose rules, silence of new connections, refusal. Silenced
   * and deaf connections stay dead, as half-open sockets would, until the client gives up on them. */
  async heal(): Promise<void> {
    this.rules = [];
    this.silenceNew = false;
    await this.refuseNew(false);
  }

  /** Reset every connection and close the listener. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.closeAll();
    const listener = this.listener;
    this.listener = undefined;
    if (listener) await new Promise((resolve) => listener.close(resolve));
  }

  private async listen(): Promise<void> {
    if (this.listener || this.stopped) return;
    const listener = createServer((client) => this.accept(client));
    this.listener = listener;
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(this.port, '127.0.0.1', () => {
        listener.off('error', reject);
        resolve();
      });
    });
  }

  private accept(client: Socket): void {
    this.counts.accepted++;
    client.on('error', () => undefined);
    if (this.stopped || this.refusing) {
      if (this.refusing === 'reset') this.counts.refused++;
      client.resetAndDestroy();
      return;
    }
    const server = this.silenceNew ? undefined : connect(this.target);
    const [id, requests, replies] = [this.nextId++, Buffer.alloc(0), Buffer.alloc(0)];
    const link: Link = { id, client, server, state: 'open', raw: false, requests, replies, pending: [] };
    this.links.add(link);
    this.counts.open++;
    let closed = server ? 0 : 1;
    const onClose = (): void => {
      this.drop(link, 'end'); // one side closed: end the other in order (FIN after what was forwarded)
      if (++closed === 2) this.emit('closed', link.id);
    };
    client.on('close', onClose).on('data', (chunk: Buffer) => this.fromClient(link, chunk));
    // A target that is down or goes away closes the server side, which ends the client side in turn.
    server?.on('error', () => undefined);
    server?.on('close', onClose).on('data', (chunk: Buffer) => this.fromServer(link, chunk));
    if (!server) this.mute(link);
    this.emit('connection', link.id);
  }

  private fromClient(link: Link, chunk: Buffer): void {
    if (!link.server || link.state === 'silenced' || link.state === 'dropped') return;
    this.counts.bytesToServer += chunk.length;
    link.server.write(chunk);
    if (link.raw) return;
    link.requests = Buffer.concat([link.requests, chunk]);
    try {
      for (let end = requestEnd(link.requests); end !== INCOMPLETE; end = requestEnd(link.requests)) {
        link.pending.push(link.requests.subarray(0, end));
        link.requests = link.requests.subarray(end);
      }
    } catch {
      link.raw = true;
    }
  }

  private fromServer(link: Link, chunk: Buffer): void {
    if (link.state === 'silenced' || link.state === 'dropped') return;
    const out: Buffer[] = [];
    let close = false;
    link.replies = Buffer.concat([link.replies, chunk]);
    try {
      for (let end = link.raw ? INCOMPLETE : frameEnd(link.replies, 0); end !== INCOMPLETE;) {
        const frame = link.replies.subarray(0, end);
        link.replies = link.replies.subarray(end);
        end = frameEnd(link.replies, 0);
        const request = frame[0] === 0x3e ? undefined : link.pending.shift(); // '>': a RESP3 push
        const rule = link.state === 'open' && request && this.rules.find((r) => matches(r.match, request));
        if (rule && --rule.remaining === 0) this.rules = this.rules.filter((r) => r !== rule);
        if (rule) link.state = 'deaf';
        close ||= rule ? rule.thenClose : false;
        if (link.state === 'open') out.push(frame);
        else if (request) {
          this.counts.repliesDropped++;
          this.emit('replyDropped', decode(request), link.id);
        }
      }
    } catch {
      link.raw = true;
    }
    if (link.raw && link.state === 'open') out.push(link.replies.subarray(0));
    if (link.raw) link.replies = Buffer.alloc(0);
    const bytes = Buffer.concat(out);
    this.counts.bytesToClient += bytes.length;
    if (bytes.length > 0) link.client.write(bytes);
    if (close) this.drop(link, 'end');
  }

  private mute(link: Link): void {
    link.state = 'silenced';
    // Not reading is what a dead path looks like: the peer's writes and its FIN go nowhere.
    link.client.pause();
    link.server?.pause();
  }

  private drop(link: Link, how: 'end' | 'reset'): void {
    if (!this.links.delete(link)) return;
    link.state = 'dropped';
    this.counts.open--;
    for (const socket of link.server ? [link.client, link.server] : [link.client]) {
      if (how === 'end') socket.end(() => socket.destroy());
      // A socket whose writable side already ended (its peer closed first) cannot be reset:
      // on Node 20 resetAndDestroy() then never closes the handle and the process hangs.
      else if (socket.writableEnded || socket.destroyed) socket.destroy();
      else socket.resetAndDestroy();
    }
  }
}
