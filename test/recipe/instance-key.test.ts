import { describe, expect, it } from 'vitest';
import { canonicalJson, instanceId, instanceKey, itemKey, slugify } from '../../src/recipe/instance-key.js';

describe('instance keys', () => {
  it('slugs are lower-case, file-name safe and never hidden or relative names', () => {
    expect(slugify('Services/API v2')).toBe('services-api-v2');
    expect(slugify('../../etc/passwd')).toBe('etc-passwd');
    expect(slugify('.hidden')).toBe('hidden');
    expect(slugify('Crème Brûlée')).toBe('creme-brulee');
    expect(slugify('名前')).toBe('');
  });

  it('items with an identity field use it; other structures hash their canonical JSON', () => {
    expect(itemKey({ repo: 'org/api', files: 3 })).toBe('org-api');
    expect(itemKey({ b: 1, a: 2 })).toBe(itemKey({ a: 2, b: 1 }));
    expect(itemKey({ b: 1, a: 2 })).toMatch(/^[0-9a-f]{8}$/);
    expect(itemKey('名前')).toMatch(/^[0-9a-f]{8}$/);
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
  });

  it('the same item always gives the same key', () => {
    expect(instanceKey('x'.repeat(100))).toBe(instanceKey('x'.repeat(100)));
    expect(instanceKey('x'.repeat(100))).not.toBe(instanceKey('x'.repeat(99)));
    expect(instanceId('apply', 'svc-a')).toBe('apply.svc-a');
    expect(instanceId('plan')).toBe('plan');
  });
});
