// Acting on a run from the page, through the same paths as the terminal: approve / reject a gate
// (service/approval.ts: the live coordinator over its control socket, or written under the run's
// lease when nobody holds it), steer an instance, cancel an instance or the whole run
// (service/run-control.ts). Each body is checked before anything is sent; who acted is "web (pid,
// user)" in the run's log, the way `orchestrate cancel` names itself.
import { z } from 'zod';
import { deliverApproval } from '../service/approval.js';
import { type ControlOutcome, controlBy, deliverRunControl } from '../service/run-control.js';

const Approval = z.strictObject({
  task: z.string().min(1),
  instance: z.string().min(1).optional(),
  gate: z.literal('publish').optional(),
  note: z.string().max(2_000).optional(),
});
const Steer = z.strictObject({ instance: z.string().min(1), text: z.string().trim().min(1).max(20_000) });
const Cancel = z.strictObject({ instance: z.string().min(1).optional() });

export const ACTIONS = ['approve', 'reject', 'steer', 'cancel'] as const;
export type WebAction = (typeof ACTIONS)[number];

export type ActionResult = ControlOutcome | { ok: false; code: 'bad_request'; message: string };

function problem(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
}

/** Carries `action` with its JSON body to the run in `runDir`. */
export async function actOnRun(
  runDir: string,
  action: WebAction,
  body: unknown,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ActionResult> {
  const by = controlBy('web', env);
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
