import { describe, expect, it } from 'vitest';
import { renderNeedsContext, renderPlan, type PlanInput } from '../../src/run/merge-summaries.js';
import { parseSummary } from '../../src/session/parse-summary.js';

const summaryA = parseSummary(`## Goal
Rename log() in alpha

## Progress
### Done
- [x] Replaced log() in src/index.ts
### In Progress
- [ ] Update docs
### Blocked
- npm test fails: missing fixture

## Key Decisions
- **Keep log as alias**: other packages import it

## Next Steps
1. Add the fixture

<modified-files>
repos/alpha/src/index.ts
repos/shared/util.ts
</modified-files>`);

function input(): PlanInput {
  return {
    name: 'rename-logger',
    description: 'Rename log() to logger.info() everywhere.',
    tasks: [
      {
        id: 'plan',
        needs: [],
        instances: [
          {
            id: 'plan',
            status: 'done',
            modifiedFiles: [],
            readFiles: ['repos/alpha/src/index.ts'],
            outputPreview: '{"subtasks":[]}',
          },
        ],
      },
      {
        id: 'apply',
        needs: ['plan'],
        instances: [
          {
            id: 'apply.alpha',
            status: 'done',
            summary: summaryA,
            modifiedFiles: summaryA.modifiedFiles,
            readFiles: [],
            patchFile: 'patches/apply.alpha.diff',
          },
          {
            id: 'apply.beta',
            status: 'failed',
            failure: 'verify_failed',
            error: 'npm test exited 1',
            modifiedFiles: ['repos/shared/util.ts'],
            readFiles: [],
          },
          { id: 'apply.gamma', status: 'pending', modifiedFiles: [], readFiles: [] },
        ],
      },
    ],
  };
}

describe('merged plan', () => {
  it('lists each instance with its progress, decisions with their source, files with owners, and next steps', () => {
    const md = renderPlan(input());
    expect(md).toMatch(/^# Plan: rename-logger/);
    expect(md).toMatch(/#### apply\.alpha — done\n[\s\S]*- Done:\n {2}- Replaced log\(\) in src\/index\.ts/);
    expect(md).toMatch(/- In Progress:\n {2}- Update docs/);
    expect(md).toMatch(/#### apply\.beta — failed \[verify_failed\]\n- Error: npm test exited 1/);
    expect(md).not.toMatch(/apply\.gamma —/);
    expect(md).toMatch(/- \*\*Keep log as alias\*\*: other packages import it _\(apply\.alpha\)_/);
    expect(md).toMatch(
      /### Modified\n\n- repos\/alpha\/src\/index\.ts — apply\.alpha\n- repos\/shared\/util\.ts — apply\.alpha, apply\.beta/,
    );
    expect(md).toMatch(/1\. \(apply\.alpha\) Add the fixture/);
  });

  it('reports the same file modified by two instances, blocked items and failures as conflicts', () => {
    const md = renderPlan(input());
    const conflicts = md.slice(md.indexOf('## Conflicts'), md.indexOf('## Next Steps'));
    expect(conflicts).toMatch(/repos\/shared\/util\.ts was modified by apply\.alpha and apply\.beta/);
    expect(conflicts).toMatch(/Blocked in apply\.alpha: npm test fails: missing fixture/);
    expect(conflicts).toMatch(/apply\.beta failed \(verify_failed\)/);
  });

  it('is deterministic for the same input', () => {
    expect(renderPlan(input())).toBe(renderPlan(input()));
  });

  it('the context for a dependent task covers only the tasks it needs', () => {
    const ctx = renderNeedsContext(input(), ['plan']);
    expect(ctx).toMatch(/^<merged-plan tasks="plan">/);
    expect(ctx).toMatch(/### plan/);
    expect(ctx).not.toMatch(/apply\.alpha/);
    expect(renderNeedsContext(input(), [])).toBe('');
  });
});
