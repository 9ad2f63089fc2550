// Acting on a run from the page, through the same paths as the terminal: approve / reject a gate
// (service/approval.ts: the live coordinator over its control socket, or written under the run's
// lease when nobody holds it), steer an instance, cancel an instance or the whole run
// (service/run-control.ts), resume a run nobody holds (service/launch-run.ts: `orchestrate resume`
// as a process of its own, as the MCP server's resume tool starts it, so it outlives the server). Each body is checked before anything is sent; who acted is "web (pid,
// user)" in the run's log, the way `orchestrate cancel` names itself.
import { join } from 'node:path';
import { z } from 'zod';
import { deliverApproval } from '../service/approval.js';
import { launchResume } from '../service/launch-run.js';
import { LAUNCH_LOG, type RunLauncher } from '../service/run-launcher.js';
import { type ControlOutcome, controlBy, deliverRunControl } from '../service/run-control.js';

const Approval = z.strictObject({
  task: z.string().min(1),
  instance: z.string().min(1).optional(),
  gate: z.enum(['publish', 'follow_up']).optional(),
  note: z.string().max(2_000).optional(),
});
const Steer = z.strictObject({ instance: z.string().min(1), text: z.string().trim().min(1).max(20_000) });
const Cancel = z.strictObject({ instance: z.string().min(1).optional() });
const Resume = z.strictObject({});

export const ACTIONS = ['approve', 'reject', 'steer', 'cancel', 'resume'] as const;
export type WebAction = (typeof ACTIONS)[number];

/** `launch_failed`: the resume process ended before it took the run (its output is the message). */
export type ActionResult = ControlOutcome | { ok: false; code: 'bad_request' | 'launch_failed'; message: string };

/** Where acting happens from: the server's environment and working folder, and its process starter. */
export interface ActingContext {
  env: Record<string, string | undefined>;
  cwd: string;
  launcher: RunLauncher;
}

function problem(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
}

/** Carries `action` with its JSON body to the run in `runDir`. */
export async function actOnRun(
  runDir: string,
  action: WebAction,
  body: unknown,
  ctx: ActingContext,
): Promise<ActionResult> {
  const by = controlBy('web', ctx.env);
  if (action === 'resume') {
    if (!Resume.safeParse(body).success) return { ok: false, code: 'bad_request', message: 'resume: takes no fields' };
    const launched = await launchResume(runDir, {}, { cwd: ctx.cwd, env: ctx.env, launcher: ctx.launcher });
    if (launched.ok)
      return {
        ok: true,
        message: `resumed (pid ${launched.run.pid}); its output goes to ${join(launched.run.runDir, LAUNCH_LOG)}${launched.inputsNote ? `; ${launched.inputsNote}` : ''}`,
      };
    return launched.code === 'launch_failed'
      ? { ok: false, code: 'launch_failed', message: launched.message }
      : { ok: false, code: 'refused', message: launched.message };
  }
  if (action === 'approve' || action === 'reject') {
    const a = Approval.safeParse(body);
    if (!a.success) return { ok: false, code: 'bad_request', message: `${action}: ${problem(a.error)}` };
    return deliverApproval(runDir, { action, ...a.data, by, via: 'web' });
  }
  if (action === 'steer') {
    const s = Steer.safeParse(body);
    if (!s.success) return { ok: false, code: 'bad_request', message: `steer: ${problem(s.error)}` };
    return deliverRunControl(runDir, 'steer', { action: 'steer', instance: s.data.instance, text: s.data.text, by });
  }
  const c = Cancel.safeParse(body);
  if (!c.success) return { ok: false, code: 'bad_request', message: `cancel: ${problem(c.error)}` };
  return c.data.instance === undefined
    ? deliverRunControl(runDir, 'cancel', { action: 'cancel_run', by })
    : deliverRunControl(runDir, 'cancel', { action: 'cancel', instance: c.data.instance, by });
}
