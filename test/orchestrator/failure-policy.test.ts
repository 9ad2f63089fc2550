import { describe, expect, it } from 'vitest';
import { backoffDelay, classifyErrorText, describeThreadFailure, retryPolicyOf, shouldRetry } from '../../src/orchestrator/failure-policy.js';

const defaults = { count: 0, initialMs: 1000, maxMs: 8000, factor: 2, on: ['rate_limit', 'overloaded', 'timeout', 'stalled', 'crashed'] };

describe('failure policy', () => {
  it('classifies provider error texts by what they say', () => {
    expect(classifyErrorText('Budget exhausted: run budget of 3000 tokens is spent')).toBe('budget');
    expect(classifyErrorText('429 rate_limit_error: slow down (request req_1)')).toBe('rate_limit');
    expect(classifyErrorText('529 overloaded_error: Overloaded')).toBe('overloaded');
    expect(classifyErrorText('The Anthropic API sent nothing for 1000 ms; timeout')).toBe('timeout');
    expect(classifyErrorText('Request was aborted')).toBe('aborted');
    expect(classifyErrorText('400 invalid_request_error: bad')).toBe('error');
  });

  it('treats thread exits and memory exhaustion as crashed, with a hint for memory', () => {
    expect(describeThreadFailure(new Error('worker exited with code: 3'))).toMatchObject({ failure: 'crashed' });
    const oom = Object.assign(new Error('Worker terminated due to reaching memory limit: JS heap out of memory'), { code: 'ERR_WORKER_OUT_OF_MEMORY' });
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
    for (const d of draws) expect(d).toBeGreaterThanOrEqual(2000), expect(d).toBeLessThanOrEqual(4000);
  });
});
