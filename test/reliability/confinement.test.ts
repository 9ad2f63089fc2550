// Confinement: a corpus of path escapes (.., absolute paths, ~, symlinked files and folders,
// dangling links, a git worktree's way back to its main checkout) against read, write, edit, ls,
// grep and find: every one is refused with a clear error, nothing outside is read or changed.
// The bash deny list against the ways a model writes a command. And `writes:` globs end to end:
// an agent of a recipe run cannot modify files outside its task's scope.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnyAgentTool } from '../../src/agent/types.js';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { createBashTool } from '../../src/tools/bash.js';
import { createTool } from '../../src/tools/coding-tools.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { printSummary } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

const SECRET = 'TOP-SECRET-CONTENT';

interface Outcome {
  isError: boolean;
  text: string;
}

async function call(tool: AnyAgentTool, args: Record<string, unknown>): Promise<Outcome> {
  try {
    const params: unknown = tool.parameters.parse(args);
    const r = await tool.execute('c1', params, new AbortController().signal, () => undefined);
    return { isError: false, text: r.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
  } catch (err) {
    return { isError: true, text: err instanceof Error ? err.message : String(err) };
  }
}

/** A workspace next to an "outside" folder, with every kind of link out of it. */
function world() {
  const base = realpathSync(
    tempProject({
      'outside/secret.txt': `${SECRET}\n`,
      'outside/dir/x.txt': `${SECRET} in a folder\n`,
      'ws/inside.txt': 'hello inside\n',
      'ws/sub/deep.txt': 'deep\n',
    }),
  );
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'link-file'));
  symlinkSync(join(outside, 'dir'), join(ws, 'link-dir'));
  symlinkSync(join(outside, 'not-yet.txt'), join(ws, 'dangling'));
  symlinkSync('../../outside', join(ws, 'sub', 'up-link'));
  return { base, ws, outside };
}

function outsideSnapshot(outside: string): string {
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(d, e.name)) : [`${join(d, e.name)}=${readFileSync(join(d, e.name), 'utf8')}`],
    );
  return walk(outside).sort().join('\n');
}

describe('path escapes against every file tool', { timeout: 120_000 }, () => {
  it('every escape is refused with a message that names the workspace, and nothing outside is read or changed', async () => {
    const { ws, outside } = world();
    const before = outsideSnapshot(outside);
    const escapes = [
      '../outside/secret.txt',
      `${outside}/secret.txt`,
      'sub/../../outside/secret.txt',
      'inside.txt/../../outside/secret.txt',
      '@../outside/secret.txt',
      '../outside\u2000/secret.txt'.replace('\u2000', ''),
      'link-file',
      'link-dir/x.txt',
      'link-dir',
      'dangling',
      'sub/up-link/secret.txt',
      'sub/up-link',
      '/etc/passwd',
      '~/.bashrc',
      '..',
      '/',
    ];
    const tools = ['read', 'write', 'edit', 'ls', 'grep', 'find'].map(
      (name) => [name, createTool(name, { cwd: ws })] as const,
    );
    const argsFor = (tool: string, path: string): Record<string, unknown> => {
      switch (tool) {
        case 'write':
          return { path, content: 'pwned' };
        case 'edit':
          return { path, edits: [{ oldText: SECRET, newText: 'pwned' }] };
        case 'grep':
          return { pattern: 'SECRET', path };
        case 'find':
          return { pattern: '*', path };
        default:
          return { path };
      }
    };
    let refused = 0;
    const leaks: string[] = [];
    for (const path of escapes) {
      for (const [name, tool] of tools) {
        const r = await call(tool, argsFor(name, path));
        if (r.text.includes(SECRET)) leaks.push(`${name} ${path}: ${r.text.slice(0, 120)}`);
        expect(r.isError, `${name} ${JSON.stringify(path)} was allowed: ${r.text.slice(0, 200)}`).toBe(true);
        expect(r.text, `${name} ${path}`).toMatch(/outside the workspace/);
        refused++;
      }
    }
    expect(leaks).toEqual([]);
    expect(outsideSnapshot(outside)).toBe(before);
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);

    // Searches started inside never follow a link out, and never show what is behind one.
    const searches: [string, Record<string, unknown>][] = [
      ['grep', { pattern: 'SECRET', path: '.' }],
      ['grep', { pattern: 'SECRET' }],
      ['find', { pattern: '**/*.txt' }],
      ['find', { pattern: '*', path: 'sub' }],
      ['ls', { path: '.' }],
    ];
    for (const [name, args] of searches) {
      const r = await call(createTool(name, { cwd: ws }), args);
      expect(r.text, `${name} ${JSON.stringify(args)}`).not.toContain(SECRET);
      expect(r.text, `${name} ${JSON.stringify(args)}`).not.toMatch(/x\.txt/);
    }
    // Inside paths still work.
    expect((await call(createTool('read', { cwd: ws }), { path: 'inside.txt' })).text).toBe('hello inside');
    expect(
      (
        await call(createTool('edit', { cwd: ws }), {
          path: 'sub/deep.txt',
          edits: [{ oldText: 'deep', newText: 'deeper' }],
        })
      ).isError,
    ).toBe(false);
    printSummary('confinement/paths', {
      escapes: escapes.length,
      tools: tools.length,
      attempts: refused,
      refused,
      leaks: leaks.length,
      outside_changed: 0,
      searches_checked: searches.length,
    });
  });

  it('an agent in a git worktree cannot reach the main checkout through .. , an absolute path, or a committed link', async () => {
    const base = realpathSync(tempProject({ 'repo/src/app.txt': 'main checkout\n', 'repo/notes.txt': `${SECRET}\n` }));
    const repo = join(base, 'repo');
    symlinkSync('../notes.txt', join(repo, 'src', 'notes-link'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });
    git('init', '-q');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
    const wt = join(base, 'wt');
    git('worktree', 'add', '-q', '--detach', wt);
    // The agent works in the worktree's src folder (a task cwd inside the repository).
    const cwd = join(wt, 'src');
    const tools = ['read', 'write', 'edit', 'ls'].map((n) => [n, createTool(n, { cwd })] as const);
    const tries = [
      '../../repo/notes.txt',
      `${repo}/notes.txt`,
      '../notes.txt',
      'notes-link',
      `${repo}/src/app.txt`,
      '../.git',
    ];
    let refused = 0;
    for (const path of tries) {
      for (const [name, tool] of tools) {
        const args =
          name === 'write'
            ? { path, content: 'x' }
            : name === 'edit'
              ? { path, edits: [{ oldText: 'main', newText: 'x' }] }
              : { path };
        const r = await call(tool, args);
        expect(r.isError, `${name} ${path}: ${r.text.slice(0, 160)}`).toBe(true);
        expect(r.text).not.toContain(SECRET);
        refused++;
      }
    }
    expect(readFileSync(join(repo, 'src/app.txt'), 'utf8')).toBe('main checkout\n');
    expect(readFileSync(join(repo, 'notes.txt'), 'utf8')).toBe(`${SECRET}\n`);
    printSummary('confinement/worktree', { attempts: refused, refused, main_checkout_changed: 0 });
  });
});

describe('the bash deny list', { timeout: 120_000 }, () => {
  it('refuses a denied command however it is chained, nested or spelled, before anything runs', async () => {
    const dir = realpathSync(tempProject({ 'keep.txt': 'keep\n' }));
    const bash = createBashTool({ cwd: dir, policy: { deny: ['rm *', 'touch *', 'curl *', '/git +push/'] } });
    const denied = [
      'rm keep.txt',
      'rm  -f   keep.txt',
      'true && rm keep.txt',
      'false || rm keep.txt',
      'true; rm keep.txt',
      'true | rm keep.txt',
      'true & rm keep.txt',
      'true\nrm keep.txt',
      '(rm keep.txt)',
      '{ rm keep.txt; }',
      'echo $(rm keep.txt)',
      'echo "$(rm keep.txt)"',
      'echo `rm keep.txt`',
      'echo $(echo $(rm keep.txt))',
      'touch pwned',
      'cd . && git  push origin main',
      '/bin/rm keep.txt',
      'sudo rm keep.txt',
      'env rm keep.txt',
      'FOO=1 rm keep.txt',
      'command rm keep.txt',
      'exec rm keep.txt',
      'nohup rm keep.txt',
      'xargs rm <<< keep.txt',
      'bash -c "rm keep.txt"',
      "sh -c 'rm keep.txt'",
      'eval "rm keep.txt"',
    ];
    const allowed = ['echo rm keep.txt', 'grep -r "rm keep" .', 'echo "touch me"', 'git status', 'ls'];
    let refused = 0;
    const missed: string[] = [];
    for (const cmd of denied) {
      const r = await call(bash, { command: cmd });
      if (r.isError && /refused by the bash policy/.test(r.text)) refused++;
      else missed.push(cmd);
      if (!existsSync(join(dir, 'keep.txt')) || existsSync(join(dir, 'pwned'))) missed.push(`${cmd} (it ran)`);
      writeFileSync(join(dir, 'keep.txt'), 'keep\n');
    }
    expect(missed).toEqual([]);
    for (const cmd of allowed)
      expect((await call(bash, { command: cmd })).text, cmd).not.toMatch(/refused by the bash policy/);
    printSummary('confinement/bash-deny', {
      denied_forms: denied.length,
      refused,
      missed: missed.length,
      allowed_forms: allowed.length,
    });
  });
});

describe('writes: scopes end to end (recipe run)', { timeout: 120_000 }, () => {
  it('an agent cannot write or edit outside its task writes: globs; the refusal reaches the model as a clear error', async () => {
    const dir = tempProject({
      'recipe.yaml': `name: scoped
provider: scripted
script: script.yaml
agents:
  editor: { tools: [read, write, edit] }
tasks:
  - id: docs
    agent: editor
    writes: ["docs/**"]
    prompt: "Update the docs"
`,
      'script.yaml': `turns:
  - tools:
      - { name: write, args: { path: docs/guide.md, content: "new guide" } }
      - { name: write, args: { path: src/app.js, content: "hacked" } }
      - { name: edit, args: { path: src/app.js, edits: [{ oldText: "original", newText: "hacked" }] } }
      - { name: write, args: { path: docs/../src/new.js, content: "hacked" } }
      - { name: write, args: { path: docs/link-to-src/x.js, content: "hacked" } }
      - { name: edit, args: { path: README.md, edits: [{ oldText: "readme", newText: "hacked" }] } }
  - text: "Docs updated; src changes refused."
`,
      'docs/guide.md': 'old guide\n',
      'src/app.js': 'original\n',
      'README.md': 'readme\n',
    });
    symlinkSync(join(dir, 'src'), join(dir, 'docs', 'link-to-src'));
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    if (!r.ok) throw new Error(JSON.stringify(r));
    expect(r.outcome.status).toBe('succeeded');
    expect(readFileSync(join(dir, 'docs/guide.md'), 'utf8')).toBe('new guide');
    expect(readFileSync(join(dir, 'src/app.js'), 'utf8')).toBe('original\n');
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('readme\n');
    expect(existsSync(join(dir, 'src/new.js'))).toBe(false);
    expect(existsSync(join(dir, 'src/x.js'))).toBe(false);
    const ends = events(r.outcome.dir).flatMap((e) =>
      e.type === 'agent_event' && e.event.type === 'tool_execution_end'
        ? [e.event as unknown as { isError: boolean; result: { content: { text: string }[] } }]
        : [],
    );
    expect(ends.map((e) => e.isError)).toEqual([false, true, true, true, true, true]);
    for (const e of ends.slice(1))
      expect(e.result.content[0]!.text).toMatch(/outside this agent's write scope|outside the workspace|symbolic link/);
    expect(ends[1]!.result.content[0]!.text).toMatch(/"docs\/\*\*"/);
    expect(ofType(events(r.outcome.dir), 'instance_done')).toHaveLength(1);
    printSummary('confinement/writes-scope', {
      writes_attempted: 6,
      in_scope: 1,
      refused: 5,
      files_changed_outside: 0,
    });
  });
});
