// Reading provider error bodies in every shape, the one classification of a failure, and the
// scrubbing of credentials a server echoes back (provider-error.ts). End to end, through each
// provider's SDK on the wire, in provider-conformance.test.ts.
import { describe, expect, it } from 'vitest';
import { classifyProviderError, readErrorBody, scrubCredentials } from '../../src/ai/provider-error.js';

describe('readErrorBody', () => {
  it('reads every body shape servers send', () => {
    expect(readErrorBody({ error: { message: 'm1', type: 'invalid_request_error' } })).toEqual({
      message: 'm1',
      type: 'invalid_request_error',
    });
    expect(readErrorBody('{"object":"error","message":"m2","type":"BadRequestError","code":400}')).toEqual({
      message: 'm2',
      type: 'BadRequestError',
    });
    expect(readErrorBody({ object: 'error', message: 'm3', code: 400 })).toEqual({ message: 'm3', type: undefined });
    expect(readErrorBody({ detail: 'm4' })).toEqual({ message: 'm4' });
    expect(
      readErrorBody({ detail: [{ loc: ['body', 'max_tokens'], msg: 'must be positive' }, { msg: 'm5' }] }),
    ).toEqual({
      message: 'body.max_tokens: must be positive; m5',
    });
    expect(readErrorBody({ error: 'm6' })).toEqual({ message: 'm6', type: undefined });
    expect(readErrorBody('upstream timed out\n')).toEqual({ message: 'upstream timed out' });
    expect(
      readErrorBody(
        '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center>nginx</center></body></html>',
      ),
    ).toEqual({ message: '502 Bad Gateway' });
    expect(readErrorBody('<!DOCTYPE html><body><p>Service <b>down</b></p></body>')).toEqual({
      message: 'Service down',
    });
    expect(readErrorBody('')).toEqual({});
    expect(readErrorBody({ unrelated: true })).toEqual({});
  });

  it("keeps llama.cpp's window numbers next to its message", () => {
    expect(
      readErrorBody({
        error: {
          code: 400,
          message: 'the request exceeds the available context size',
          n_ctx: 4096,
          n_prompt_tokens: 5000,
        },
      }).message,
    ).toBe('the request exceeds the available context size (5000 tokens > 4096 maximum)');
  });
});

describe('classifyProviderError', () => {
  it('decides by the status when there is one', () => {
    const kinds = [429, 529, 503, 500, 502, 408, 400, 401, 413].map((status) =>
      classifyProviderError({ status, message: 'x' }),
    );
    expect(kinds).toEqual([
      'rate_limit',
      'overloaded',
      'overloaded',
      'server',
      'server',
      'connection',
      undefined,
      undefined,
      undefined,
    ]);
    // A 400 that quotes "rate limit" from the prompt stays final.
    expect(classifyProviderError({ status: 400, message: 'explain rate limits' })).toBeUndefined();
    expect(classifyProviderError({ status: 500, message: 'Overloaded' })).toBe('overloaded');
  });

  it('without a status, by the error type, then the wording', () => {
    expect(classifyProviderError({ type: 'overloaded_error', message: 'x' })).toBe('overloaded');
    expect(classifyProviderError({ type: 'rate_limit_exceeded', message: 'x' })).toBe('rate_limit');
    expect(classifyProviderError({ type: 'api_error', message: 'x' })).toBe('server');
    expect(classifyProviderError({ message: '503 service unavailable' })).toBe('overloaded');
    expect(classifyProviderError({ message: '401 authentication_error: invalid key' })).toBeUndefined();
    expect(classifyProviderError({ message: 'TypeError: terminated' })).toBe('connection');
    expect(classifyProviderError({ message: 'prompt is too long: 3000 tokens > 2048 maximum' })).toBeUndefined();
  });
});

describe('scrubCredentials', () => {
  const key = 'sk-live-abcdef0123456789';
  it('hides header echoes in any quoting, Bearer tokens and the key itself', () => {
    const echoes = [
      `bad request; headers: Authorization: Bearer ${key}`,
      `{"headers":{"authorization":"Bearer ${key}","x-api-key":"${key}"}}`,
      `api-key=${key}; next`,
      `token ${key} was refused`,
      'Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==',
    ];
    const out = echoes.map((e) => scrubCredentials(e, [key]));
    for (const o of out) {
      expect(o).not.toContain(key);
      expect(o).not.toContain('dXNlcjpwYXNzd29yZA');
    }
    expect(out[0]).toBe('bad request; headers: Authorization: [redacted]');
    expect(out[1]).toBe('{"headers":{"authorization":"[redacted]","x-api-key":"[redacted]"}}');
    expect(out[3]).toBe('token [redacted] was refused');
  });

  it('leaves ordinary messages alone', () => {
    const text = 'Authorization header missing; use x-api-key. maximum context length is 2048 tokens';
    expect(scrubCredentials(text, [undefined, ''])).toBe(text);
  });
});
