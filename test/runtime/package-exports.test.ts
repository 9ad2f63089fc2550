// The built package, imported by its name from outside the repository: every layer is usable
// alone through its `exports` subpath (orchestrate-agents/ai, /agent, /session, /tools, /run,
// /orchestrator, and the root).
// The build goes to a temp copy of the package (package.json + dist) so it never races other
// builds of dist/; its node_modules link to the repository's dependencies.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distIsCurrent } from '../helpers/cli-entry.js';

const REPO = resolve(import.meta.dirname, '../..');
/** The package's npm name (the command it installs is `orchestrate`). */
const NAME = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string }).name;
let root: string;
let buildLog = '';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'orch-pkg-'));
  const pkg = join(root, 'node_modules', NAME);
  mkdirSync(pkg, { recursive: true });
  copyFileSync(join(REPO, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(REPO, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  symlinkSync(join(REPO, 'node_modules', 'zod'), join(root, 'node_modules', 'zod'), 'dir');
  symlinkSync(join(REPO, 'recipes'), join(pkg, 'recipes'), 'dir');
  // dist/ built from the sources as they are now (CI builds it before the tests; npm test's
  // pretest too) is the package's build: copied, not built again.
  if (distIsCurrent()) {
    cpSync(join(REPO, 'dist'), join(pkg, 'dist'), { recursive: true });
    return;
  }
  // Else the package's own build (tsc -p tsconfig.json) into the temp copy. Type checking is the
  // typecheck step's job and declarations are not needed to import, so both are skipped: the
  // emitted JavaScript is the same and the build takes ~2 s instead of ~10 s.
  const tsc = spawnSync(
    process.execPath,
    [
      join(REPO, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(REPO, 'tsconfig.json'),
      '--outDir',
      join(pkg, 'dist'),
      '--declaration',
      'false',
      '--sourceMap',
      'false',
      '--noCheck',
    ],
    {
      cwd: REPO,
      encoding: 'utf8',
    },
  );
  buildLog = `${tsc.stdout}${tsc.stderr}`;
  // The bound only turns a hang into a failure: a build of the whole package took over 60 s at load 40.
}, 150_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CHECK = `
import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { createScriptedProvider, scriptedModel, getModel } from 'orchestrate-agents/ai';
import { Agent } from 'orchestrate-agents/agent';
import { SessionStore, parseSummary } from 'orchestrate-agents/session';
import { createCodingTools } from 'orchestrate-agents/tools';
import { createAgentSession, ai } from 'orchestrate-agents';

const out = {};
const text = (m) => m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

// orchestrate/agent as a loop with one tool.
const upper = { name: 'upper', description: 'Upper-cases text', parameters: z.object({ text: z.string() }),
  execute: async (_id, p) => ({ content: [{ type: 'text', text: p.text.toUpperCase() }] }) };
const withTool = createScriptedProvider([{ tools: [{ name: 'upper', args: { text: 'shout' } }] }, { text: 'Done.' }]);
const agent = new Agent({ initialState: { model: scriptedModel(), tools: [upper] }, streamFn: withTool });
await agent.prompt('make it loud');
out.toolResult = text(agent.state.messages.find((m) => m.role === 'toolResult'));
out.toolAnswer = text(agent.state.messages.at(-1));
out.toolsSent = withTool.calls[0].tools.map((t) => t.name);

// orchestrate/agent with zero tools: plain chat.
const chatProvider = createScriptedProvider([{ text: 'Hello, human.' }]);
const chat = new Agent({ initialState: { model: scriptedModel() }, streamFn: chatProvider });
await chat.prompt('hi');
out.chat = text(chat.state.messages.at(-1));
out.chatTools = chatProvider.calls[0].tools ?? null;

// orchestrate/session and orchestrate/tools on their own.
const store = SessionStore.inMemory({ cwd: process.cwd() });
store.appendMessage({ role: 'user', content: 'q', timestamp: 1 });
out.sessionMessages = store.buildContext().messages.length;
out.goal = parseSummary('## Goal\\nShip it').goal;
writeFileSync('note.txt', 'a note\\n');
const [read] = createCodingTools({ cwd: process.cwd() }, ['read']);
out.read = text(await read.execute('1', { path: 'note.txt' }, new AbortController().signal, () => {}));
out.model = getModel('sonnet').id;

// The root entry: the factory, with a TypeScript extension loaded outside tsx.
const session = await createAgentSession({ cwd: process.cwd(), inMemory: true, provider: 'scripted', tools: ['write'],
  script: [{ tools: [{ name: 'write', args: { path: '.env', content: 'x' } }] }, { text: 'Could not write .env.' }],
  extensions: [process.argv[2]], defaultSkills: false, contextFiles: false, notify: () => {} });
await session.prompt('write the env file');
out.sdk = session.lastAssistantText();
out.blocked = session.messages.find((m) => m.role === 'toolResult').isError;
out.namespace = typeof ai.stream;
console.log(JSON.stringify(out));
`;

describe('the built package', () => {
  it('imports every layer by package name and runs the loop with one tool, with none, and the SDK factory', () => {
    const pkgDist = join(root, 'node_modules', NAME, 'dist');
    for (const layer of [
      'index.js',
      'ai/index.js',
      'agent/index.js',
      'session/index.js',
      'tools/index.js',
      'runtime/index.js',
      'run/index.js',
      'orchestrator/index.js',
      'orchestrator/worker/worker-entry.cjs',
    ]) {
      expect(existsSync(join(pkgDist, layer)), `dist/${layer} missing after the build:\n${buildLog}`).toBe(true);
    }
    const work = join(root, 'work');
    mkdirSync(work);
    writeFileSync(join(root, 'check.mjs'), CHECK);
    const extension = join(root, 'node_modules', NAME, 'recipes', 'extensions', 'protected-paths.ts');
    const stdout = execFileSync(process.execPath, [join(root, 'check.mjs'), extension], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(out).toEqual({
      toolResult: 'SHOUT',
      toolAnswer: 'Done.',
      toolsSent: ['upper'],
      chat: 'Hello, human.',
      chatTools: null,
      sessionMessages: 1,
      goal: 'Ship it',
      read: 'a note',
      model: 'claude-sonnet-4-6',
      sdk: 'Could not write .env.',
      blocked: true,
      namespace: 'function',
    });
    expect(existsSync(join(work, '.env'))).toBe(false);
  });

  it('orchestrate-agents/orchestrator runs a recipe and orchestrate-agents/run reads its record back', () => {
    const work = mkdtempSync(join(root, 'run-'));
    writeFileSync(join(work, 'script.yaml'), 'turns:\n  - text: "done"\n');
    writeFileSync(
      join(work, 'recipe.yaml'),
      'name: record\nprovider: scripted\nscript: script.yaml\ntasks:\n  - id: hi\n    for_each: [a, b]\n    prompt: "Say done"\n',
    );
    writeFileSync(
      join(root, 'run-check.mjs'),
      `
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runRecipeFile } from 'orchestrate-agents/orchestrator';
import { RunEventSchema, RUN_LOG, readRunLog, foldEvents } from 'orchestrate-agents/run';
const started = await runRecipeFile(process.argv[2], {}, { runsDir: process.argv[3] });
if (!started.ok) throw new Error(JSON.stringify(started));
const lines = readFileSync(join(started.outcome.dir, RUN_LOG), 'utf8').trim().split('\\n');
const valid = lines.every((l) => RunEventSchema.safeParse(JSON.parse(l)).success);
const state = foldEvents(readRunLog(join(started.outcome.dir, RUN_LOG)).events);
console.log(JSON.stringify({ status: started.outcome.status, valid, folded: state.status, instances: state.instances.size }));
`,
    );
    const stdout = execFileSync(
      process.execPath,
      [join(root, 'run-check.mjs'), join(work, 'recipe.yaml'), join(work, 'runs')],
      { cwd: work, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
      status: 'succeeded',
      valid: true,
      folded: 'succeeded',
      instances: 2,
    });
  });

  it('the built CLI runs a recipe on its worker threads, also when node is started with V8 flags', () => {
    const work = mkdtempSync(join(root, 'flags-'));
    writeFileSync(join(work, 'script.yaml'), 'turns:\n  - text: "done"\n');
    writeFileSync(
      join(work, 'recipe.yaml'),
      'name: flags\nprovider: scripted\nscript: script.yaml\nconcurrency: 2\ntasks:\n  - id: hi\n    for_each: [a, b]\n    prompt: "Say done"\n',
    );
    const cli = join(root, 'node_modules', NAME, 'dist', 'cli', 'main.js');
    // V8 flags are per process: a worker given them explicitly refuses to start (ERR_WORKER_INVALID_EXEC_ARGV).
    const r = spawnSync(
      process.execPath,
      [
        '--max-old-space-size=1024',
        '--stack-size=2000',
        cli,
        join(work, 'recipe.yaml'),
        '--run-dir',
        join(work, 'runs'),
      ],
      {
        cwd: work,
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '' },
      },
    );
    expect(r.stderr).not.toMatch(/ERR_WORKER_INVALID_EXEC_ARGV|internal error/);
    expect(r.status, r.stderr).toBe(0);
  });
});
