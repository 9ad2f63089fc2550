// The inputs a run trusts, captured when it starts: every configuration file the recipe loader
// read (the recipe, its agent files and scripts, .mcp.json files, settings files with hooks) and
// the agents' extensions are copied into `<run>/inputs/files/<sha256><ext>`, and
// `<run>/inputs/manifest.json` maps each original path to its copy (or records that the file did
// not exist, so a settings file an agent creates later is not read either). A resume, `publish
// --rebase` and every later step load the recipe from these copies: the run's agents work in the
// recipe's folder and could otherwise rewrite what the next session trusts (`sandbox: none`).
// Paths are stored relative to the run folder, like run.jsonl's, so a copied project still matches.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { z } from 'zod';
import { type InputFiles, liveInputFiles } from '../util/input-files.js';
import { absolutePath, storedPath } from './run-paths.js';

/** The folder of the captured inputs inside a run folder. */
export const INPUTS_DIR = 'inputs';
const MANIFEST = 'manifest.json';

const CapturedFileSchema = z.object({
  /** The original path, relative to the run folder (absolute when it has no relative form). */
  path: z.string(),
  /** sha256 of the content; absent when the file did not exist at capture. */
  sha256: z.string().optional(),
  /** The copy, relative to the inputs folder. */
  copy: z.string().optional(),
});

const ManifestSchema = z.object({
  version: z.literal(1),
  capturedAt: z.number(),
  /** Who re-captured the inputs with `resume --reload-recipe` (absent for the capture at the start). */
  reloadedBy: z.string().optional(),
  files: z.array(CapturedFileSchema),
});

export type CapturedFile = z.infer<typeof CapturedFileSchema>;
export type InputsManifest = z.infer<typeof ManifestSchema>;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Reads live and remembers every file it was asked for: its bytes, or that it was missing. A
 * folder is not captured (skills are folders; the loader only asks whether they exist).
 */
export class RecordingInputFiles implements InputFiles {
  readonly seen = new Map<string, Buffer | null>();

  read(path: string): Buffer | undefined {
    const bytes = liveInputFiles.read(path);
    if (bytes !== undefined) this.seen.set(path, bytes);
    else if (!liveInputFiles.exists(path) && !this.seen.has(path)) this.seen.set(path, null);
    return bytes;
  }

  exists(path: string): boolean {
    return this.read(path) !== undefined || liveInputFiles.exists(path);
  }

  /** Captures a file the loader does not read itself (an extension module). */
  add(path: string): void {
    this.read(path);
  }
}

/** Writes the captured files and the manifest into `<runDir>/inputs/` (replacing an earlier capture's manifest). */
export function writeCapturedInputs(
  runDir: string,
  seen: ReadonlyMap<string, Buffer | null>,
  reloadedBy?: string,
): InputsManifest {
  const dir = join(runDir, INPUTS_DIR, 'files');
  mkdirSync(dir, { recursive: true });
  const files: CapturedFile[] = [];
  for (const [abs, bytes] of [...seen].sort(([a], [b]) => a.localeCompare(b))) {
    const path = storedPath(runDir, abs);
    if (bytes === null) {
      files.push({ path });
      continue;
    }
    const hash = sha256(bytes);
    const copy = `files/${hash}${extname(abs)}`;
    writeFileSync(join(runDir, INPUTS_DIR, copy), bytes, { mode: 0o600 });
    files.push({ path, sha256: hash, copy });
  }
  const manifest: InputsManifest = {
    version: 1,
    capturedAt: Date.now(),
    ...(reloadedBy ? { reloadedBy } : {}),
    files,
  };
  const target = join(runDir, INPUTS_DIR, MANIFEST);
  writeFileSync(`${target}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${target}.tmp`, target);
  return manifest;
}

/** The run's manifest; undefined for a run of an older version (nothing captured). Throws when it is damaged. */
export function readInputsManifest(runDir: string): InputsManifest | undefined {
  const file = join(runDir, INPUTS_DIR, MANIFEST);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not valid JSON (${(err as Error).message}); the run's captured inputs are damaged`);
  }
  const parsed = ManifestSchema.safeParse(data);
  if (!parsed.success) throw new Error(`${file} does not describe captured inputs; the run's inputs are damaged`);
  return parsed.data;
}

/** One captured input: where it was, and (when it existed) the absolute path of its copy. */
export interface CapturedInput {
  path: string;
  copy?: string;
  sha256?: string;
}

/** The manifest's entries with absolute paths (the run folder may have moved with its project). */
export function capturedInputs(runDir: string, manifest: InputsManifest): CapturedInput[] {
  return manifest.files.map((f) => ({
    path: absolutePath(runDir, f.path),
    ...(f.copy ? { copy: join(runDir, INPUTS_DIR, f.copy) } : {}),
    ...(f.sha256 ? { sha256: f.sha256 } : {}),
  }));
}

/**
 * protectedInputPaths' answers by run folder, with the identity of the manifest they were read from.
 * Every instance's sandbox asks (1,000 reads and parses of the same file per 1,000-agent run on the
 * coordinator's loop, #41); a stat tells whether the manifest was replaced since (a capture writes a
 * new file and renames it over the old one: a new inode). Bounded, for a process that runs many runs.
 */
const protectedCache = new Map<string, { identity: string; paths: string[] }>();
const PROTECTED_CACHE_MAX = 64;

/** The original paths of the captured files that existed (what the sandbox and the file tools protect). */
export function protectedInputPaths(runDir: string): string[] {
  const file = join(runDir, INPUTS_DIR, MANIFEST);
  let identity: string | undefined;
  try {
    const st = statSync(file, { throwIfNoEntry: false, bigint: true });
    if (st) identity = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    // unreadable: read below, which says so
  }
  const cached = protectedCache.get(runDir);
  if (identity !== undefined && cached?.identity === identity) return [...cached.paths];
  let paths: string[];
  try {
    const manifest = readInputsManifest(runDir);
    paths = manifest ? capturedInputs(runDir, manifest).flatMap((f) => (f.copy ? [f.path] : [])) : [];
  } catch {
    return [];
  }
  if (identity !== undefined) {
    protectedCache.delete(runDir);
    protectedCache.set(runDir, { identity, paths });
    if (protectedCache.size > PROTECTED_CACHE_MAX) protectedCache.delete(protectedCache.keys().next().value as string);
  }
  return [...paths];
}

/**
 * The captured files as the loader's source: a captured path reads its copy (checked against its
 * hash), a path captured as missing is missing, any other path (a folder) is read live.
 */
export function capturedInputFiles(runDir: string, manifest: InputsManifest): InputFiles {
  const byPath = new Map(capturedInputs(runDir, manifest).map((f) => [f.path, f]));
  const copyOf = (f: CapturedInput): Buffer => {
    const bytes = readFileSync(f.copy!);
    if (sha256(bytes) !== f.sha256)
      throw new Error(`the captured copy ${f.copy} of ${f.path} was altered; the run's inputs are damaged`);
    return bytes;
  };
  return {
    read(path) {
      const f = byPath.get(path);
      if (!f) return liveInputFiles.read(path);
      return f.copy ? copyOf(f) : undefined;
    },
    exists(path) {
      const f = byPath.get(path);
      return f ? f.copy !== undefined : liveInputFiles.exists(path);
    },
  };
}
