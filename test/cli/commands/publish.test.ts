// `orchestrate publish` on a campaign run whose instances changed no repository: every form of the
// command says there is nothing to publish (before, --apply and --follow-up printed nothing at
// all), and --dry-run, which belongs to the rebase preview, is refused with --follow-up (before,
// `--follow-up --dry-run --apply` ran the rounds and pushed).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from '../run-cli.js';

let cwd: string;
let runId: string;
beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'orch-cli-publish-'));
  writeFileSync(
    join(cwd, 'recipe.yaml'),
    `name: camp
provider: scripted
script: script.yaml
publish:
  forge: github
  remote: https://github.example/acme/x.git
  follow_up: { on: [ci_failed] }
tasks:
  - id: a
    prompt: "look, change nothing"
`,
  );
  writeFileSync(join(cwd, 'script.yaml'), 'turns:\n  - text: "nothing to change"\n');
  const run = await runCli(['recipe.yaml'], { cwd });
  expect(run.code).toBe(0);
  runId = readdirSync(join(cwd, '.orchestrate', 'runs'))[0]!;
}, 60_000);
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('orchestrate publish, a campaign run without changesets', () => {
  it.each([
    [[], 'No changesets: no instance with a publish: block changed a repository.\n'],
    [['--apply'], 'No changesets: no instance with a publish: block changed a repository. Nothing was pushed.\n'],
    [['--follow-up'], 'No changesets: no instance with a publish: block changed a repository. Nothing to follow up.\n'],
  ])('publish %j says there is nothing, exit 0', async (flags, says) => {
    const r = await runCli(['publish', runId, ...flags], { cwd });
    expect(r.stdout).toBe(says);
    expect(r.code).toBe(0);
  });

  it('--follow-up --dry-run (with or without --apply) is a usage error: --dry-run is the rebase preview', async () => {
    for (const flags of [['--dry-run'], ['--dry-run', '--apply']]) {
      const r = await runCli(['publish', runId, '--follow-up', ...flags], { cwd });
      expect(r.stderr).toContain(
        "orchestrate: --dry-run previews a rebase (--rebase); a follow-up's preview is --follow-up without --apply",
      );
      expect(r.stderr).toContain(`hint: orchestrate publish ${runId} --follow-up runs and pushes nothing`);
      expect(hasStackTrace(r.stderr)).toBe(false);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(2);
    }
  });
});
