// Run by `npm test` first (pretest): builds dist/ unless it is current, so the suite starts the CLI
// from it (see cli-entry.ts: a start without tsx's loader costs a third of the CPU, over hundreds
// of CLI processes). No type check here: that is `npm run typecheck`'s job, and the JavaScript
// emitted is the same. CI has built dist/ just before, so there this does nothing.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { distIsCurrent } from './cli-entry.js';

const REPO = resolve(import.meta.dirname, '../..');
if (!distIsCurrent()) {
  process.stderr.write('pretest: building dist/ (tsc --noCheck) for the CLI processes the tests start\n');
  const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(REPO, 'tsconfig.json'), '--noCheck'], { stdio: 'inherit' });
  process.exitCode = r.status ?? 1;
}
