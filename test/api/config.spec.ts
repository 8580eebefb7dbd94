import { parseByteSize } from '../../apps/api/src/config/byte-size';
import { ENV_DEFAULTS, validateEnvironment } from '../../apps/api/src/config/environment';
import { createApiApp } from '../../apps/api/src/create-app';

describe('api configuration', () => {
  it('has defaults for everything', () => {
    expect(validateEnvironment({})).toEqual({
      REDIS_URL: ENV_DEFAULTS.REDIS_URL,
      PORT: 3000,
      HOST: '0.0.0.0',
      EMQ_API_TOKEN: undefined,
      EMQ_BODY_LIMIT: 1024 * 1024,
      EMQ_MAX_PAYLOAD_BYTES: undefined,
      EMQ_THROTTLE_LIMIT: 6000,
      EMQ_THROTTLE_TTL_MS: 60_000,
      EMQ_NODE_ID: undefined,
      EMQ_KEY_PREFIX: undefined,
    });
  });

  it('reads every variable, and treats an empty one as unset', () => {
    const env = validateEnvironment({
      REDIS_URL: 'rediss://user:pw@redis.example:6380/2',
      PORT: '8080',
      HOST: '127.0.0.1',
      EMQ_API_TOKEN: 'abc.DEF-123_~+/=',
      EMQ_BODY_LIMIT: '512kb',
      EMQ_MAX_PAYLOAD_BYTES: '65536',
      EMQ_THROTTLE_LIMIT: '0',
      EMQ_THROTTLE_TTL_MS: '1000',
      EMQ_NODE_ID: '1023',
      EMQ_KEY_PREFIX: 'staging',
    });
    expect(env).toMatchObject({
      PORT: 8080,
      EMQ_BODY_LIMIT: 512 * 1024,
      EMQ_THROTTLE_LIMIT: 0,
      EMQ_NODE_ID: 1023,
      EMQ_KEY_PREFIX: 'staging',
    });
    expect(validateEnvironment({ EMQ_API_TOKEN: '', PORT: ' ' })).toMatchObject({
      EMQ_API_TOKEN: undefined,
      PORT: 3000,
    });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['REDIS_URL', 'not a url'],
    ['EMQ_BODY_LIMIT', 'lots'],
    ['EMQ_BODY_LIMIT', '0'],
    ['EMQ_BODY_LIMIT', '1gb'],
    ['EMQ_MAX_PAYLOAD_BYTES', '1.5'],
    ['EMQ_THROTTLE_LIMIT', '-1'],
    ['EMQ_THROTTLE_TTL_MS', '0'],
    ['EMQ_NODE_ID', '1024'],
    ['EMQ_KEY_PREFIX', 'a:b'],
    ['EMQ_KEY_PREFIX', '{emq}'],
    ['HOST', 'a b'],
  ])('refuses %s=%j with a message naming it', (name, value) => {
    expect(() => validateEnvironment({ [name]: value })).toThrow(name);
  });

  it('names every bad variable at once, and never prints the token', () => {
    const secret = 'my secret token';
    let message = '';
    try {
      validateEnvironment({ PORT: 'x', EMQ_NODE_ID: 'y', EMQ_API_TOKEN: secret });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/PORT/);
    expect(message).toMatch(/EMQ_NODE_ID/);
    expect(message).toMatch(/EMQ_API_TOKEN/);
    expect(message).not.toContain(secret);
  });

  it('stops the app at boot on a bad value', async () => {
    await expect(createApiApp({ env: { PORT: 'eighty' }, logger: false })).rejects.toThrow(/PORT/);
  });

  it('parses body sizes the way body-parser does', () => {
    expect(parseByteSize('1mb')).toBe(1024 * 1024);
    expect(parseByteSize('16KB')).toBe(16 * 1024);
    expect(parseByteSize('100')).toBe(100);
    expect(parseByteSize('1.5kb')).toBe(1536);
    expect(parseByteSize('12 tb')).toBeUndefined();
    expect(parseByteSize('')).toBeUndefined();
  });
});
