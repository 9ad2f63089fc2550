// Landing a finished attempt's work: the patch of what it changed since its snapshot (written to
// patches/<instance>.diff), the files it touched, and, for `isolation: worktree`, the work put
// where its task's `merge:` says (a branch, or applied to the checkout) before the instance is
// logged done. The git work itself is git-workspace.ts and worktree-merge.ts (through the
// runner's per-repository lock); this is the order of the steps and what the run records.
import { join } from 'node:path';
import type { RunStore } from '../run/run-store.js';
import { pathFromRoot, type InstanceState, type TaskState } from '../run/run-state.js';
import type { InstanceRunner } from './instance-runner.js';

/**
 * `patchFile` is set whenever a patch was written, also when the work then failed to land.
 * `failure`: `workspace` when what the attempt changed could not be measured (nothing is landed
 * then), `patch_conflict` when the work does not apply.
 */
export type Landing =
  | { ok: true; patchFile?: string; files: string[]; branch?: string; applied?: boolean }
  | { ok: false; failure: 'workspace' | 'patch_conflict'; error: string; patchFile?: string };

export interface LandingContext {
  recipeDir: string;
  store: RunStore;
  runner: Pick<InstanceRunner, 'diffSince' | 'landWork' | 'dropWorktree'>;
  /** The run's own files cannot be written (the run stops; see Coordinator.storageFailed). */
  storageFailed(message: string): void;
}

/** The changed files git could still name, for the error of a diff that cannot be trusted. */
export function changedFilesNote(files: readonly string[] | undefined): string {
  if (files === undefined) return 'what it changed could not be listed';
  if (files.length === 0) return 'git listed no changed files';
  const shown = files.slice(0, 10).join(', ') + (files.length > 10 ? ` and ${files.length - 10} more` : '');
  return `changed files: ${shown}`;
}

export class WorkspaceLanding {
  constructor(private readonly ctx: LandingContext) {}

  /** What the attempt changed, recorded and landed; not ok when it cannot be measured or cannot land. */
  async land(t: TaskState, inst: InstanceState, text: string): Promise<Landing> {
    const g = inst.git;
    if (!g) return { ok: true, files: [] };
    const { store } = this.ctx;
    const cwd = inst.workCwd ?? inst.resolved!.cwd;
    const d = await this.ctx.runner.diffSince(g.root, cwd, g.tree, g.worktree);
    // Without a diff nothing is known of the work: no patch, nothing landed, and the attempt fails.
    if (!d.ok)
      return {
        ok: false,
        failure: 'workspace',
        error: `the changes of ${inst.id} cannot be measured, so nothing was recorded or landed: ${d.error} (${changedFilesNote(d.files)})`,
      };
    const files: string[] = [];
    let patchFile: string | undefined;
    if (d.patch.trim()) {
      patchFile = `patches/${inst.id}.diff`;
      try {
        store.writeFile(patchFile, d.patch);
      } catch (err) {
        this.ctx.storageFailed(
          `cannot write ${join(store.dir, patchFile)}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      for (const f of d.files) files.push(pathFromRoot(this.ctx.recipeDir, join(g.root, f)));
    }
    // isolation: worktree with merge: branch or apply: the work lands before the instance is done.
    const land = await this.ctx.runner.landWork(t, inst, d.patch, join(store.dir, `patches/${inst.id}.diff`), text);
    if (!land.ok)
      return {
        ok: false,
        failure: land.failure ?? 'patch_conflict',
        error: land.error,
        ...(patchFile ? { patchFile } : {}),
      };
    return {
      ok: true,
      files,
      ...(patchFile ? { patchFile } : {}),
      ...(land.branch ? { branch: land.branch } : land.applied ? { applied: true } : {}),
    };
  }
  /** Removes a done instance's worktree once its work landed (after instance_done is logged). */
  drop(t: TaskState, inst: InstanceState): Promise<void> {
    return this.ctx.runner.dropWorktree(t, inst);
  }
}
