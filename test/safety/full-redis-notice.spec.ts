import { RedisOutOfMemoryError } from '@app/echomq';
import { FULL_REDIS_WARN_EVERY_MS, FullRedisNotice } from '@app/echomq/connection/full-redis-notice';
import { CapturedLog } from '../support/captured-log';

const oom = (): Error =>
  Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), { name: 'ReplyError' });

describe('what a loop says about a full Redis', () => {
  it('tells a full Redis from other errors, raw or typed, from a command, a script or a MULTI', () => {
    const notice = new FullRedisNotice(new CapturedLog(), 'The reaper');
    expect(notice.met(new Error('ECONNRESET'))).toBe(false);
    expect(notice.met(oom())).toBe(true);
    expect(notice.met(new RedisOutOfMemoryError('127.0.0.1:6379', 'emqClaim'))).toBe(true);
    // Redis 6.2 wraps a script's refusal; ioredis reports a refused MULTI as EXECABORT.
    expect(
      notice.met(
        new Error('ERR Error running script (call to f_1): @user_script:1: -OOM command not allowed'),
      ),
    ).toBe(true);
    const aborted = Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [oom()],
    });
    expect(notice.met(aborted)).toBe(true);
  });

  it('warns once however often Redis fills up and empties in a minute, and says when it has room', () => {
    let now = 0;
    const log = new CapturedLog();
    const notice = new FullRedisNotice(log, 'The reaper', () => now);
    const said = (): string[][] =>
      log.lines
        .filter((line) => line.level !== 'debug')
        .map((line) => [line.level, line.message.split(':')[1]]);

    for (let pass = 0; pass < 100; pass++, now += 500) {
      notice.met(oom());
      notice.met(oom());
      notice.cleared();
    }
    expect(said()).toEqual([
      ['warn', ' Redis is full'],
      ['log', ' Redis has room again'],
    ]);
    now += FULL_REDIS_WARN_EVERY_MS;
    notice.met(oom());
    notice.cleared();
    notice.cleared();
    expect(said()).toHaveLength(4);
    expect(log.matching((line) => line.level === 'debug').length).toBeGreaterThan(0);
  });
});
