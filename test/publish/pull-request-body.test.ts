// A pull request body tells a reviewer what the agent did (the Goal, Progress and Files of its
// handoff summary) and carries none of the product's instructions to the model: the handoff
// focus the end-of-instance compaction is asked with, the offline summary's "Focus of this
// summary", and the notes an agent keeps for itself (next steps, critical context). A campaign
// run offline (scripted agent, bare file:// remotes), then `publish --apply` against the strict
// fake GitHub API (the real Octokit client on the wire).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDOFF_FOCUS } from '../../src/orchestrator/schedule/handoff-focus.js';
import { pullRequestSummary } from '../../src/publish/pull-request-summary.js';
import { readChangesets } from '../../src/run/changesets.js';
import { runCli } from '../cli/run-cli.js';
import { cleanupTempDirs } from '../orchestrator/helpers/run-fixtures.js';
import { REPOS, TOKEN, project, recipe, runCampaign } from './campaign-fixtures.js';
import { type FakeGitHub, fakeGitHub } from './fake-forges.js';

/** Text of the product's own instructions that must never reach a reader of the body. */
const INSTRUCTIONS = [
  HANDOFF_FOCUS,
  'handoff to the coordinator',
  'Focus of this summary',
  'Additional focus',
  'do not redo what is listed under Done',
];

describe('pull request bodies', () => {
  let gh: FakeGitHub;
  let dir: string;

  beforeAll(async () => {
    // The fake maps acme/<repo> to the bare remote the branches are pushed to (filled in once it exists).
    const repos: Record<string, string> = {};
    gh = await fakeGitHub(TOKEN, repos);
    dir = project('github', () => gh.url).dir;
    for (const r of REPOS) repos[`acme/${r}`] = join(dir, 'remotes', `${r}.git`);
    // Without the fixture's labels and reviewers: this test reads bodies, and each of them is one
    // more write the GitHub client spaces out (1 s after the last write, 3 s for a review request).
    const spec = recipe(dir, 'github', gh.url, 'Change the greeting of ${{ repo.name }}');
    const bare = spec.replace(/\n {2}labels: \[campaign\]\n {2}reviewers: \[octocat\]/, '');
    expect(bare).not.toBe(spec);
    writeFileSync(join(dir, 'recipe.yaml'), bare);
  });
  afterAll(async () => {
    await gh?.close();
    cleanupTempDirs();
  });

  it('hold the Goal, Progress and Files of the summary and none of the instructions to the model', async () => {
    const runDir = await runCampaign(dir);
    const r = await runCli(['publish', runDir, '--apply', '--run-dir', join(dir, 'runs')], {
      cwd: dir,
      env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(gh.pulls.map((p) => p.repo)).toEqual(['acme/repo-a', 'acme/repo-b']);
    const body = gh.pulls[0]!.body;
    expect(body).toMatch(/^## Goal\nChange repo-a\n\n## Progress\n### Done\n- \[x\] edit greet\.txt\n/);
    expect(body).toContain('## Files\n- `greet.txt`');
    expect(body).toContain('1 file changed, 1 insertion(+), 1 deletion(-)');
    for (const text of INSTRUCTIONS) expect(body).not.toContain(text);
    for (const heading of ['Constraints', 'Next Steps', 'Critical Context', '<modified-files>'])
      expect(body).not.toContain(heading);
    // The preview the run wrote says the same; the summary itself holds no instruction either.
    const c = readChangesets(runDir)!.changesets[0]!;
    expect(c.body).toBe(body);
    for (const text of INSTRUCTIONS.slice(0, 4)) expect(c.summary).not.toContain(text);
  });
});

describe('pullRequestSummary', () => {
  // A model-written summary that repeated its focus, as real models sometimes do.
  const written = [
    '## Goal',
    'Replace log() with logger.info() in src/app.ts.',
    '',
    '## Constraints & Preferences',
    `- Additional focus: ${HANDOFF_FOCUS}`,
    '',
    '## Progress',
    '### Done',
    '- [x] Replaced 3 calls in src/app.ts',
    `- [x] ${HANDOFF_FOCUS}`,
    '',
    '### In Progress',
    '- [ ] Updating the tests',
    '',
    '### Blocked',
    '(none)',
    '',
    '## Key Decisions',
    '- **Keep the log level**: callers rely on it',
    '',
    '## Next Steps',
    '1. Run the tests',
    '',
    '## Critical Context',
    '- The logger is created in src/log.ts',
    '',
    '<read-files>',
    'src/log.ts',
    '</read-files>',
    '',
    '<modified-files>',
    'src/app.ts',
    '</modified-files>',
  ].join('\n');

  it('keeps Goal, Progress and the modified files; drops notes and repeated instructions', () => {
    expect(pullRequestSummary(written)).toBe(
      [
        '## Goal',
        'Replace log() with logger.info() in src/app.ts.',
        '',
        '## Progress',
        '### Done',
        '- [x] Replaced 3 calls in src/app.ts',
        '### In Progress',
        '- [ ] Updating the tests',
        '',
        '## Files',
        '- `src/app.ts`',
      ].join('\n'),
    );
  });

  it('an offline summary of an older run loses its "Focus of this summary" line with its section', () => {
    const older = written.replace(`- Additional focus: ${HANDOFF_FOCUS}`, `- Focus of this summary: ${HANDOFF_FOCUS}`);
    expect(pullRequestSummary(older)).not.toContain('Focus');
  });

  it('a summary without sections stays as written, less the instruction lines', () => {
    expect(pullRequestSummary(`Changed the greeting.\nAdditional focus: ${HANDOFF_FOCUS}\n`)).toBe(
      'Changed the greeting.',
    );
  });
});
