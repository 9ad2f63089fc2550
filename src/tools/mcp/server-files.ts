// The files a sandboxed stdio MCP server needs to start: its command and the scripts its
// arguments name, each with the package folder it lives in (the nearest folder above it with a
// package.json, pyproject.toml or similar; for a package installed inside node_modules, the
// project that holds that node_modules, where its dependencies are hoisted). The sandbox shows
// them read-only. Without this a server installed under /tmp (a CI clone, `npx` caches, a
// project in the temp folder) or in the home folder could not see its own script, because the
// sandbox replaces /tmp and the home with private, empty ones. Secrets stay hidden: a path
// inside a hidden place (~/.ssh, the runs folder) is not shown, nor the whole home folder or /.
import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';
import { defaultHiddenPaths } from '../sandbox.js';
import { isInside } from '../workspace.js';

/** Files that mark the root of a package (node, python, rust, go, ruby, deno). */
const PACKAGE_MARKERS = [
  'package.json',
  'pyproject.toml',
  'setup.py',
  'Cargo.toml',
  'go.mod',
  'Gemfile',
  'deno.json',
  'deno.jsonc',
];

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The folder a server's file belongs to: its package root, or the file's own folder. */
export function packageRootOf(file: string): string {
  const start = statSync(file).isDirectory() ? file : dirname(file);
  const root = parse(start).root;
  let found: string | undefined;
  for (let dir = start; ; dir = dirname(dir)) {
    if (PACKAGE_MARKERS.some((m) => existsSync(join(dir, m)))) {
      found = dir;
      break;
    }
    if (dir === root) break;
  }
  const pkg = found ?? start;
  // Inside node_modules the dependencies sit in the outermost node_modules: show its project.
  const at = pkg.split(sep).indexOf('node_modules');
  return at > 0 ? pkg.split(sep).slice(0, at).join(sep) || sep : pkg;
}

/**
 * The read-only paths a sandboxed stdio server needs: for the command (when it names a file,
 * not a program on PATH) and every argument that names an existing file, its package root.
 */
export function serverReadOnlyPaths(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  hide: readonly string[] = [],
): string[] {
  const home = real(env.HOME || homedir());
  const hidden = [...defaultHiddenPaths(env), ...hide].map((p) => real(resolve(p))).filter((p) => p !== undefined);
  const candidates = [command, ...args].filter(
    // A bare word (`npx`, `uvx`) is a program on PATH; flags and URLs are not files.
    (a, i) => a && !a.startsWith('-') && !a.includes('://') && (i > 0 || a.includes('/')),
  );
  const out: string[] = [];
  for (const c of candidates) {
    const file = real(isAbsolute(c) ? c : resolve(cwd, c));
    if (!file || file === sep) continue;
    let root: string;
    try {
      root = packageRootOf(file);
    } catch {
      continue;
    }
    // A marker at / or in the home folder itself would show everything: then only the file.
    if (root === sep || (home !== undefined && isInside(root, home))) root = file;
    if (hidden.some((h) => isInside(h, root))) continue;
    if (!out.includes(root)) out.push(root);
  }
  return out;
}
