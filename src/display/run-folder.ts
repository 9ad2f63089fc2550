// A run folder read back for `show` and `report`: the event log folded into run state, plan.md,
// result.json and where each instance's session file is. Works for finished and interrupted runs
// alike because everything comes from the append-only log, not from result.json.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { RunEvent } from '../run/run-events.js';
import { liveLeaseHolder, type LeaseHolder } from '../run/run-lease.js';
import { RUN_LOG, readRunLog } from '../run/run-store.js';
import { foldEvents, type InstanceState, type RunState } from '../run/run-fold.js';

export interface RunFolder {
  dir: string;
  events: RunEvent[];
  /** Lines of run.jsonl that could not be read (torn last line of a killed run). */
  skipped: { line: number; reason: string }[];
  state: RunState;
  planFile?: string;
  planText?: string;
  /** result.json when present (its shape belongs to the coordinator; only shown, never relied on). */
  result?: unknown;
  /** The coordinator working on the run now, from the run's lease (the run is running). */
  holder?: LeaseHolder;
}

export function loadRunFolder(dir: string): RunFolder {
  const { events, skipped } = readRunLog(join(dir, RUN_LOG));
  const folder: RunFolder = { dir, events, skipped, state: foldEvents(events) };
  const holder = liveLeaseHolder(dir);
  if (holder) folder.holder = holder;
  const plan = join(dir, 'plan.md');
  if (existsSync(plan)) {
    folder.planFile = plan;
    folder.planText = readFileSync(plan, 'utf8');
  }
  const result = join(dir, 'result.json');
  if (existsSync(result)) {
    try {
      folder.result = JSON.parse(readFileSync(result, 'utf8'));
    } catch {
      // A half-written or hand-edited result.json is not worth failing a view over.
    }
  }
  return folder;
}

/** The instance's session file: as recorded by instance_start, else sessions/<key>.jsonl. */
export function sessionFileOf(dir: string, inst: InstanceState): string {
  if (inst.sessionFile) return isAbsolute(inst.sessionFile) ? inst.sessionFile : join(dir, inst.sessionFile);
  return join(dir, 'sessions', `${inst.key}.jsonl`);
}

/**
 * Finds an instance by key, by "task/key" label, or by a unique prefix of either; returns the
 * candidates when ambiguous.
 */
export function findInstance(state: RunState, query: string): { found?: InstanceState; candidates: InstanceState[] } {
  const all = [...state.instances.values()];
  const exact = all.filter((i) => i.key === query || i.label === query);
  if (exact.length === 1) return { found: exact[0], candidates: exact };
  if (exact.length > 1) return { candidates: exact };
  const prefix = all.filter((i) => i.key.startsWith(query) || i.label.startsWith(query));
  if (prefix.length === 1) return { found: prefix[0], candidates: prefix };
  return { candidates: prefix };
}
