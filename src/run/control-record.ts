// A user's action on the live run (run view, `watch`, `orchestrate cancel` / `steer`) in the run's
// record: the `control` event read loosely (an older build may not know its schema yet), as the
// fold (run-fold.ts) lists it in RunState.controls.
import type { RunEvent } from './run-events.js';

/**
 * A user's action on the live run (run view, `watch`, `orchestrate cancel` / `steer`), as its
 * `control` event recorded it: who did what, and whether the coordinator accepted it.
 */
export interface ControlRecord {
  ts: number;
  action: string;
  /** The instance acted on (its key or label); absent for run-wide actions. */
  instance?: string;
  by: string;
  text?: string;
  ok: boolean;
  message?: string;
}

type ControlEvent = Extract<RunEvent, { type: 'control' }>;

/** A user's action on the run (no instance key of its own: `instance` names the target). */
export function isControlEvent(e: RunEvent): e is ControlEvent {
  return (e as { type: string }).type === 'control';
}

/** A `control` event read loosely: the log may hold it before this build knows its schema. */
export function controlRecord(e: { ts: number } & Record<string, unknown>): ControlRecord {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const rec: ControlRecord = {
    ts: e.ts,
    action: str(e.action) ?? 'unknown',
    by: str(e.by) ?? 'unknown',
    ok: e.ok !== false,
  };
  const instance = str(e.instance);
  if (instance !== undefined) rec.instance = instance;
  const text = str(e.text);
  if (text !== undefined) rec.text = text;
  const message = str(e.message) ?? str(e.error);
  if (message !== undefined) rec.message = message;
  return rec;
}
