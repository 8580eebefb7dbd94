import { JobNotFoundError } from '@app/echomq';
import { errorResponseOf } from '@app/echomq/http/error-response';
import { sendErrorResponse } from '@app/echomq/http/send-response';

/**
 * Fastify is not installed here, so its branch is checked against an object with the
 * shape of Fastify's reply (code / header / send / sent / raw): the filter must answer
 * through that API when it was made with `new` and has no Nest adapter.
 */
function fastifyShapedReply(sent = false) {
  const calls: unknown[][] = [];
  const reply = {
    sent,
    raw: { end: () => calls.push(['raw.end']) },
    code(status: number) {
      calls.push(['code', status]);
      return reply;
    },
    header(name: string, value: string) {
      calls.push(['header', name, value]);
      return reply;
    },
    send(body: unknown) {
      calls.push(['send', body]);
      return reply;
    },
  };
  return { reply, calls };
}

describe('sending an error answer without a Nest adapter', () => {
  const answer = {
    ...errorResponseOf(new JobNotFoundError('JOB00000000001')),
    headers: { 'Retry-After': '1' },
  };

  it("answers through a Fastify reply's own API", () => {
    const { reply, calls } = fastifyShapedReply();
    sendErrorResponse(reply, answer, undefined);
    expect(calls).toEqual([
      ['code', 404],
      ['header', 'Retry-After', '1'],
      ['send', answer.body],
    ]);
  });

  it('only ends a Fastify reply that was already sent', () => {
    const { reply, calls } = fastifyShapedReply(true);
    sendErrorResponse(reply, answer, undefined);
    expect(calls).toEqual([['raw.end']]);
  });

  it('refuses a response object of no platform it knows', () => {
    expect(() => sendErrorResponse({}, answer, undefined)).toThrow(TypeError);
  });
});
