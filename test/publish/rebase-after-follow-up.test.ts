// A `publish --rebase` after follow-up rounds redoes the change as it is on the branch: the patch
// it quotes to the agent is the instance's patch with each round's patch after it (a CI fix or a
// reviewer's change made by a round is not lost when the change is redone on a new base).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { changeOnBranch } from '../../src/publish/rebase-attempt.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('rebase after follow-up rounds', () => {
  it("quotes the instance's patch, then each round's patch in order", () => {
    const runDir = tempProject({});
    mkdirSync(join(runDir, 'patches'));
    writeFileSync(join(runDir, 'patches/change.a.diff'), '-hello\n+goodbye\n');
    writeFileSync(join(runDir, 'patches/change.a.followup-2.diff'), '-goodbye\n+farewell\n');
    const text = changeOnBranch(runDir, join(runDir, 'patches/change.a.diff'), {
      followUps: [
        { round: 1, reason: 'ci_failed', evidence: 'ci:abc', at: 1, patchFile: 'patches/change.a.followup-2.diff' },
      ],
    });
    expect(text).toBe('-hello\n+goodbye\n\n# then follow-up round 1 (ci failed), on top:\n-goodbye\n+farewell\n');
    expect(changeOnBranch(runDir, join(runDir, 'patches/change.a.diff'), {})).toBe('-hello\n+goodbye\n');
  });
});
