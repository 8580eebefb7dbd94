/**
 * Matches completion notifications (from a global event listener) to the
 * producers waiting for them. A notification may arrive before the producer
 * learns the job's id from its enqueue reply; it is kept until claimed.
 */
export class CompletionTracker {
  private readonly waiting = new Map<string, () => void>();
  private readonly early = new Set<string>();

  notify(id: string): void {
    const resolve = this.waiting.get(id);
    if (resolve) {
      this.waiting.delete(id);
      resolve();
    } else {
      this.early.add(id);
    }
  }

  completion(id: string): Promise<void> {
    if (this.early.delete(id)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }
}
