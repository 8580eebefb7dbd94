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
} from '@app/echomq';
import {
  isBodyParserError,
  isRedisUnavailable,
  statusOfEchoMqError,
} from '../../apps/api/src/errors/error-status';

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
    expect(statusOfEchoMqError(error)).toBe(status);
  });

  it('leaves codes a client cannot cause to the 500 path', () => {
    expect(statusOfEchoMqError(new StaleJobError('JOB00000000000', 1))).toBeUndefined();
    expect(statusOfEchoMqError(new EchoMqError('SOMETHING_NEW', 'x'))).toBeUndefined();
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
