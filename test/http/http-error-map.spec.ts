import * as publicSurface from '@app/echomq';
import { httpStatusOf, RateLimitedError } from '@app/echomq';
import * as errorsModule from '@app/echomq/errors';
import * as flowErrorsModule from '@app/echomq/flow-errors';
import { errorResponseOf } from '@app/echomq/http/error-response';
import { hasOwnHttpMapping } from '@app/echomq/http/http-error-map';
import { ERROR_SAMPLES, errorClassesOf } from './support/error-samples';

/**
 * The mapping is total: a new error class in errors.ts or flow-errors.ts (or exported by the public entry)
 * without its own HTTP answer fails here, instead of silently becoming a 500.
 */
describe('the HTTP mapping of EchoMQ errors', () => {
  const classes = new Map([
    ...errorClassesOf(errorsModule),
    ...errorClassesOf(flowErrorsModule),
    ...errorClassesOf(publicSurface),
  ]);

  it('finds the error classes it checks', () => {
    // Guards the walk itself: if it found nothing, the totality check below would pass vacuously.
    expect(classes.size).toBeGreaterThanOrEqual(18);
    expect(classes.get('EchoMqError')).toBe(publicSurface.EchoMqError);
    expect(classes.get('NodeLeaseLostError')).toBe(publicSurface.NodeLeaseLostError);
  });

  it.each([...classes.keys()])('gives %s an answer of its own', (name) => {
    expect(hasOwnHttpMapping(classes.get(name))).toBe(true);
  });

  it.each([...classes.keys()])('has a sample of %s that the filter spec throws', (name) => {
    expect(ERROR_SAMPLES.some((sample) => sample.error.constructor === classes.get(name))).toBe(true);
  });

  it.each(ERROR_SAMPLES.map((sample) => [sample.error.constructor.name, sample] as const))(
    'answers %s with its status, its code and no internals',
    (_name, sample) => {
      expect(httpStatusOf(sample.error)).toBe(sample.status);
      const { status, headers, body } = errorResponseOf(sample.error);
      expect(status).toBe(sample.status);
      expect(body).toEqual({
        statusCode: sample.status,
        code: sample.error.code,
        message: sample.message ?? sample.error.message,
        error: expect.any(String),
        ...sample.details,
      });
      expect(headers).toEqual(sample.retryAfter === undefined ? {} : { 'Retry-After': sample.retryAfter });
      if (sample.secret !== undefined) expect(JSON.stringify(body)).not.toContain(sample.secret);
    },
  );
});

describe('the Retry-After of a RateLimitedError', () => {
  it.each([
    [1, '1'],
    [999, '1'],
    [1_000, '1'],
    [1_001, '2'],
    [86_400_000, '86400'],
  ])('answers a hold of %p ms with Retry-After: %s', (retryAfterMs, header) => {
    const { status, headers } = errorResponseOf(new RateLimitedError(retryAfterMs));
    expect(status).toBe(429);
    expect(headers).toEqual({ 'Retry-After': header });
  });
});
