// Disk faults through the real CLI: the run log or a session file cannot be written (a folder
// in its place: fails even for root), and a full disk (a 64 KB tmpfs, when this machine lets
// us mount one). Each time the run stops cleanly (exit 1, a message naming the file and the OS
// error, no stack trace), every line written before is intact and readable, and once the disk
// is fixed the run resumes to the end. The replies a fault must meet in flight are held at a gate
// until the fault is in place (an event, not a delay the test had to beat), and the three tests
// run at the same time (#43): each has its own fake API and project, and none times anything.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  startFakeAnthropic,
  type FakeBlock,
  type RespondInput,
  type ResponseSpec,
} from '../helpers/fake-anthropic-server.js';
import { cleanupTempDirs, conversationKey, ofType, tempProject, events } from '../orchestrator/helpers/run-fixtures.js';
import { isSummaryRequest } from '../helpers/summary-request.js';
import { checkJsonl, exited, filesUnder, printSummary, spawnCli, until } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

/** A gate: replies wait on it until the test opens it. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open = false;
  const waiting: (() => void)[] = [];
  return {
    wait: () => (open ? Promise.resolve() : new Promise((r) => waiting.push(r))),
    open: () => {
      open = true;
      for (const w of waiting.splice(0)) w();
    },
  };
}

/**
 * Writer agents: a bash call (turn 0), then an answer `pad` characters long (turn 1); a reply
 * that `hold(item, turn)` gives a promise for is sent once it resolves.
 */
function responder(
  opts: { hold?: (item: string, turn: number) => Promise<void> | undefined; pad?: number } = {},
): (req: RespondInput) => Promise<ResponseSpec> {
  return async ({ body }) => {
    const item = /Write the marker for (\w+)/.exec(conversationKey(body))?.[1] ?? '?';
    if (isSummaryRequest(body)) {
      return {
        kind: 'message',
        content: [
          {
            type: 'text',
            text: `## Goal\nWrite the marker for ${item}.\n\n## Progress\n### Done\n- [x] wrote the marker`,
          },
        ],
      };
    }
    const wrote = JSON.stringify(body.messages).includes('"tool_result"');
    await opts.hold?.(item, wrote ? 1 : 0);
    const content: FakeBlock[] = wrote
      ? [{ type: 'text', text: `done ${item}${opts.pad ? ` ${'x'.repeat(opts.pad)}` : ''}` }]
      : [{ type: 'tool_use', name: 'bash', input: { command: `printf 'marker-${item}\\n' >> ${item}.txt` } }];
    return { kind: 'message', content, chunkSize: 64 };
  };
}

const recipe = (items: string[]) => `name: disk
provider: anthropic
model: claude-haiku-4-5
concurrency: ${items.length}
agents:
  writer: { tools: [bash] }
tasks:
  - id: write
    for_each: [${items.join(', ')}]
    agent: writer
    prompt: "Write the marker for \${{ item }}"
`;

function runDirOf(runs: string): string | undefined {
  if (!existsSync(runs)) return undefined;
  const name = readdirSync(runs).find((n) => existsSync(join(runs, n, 'run.jsonl')));
  return name ? join(runs, name) : undefined;
}

/**
 * Every JSONL file under `dir`: complete lines all parse, except lines that were a torn last
 * line at an earlier check (a later writer starts a fresh line after them; readers skip them).
 */
function readableLines(
  dir: string,
  tornBefore: ReadonlySet<string> = new Set(),
): { files: number; lines: number; torn: Set<string> } {
  let lines = 0;
  const torn = new Set<string>();
  const files = filesUnder(dir).filter((f) => f.endsWith('.jsonl') || f.endsWith('.jsonl.before'));
  for (const f of files) {
    const c = checkJsonl(f);
    const bad = c.bad.filter((b) => ![...tornBefore].some((t) => t.startsWith(b.text.slice(0, 200))));
    expect(bad, `${f} has unreadable lines ${JSON.stringify(bad).slice(0, 600)}`).toEqual([]);
    lines += c.lines.length;
    if (c.torn !== undefined) torn.add(c.torn);
  }
  return { files: files.length, lines, torn };
}

/** Only a guard against a hang (each test's own limit is 120 s): three CLIs start at once on a busy machine. */
const HANG_GUARD_MS = 110_000;

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+[:(]\d+/);

describe('disk faults (real CLI)', { timeout: 120_000, concurrent: true }, () => {
  it('a run log that cannot be written stops the run with the file and the OS error; fixed, it resumes', async () => {
    // Both answers wait until the log is swapped for a folder.
    const answers = gate();
    const server = await startFakeAnthropic({
      respond: responder({ hold: (_i, turn) => (turn === 1 ? answers.wait() : undefined) }),
    });
    try {
      const dir = tempProject({ 'recipe.yaml': recipe(['a', 'b']) });
      const runs = join(dir, 'runs');
      const env = { ANTHROPIC_API_KEY: 'sk-ant-disk', ANTHROPIC_BASE_URL: server.url, ORCHESTRATE_RETRY_BASE_MS: '20' };
      const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], env);
      const done = exited(child);
      await until(
        () => server.requests.filter((q) => JSON.stringify(q.body.messages).includes('"tool_result"')).length >= 2,
        'both agents waiting for their answer',
        HANG_GUARD_MS,
      );
      const runDir = runDirOf(runs)!;
      const log = join(runDir, 'run.jsonl');
      // Swap the log for a folder: the next append fails with EISDIR, for root too.
      renameSync(log, `${log}.before`);
      mkdirSync(log);
      const t0 = Date.now();
      answers.open();
      const r = await done;
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(log);
      expect(r.stderr).toMatch(/EISDIR/);
      expect(r.stderr).toMatch(/orchestrate resume/);
      noStack(r.stderr);
      const stopMs = Date.now() - t0;
      const intact = readableLines(runDir);

      // Fixed: the log is back, and the run resumes to the end.
      rmSync(log, { recursive: true });
      renameSync(`${log}.before`, log);
      const again = await exited(spawnCli(['resume', runDir], env));
      expect(again.code, again.stderr).toBe(0);
      expect(
        ofType(events(runDir), 'instance_done')
          .map((e) => e.key)
          .sort(),
      ).toEqual(['write.a', 'write.b']);
      printSummary('disk-faults/run-log', {
        faults_injected: 1,
        exit_code: r.code ?? -1,
        stop_ms: stopMs,
        files_checked: intact.files,
        lines_intact: intact.lines,
        entries_lost: 0,
        resumed: 1,
      });
    } finally {
      answers.open();
      await server.close();
    }
  });

  it('a session file that cannot be written fails its instance naming the file; the others and every log stay intact', async () => {
    // b's first reply waits until its session file is made unwritable.
    const bFirst = gate();
    const server = await startFakeAnthropic({
      respond: responder({ hold: (item, turn) => (item === 'b' && turn === 0 ? bFirst.wait() : undefined) }),
    });
    try {
      const dir = tempProject({ 'recipe.yaml': recipe(['a', 'b']) });
      const runs = join(dir, 'runs');
      const child = spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], {
        ANTHROPIC_API_KEY: 'sk-ant-disk',
        ANTHROPIC_BASE_URL: server.url,
      });
      const done = exited(child);
      // b's session is open (its first request is out) but not written: that happens when the held reply is complete.
      await until(
        () => server.requests.some((q) => /marker for b\b/.test(conversationKey(q.body))),
        "b's first request",
        HANG_GUARD_MS,
      );
      const session = join(runDirOf(runs)!, 'sessions', 'write.b.jsonl');
      mkdirSync(session);
      bFirst.open();
      const r = await done;
      expect(r.code).toBe(1);
      expect(r.stderr + r.stdout).toContain(session);
      expect(r.stderr + r.stdout).toMatch(/EISDIR/);
      noStack(r.stderr);
      const runDir = runDirOf(runs)!;
      const failed = ofType(events(runDir), 'instance_failed');
      expect(failed.map((e) => [e.key, e.failure])).toEqual([['write.b', 'error']]);
      expect(failed[0]!.error).toContain(session);
      expect(ofType(events(runDir), 'instance_done').map((e) => e.key)).toEqual(['write.a']);
      // b's tool call was never recorded, so it never ran.
      expect(existsSync(join(dir, 'b.txt'))).toBe(false);
      const intact = readableLines(runDir);
      printSummary('disk-faults/session', {
        faults_injected: 1,
        exit_code: r.code ?? -1,
        files_checked: intact.files,
        lines_intact: intact.lines,
        unrecorded_tool_runs: 0,
        entries_lost: 0,
      });
    } finally {
      bFirst.open();
      await server.close();
    }
  });

  it('a full disk (64 KB tmpfs) stops the run cleanly; with more room the run resumes to the end', async (ctx) => {
    const dir = tempProject({ 'recipe.yaml': recipe(['a', 'b', 'c', 'd']) });
    const mnt = join(dir, 'small');
    mkdirSync(mnt);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]);
    if (mounted.status !== 0) {
      console.log(
        `[reliability] disk-faults/full-disk: skipped (cannot mount a tmpfs here: ${mounted.stderr.toString().trim() || 'not permitted'})`,
      );
      ctx.skip();
      return;
    }
    const server = await startFakeAnthropic({ respond: responder({ pad: 12_000 }) });
    try {
      const runs = join(mnt, 'runs');
      const env = { ANTHROPIC_API_KEY: 'sk-ant-disk', ANTHROPIC_BASE_URL: server.url };
      const r = await exited(spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], env));
      expect(r.code).toBe(1);
      expect(r.stderr + r.stdout).toMatch(/ENOSPC|no space left/i);
      noStack(r.stderr);
      const runDir = runDirOf(runs)!;
      const intact = readableLines(runDir);
      expect(filesUnder(runDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);

      // More room: the same run resumes and finishes.
      expect(spawnSync('mount', ['-o', 'remount,size=8m', mnt]).status).toBe(0);
      const again = await exited(spawnCli(['resume', runDir], env));
      expect(again.code, again.stderr).toBe(0);
      expect(
        ofType(events(runDir), 'instance_done')
          .map((e) => e.key)
          .sort(),
      ).toEqual(['write.a', 'write.b', 'write.c', 'write.d']);
      readableLines(runDir, intact.torn);
      printSummary('disk-faults/full-disk', {
        faults_injected: 1,
        exit_code: r.code ?? -1,
        files_checked: intact.files,
        lines_intact: intact.lines,
        torn_lines: intact.torn.size,
        entries_lost: 0,
        resumed: 1,
      });
    } finally {
      await server.close();
      spawnSync('umount', ['-l', mnt]);
    }
  });
});
