// Publishing is a floor above the core (issue #43): the core offers extension points (an end gate,
// an end-of-run step, an offline answer for a gate: publish) and the layer that composes a run fills
// them, so no file of the orchestrator imports publishing (src/publish sits above it; check-layers
// also refuses it, this names the rule).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const CORE = join(ROOT, 'src', 'orchestrator');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sources(p);
    return d.name.endsWith('.ts') ? [p] : [];
  });
}

describe('the orchestrator core', () => {
  it('imports nothing of publishing', () => {
    const offenders: string[] = [];
    for (const file of sources(CORE)) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/^\s*(import|export)\b.*from\s+'[^']*\bpublish\//.test(line) || /import\(\s*'[^']*\bpublish\//.test(line))
          offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
