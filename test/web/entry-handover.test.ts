// cli/ and web/ are sibling entry points (rank 9): neither imports the other. `orchestrate serve`
// starts the web view in the same process through WEB_ENTRY, a path the layer checker does not
// see (it reads import statements). This keeps that hand-over honest: it is the only place cli/
// names web/, it names the real module with the signature the command expects, and web/ names
// nothing of cli/ or mcp/.
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEB_ENTRY, type WebEntry } from '../../src/cli/commands/serve.js';
import * as webServe from '../../src/web/serve.js';
import { namesOf, SRC, sourceFiles } from '../helpers/source-names.js';

describe('the cli -> web hand-over', () => {
  it('web/ names nothing of cli/ or mcp/', () => {
    const files = [...sourceFiles(join(SRC, 'web'))];
    expect(files.flatMap((f) => [...namesOf(f, 'cli'), ...namesOf(f, 'mcp')])).toEqual([]);
  });

  it('cli/ names web/ in one place only: WEB_ENTRY of commands/serve.ts', () => {
    const named = [...sourceFiles(join(SRC, 'cli'))].flatMap((f) => namesOf(f, 'web'));
    expect(named).toEqual([`cli/commands/serve.ts: ${WEB_ENTRY}`]);
  });

  it('WEB_ENTRY is src/web/serve, with the serveWeb the command calls', async () => {
    const target = resolve(SRC, 'cli/commands', WEB_ENTRY).replace(/\.js$/, '.ts');
    expect(relative(SRC, target)).toBe('web/serve.ts');
    // Type-checked (tsc): the real module satisfies what the command casts it to.
    const entry: WebEntry = webServe;
    expect(typeof entry.serveWeb).toBe('function');
    const loaded = (await import(target)) as WebEntry;
    expect(loaded.serveWeb).toBe(webServe.serveWeb);
  });
});
