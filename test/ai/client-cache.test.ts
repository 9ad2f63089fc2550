// ClientCache: one SDK client per API key and base URL, made once.
import { describe, expect, it } from 'vitest';
import { ClientCache } from '../../src/ai/client-cache.js';

describe('ClientCache', () => {
  it('makes a client once per key and URL, and apart for another key or URL', () => {
    const cache = new ClientCache<{ n: number }>();
    let made = 0;
    const make = () => ({ n: ++made });
    const a = cache.get('key-1', 'http://127.0.0.1:1', make);
    expect(cache.get('key-1', 'http://127.0.0.1:1', make)).toBe(a);
    expect(cache.get('key-2', 'http://127.0.0.1:1', make)).not.toBe(a);
    expect(cache.get('key-1', 'http://127.0.0.1:2', make)).not.toBe(a);
    expect(made).toBe(3);
  });
});
