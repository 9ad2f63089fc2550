import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runFolderName } from './run-folder.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-run-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('skips the CLI write probe and folders without run.jsonl (the probe sorts first and once passed for the run id)', () => {
  const runs = join(dir, 'runs');
  expect(runFolderName(runs)).toBeUndefined();
  mkdirSync(join(runs, '20261203-134506-532e', 'sessions'), { recursive: true });
  writeFileSync(join(runs, '.write-check-123-abcdef'), '');
  expect(runFolderName(runs)).toBeUndefined(); // the run folder exists, its log not yet
  writeFileSync(join(runs, '20261203-134506-532e', 'run.jsonl'), '');
  expect(runFolderName(runs)).toBe('20261203-134506-532e');
});
