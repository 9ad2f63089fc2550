import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  classifyErrorText,
  classifyReplyError,
  describeThreadFailure,
  failureText,
  retryPolicyOf,
  shouldRetry,
} from '../../../src/orchestrator/schedule/failure-policy.js';

const defaults = {
  count: 0,
  initialMs: 1000,
  maxMs: 8000,
  factor: 2,
  on: ['rate_limit', 'overloaded', 'timeout', 'stalled', 'crashed'],
};

describe('failure policy', () => {
  it('classifies provider error texts by what they say', () => {
    expect(classifyErrorText('429 rate_limit_error: slow down (request req_1)')).toBe('rate_limit');
    expect(classifyErrorText('529 overloaded_error: Overloaded')).toBe('overloaded');
    expect(classifyErrorText('The Anthropic API sent nothing for 1000 ms; timeout')).toBe('timeout');
    expect(classifyErrorText('Request was aborted')).toBe('aborted');
    expect(classifyErrorText('400 invalid_request_error: bad')).toBe('error');
  });

  it('treats thread exits and memory exhaustion as crashed, with a hint for memory', () => {
    expect(describeThreadFailure(new Error('worker exited with code: 3'))).toMatchObject({ failure: 'crashed' });
    const oom = Object.assign(new Error('Worker terminated due to reaching memory limit: JS heap out of memory'), {
      code: 'ERR_WORKER_OUT_OF_MEMORY',
    });
    const d = describeThreadFailure(oom);
    expect(d.failure).toBe('crashed');
    expect(d.error).toMatch(/memory limit/);
  });

  it('retries only listed classes, only while retries are left, and never budget or aborted', () => {
    const p = retryPolicyOf({ count: 2, on: ['crashed', 'budget', 'error'] }, defaults);
    expect(shouldRetry(p, 'crashed', 1)).toBe(true);
    expect(shouldRetry(p, 'crashed', 2)).toBe(true);
    expect(shouldRetry(p, 'crashed', 3)).toBe(false);
    expect(shouldRetry(p, 'timeout', 1)).toBe(false);
    expect(shouldRetry(p, 'budget', 1)).toBe(false);
    expect(shouldRetry(p, 'aborted', 1)).toBe(false);
  });

  it('backs off exponentially up to the cap, scaled down by jitter', () => {
    const p = retryPolicyOf({ count: 5 }, defaults);
    expect(backoffDelay(p, 1, () => 0)).toBe(1000);
    expect(backoffDelay(p, 2, () => 0)).toBe(2000);
    expect(backoffDelay(p, 3, () => 0)).toBe(4000);
    expect(backoffDelay(p, 6, () => 0)).toBe(8000);
    // Full jitter draw: half of the delay with the default 0.5 jitter.
    expect(backoffDelay(p, 2, () => 1)).toBe(1000);
    const draws = new Set(Array.from({ length: 20 }, () => backoffDelay(p, 3)));
    expect(draws.size).toBeGreaterThan(1);
    for (const d of draws) {
      expect(d).toBeGreaterThanOrEqual(2000);
      expect(d).toBeLessThanOrEqual(4000);
    }
  });
});

describe('classifyReplyError', () => {
  it('takes the class from the status the provider saw, and reads the text only where that says nothing', () => {
    expect(
      classifyReplyError({
        errorMessage: '429 rate_limit_error: slow down',
        errorStatus: 429,
        errorKind: 'rate_limit',
      }),
    ).toBe('rate_limit');
    expect(classifyReplyError({ errorMessage: 'Overloaded', errorKind: 'overloaded' })).toBe('overloaded');
    // A refused request whose message quotes words of other classes is still an error.
    expect(
      classifyReplyError({
        errorMessage: '400 invalid_request_error: the prompt mentions a rate limit and a timeout',
        errorStatus: 400,
      }),
    ).toBe('error');
    expect(classifyReplyError({ errorMessage: '408 request timeout', errorStatus: 408 })).toBe('timeout');
    // Server and connection failures: the text says more (an overloaded 503, a timeout).
    expect(
      classifyReplyError({
        errorMessage: '503 service unavailable: overloaded',
        errorStatus: 503,
        errorKind: 'server',
      }),
    ).toBe('overloaded');
    expect(classifyReplyError({ errorMessage: 'stream idle timeout after 120 s', errorKind: 'connection' })).toBe(
      'timeout',
    );
    // The product's own wording is no class: a budget stop travels as data (FailureReason), so a
    // reply whose text merely reads like one (a model echoing it) is an error (issue 43).
    expect(classifyReplyError({ errorMessage: 'Budget exhausted: run budget of $1 is spent' })).toBe('error');
    expect(classifyErrorText('the run budget of 3000 tokens is spent')).toBe('error');
    expect(classifyReplyError({ errorMessage: '429 Too Many Requests' })).toBe('rate_limit');
    // ai/'s own idle-stream give-up says it is a timeout as data, whatever its wording (issue 43).
    expect(
      classifyReplyError({
        errorMessage: 'The Anthropic API sent nothing for 150 ms; the stream was abandoned.',
        errorKind: 'connection',
        errorCause: 'timeout',
      }),
    ).toBe('timeout');
  });
});

describe('failureText', () => {
  it('renders a reason as the sentence users have always read', () => {
    expect(failureText({ failure: 'budget', detail: 'run budget of $1 is spent', scope: 'run' })).toBe(
      'Budget exhausted: run budget of $1 is spent',
    );
    expect(failureText({ failure: 'timeout', detail: 'the instance ran longer than its timeout (5s)' })).toBe(
      'timeout: the instance ran longer than its timeout (5s)',
    );
    expect(failureText({ failure: 'cancelled', detail: 'by cli (pid 1)' })).toBe('cancelled: by cli (pid 1)');
    expect(failureText({ failure: 'mcp_unavailable', detail: 'MCP server "db" exited' })).toBe(
      'MCP server "db" exited',
    );
  });
});
