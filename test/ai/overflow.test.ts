import { describe, expect, it } from 'vitest';
import { isContextOverflow, overflowLimitFromError } from '../../src/ai/overflow.js';
import type { AssistantMessage } from '../../src/ai/types.js';
import { emptyUsage } from '../../src/ai/usage.js';

const failed = (errorMessage: string): Pick<AssistantMessage, 'stopReason' | 'errorMessage' | 'usage'> => ({
  stopReason: 'error',
  errorMessage,
  usage: emptyUsage(),
});

describe('isContextOverflow', () => {
  const overflowTexts = [
    '400 invalid_request_error: prompt is too long: 213462 tokens > 200000 maximum',
    'Input is too long for requested model.',
    'The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).',
    'Your input exceeds the context window of this model',
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    'Please reduce the length of the messages or completion.',
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    'Requested 200000 tokens, which exceeds the limit of 131072',
    'the request exceeds the available context size, try increasing it',
    'prompt token count of 200000 is greater than the context length',
    'context window exceeds limit',
    'Error: exceeded model token limit',
    'prompt too large for model with 8192 maximum context length',
    'model_context_window_exceeded',
    'context_length_exceeded',
    'context length exceeded',
    'Too many tokens in request',
    'token limit exceeded for this request',
    '400 status code (no body)',
    '413 (no body)',
  ];

  it.each(overflowTexts)('recognises "%s"', (text) => {
    expect(isContextOverflow(failed(text))).toBe(true);
  });

  it('does not flag other errors, or overflow texts on non-error messages', () => {
    expect(isContextOverflow(failed('429 rate_limit_error: slow down'))).toBe(false);
    expect(isContextOverflow(failed('500 (no body) from upstream'))).toBe(false);
    expect(isContextOverflow(failed('overloaded: 400 status code (no body)'))).toBe(false);
    expect(isContextOverflow({ stopReason: 'stop', errorMessage: 'prompt is too long', usage: emptyUsage() })).toBe(
      false,
    );
    expect(isContextOverflow({ stopReason: 'error', usage: emptyUsage() })).toBe(false);
  });

  it('detects silent overflow when a successful reply used more input than the window', () => {
    const usage = { ...emptyUsage(), input: 150_000, cacheRead: 60_000 };
    expect(isContextOverflow({ stopReason: 'stop', usage }, 200_000)).toBe(true);
    expect(isContextOverflow({ stopReason: 'stop', usage }, 250_000)).toBe(false);
    expect(isContextOverflow({ stopReason: 'stop', usage })).toBe(false);
    expect(isContextOverflow({ stopReason: 'toolUse', usage }, 200_000)).toBe(false);
  });
});

describe('overflowLimitFromError', () => {
  it('reads the window each server states', () => {
    expect(overflowLimitFromError('400 invalid_request_error: prompt is too long: 60425 tokens > 55000 maximum')).toBe(
      55_000,
    );
    expect(
      overflowLimitFromError(
        "400 This model's maximum context length is 55000 tokens. However, your messages resulted in 60425 tokens.",
      ),
    ).toBe(55_000);
    expect(
      overflowLimitFromError(
        '400 The decoder prompt (length 60425) is longer than the maximum model length of 55000. Make sure that `max_model_len` is no smaller than the number of text tokens.',
      ),
    ).toBe(55_000);
    expect(
      overflowLimitFromError(
        '400 exceed_context_size_error: the request exceeds the available context size, try increasing it (60425 tokens > 55000 maximum)',
      ),
    ).toBe(55_000);
    expect(
      overflowLimitFromError(
        '400 exceed_context_size_error: the request exceeds the available context size, try increasing it (n_ctx 55000)',
      ),
    ).toBe(55_000);
    expect(
      overflowLimitFromError(
        '400 Trying to keep the first 60425 tokens when context the overflows. However, the model is loaded with context length of only 55000 tokens, which is not enough.',
      ),
    ).toBe(55_000);
  });

  it('is undefined for overflows without a figure and for other errors', () => {
    expect(overflowLimitFromError('400 prompt is too long')).toBeUndefined();
    expect(overflowLimitFromError('429 rate limit: 30000 tokens > 20000 maximum per minute')).toBeUndefined();
    expect(overflowLimitFromError(undefined)).toBeUndefined();
  });
});
