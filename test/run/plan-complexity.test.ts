// plan.md of a wide fan-out is rendered in work linear in its instances: counted, not timed. With
// 2,000 instances that all read the same file and modify another, the list scans renderPlan does
// (every Array.prototype.includes / indexOf, weighed by the length it scans) stay linear; they
// were quadratic when each owner of a file was looked up in the file's list of owners.
import { afterEach, describe, expect, it } from 'vitest';
import { renderPlan, type PlanInstance } from '../../src/run/merge-summaries.js';

const original = { includes: Array.prototype.includes, indexOf: Array.prototype.indexOf };
afterEach(() => {
  Array.prototype.includes = original.includes;
  Array.prototype.indexOf = original.indexOf;
});

/** Renders the plan with list scans counted by the elements they could visit. */
function scannedWhileRendering(n: number): { scanned: number; plan: string } {
  const instances: PlanInstance[] = Array.from({ length: n }, (_, i) => ({
    id: `fan.a${i}`,
    status: 'done',
    modifiedFiles: ['CHANGELOG.md', `src/a${i}.ts`],
    readFiles: ['README.md', `src/a${i}.ts`],
  }));
  let scanned = 0;
  Array.prototype.includes = function (this: unknown[], ...args: [unknown, number?]) {
    scanned += this.length;
    return original.includes.apply(this, args);
  };
  Array.prototype.indexOf = function (this: unknown[], ...args: [unknown, number?]) {
    scanned += this.length;
    return original.indexOf.apply(this, args);
  };
  try {
    const plan = renderPlan({ name: 'fan', tasks: [{ id: 'fan', needs: [], instances }] });
    return { scanned, plan };
  } finally {
    Array.prototype.includes = original.includes;
    Array.prototype.indexOf = original.indexOf;
  }
}

describe('plan.md complexity', () => {
  it('names every owner of a shared file once, with list scans linear in the instances', () => {
    const { scanned, plan } = scannedWhileRendering(2_000);
    const readme = plan.split('\n').find((l) => l.startsWith('- README.md — '))!;
    expect(readme.split(', ')).toHaveLength(2_000);
    expect(plan).toContain('- CHANGELOG.md was modified by fan.a0 and fan.a1 and');
    expect(scanned).toBeLessThanOrEqual(10 * 2_000);
  });
});
