import type { Logger } from '@nestjs/common';
import { ThrottleLog } from '@app/echomq/worker/throttle-log';

/** A logger that keeps its `log` lines, and a clock the test moves. */
function setup(): { log: ThrottleLog; lines: string[]; clock: { now: number } } {
  const lines: string[] = [];
  const logger = { log: (message: string) => lines.push(message) } as unknown as Logger;
  const clock = { now: 10_000 };
  return { log: new ThrottleLog(logger, () => clock.now), lines, clock };
}

describe('the throttle log', () => {
  it('logs the first throttle at once, then at most one line a second, counting the ones it left out', () => {
    const { log, lines, clock } = setup();

    log.record('JOB0000000000A', 2_000, 'lane');
    // A storm of 429s within the second: counted, not logged.
    for (let n = 0; n < 50; n++) {
      clock.now += 10;
      log.record('JOB0000000000B', 500, 'queue');
    }
    expect(lines).toEqual([
      'Job JOB0000000000A was rate limited: back to pending, its lane held back 2000 ms',
    ]);

    clock.now = 11_000;
    log.record('JOB0000000000C', 750, 'queue');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(
      'Job JOB0000000000C was rate limited: back to pending, its queue held back 750 ms ' +
        '(and 50 more throttle(s) since the last line)',
    );

    // After a quiet second the next one is logged at once, with nothing left out to count.
    clock.now = 13_500;
    log.record('JOB0000000000D', 1, 'queue');
    expect(lines[2]).toBe('Job JOB0000000000D was rate limited: back to pending, its queue held back 1 ms');
  });
});
