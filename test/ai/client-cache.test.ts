// ClientCache: one SDK client per API key and base URL, made once.
import { describe, expect, it } from 'vitest';
import { ClientCache, type SdkClientSettings } from '../../src/ai/client-cache.js';

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

  it('makes every client without SDK retries and with the error-body-keeping fetch', () => {
    const cache = new ClientCache<SdkClientSettings>();
    const settings = cache.get('key-1', 'http://127.0.0.1:1', (s) => s);
    expect(settings).toMatchObject({ apiKey: 'key-1', baseURL: 'http://127.0.0.1:1', maxRetries: 0 });
    expect(settings.fetch).not.toBe(fetch);
    expect(typeof settings.fetch).toBe('function');
  });
});
