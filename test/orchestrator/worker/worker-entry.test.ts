// The thread entry piscina require()s is CommonJS and loads the ES worker with import(): on Node
// 20.19+ a require() of the ES worker itself instantiates it synchronously, and a thread terminated
// during that aborts the whole process (V8 fatal error, exit 134; seen in about 1 of 30 runs that
// ended while their warm thread was still loading).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workerEntry } from '../../../src/orchestrator/execution/pool.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const DIST_ENTRY = join(ROOT, 'dist', 'orchestrator', 'worker', 'worker-entry.cjs');

describe('the worker thread entry', () => {
  it("is worker/worker-entry.cjs beside the built pool's folder, worker-entry.cts under tsx", () => {
    expect(workerEntry('file:///app/dist/orchestrator/execution/pool.js')).toEqual({
      isTs: false,
      href: 'file:///app/dist/orchestrator/worker/worker-entry.cjs',
    });
    expect(fileURLToPath(workerEntry().href)).toBe(join(ROOT, 'src', 'orchestrator', 'worker', 'worker-entry.cts'));
  });

  it.skipIf(!existsSync(DIST_ENTRY))(
    'loads without require() of an ES module, and its handler reaches the worker module',
    () => {
      // With require(esm) switched off, require() of the ES worker itself throws ERR_REQUIRE_ESM.
      const script = `const h = require(${JSON.stringify(DIST_ENTRY)}); h({}).then(() => console.log('resolved'), (e) => console.log(typeof h, e.message));`;
      const out = execFileSync(process.execPath, ['--no-experimental-require-module', '-e', script], {
        encoding: 'utf8',
      });
      // An empty task fails inside the worker module (no port): the module was loaded through import().
      expect(out).toMatch(/^function .*'on'/);
    },
  );
});
