// `orchestrate show`'s text (run-details-text.ts): its header counts every instance once, those
// waiting at an approval gate among the unfinished.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatRunDetails } from '../../src/display/run-details-text.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import type { RunEvent } from '../../src/run/run-events.js';
import { RunStore } from '../../src/run/run-store.js';
import { syntheticSteps } from './fixtures/synthetic-run.js';

describe('show', () => {
  it('an instance waiting at its approval gate counts as unfinished in the header', () => {
    const store = RunStore.create(mkdtempSync(join(tmpdir(), 'run-details-')), 'run-1');
    // The synthetic run up to its first instance queued, then its gate.
    for (const step of syntheticSteps()) {
      if ('phase' in step) continue;
      store.append(step.event);
      if (step.event.type === 'instance_queued') break;
    }
    const ref = syntheticSteps().find((s) => !('phase' in s) && s.event.type === 'instance_queued');
    const { task, key } = (ref as { event: { task: string; key: string } }).event;
    store.append({
      type: 'approval_requested',
      task,
      key,
      prompt: 'Go on?',
      onTimeout: 'reject',
    } as unknown as RunEvent);
    const text = formatRunDetails(loadRunFolder(store.dir));
    expect(text).toMatch(/instances: 2 \(0 done, 0 failed, 0 skipped, 2 unfinished\)/);
  });
});
