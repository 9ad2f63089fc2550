// A repair in the merge train (merge-train.ts): the work of an instance conflicted with what landed
// before it, or broke verify on the merged tree. Instead of losing it, its agent runs again in a
// fresh worktree holding the checkout as it is now (the new tip), with a session of its own
// (sessions/<key>.repair-<n>.jsonl) and a first message carrying the task, its earlier summary,
// its earlier patch and the conflict or the failing verify's output (the same shape of context
// as `publish --rebase` gives, publish/rebase-instance.ts). The repair is logged (a `repair`
// train_step with its base and prompt) before the old worktree goes, so a resume after kill -9
// picks the repair up where it was: the new base, the prompt, the session.
import type { TrainVerify } from '../../run/train-record.js';

/** Longest part of the earlier patch quoted in the repair's first message (the rest is cut, with a note). */
const PATCH_QUOTE_CHARS = 20_000;
/** Longest verify output quoted (its tail). */
const OUTPUT_QUOTE_CHARS = 6_000;

/** The agent key of a repair's session: `<key>.repair-<n>` (a pair member keeps its `@role`). */
export function repairSessionKey(agentKey: string, repair: number): string {
  if (repair <= 0) return agentKey;
  const at = agentKey.indexOf('@');
  return at < 0 ? `${agentKey}.repair-${repair}` : `${agentKey.slice(0, at)}.repair-${repair}${agentKey.slice(at)}`;
}

export interface RepairContext {
  /** The task's prompt as the instance was given it. */
  prompt: string;
  summary?: string;
  patch: string;
  patchFile?: string;
  repair: number;
  maxRepairs: number;
  /** What went wrong on the tip. */
  why: 'conflict' | 'verify';
  files?: string[];
  verify?: TrainVerify[];
}

/** The first message of a repair: why, the task again, the earlier summary and patch, the conflict or failing output. */
export function repairPrompt(c: RepairContext): string {
  const patch =
    c.patch.length > PATCH_QUOTE_CHARS
      ? `${c.patch.slice(0, PATCH_QUOTE_CHARS)}\n... (cut: ${c.patch.length - PATCH_QUOTE_CHARS} more characters)`
      : c.patch;
  const failed = c.verify?.find((v) => !v.ok);
  const why =
    c.why === 'conflict'
      ? `Your earlier change conflicts with work other agents landed in this repository meanwhile, in ${c.files?.join(', ') || 'the files it changed'}.`
      : `Your earlier change merges with the work other agents landed meanwhile, but the result fails verification: \`${failed?.command ?? 'verify'}\` fails on it.`;
  const parts = [
    `Repair ${c.repair} of ${c.maxRepairs}. ${why} This working tree holds the repository as it is now, with their work and without yours. Do the task again here, keeping to what your earlier change did wherever it still fits and adapting it to the code as it is now; do not undo the others' work.`,
    `The task:\n${c.prompt.trim()}`,
    `Summary of your earlier change:\n${c.summary?.trim() || '(none was recorded)'}`,
    `Your earlier change as a patch (for reference only: it does not land as it is${c.patchFile ? `; the run folder keeps it as ${c.patchFile}` : ''}):\n\`\`\`diff\n${patch.trimEnd()}\n\`\`\``,
  ];
  if (failed) {
    const out = failed.output.trimEnd();
    const tail = out.length > OUTPUT_QUOTE_CHARS ? `... ${out.slice(-OUTPUT_QUOTE_CHARS)}` : out;
    parts.push(`The output of \`${failed.command}\` on the merged tree:\n\`\`\`\n${tail || '(no output)'}\n\`\`\``);
  }
  return parts.join('\n\n');
}
