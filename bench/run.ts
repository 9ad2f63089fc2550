// `npm run bench [filter]`: runs every bench/*.bench.ts (or those whose name contains the
// filter) one after another, each in its own Node process so timings and RSS are not polluted
// by the others.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(benchDir, '..');
const filter = process.argv[2];

const files = readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.ts') && (!filter || f.includes(filter)))
  .sort();

if (files.length === 0) {
  console.error(filter ? `No benchmark matches "${filter}" in bench/.` : 'No bench/*.bench.ts files found.');
  process.exit(2);
}

let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(benchDir, file)], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (run.status !== 0) {
    failed++;
    console.log(`--- ${file} FAILED (exit ${run.status ?? run.signal}) after ${seconds} s`);
  } else console.log(`--- ${file} done in ${seconds} s`);
}
process.exitCode = failed > 0 ? 1 : 0;
