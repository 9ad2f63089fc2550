// Issue 26: an agent configures the repository from its sandboxed bash (`git config
// core.fsmonitor ...`, a filter driver), then the coordinator snapshots and diffs the workspace:
// nothing the agent configured may run outside the sandbox or see the decoy key. Next to it, the
// legitimate use: git status, diff and commit inside the agent's sandbox keep working.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffSince, snapshot } from '../../src/orchestrator/workspace/git-workspace.js';
import { createBashTool } from '../../src/tools/bash.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { DECOY_KEY, cleanup, filesHoldingDecoy, git, repoWith, tempDir, withDecoyKey } from './git-fixtures.js';

afterAll(() => cleanup());

async function bash(cwd: string, command: string): Promise<string> {
  const tool = createBashTool({ cwd });
  try {
    const r = await tool.execute('t', { command }, new AbortController().signal, () => {});
    return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  } finally {
    tool.dispose();
  }
}

describe.skipIf(skipWithoutBwrap('git in the agent sandbox'))(
  "git configured from the agent's sandboxed bash",
  { timeout: 60_000 },
  () => {
    it('git status, diff and commit work inside the sandbox', async () => {
      const repo = repoWith(tempDir(), { 'a.txt': 'one\n' });
      const out = await withDecoyKey(() =>
        bash(
          repo,
          'echo two > a.txt && git status --short && git diff --stat && git -c user.name=a -c user.email=a@b commit -qam "two" && git log --oneline | wc -l && echo "key=${ANTHROPIC_API_KEY:-none}"',
        ),
      );
      expect(out).toContain(' M a.txt');
      expect(out).toContain('1 file changed');
      expect(out).toMatch(/^2$/m);
      expect(out).toContain('key=none');
      expect(git(repo, 'log', '--format=%s', '-1').trim()).toBe('two');
    });

    it('`git config core.fsmonitor` and a filter driver set by the agent run nothing when the coordinator snapshots and diffs', async () => {
      const repo = repoWith(tempDir(), { 'src/a.txt': 'one\n' });
      const markerDir = tempDir('git-marker-');
      const marker = join(markerDir, 'ran');
      const base = await snapshot(repo);
      // The agent can only write its workspace: the script lives there, the marker path is where
      // an unconfined process (the coordinator's git) could write.
      const out = await withDecoyKey(() =>
        bash(
          repo,
          [
            `printf 'env > ${marker}\\ncat\\n' > .git/evil.sh`,
            `git config core.fsmonitor "sh $PWD/.git/evil.sh"`,
            `git config filter.evil.clean "sh $PWD/.git/evil.sh"`,
            `git config filter.evil.required true`,
            `echo '*.txt filter=evil' > .gitattributes`,
            'echo two > src/a.txt',
            'git config --get core.fsmonitor',
          ].join(' && '),
        ),
      );
      expect(out).toContain('evil.sh');
      // In its own sandbox the agent's config does work (and cannot write the marker).
      expect(existsSync(marker)).toBe(false);
      const snap = await withDecoyKey(() => snapshot(repo));
      const d = await withDecoyKey(() => diffSince(repo, base!.tree));
      expect(existsSync(marker)).toBe(false);
      expect(snap?.tree).toMatch(/^[0-9a-f]{40}$/);
      expect(d?.files.sort()).toEqual(['.gitattributes', 'src/a.txt']);
      expect(d?.patch).toContain('+two');
      expect(filesHoldingDecoy(repo)).toEqual([]);
      expect(filesHoldingDecoy(markerDir)).toEqual([]);
      expect(DECOY_KEY).toMatch(/^sk-ant-decoy-/);
    });
  },
);
