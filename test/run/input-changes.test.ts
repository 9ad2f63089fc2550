// The short diff a resume prints for a trusted input that changed: only the changed lines, at
// most a dozen, and never the value of a key named like a credential (a settings file may hold a
// token the run does not know as a secret).
import { describe, expect, it } from 'vitest';
import { maskCredential, shortDiff } from '../../src/run/input-changes.js';

describe('the short diff of a changed input', () => {
  it('shows only the changed lines', () => {
    const before = 'name: r\nsandbox: workspace\ntasks: []\n';
    expect(shortDiff(before, before.replace('workspace', 'none'))).toBe('-sandbox: workspace\n+sandbox: none');
    expect(shortDiff('', 'a\n')).toBe('+a');
  });

  it('stops after a dozen lines and says how many more changed', () => {
    const after = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const lines = shortDiff('', after).split('\n');
    expect(lines).toHaveLength(13);
    expect(lines.at(-1)).toBe('… 18 more changed lines');
  });

  it('masks the value of credential-named keys in YAML, JSON and env lines, and nothing else', () => {
    const before = '{}\n';
    const after =
      '  "GITHUB_TOKEN": "ghp_decoy123",\n' +
      '  Authorization: Bearer decoy-456\n' +
      'API_KEY=sk-decoy-789\n' +
      '  "command": "sh"\n';
    const diff = shortDiff(before, after);
    for (const decoy of ['ghp_decoy123', 'decoy-456', 'sk-decoy-789']) expect(diff).not.toContain(decoy);
    expect(diff).toContain('+  "GITHUB_TOKEN": [masked]');
    expect(diff).toContain('+  Authorization: [masked]');
    expect(diff).toContain('+API_KEY=[masked]');
    expect(diff).toContain('+  "command": "sh"');
    expect(maskCredential('-sandbox: none')).toBe('-sandbox: none');
  });
});
