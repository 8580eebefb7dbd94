import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions } from 'node:tls';
import { freePort } from '../../support/redis-server';
import type { TestCertificates } from './certificates';

/**
 * A throwaway redis-server that speaks TLS only (`--port 0` turns plain TCP off) and asks every
 * client for a certificate signed by the test CA (`--tls-auth-clients yes`). RedisServer in
 * test/support PINGs over plain TCP to tell when it is up, which a TLS-only server never
 * answers; this one PINGs over TLS, as a client with the right certificate.
 */
export class TlsRedisServer {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'echomq-tls-redis-'));

  private constructor(
    readonly port: number,
    private readonly certificates: TestCertificates,
  ) {}

  /** rediss://127.0.0.1:<port>; the certificates go in the connection's `tls` options. */
  get url(): string {
    return `rediss://127.0.0.1:${this.port}`;
  }

  /** What a client that the server accepts passes as `tls`. */
  get clientTls(): ConnectionOptions {
    const { ca, client } = this.certificates;
    return { ca: ca.cert, cert: client.cert, key: client.key };
  }

  static async start(certificates: TestCertificates): Promise<TlsRedisServer> {
    const server = new TlsRedisServer(await freePort(), certificates);
    await server.launch();
    return server;
  }

  private async launch(): Promise<void> {
    const { ca, server } = this.certificates;
    const child = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--tls-cert-file',
        server.certFile,
        '--tls-key-file',
        server.keyFile,
        '--tls-ca-cert-file',
        ca.certFile,
        '--tls-auth-clients',
        'yes',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
    await this.waitUntilReady();
  }

  private async waitUntilReady(): Promise<void> {
    for (let tries = 0; tries < 400; tries++) {
      const exitCode = this.child?.exitCode;
      if (exitCode !== null && exitCode !== undefined)
        throw new Error(`redis-server (TLS) exited with ${exitCode}`);
      if ((await pingOverTls(this.port, this.clientTls)) === '+PONG') return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`redis-server (TLS) on port ${this.port} did not become ready`);
  }

  async destroy(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    this.child = undefined;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Sends PING over a raw TLS socket with the given client options, and tells what came back: the
 * first reply line ('+PONG'), or the error that ended the connection ('error: <message>'), or
 * 'closed' when the server closed it without a reply. Bounded by timeoutMs ('timeout').
 */
export function pingOverTls(port: number, tls: ConnectionOptions, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ...tls });
    let reply = '';
    const done = (outcome: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    socket.once('secureConnect', () => socket.write('PING\r\n'));
    socket.on('data', (data: Buffer) => {
      reply += data.toString();
      if (reply.includes('\r\n')) done(reply.split('\r\n')[0]);
    });
    socket.once('error', (error: Error) => done(`error: ${error.message}`));
    socket.once('close', () => done('closed'));
  });
}
