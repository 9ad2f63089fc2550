// Attack: secrets in the home folder that no hide list names (~/.config/anthropic, a token in
// ~/.gitconfig, ~/.bash_history, ~/.claude) read from a sandboxed command. The sandbox's home is
// an allowlist: an empty private folder with only a .gitconfig holding the user's git identity.
// git status/diff/commit inside the sandbox keep working, with the workspace outside the home
// and inside it. The fake home lives in /var/tmp: under /tmp the sandbox's own /tmp would hide it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTool } from '../../src/tools/bash.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { runTool, tempDir, textOf } from '../tools/harness.js';

const DECOYS = ['sk-ant-decoy-config-0001', 'ghp_decoytoken0002', 'history-decoy-0003', 'claude-decoy-0004'];
let home = '';
const savedHome = process.env.HOME;

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

function repo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  writeFileSync(join(dir, 'a.txt'), 'one\n');
  git(dir, 'add', 'a.txt');
  git(dir, 'commit', '-qm', 'first');
  return dir;
}

describe.skipIf(skipWithoutBwrap('home secrets'))('the sandbox home is an allowlist', () => {
  beforeAll(() => {
    home = mkdtempSync('/var/tmp/orchestrate-fake-home-');
    mkdirSync(join(home, '.config', 'anthropic'), { recursive: true });
    writeFileSync(join(home, '.config', 'anthropic', 'api_key'), `${DECOYS[0]}\n`);
    writeFileSync(
      join(home, '.gitconfig'),
      `[user]\n\tname = Test User\n\temail = test@example.invalid\n[http]\n\textraheader = Authorization: token ${DECOYS[1]}\n[credential]\n\thelper = store\n`,
    );
    writeFileSync(join(home, '.bash_history'), `export TOKEN=${DECOYS[2]}\n`);
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', '.credentials.json'), `{"token":"${DECOYS[3]}"}\n`);
    process.env.HOME = home; // what the sandbox reads the home (and the git identity) from
  });
  afterAll(() => {
    process.env.HOME = savedHome;
    rmSync(home, { recursive: true, force: true });
  });

  const attack =
    'cat ~/.config/anthropic/api_key ~/.bash_history ~/.claude/.credentials.json ~/.gitconfig 2>&1; ' +
    `cat ${'$HOME'}/.config/anthropic/api_key 2>&1; git config --global --list 2>&1; ls -A ~; true`;

  for (const where of ['outside the home', 'inside the home'] as const) {
    it(`hides every secret of the home and keeps git working (workspace ${where})`, async () => {
      const ws = repo(where === 'inside the home' ? join(home, 'project') : join(tempDir('home-ws-'), 'project'));
      const bash = createBashTool({ cwd: ws });
      try {
        const seen = textOf(await runTool(bash, { command: attack }));
        for (const decoy of DECOYS) expect(seen).not.toContain(decoy);
        expect(seen).toContain('user.name=Test User'); // the identity, and only it, came in

        const out = textOf(
          await runTool(bash, {
            command:
              'echo two >> a.txt && git status --short && git diff --stat && git commit -qam second && git log --format=%an:%s',
          }),
        );
        expect(out).toContain(' M a.txt');
        expect(out).toContain('1 file changed');
        expect(out).toContain('Test User:second');
      } finally {
        bash.dispose();
      }
    });
  }
});
