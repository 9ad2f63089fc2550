// The cluster secret is a credential the run knows, whichever way it was given: through
// ORCHESTRATE_CLUSTER_SECRET(_FILE) or through `--secret-file F`. Before, only the environment's
// were in the run's redaction set, so a secret given by flag that an agent printed (here: a model
// that quotes it) stood in clear in run.jsonl; and a distributed worker's session (which the worker
// writes and streams back) never redacted the cluster secret at all.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { skipWithoutRedis, startRedis, type RedisServerHandle } from '../helpers/redis-server.js';
import { exited, spawnCli } from '../reliability/helpers/reliability-fixtures.js';
import { removeWorkdirs, SECRET, startCliWorker, type CliWorker } from './cluster-fixtures.js';

const skip = skipWithoutRedis('a cluster secret given by --secret-file is redacted');
let redis: RedisServerHandle;
let worker: CliWorker | undefined;

beforeAll(async () => {
  if (!skip) redis = await startRedis();
});
afterAll(async () => {
  await worker?.stop();
  await redis?.stop();
  removeWorkdirs();
  cleanupTempDirs();
});

/**
 * Every file under `dir`, as text, but the run's captured inputs: those are byte copies of the
 * user's own files (here the script, which holds the model's reply), kept so a resume is not
 * steered by a rewritten recipe.
 */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.parentPath.split('/').includes('inputs'))
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

describe.skipIf(skip)('a cluster secret given by --secret-file', () => {
  it('is redacted in the run folder and the output like one from the environment', async () => {
    worker = await startCliWorker(redis.url, 'quoter');
    const dir = tempProject({
      'recipe.yaml': `name: quote
provider: scripted
script: script.yaml
agents:
  quoter: { tools: [] }
tasks:
  - id: quote
    agent: quoter
    prompt: "Quote it"
`,
      'script.yaml': `conversations:
  - match: "Quote it"
    turns:
      - text: "The cluster secret is ${SECRET}."
`,
    });
    writeFileSync(join(dir, 'cluster.key'), `${SECRET}\n`, { mode: 0o600 });
    const runs = join(dir, '.orchestrate', 'runs');
    const r = await exited(
      spawnCli(
        [join(dir, 'recipe.yaml'), '--redis', redis.url, '--secret-file', join(dir, 'cluster.key'), '--run-dir', runs],
        {},
      ),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    const written = allText(runs);
    expect(written).toContain('The cluster secret is [REDACTED');
    expect(written).not.toContain(SECRET);
  }, 180_000);
});
