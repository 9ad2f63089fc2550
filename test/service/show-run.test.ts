// service/show-run.ts on a real run folder (run.jsonl and session files on disk): the body
// `orchestrate show` and the MCP server's run_status / show_instance share, as data.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runStatus, showInstance } from '../../src/service/show-run.js';
import { writeSyntheticRun } from '../display/fixtures/synthetic-run.js';

function runDir(): string {
  const runs = join(mkdtempSync(join(tmpdir(), 'service-show-')), 'runs');
  return writeSyntheticRun(runs, '20260101-120000-abcd').store.dir;
}

describe('service: show a run', () => {
  it('folds the run into its JSON with the instances counted per status', () => {
    const status = runStatus(runDir());
    expect(status).toMatchObject({ runId: '20260101-120000-abcd', status: 'failed' });
    expect(status.counts).toMatchObject({ failed: 1 });
  });

  it('finds an instance by a unique prefix and reads its conversation from its session file', () => {
    const shown = showInstance(runDir(), 'apply.repo-b');
    expect(shown.ok).toBe(true);
    if (!shown.ok) return;
    expect(shown.instance.key).toBe('apply.repo-b');
    expect(shown.conversation.items.length).toBeGreaterThan(0);
  });

  it('says why as data when a name matches several instances or none, with the instances to choose from', () => {
    const dir = runDir();
    const several = showInstance(dir, 'apply');
    expect(several).toMatchObject({ ok: false, code: 'ambiguous' });
    const none = showInstance(dir, 'nope');
    expect(none).toMatchObject({
      ok: false,
      code: 'unknown_instance',
      message: 'no instance "nope" in run 20260101-120000-abcd',
    });
    if (none.ok) return;
    expect(none.instances).toEqual(expect.arrayContaining(['apply.repo-a', 'apply.repo-b', 'apply.repo-c']));
  });
});
