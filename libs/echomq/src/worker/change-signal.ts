/**
 * Wakes whoever waits for the claim loop's state to change (a job finished, a slot freed,
 * stop was called): the loop at full concurrency, and shutdown waiting for handlers.
 */
export class ChangeSignal {
  private waiters: (() => void)[] = [];

  /** forward: told of every change too (a loop's changes reach its process's IsolationGate). */
  constructor(private readonly forward?: ChangeSignal) {}

  /** Resolves at the next notify() (or after timeoutMs, when given). */
  changed(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(wake, timeoutMs);
      this.waiters.push(wake);
    });
  }

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
    this.forward?.notify();
  }
}
