import { describe, expect, it } from 'vitest';
import { parseSummary, renderSummary, type StructuredSummary } from '../../src/session/parse-summary.js';

const full: StructuredSummary = {
  goal: 'Rename log() to logger.info() across the repo.',
  constraints: ['Keep the public API', 'No new dependencies'],
  done: ['Renamed calls in src/a.ts', 'Updated tests'],
  inProgress: ['src/b.ts still uses log()'],
  blocked: ['CI fails: `TypeError: logger is undefined`'],
  keyDecisions: [
    { decision: 'Use a shared logger module', rationale: 'one place to configure' },
    { decision: 'No shim', rationale: '' },
  ],
  nextSteps: ['Fix src/b.ts', 'Run the tests'],
  criticalContext: ['Logger lives in src/logger.ts'],
  readFiles: ['README.md', 'src/b.ts'],
  modifiedFiles: ['src/a.ts'],
};

describe('parseSummary', () => {
  it('round-trips a rendered summary', () => {
    expect(parseSummary(renderSummary(full))).toEqual(full);
    const withTurn = { ...full, turnContext: '## Original Request\nrefactor b' };
    expect(parseSummary(renderSummary(withTurn))).toEqual(withTurn);
  });

  it('renders the fixed headings in order', () => {
    const text = renderSummary(full);
    const headings = text.split('\n').filter((l) => l.startsWith('#'));
    expect(headings).toEqual([
      '## Goal',
      '## Constraints & Preferences',
      '## Progress',
      '### Done',
      '### In Progress',
      '### Blocked',
      '## Key Decisions',
      '## Next Steps',
      '## Critical Context',
    ]);
    expect(text).toContain('- [x] Updated tests');
    expect(text).toContain('1. Fix src/b.ts\n2. Run the tests');
    expect(text).toContain('- **Use a shared logger module**: one place to configure');
  });

  it('tolerates missing sections, other bullet styles, wrapped lines and (none)', () => {
    const text = [
      'Some preface the model added.',
      '## Goal',
      'Make the build green.',
      '## Constraints & Preferences',
      '(none)',
      '## Progress',
      '### Done',
      '* [x] fixed the import',
      '  that was wrong',
      '### Blocked',
      '- (none)',
      '## Key Decisions',
      '- **Pin vitest**: engines',
      '- Prefer tabs: team style',
      '## Next Steps',
      '1) run CI',
      '## Unknown Section',
      '- ignored',
    ].join('\n');
    const s = parseSummary(text);
    expect(s.goal).toBe('Make the build green.');
    expect(s.constraints).toEqual([]);
    expect(s.done).toEqual(['fixed the import that was wrong']);
    expect(s.inProgress).toEqual([]);
    expect(s.blocked).toEqual([]);
    expect(s.keyDecisions).toEqual([
      { decision: 'Pin vitest', rationale: 'engines' },
      { decision: 'Prefer tabs', rationale: 'team style' },
    ]);
    expect(s.nextSteps).toEqual(['run CI']);
    expect(s.criticalContext).toEqual([]);
    expect(s.readFiles).toEqual([]);
  });

  it('reads checkbox items placed directly under Progress by their box', () => {
    const s = parseSummary('## Progress\n- [x] a\n- [ ] b');
    expect(s.done).toEqual(['a']);
    expect(s.inProgress).toEqual(['b']);
  });

  it('an empty or free-form text gives an empty summary rather than an error', () => {
    expect(parseSummary('just prose')).toMatchObject({ goal: '', done: [], keyDecisions: [] });
  });
});
