/**
 * The wait between a stream reader's failed reads, which the reader cuts short when it is
 * stopped (so closing resolves promptly) or when what it reads changes.
 */
export class CuttableDelay {
  private cut?: () => void;

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      timer = setTimeout(done, ms);
      this.cut = done;
    });
  }

  /** Ends the wait under way, if any, at once. */
  cutShort(): void {
    this.cut?.();
  }
}
