import { Agent, request } from 'node:http';

export interface RawRequest {
  readonly method: string;
  /** Sent exactly as given (already percent-encoded where needed); nothing is normalised. */
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RawResponse {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/**
 * A minimal HTTP client over one keep-alive connection: thousands of requests in a few
 * seconds, with bodies and paths sent byte for byte (supertest and fetch would encode,
 * normalise or re-serialise them).
 */
export class RawClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  private readonly base: URL;

  constructor(baseUrl: string) {
    this.base = new URL(baseUrl);
  }

  send(req: RawRequest): Promise<RawResponse> {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(req.body);
    }
    return new Promise((resolve, reject) => {
      const outgoing = request(
        {
          agent: this.agent,
          host: this.base.hostname,
          port: this.base.port,
          method: req.method,
          path: req.path,
          headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(req.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
