// An agent's extension that imports local modules runs on a remote worker: the coordinator ships
// the extension's import closure (siblings, a subfolder, a parent folder, a re-export, a dynamic
// import, the package.json that makes .ts files ES modules) with the job, and the worker loads it
// from its own workdir. Real parts: a redis-server of this test's own, a real `orchestrate worker`
// process whose workdir shares nothing with the project, and the scripted model.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOnCluster } from './helpers/run-on-cluster.js';
import { MAX_SHIPPED_BYTES } from '../../src/cluster/redis-executor.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { SECRET_ENV, useCluster, type WorkerProcess } from './helpers/cluster-fixture.js';

const cluster = useCluster('distributed runs');
const skip = cluster.skip;
let worker: WorkerProcess;

// One worker serves both tests (each has a run of its own). The packages extensions import (zod
// here) are installed where Node finds them from its workdir, as docs/distributed.md tells operators to.
beforeAll(async () => {
  if (!skip) worker = await cluster.startWorker('ext-box', { args: ['--allow-extensions'], linkNodeModules: true });
}, 90_000);
afterAll(() => cleanupTempDirs());

const runHere = (dir: string) => runOnCluster(cluster.redis.url, SECRET_ENV, dir);

/** An extension spread over several local modules; every one of them shows in what it produces. */
const EXTENSION_FILES: Record<string, string> = {
  // Without "type": "module" tsx reads the .ts files as CommonJS (no default export function).
  'package.json': '{ "name": "ext-project", "type": "module" }\n',
  'ext/main.ts': `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { decorate } from './helpers.js';
import { SUFFIX } from './lib/constants';
export * from './lib/reexported.js';
// import { gone } from './not-shipped-because-commented.js';

export default function (api) {
  api.registerTool({
    name: 'stamp',
    description: 'Writes a stamp file made by the helper modules.',
    parameters: z.object({ label: z.string() }),
    async execute(_id, params) {
      const { banner } = await import('./late/banner.mjs');
      const text = banner(decorate(params.label));
      writeFileSync(join(api.cwd, 'stamp.txt'), text + '\\n');
      return { content: [{ type: 'text', text }] };
    },
  });
  api.on('after_tool_call', (e) => (e.toolName === 'read' ? { content: [{ type: 'text', text: 'hooked ' + decorate('read') + SUFFIX }] } : undefined));
}
`,
  'ext/helpers.ts': `import { shout } from '../shared/util.ts';
export const decorate = (s: string): string => '[' + shout(s) + ']';
`,
  'ext/lib/constants.ts': `export const SUFFIX = '-from-subfolder';\n`,
  'ext/lib/reexported.js': `export const reexported = true;\n`,
  'ext/late/banner.mjs': `export const banner = (s) => '*** ' + s + ' ***';\n`,
  'shared/util.ts': `export function shout(s: string): string { return s.toUpperCase() + '!'; }\n`,
};

function project(extra: Record<string, string> = {}): string {
  return tempProject({
    ...EXTENSION_FILES,
    'recipe.yaml': `name: ext-ship
provider: scripted
script: script.yaml
agents:
  stamper: { tools: [read, stamp], extensions: [ext/main.ts] }
  plain: { tools: [read] }
tasks:
  - id: stamp
    agent: stamper
    prompt: "Stamp the notes"
  - id: look
    agent: plain
    prompt: "Look at the notes"
`,
    'script.yaml': `conversations:
  - match: "Stamp the notes"
    turns:
      - tools: [{ name: stamp, args: { label: "alpha" } }]
      - tools: [{ name: read, args: { path: notes.txt } }]
      - text: "Stamped."
  - match: "Look at the notes"
    turns:
      - tools: [{ name: read, args: { path: notes.txt } }]
      - text: "Looked."
`,
    'notes.txt': 'plain notes\n',
    ...extra,
  });
}

describe.skipIf(skip)('distributed runs: extension modules with local imports', () => {
  it('an extension importing sibling, subfolder and parent-folder modules registers its tool and hook on a remote worker', async () => {
    const dir = project();
    const out = await runHere(dir);
    const log = events(out.dir);
    expect(out.status, JSON.stringify(ofType(log, 'instance_failed'))).toBe('succeeded');
    expect(new Set(ofType(log, 'instance_start').map((e) => e.worker))).toEqual(new Set(['ext-box']));
    // The tool ran on the worker (helpers.ts, shared/util.ts, late/banner.mjs); its file came back in the patch.
    expect(readFileSync(join(dir, 'stamp.txt'), 'utf8')).toBe('*** [ALPHA!] ***\n');
    // The hook replaced the read result (helpers.ts and lib/constants.ts); the session streamed back shows it.
    const session = readFileSync(join(out.dir, 'sessions', 'stamp.jsonl'), 'utf8');
    expect(session).toContain('*** [ALPHA!] ***');
    expect(session).toContain('hooked [READ!]-from-subfolder');
    // The agent without the extension read the file as it is.
    const plain = readFileSync(join(out.dir, 'sessions', 'look.jsonl'), 'utf8');
    expect(plain).toContain('plain notes');
    expect(plain).not.toContain('hooked');
    expect(worker.stderr()).not.toMatch(/Cannot load extension/);
  }, 120_000);

  it('extension files past the shipping limit fail that instance with a workspace error naming them; the others run', async () => {
    const big = `export const padding = "${'x'.repeat(MAX_SHIPPED_BYTES)}";\n`;
    const dir = project({
      'ext/helpers.ts': `import { shout } from '../shared/util.ts';\nimport { padding } from './big-table.js';\nexport const decorate = (s: string): string => '[' + shout(s) + padding.slice(0, 0) + ']';\n`,
      'ext/big-table.js': big,
    });
    const out = await runHere(dir);
    expect(out.status).toBe('failed');
    const failed = ofType(events(out.dir), 'instance_failed').filter((e) => e.final);
    expect(failed.map((e) => [e.key, e.failure])).toEqual([['stamp', 'workspace']]);
    expect(failed[0]!.error).toContain(join(dir, 'ext', 'big-table.js'));
    expect(failed[0]!.error).toMatch(/cannot travel to a worker: .* over the limit of 4\.0 MB \(4194304 bytes\)/);
    expect(existsSync(join(dir, 'stamp.txt'))).toBe(false);
    expect(readFileSync(join(out.dir, 'sessions', 'look.jsonl'), 'utf8')).toContain('Looked.');
  }, 120_000);
});
