// The project of the campaign tests: three git repositories on branch main, each with a bare
// file:// remote, a recipe whose publish: block points at a fake forge, and the scripted agent
// that changes two of them (repo-c needs no change).
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runRecipeFile } from '../../src/orchestrator/run-recipe.js';
import { runPublishing } from '../../src/publish/run-publishing.js';
import { CLI_NODE_ARGS } from '../helpers/cli-entry.js';
import { tempProject } from '../orchestrator/helpers/run-fixtures.js';

export const TOKEN = 'ghp_campaignTestToken0123456789abcdef';
export const GL_TOKEN = 'glpat-campaignTestToken98765';
export const REPOS = ['repo-a', 'repo-b', 'repo-c'];

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

export function recipe(dir: string, forge: 'github' | 'gitlab', apiUrl: string, title: string): string {
  return `name: campaign
provider: scripted
script: script.yaml
agents:
  editor: { tools: [read, edit] }
publish:
  forge: ${forge}
  base_url: ${apiUrl}
  remote: file://${dir}/remotes/\${{ repo.name }}.git
  repository: acme/\${{ repo.name }}
  branch: campaign/\${{ repo.name }}
  title: "${title}"
  body: "\${{ summary }}\\n\\n\${{ diffstat.text }}"
  labels: [campaign]${forge === 'github' ? '\n  reviewers: [octocat]' : ''}
tasks:
  - id: change
    agent: editor
    for_each: [repo-a, repo-b, repo-c]
    cwd: \${{ item }}
    prompt: "Change \${{ item }}"
`;
}

/** The scripted agent of a run: changes repo-a and repo-b, leaves repo-c alone. */
export const CAMPAIGN_SCRIPT = `conversations:
  - match: "Change repo-a"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "hello", newText: "goodbye" }] } }]
      - text: "repo-a: greeting changed"
  - match: "Change repo-b"
    turns:
      - tools: [{ name: edit, args: { path: greet.txt, edits: [{ oldText: "hello", newText: "howdy" }] } }]
      - text: "repo-b: greeting changed"
  - match: "Change repo-c"
    turns:
      - text: "repo-c: nothing to change"
`;

/** A project with three repositories on branch main, each with a bare remote holding main. */
export function project(forge: 'github' | 'gitlab', apiUrl: () => string): { dir: string } {
  const files: Record<string, string> = { 'script.yaml': CAMPAIGN_SCRIPT };
  for (const r of REPOS) files[`${r}/greet.txt`] = `hello from ${r}\n`;
  const dir = tempProject(files);
  writeFileSync(join(dir, 'recipe.yaml'), recipe(dir, forge, apiUrl(), 'Change the greeting of ${{ repo.name }}'));
  for (const r of REPOS) {
    const repo = join(dir, r);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
    git(dir, 'clone', '-q', '--bare', repo, join(dir, 'remotes', `${r}.git`));
  }
  return { dir };
}

/** The fake forge's repositories of a campaign project: `acme/<repo>` served from its bare remote in `dir`. */
export function forgeRepos(dir: string): Record<string, string> {
  return Object.fromEntries(REPOS.map((r) => [`acme/${r}`, join(dir, 'remotes', `${r}.git`)]));
}

export function remoteBranches(dir: string, r: string): string[] {
  return git(join(dir, 'remotes', `${r}.git`), 'for-each-ref', '--format=%(refname)', 'refs/heads/')
    .split('\n')
    .filter(Boolean);
}

export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** Runs the project's recipe.yaml (runs under dir/runs): the run folder; throws when it cannot start. */
export async function runCampaign(dir: string): Promise<string> {
  const r = await runRecipeFile(
    join(dir, 'recipe.yaml'),
    { cwd: dir },
    { ...runPublishing(), runsDir: join(dir, 'runs') },
  );
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.outcome.dir;
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * `orchestrate args` as its own process, as a user runs it (TLS trust, NODE_EXTRA_CA_CERTS, is
 * read at process start): its exit code and its output, stdout and stderr together. The built
 * CLI when dist/ is current (a start without tsx's loader costs a third of the CPU), else the
 * sources: see cli-entry.ts.
 */
export function orchestrateProcess(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('close', (code) => done({ code, out }));
  });
}

/** The campaign recipe with `forge: git` (push the branch only) to `remote` (a template of repo.name). */
export function gitForgeRecipe(dir: string, remote: string): string {
  return recipe(dir, 'github', 'http://127.0.0.1:1', 'Change the greeting of ${{ repo.name }}')
    .replace('forge: github', 'forge: git')
    .replace(/\n {2}base_url: .*/, '')
    .replace(/\n {2}repository: .*/, '')
    .replace(/\n {2}labels: .*\n {2}reviewers: .*/, '')
    .replace(/remote: .*/, `remote: ${remote}`);
}

/** Output without the notice `--reload-recipe` prints (the recipe read again and captured), so any other message shows. */
export function withoutReloadNotice(text: string): string {
  return text.replace(/^orchestrate: the recipe and its files are read as they are now[^\n]*\n/gm, '');
}
