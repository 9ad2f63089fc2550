// The secrets of a run and the run store's redaction: the log, what listeners see, and files
// written into the run folder (JSON keeps its layout) never hold a secret value.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/run/run-events.js';
import { RunStore } from '../../src/run/run-store.js';
import { runRedactor, runSecrets } from '../../src/run/secrets.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('run secrets', () => {
  it('are the listed variables that are set, plus the API key', () => {
    expect(runSecrets({ secrets: ['A', 'MISSING'] }, { A: 'value-a', ANTHROPIC_API_KEY: 'sk-key-1' })).toEqual([
      { name: 'A', value: 'value-a' },
      { name: 'ANTHROPIC_API_KEY', value: 'sk-key-1' },
    ]);
    expect(runRedactor({ secrets: [] }, {})).toBeUndefined();
  });

  it('never reach the run log, the listeners or the files of the run folder', () => {
    const runs = mkdtempSync(join(tmpdir(), 'orch-secrets-'));
    dirs.push(runs);
    const store = RunStore.create(runs, 'r1', {
      redactor: runRedactor({ secrets: ['TOKEN'] }, { TOKEN: 'tok_123456789', ANTHROPIC_API_KEY: 'sk-ant-xyz' }),
    });
    const seen: RunEvent[] = [];
    store.subscribe((e) => seen.push(e));
    store.append({
      type: 'instance_failed',
      task: 't',
      key: 't',
      attempt: 1,
      failure: 'error',
      error: 'key sk-ant-xyz rejected tok_123456789',
      final: true,
      durationMs: 1,
    });
    store.writeFile('result.json', `${JSON.stringify({ errors: [{ error: 'tok_123456789' }] }, null, 2)}\n`);
    store.writeFile('plan.md', '# plan\nuse tok_123456789\n');
    const log = readFileSync(store.logFile, 'utf8');
    expect(log).not.toMatch(/tok_123456789|sk-ant-xyz/);
    expect(log).toContain('key [REDACTED:ANTHROPIC_API_KEY] rejected [REDACTED:TOKEN]');
    expect(JSON.stringify(seen)).not.toContain('tok_123456789');
    expect(readFileSync(join(store.dir, 'result.json'), 'utf8')).toBe(
      `${JSON.stringify({ errors: [{ error: '[REDACTED:TOKEN]' }] }, null, 2)}\n`,
    );
    expect(readFileSync(join(store.dir, 'plan.md'), 'utf8')).toBe('# plan\nuse [REDACTED:TOKEN]\n');
    expect(store.redactText('printed tok_123456789')).toBe('printed [REDACTED:TOKEN]');
  });
});
