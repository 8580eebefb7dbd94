/**
 * Coalesces many small requests into few script calls without adding latency:
 * while fewer than `maxInFlight` calls are outstanding, requests go out at the end
 * of the current microtask run (so calls made together still share one send);
 * once the limit is reached, requests accumulate and leave together as soon as a
 * call returns. Idle, a request waits for nothing; busy, batches grow by themselves.
 *
 * Each request is resolved with its own slice of the call's results, in order, or
 * rejected alone when `send` answers it with an Error (one caller's bad request never
 * fails the others merged with it). A request is never split across calls (`size` counts
 * its parts, `weight` its bytes), so a request that must be all or nothing stays in one
 * call. A call that fails as a whole rejects all its requests.
 */
export class Coalescer<Request, Result> {
  private waiting: {
    request: Request;
    resolve: (results: Result[]) => void;
    reject: (error: unknown) => void;
  }[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly send: (requests: Request[]) => Promise<(Result[] | Error)[]>,
    private readonly limits: {
      /** Most parts per call (a single larger request still goes alone). */
      readonly maxBatch: number;
      readonly maxInFlight: number;
      readonly size: (request: Request) => number;
      /** Most weight (e.g. bytes) per call, with `weight`; a single heavier request goes alone. */
      readonly maxWeight?: number;
      readonly weight?: (request: Request) => number;
    },
  ) {}

  submit(request: Request): Promise<Result[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0 || this.inFlight >= this.limits.maxInFlight) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.waiting.length > 0 && this.inFlight < this.limits.maxInFlight) {
      let parts = 0;
      let weight = 0;
      let count = 0;
      const maxWeight = this.limits.maxWeight ?? Infinity;
      while (count < this.waiting.length) {
        const request = this.waiting[count].request;
        const size = this.limits.size(request);
        const heft = this.limits.weight?.(request) ?? 0;
        if (count > 0 && (parts + size > this.limits.maxBatch || weight + heft > maxWeight)) break;
        parts += size;
        weight += heft;
        count += 1;
      }
      void this.dispatch(this.waiting.splice(0, count));
    }
  }

  private async dispatch(batch: typeof this.waiting): Promise<void> {
    this.inFlight += 1;
    try {
      const results = await this.send(batch.map((entry) => entry.request));
      batch.forEach((entry, index) => {
        const result = results[index];
        if (result instanceof Error) entry.reject(result);
        else entry.resolve(result);
      });
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }
}
