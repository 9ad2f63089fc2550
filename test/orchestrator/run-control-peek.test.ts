// `peek` (issue 21): the text an agent is writing, read live through the run's control socket. A
// real coordinator, real worker threads and the scripted model writing its reply slowly
// (stream_delay_ms); a second agent is held inside a bash call that waits for a file the test
// creates. Every wait is on a peek reply, run.jsonl or a file, never on the clock.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRunControl } from '../../src/run/run-control-client.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { cleanupTempDirs, events, ofType, tempProject, until } from './helpers/run-fixtures.js';

const releases: string[] = [];
afterAll(() => {
  for (const r of releases) writeFileSync(r, 'x');
  cleanupTempDirs();
});

function logOf(runDir: string): RunEvent[] {
  return existsSync(join(runDir, 'run.jsonl')) ? events(runDir) : [];
}

/** 60 words, written 24 characters per chunk every 60 ms: about 1.2 s of writing. */
const REPLY = Array.from({ length: 60 }, (_, i) => `word${String(i).padStart(2, '0')}`).join(' ');

describe('peek: the text being written, live', () => {
  it('returns a growing prefix while the reply streams, then the whole message is in the session file; nothing reaches run.jsonl', async () => {
    const dir = tempProject({});
    const release = join(dir, 'release');
    releases.push(release);
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: peek
provider: scripted
script: script.yaml
concurrency: 2
agents:
  w: { tools: [bash] }
tasks:
  - id: writer
    agent: w
    prompt: "WRITE something"
  - id: held
    agent: w
    prompt: "HOLD on"
`,
    );
    writeFileSync(
      join(dir, 'script.yaml'),
      `conversations:
  - match: "WRITE"
    turns:
      - stream_delay_ms: 60
        text: ${JSON.stringify(REPLY)}
  - match: "HOLD"
    turns:
      - tools: [{ name: bash, args: { command: ${JSON.stringify(`while [ ! -f '${release}' ]; do sleep 0.05; done; echo released`)} } }]
      - text: "held finished"
`,
    );
    const runsDir = join(dir, 'runs');
    const runDir = join(runsDir, 'peek-run');
    const done = runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir, runId: 'peek-run' }).then((r) => {
      if (!r.ok) throw new Error(JSON.stringify(r));
      return r.outcome;
    });
    const control = connectRunControl(runDir);
    const sessionHasReply = () =>
      existsSync(join(runDir, 'sessions', 'writer.jsonl')) &&
      readFileSync(join(runDir, 'sessions', 'writer.jsonl'), 'utf8').includes(REPLY);

    // Peek until the reply is complete in the session file: every partial seen is a prefix of it.
    const seen: string[] = [];
    await until('the writer to finish its reply', async () => {
      const r = await control.send({ action: 'peek', instance: 'writer' });
      if (r.ok && r.message !== '' && r.message !== seen[seen.length - 1]) seen.push(r.message);
      return sessionHasReply();
    });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (const s of seen) expect(REPLY.startsWith(s)).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.length).toBeGreaterThan(seen[i - 1]!.length);
    // Seen while still being written, not only once complete.
    expect(seen[0]!.length).toBeLessThan(REPLY.length);
    // Complete: the session file has it, peek has nothing more to show.
    await until('peek to be empty after the reply', async () => {
      const r = await control.send({ action: 'peek', instance: 'writer' });
      return r.ok && r.message === '';
    });

    // An agent that is not writing (inside a tool call) has nothing to show.
    await until('held to be in its tool', () =>
      ofType(logOf(runDir), 'agent_event').some((e) => e.key === 'held' && e.event.type === 'tool_execution_start'),
    );
    expect(await control.send({ action: 'peek', instance: 'held' })).toEqual({ ok: true, message: '' });
    expect(await control.send({ action: 'peek', instance: 'hled' })).toEqual({
      ok: false,
      code: 'refused',
      error: expect.stringContaining('no instance "hled"; did you mean "held"?'),
    });
    writeFileSync(release, 'x');
    const out = await done;
    expect(out.status).toBe('succeeded');

    // A read is no action, and the streamed text is memory only.
    const log = events(runDir);
    expect(ofType(log, 'control')).toEqual([]);
    expect(log.filter((e) => e.type === 'agent_event' && e.event.type === 'message_update')).toEqual([]);
    const raw = readFileSync(join(runDir, 'run.jsonl'), 'utf8');
    for (const s of seen.filter((p) => p !== REPLY)) expect(raw).not.toContain(JSON.stringify(s));
    // The socket is gone with the run.
    expect((await control.send({ action: 'peek', instance: 'writer' })).ok).toBe(false);
  }, 120_000);
});
