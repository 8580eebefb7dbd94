import { Logger, type INestApplicationContext } from '@nestjs/common';
import { ProcessorExplorer } from '@app/echomq/internal';

/** How long the drain before that exit may run past the grace period before the process just exits. */
const DRAIN_SLACK_MS = 30_000;

/**
 * A claim loop that an error ended (a defect) leaves its queue unserved in this process, which
 * otherwise looks alive: the worker host then drains like at a SIGTERM (the other loops' jobs
 * get the grace period, the rest go back to pending) and exits with code 1, so its supervisor
 * (compose's `restart`, a Kubernetes pod, systemd) starts a fresh one. Said once, as an error.
 */
export function exitWhenALoopEnds(app: INestApplicationContext, graceMs: number): void {
  const logger = new Logger('Worker');
  let exiting = false;
  app.get(ProcessorExplorer).onLoopEnded(({ queue, reason }) => {
    if (exiting) return;
    exiting = true;
    logger.error(
      `The claim loop of ${queue} ended (${reason}); exiting with code 1 so that the supervisor restarts this worker`,
    );
    process.exitCode = 1;
    setTimeout(() => process.exit(1), graceMs + DRAIN_SLACK_MS).unref();
    void app.close().finally(() => process.exit(1));
  });
}
