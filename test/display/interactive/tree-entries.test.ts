import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { treeRows, userRowsOnPath } from '../../../src/display/interactive/tree-entries.js';
import { createAgentSession } from '../../../src/runtime/index.js';
import { QUIET_SESSION } from './helpers/quiet-session.js';

describe('tree rows (/tree and /fork pickers)', () => {
  it('lists prompts and replies in tree order, indents branches, marks the current path and leaf', async () => {
    const session = await createAgentSession({
      cwd: mkdtempSync(join(tmpdir(), 'tree-rows-')),
      inMemory: true,
      provider: 'scripted',
      script: [{ text: 'A1' }, { text: 'A2' }, { text: 'A3' }],
      tools: [],
      ...QUIET_SESSION,
    });
    await session.prompt('one');
    await session.prompt('two');
    const two = session.store
      .getPath()
      .find(
        (e) => e.type === 'message' && e.message.role === 'user' && JSON.stringify(e.message.content).includes('two'),
      )!;
    await session.navigate(two.id); // back to before "two"
    await session.prompt('other');
    const rows = treeRows(session.store).map(
      (r) => `${'  '.repeat(r.depth)}${r.onPath ? '*' : ' '} ${r.text}${r.isLeaf ? ' (leaf)' : ''}`,
    );
    expect(rows).toEqual([
      '* user: one',
      '* assistant: A1',
      '    user: two',
      '    assistant: A2',
      '  * user: other',
      '  * assistant: A2 (leaf)',
    ]);
    expect(userRowsOnPath(session.store).map((r) => r.text)).toEqual(['user: one', 'user: other']);
    await session.dispose();
  });
});
