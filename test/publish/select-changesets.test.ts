// Which changesets --only selects, and why a key selects none, as data (issue 43): the CLI and
// --rebase decide on `matches`, never on the wording of the problem.
import { describe, expect, it } from 'vitest';
import { selectChangesets, unmatchedText } from '../../src/publish/publish-run.js';
import type { Changeset } from '../../src/run/changesets.js';

const cs = (key: string, instance: string) => ({ key, instance }) as Changeset;
const all = [cs('change.repo-a', 'change[0]'), cs('change.repo-b', 'change[1]'), cs('docs.site', 'docs')];

describe('selectChangesets', () => {
  it('selects by key, instance key or unique prefix; an unknown or ambiguous key is data with its text', () => {
    const r = selectChangesets(all, ['change.repo-a', 'docs', 'change.repo', 'nope']);
    expect(r.selected.map((c) => c.key)).toEqual(['change.repo-a', 'docs.site']);
    expect(r.unknown).toEqual([
      { want: 'change.repo', matches: ['change.repo-a', 'change.repo-b'] },
      { want: 'nope', matches: [] },
    ]);
    expect(r.unknown.map(unmatchedText)).toEqual([
      '"change.repo" matches change.repo-a, change.repo-b',
      'no changeset "nope"',
    ]);
  });

  it('without --only everything is selected and nothing is unmatched', () => {
    expect(selectChangesets(all, undefined)).toEqual({ selected: all, unknown: [] });
  });
});
