import {
  EchoMqError,
  InvalidArgumentError,
  InvalidJobIdError,
  InvalidQueueNameError,
  JobExistsError,
  JobNotFoundError,
  JobStateError,
  PayloadTooLargeError,
  StaleJobError,
  httpStatusOf,
} from '@app/echomq';
import { isBodyParserError, isRedisUnavailable } from '../../apps/api/src/errors/error-status';

describe('api error mapping', () => {
  it.each([
    [new InvalidQueueNameError('a b'), 400],
    [new InvalidJobIdError('JOB1'), 400],
    [new InvalidArgumentError('limit'), 400],
    [new PayloadTooLargeError(10, 5), 413],
    [new JobNotFoundError('JOB00000000000'), 404],
    [new JobStateError('JOB00000000000', 'dead'), 409],
    [new JobExistsError('JOB00000000000'), 409],
  ])('maps %s to %i', (error, status) => {
    // The api answers EchoMQ's errors through the library's filter, so its statuses are the library's.
    expect(httpStatusOf(error)).toBe(status);
  });

  it('answers a stale claim as a conflict and an error of an unknown class as a 500', () => {
    expect(httpStatusOf(new StaleJobError('JOB00000000000', 1))).toBe(409);
    expect(httpStatusOf(new EchoMqError('SOMETHING_NEW', 'x'))).toBe(500);
  });

  it('recognises body-parser errors by their exposed 4xx status and type', () => {
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      type: 'entity.too.large',
      expose: true,
    });
    expect(isBodyParserError(tooLarge)).toBe(true);
    expect(isBodyParserError(Object.assign(new Error('x'), { status: 500, type: 't', expose: false }))).toBe(
      false,
    );
    expect(isBodyParserError(new Error('plain'))).toBe(false);
  });

  it('treats ioredis giving up as Redis being unavailable', () => {
    const gaveUp = new Error('Reached the max retries per request limit');
    gaveUp.name = 'MaxRetriesPerRequestError';
    expect(isRedisUnavailable(gaveUp)).toBe(true);
    expect(isRedisUnavailable(new Error('Connection is closed.'))).toBe(true);
    expect(isRedisUnavailable(new Error('ERR unknown command'))).toBe(false);
  });
});
