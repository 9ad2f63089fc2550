// Resuming from the page (POST /api/runs/<id>/resume) through the service's launchResume, as the
// MCP server's resume tool does: a real CLI run on the scripted provider is killed (kill -9) while
// its agent waits in bash; the page's snapshot says it can be resumed; the resume starts
// `orchestrate resume` as a process of its own, a second one is refused while it runs, the run
// then succeeds, and resuming a succeeded run is refused with why. Waits are on run.jsonl.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src/web/run-snapshot.js';
import { startWebServer } from '../../src/web/web-server.js';
import { runFolderName } from '../helpers/run-folder.js';
import { exited, spawnCli, until } from '../reliability/helpers/reliability-fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
const releases: string[] = [];
afterAll(() => {
  for (const r of releases) writeFileSync(r, 'x');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const lines = (runDir: string): Record<string, unknown>[] => {
  try {
    return readFileSync(join(runDir, 'run.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  } catch {
    return [];
  }
};

describe('resume from the web view', { timeout: 180_000 }, () => {
  it('resumes a killed run as a process of its own; refuses a second resume and one of a succeeded run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-resume-'));
    dirs.push(dir);
    const release = join(dir, 'release');
    releases.push(release);
    const wait = `while [ ! -f '${release}' ]; do sleep 0.05; done; echo released`;
    writeFileSync(
      join(dir, 'script.yaml'),
      // The resumed run waits for the release as well (its interrupted bash is reported, not run
      // again, so the next turn waits once more): the second resume must meet a running run
      // however fast the first one starts.
      `turns:
  - { text: "waiting", tools: [{ name: bash, args: { command: ${JSON.stringify(wait)} } }] }
  - { text: "waiting again", tools: [{ name: bash, args: { command: ${JSON.stringify(wait)} } }] }
  - text: "finished"
`,
    );
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: resumable
provider: scripted
script: script.yaml
agents:
  w: { tools: [bash] }
tasks:
  - id: writer
    agent: w
    prompt: "WAIT for the release"
`,
    );
    const runs = join(dir, 'runs');
    mkdirSync(runs);
    const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], { NO_COLOR: '1' });
    const done = exited(child);
    let runDir = '';
    await until(() => {
      const name = runFolderName(runs);
      if (!name) return false;
      runDir = join(runs, name);
      return lines(runDir).some(
        (e) => e.type === 'agent_event' && (e.event as { type?: string }).type === 'tool_execution_start',
      );
    }, 'the agent in bash');
    child.kill('SIGKILL');
    await done;

    const started = await startWebServer({
      runsDir: runs,
      cwd: ROOT,
      host: '127.0.0.1',
      port: 0,
      token: 'resume-token-0123456789',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' },
      log: () => {},
    });
    if (!started.ok) throw new Error(started.message);
    const base = `http://127.0.0.1:${started.server.port}/api/runs/${runFolderName(runs)}`;
    const headers = { authorization: 'Bearer resume-token-0123456789' };
    const resume = () => fetch(`${base}/resume`, { method: 'POST', headers, body: '{}' });
    try {
      const before = (await (await fetch(base, { headers })).json()) as RunSnapshot;
      expect(before.resumable).toBe(true);
      expect(before.readOnly).toMatch(/no coordinator holds the run/);

      const first = await resume();
      expect(first.status).toBe(200);
      // It says where the process's output goes (it said only its pid; the page has no other way to find it).
      const answer = (await first.json()) as { ok: boolean; message: string };
      expect(answer).toMatchObject({
        ok: true,
        message: expect.stringMatching(/^resumed \(pid \d+\); its output goes to /),
      });
      expect(answer.message).toContain(join(runDir, 'mcp-launch.log'));
      expect(existsSync(join(runDir, 'mcp-launch.log'))).toBe(true);
      const second = await resume();
      expect(second.status).toBe(409);
      expect(await second.json()).toMatchObject({
        ok: false,
        code: 'refused',
        message: expect.stringMatching(/is running/),
      });
      expect(((await (await fetch(base, { headers })).json()) as RunSnapshot).resumable).toBe(false);

      writeFileSync(release, 'x');
      await until(
        () => lines(runDir).some((e) => e.type === 'run_end' && e.status === 'succeeded'),
        'the resumed run to succeed',
        120_000,
      );
      const again = await resume();
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ message: expect.stringMatching(/already succeeded/) });
      expect((await fetch(`${base}/resume`, { method: 'POST', headers, body: '{"x":1}' })).status).toBe(400);
    } finally {
      await started.server.close();
    }
  });
});
