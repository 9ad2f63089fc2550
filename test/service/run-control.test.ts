// service/run-control.ts and service/approval.ts against a real run folder nobody holds: the
// reasons come back as codes (what `orchestrate cancel` turns into exit 2, and the MCP tools into
// an error), not as prose a caller has to match.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deliverApproval } from '../../src/service/approval.js';
import { controlBy, deliverRunControl } from '../../src/service/run-control.js';
import { writeSyntheticRun } from '../display/fixtures/synthetic-run.js';

function runDir(): string {
  const runs = join(mkdtempSync(join(tmpdir(), 'service-control-')), 'runs');
  return writeSyntheticRun(runs, '20260101-120000-abcd').store.dir;
}

describe('service: run control', () => {
  it('a finished run is not_live, with when it finished', async () => {
    const outcome = await deliverRunControl(runDir(), 'cancel', { action: 'cancel_run', by: 'test' });
    expect(outcome).toMatchObject({ ok: false, code: 'not_live' });
    if (outcome.ok) return;
    expect(outcome.message).toMatch(
      /^run 20260101-120000-abcd is not running \(finished failed at .*\); nothing to cancel$/,
    );
  });

  it('an approval for a run nobody holds goes to its log under the lease, and is refused with a code when the task has no gate', async () => {
    const d = await deliverApproval(runDir(), { action: 'approve', task: 'apply', by: 'test', via: 'cli' });
    expect(d.ok).toBe(false);
    if (d.ok) return;
    expect(d.code).toBe('refused');
    expect(d.message).toBe('task apply has no approval gate (approve:)');
  });

  it('names who acts: the command, its pid and the user', () => {
    expect(controlBy('steer', { USER: 'ana' })).toMatch(new RegExp(`^steer \\(pid ${process.pid}(, user \\S+)?\\)$`));
  });
});
