import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One certificate and its private key: file paths (for redis-server) and PEM text (for ioredis). */
export interface KeyPair {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: string;
  readonly key: string;
}

export interface TestCertificates {
  /** The folder everything lives in; remove() deletes it. */
  readonly dir: string;
  /** The CA that signs the server's and the client's certificates. */
  readonly ca: KeyPair;
  /** The server's certificate, for 127.0.0.1 (subjectAltName IP:127.0.0.1). */
  readonly server: KeyPair;
  /** A client certificate the server accepts (signed by `ca`). */
  readonly client: KeyPair;
  /** A CA that signed nothing here: a client that trusts only it cannot verify the server. */
  readonly otherCa: KeyPair;
  remove(): void;
}

/** Short-lived keys: they only need to outlive one test run. */
const DAYS = '2';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function pair(dir: string, name: string): KeyPair {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

function selfSignedCa(dir: string, name: string): KeyPair {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    DAYS,
    '-subj',
    `/CN=EchoMQ test ${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
  ]);
  return pair(dir, name);
}

/** A key and a certificate signed by `ca`, with the extensions in `extensions` (openssl x509 -extfile). */
function signed(dir: string, name: string, ca: KeyPair, subject: string, extensions: string): KeyPair {
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    subject,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
  ]);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-CAcreateserial',
    '-days',
    DAYS,
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.crt`,
  ]);
  return pair(dir, name);
}

/**
 * A CA, a server certificate for 127.0.0.1 and a client certificate signed by it, and a second
 * CA that signed neither, generated with openssl in a temporary folder (about a second).
 */
export function generateCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'echomq-tls-'));
  try {
    const ca = selfSignedCa(dir, 'ca');
    const server = signed(
      dir,
      'server',
      ca,
      '/CN=127.0.0.1',
      'subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\n',
    );
    const client = signed(dir, 'client', ca, '/CN=echomq-client', 'extendedKeyUsage = clientAuth\n');
    const otherCa = selfSignedCa(dir, 'other-ca');
    return { dir, ca, server, client, otherCa, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
