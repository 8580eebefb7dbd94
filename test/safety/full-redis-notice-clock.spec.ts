import { FULL_REDIS_WARN_EVERY_MS, FullRedisNotice } from '@app/echomq/internal';
import { CapturedLog } from '../support/captured-log';

const oom = (): Error =>
  Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), { name: 'ReplyError' });

/**
 * The notice's once-a-minute bound is a local interval, so it runs on the monotonic clock: a
 * wall clock stepped back (NTP, an operator) must not keep the next full episode unsaid.
 */
describe('the full-Redis notice', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('warns again a minute later by the monotonic clock, whatever the wall clock did', () => {
    let monotonic = 5_000_000;
    let wall = Date.UTC(2030, 0, 1);
    jest.spyOn(performance, 'now').mockImplementation(() => monotonic);
    jest.spyOn(Date, 'now').mockImplementation(() => wall);
    const log = new CapturedLog();
    const notice = new FullRedisNotice(log, 'The reaper');
    const warned = () => log.matching((line) => line.level === 'warn');

    notice.met(oom());
    notice.cleared();
    // An hour back on the wall, a minute on by the machine's own clock.
    wall -= 3_600_000;
    monotonic += FULL_REDIS_WARN_EVERY_MS;
    notice.met(oom());
    expect(warned()).toHaveLength(2);

    notice.cleared();
    // A minute on by the wall alone (a step forward) is not a minute.
    wall += 2 * FULL_REDIS_WARN_EVERY_MS;
    notice.met(oom());
    expect(warned()).toHaveLength(2);
  });

  it('says how often it speaks, and what a caller says waits', () => {
    const log = new CapturedLog();
    const notice = new FullRedisNotice(log, 'The Snowflake node lease');
    notice.met(oom(), 'No node number is leased until there is room');
    expect(log.lines).toEqual([
      {
        level: 'warn',
        message:
          "The Snowflake node lease: Redis is full: OOM command not allowed when used memory > 'maxmemory'. " +
          'No node number is leased until there is room. (Said once while Redis stays full, and at most once a minute.)',
        context: undefined,
      },
    ]);
  });
});
