// A run followed from another process (what `orchestrate serve` holds for a run): a real CLI run
// on the scripted provider, a writer whose reply streams slowly and then waits in bash for a file.
// The feed folds the log as it grows into the same state as folding the whole log at once; while
// the agent writes, `writing` gives the reply so far (a peek over the control socket); its
// conversation comes from the session file; once the run ended, nothing is written and the feed
// says why acting cannot work. Waits are on the log, the session file and peek replies.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { foldEvents } from '../../src/run/run-fold.js';
import { readRunLog } from '../../src/run/run-store.js';
import { RunFeed } from '../../src/service/run-feed.js';
import { runFolderName } from '../helpers/run-folder.js';
import { exited, spawnCli, until } from '../reliability/helpers/reliability-fixtures.js';

const dirs: string[] = [];
const releases: string[] = [];
afterAll(() => {
  for (const r of releases) writeFileSync(r, 'x');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** 400 words of 8 characters, streamed 24 characters every 60 ms: about 8 s of writing. */
const REPLY = Array.from({ length: 400 }, (_, i) => `w${String(i).padStart(4, '0')}`).join(' ');

describe('RunFeed', { timeout: 120_000 }, () => {
  it('folds a live run as it grows, peeks the reply being written, reads the conversation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-feed-'));
    dirs.push(dir);
    const release = join(dir, 'release');
    releases.push(release);
    const wait = `while [ ! -f '${release}' ]; do sleep 0.05; done; echo released`;
    writeFileSync(
      join(dir, 'script.yaml'),
      `turns:
  - stream_delay_ms: 60
    text: ${JSON.stringify(REPLY)}
    tools: [{ name: bash, args: { command: ${JSON.stringify(wait)} } }]
  - text: "finished"
`,
    );
    writeFileSync(
      join(dir, 'recipe.yaml'),
      `name: feed
provider: scripted
script: script.yaml
agents:
  w: { tools: [bash] }
tasks:
  - id: writer
    agent: w
    prompt: "WRITE then wait"
`,
    );
    const runs = join(dir, 'runs');
    const done = exited(spawnCli([join(dir, 'recipe.yaml'), '--run-dir', runs], { NO_COLOR: '1' }));
    await until(() => runFolderName(runs) !== undefined, 'the run folder');
    const runDir = join(runs, runFolderName(runs)!);
    const feed = new RunFeed(runDir);
    const writer = () => [...feed.state.instances.values()].find((i) => i.key === 'writer');
    await until(() => {
      feed.poll();
      return writer()?.status === 'running' && feed.readOnly() === undefined;
    }, 'the writer at work');

    // The reply so far, from the coordinator: a beginning of the whole reply, never all of it.
    let partial = '';
    for (let i = 0; partial === '' && i < 2_000; i++) {
      feed.poll();
      partial = await feed.writing(writer()!);
    }
    expect(partial.length).toBeGreaterThan(0);
    expect(REPLY.startsWith(partial)).toBe(true);

    // The reply ends up in the session file; the agent waits in bash.
    await until(
      () => feed.conversation(writer()!).items.some((i) => i.kind === 'assistant' && i.text === REPLY),
      'the reply in the session',
    );
    writeFileSync(release, 'x');
    const ended = await done;
    expect(ended.code, ended.stderr).toBe(0);
    feed.poll();
    expect(feed.state.status).toBe('succeeded');
    // One fold: following the log as it grew gives what folding it whole gives.
    const whole = foldEvents(readRunLog(join(runDir, 'run.jsonl')).events);
    expect(feed.state.eventCount).toBe(whole.eventCount);
    const statuses = (m: typeof whole.instances) => [...m.values()].map((i) => [i.key, i.status, i.attempts.length]);
    expect(statuses(feed.state.instances)).toEqual(statuses(whole.instances));
    expect(await feed.writing(writer()!)).toBe('');
    expect(feed.readOnly()).toMatch(/the run has ended \(succeeded\)/);
    expect(feed.conversation(writer()!).items.some((i) => i.kind === 'assistant' && i.text === 'finished')).toBe(true);
  });
});
