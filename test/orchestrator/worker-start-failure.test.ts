// Worker threads that cannot start at all (the worker module fails to load) must end the run
// with a clear failure, never leave it waiting forever for a thread that will not come.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerPool } from '../../src/orchestrator/execution/pool.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { cleanupTempDirs, events, ofType, tempProject } from './helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('worker threads that cannot start', () => {
  it('every waiting instance fails as crashed, retries stop, what is left is skipped, and the run ends failed', {
    timeout: 60_000,
  }, async () => {
    const dir = tempProject({
      'recipe.yaml': `name: broken-threads
provider: scripted
script: script.yaml
concurrency: 2
agents:
  a: { tools: [] }
tasks:
  - id: fan
    for_each: [one, two, three]
    agent: a
    prompt: "hello \${{ item }}"
    retries: 3
  - id: after
    needs: [fan]
    agent: a
    prompt: "after"
`,
      'script.yaml': 'turns:\n  - text: hi\n',
    });
    const errors: unknown[] = [];
    const pool = createWorkerPool({
      concurrency: 2,
      filename: pathToFileURL(join(import.meta.dirname, 'fixtures/broken-worker.ts')).href,
      onError: (e) => errors.push(e),
    });
    try {
      const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs'), pool });
      if (!r.ok) throw new Error(JSON.stringify(r));
      expect(r.outcome.status).toBe('failed');
      const log = events(r.outcome.dir);
      const failed = ofType(log, 'instance_failed');
      expect(failed.length).toBeGreaterThanOrEqual(1);
      for (const f of failed) expect(f).toMatchObject({ failure: 'crashed' });
      expect(failed.some((f) => f.error.includes('worker threads cannot start'))).toBe(true);
      // Retries stop once the run knows no thread can start (a retry would wait just the same).
      expect(ofType(log, 'instance_retry').length).toBeLessThanOrEqual(3);
      expect(ofType(log, 'instance_skipped').length).toBeGreaterThanOrEqual(1);
      expect(ofType(log, 'run_end')).toHaveLength(1);
    } finally {
      await pool.destroy();
    }
  });
});
