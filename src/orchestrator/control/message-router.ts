// Agent-to-agent messages through the coordinator. A `send_message` call names a target: an
// instance id (`apply.alpha`), a task id (every instance of it), "parent" (the coordinator: the
// message goes to the run log, for the user), or "*" (every other running agent). Messages for
// an instance that has not started yet wait in a mailbox and are delivered when it starts, so
// start order never loses a message.
import { instanceOfKey } from '../../run/run-fold.js';
import { isTerminal, type InstanceState, type TaskState } from '../../run/run-state.js';
import type { CoordinatorMessage } from '../protocol.js';

export interface Endpoint {
  /** Instance id. */
  id: string;
  task: string;
  post(message: CoordinatorMessage): void;
}

export interface RouteResult {
  delivered: string[];
  queued: string[];
  error?: string;
}

export interface RouterDirectory {
  /** Every instance id of a task known so far (fan-outs grow when they are expanded). */
  instancesOf(task: string): string[] | undefined;
  /** Whether an instance id exists in the run (running, waiting or finished). */
  hasInstance(id: string): boolean;
  /** Whether the instance has ended for good (a message to it can no longer be read). */
  isFinished(id: string): boolean;
}

/** The directory of a run's tasks and instances (a pair's agents are `<id>@worker` and `<id>@planner`). */
export function runDirectory(
  tasks: ReadonlyMap<string, TaskState>,
  instances: ReadonlyMap<string, InstanceState>,
): RouterDirectory {
  return {
    instancesOf: (task) => {
      const t = tasks.get(task);
      if (!t) return undefined;
      return t.task.kind === 'pair'
        ? t.instances.flatMap((i) => [`${i.id}@worker`, `${i.id}@planner`])
        : t.instances.map((i) => i.id);
    },
    hasInstance: (id) => instances.has(instanceOfKey(id)),
    isFinished: (id) => {
      const s = instances.get(instanceOfKey(id))?.status;
      return s !== undefined && isTerminal(s);
    },
  };
}

interface Mail {
  from: string;
  text: string;
}

export class MessageRouter {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly mailboxes = new Map<string, Mail[]>();
  /** Messages to a task whose instances are not known yet (a fan-out not expanded). */
  private readonly taskMail = new Map<string, Mail[]>();
  private readonly delivered = new Map<string, Set<Mail>>();

  constructor(private readonly directory: RouterDirectory) {}

  /** An instance started: it receives what waited for it. */
  register(ep: Endpoint): void {
    this.endpoints.set(ep.id, ep);
    const waiting = [...(this.mailboxes.get(ep.id) ?? []), ...(this.taskMail.get(ep.task) ?? [])];
    this.mailboxes.delete(ep.id);
    for (const m of waiting) this.deliver(ep, m);
  }

  unregister(id: string): void {
    this.endpoints.delete(id);
  }

  get runningIds(): string[] {
    return [...this.endpoints.keys()];
  }

  private deliver(ep: Endpoint, m: Mail): void {
    // A task-wide message is delivered once per instance, even across retries.
    const seen = this.delivered.get(ep.id) ?? new Set<Mail>();
    if (seen.has(m)) return;
    seen.add(m);
    this.delivered.set(ep.id, seen);
    ep.post({ type: 'deliver', from: m.from, text: m.text });
  }

  private toInstance(id: string, mail: Mail, out: RouteResult): void {
    const ep = this.endpoints.get(id);
    if (ep) {
      this.deliver(ep, mail);
      out.delivered.push(id);
    } else if (this.directory.isFinished(id)) {
      return;
    } else {
      const box = this.mailboxes.get(id) ?? [];
      box.push(mail);
      this.mailboxes.set(id, box);
      out.queued.push(id);
    }
  }

  /** Routes one message; the result says who got it now and who will get it when they start. */
  send(from: string, to: string, text: string): RouteResult {
    const out: RouteResult = { delivered: [], queued: [] };
    const mail: Mail = { from, text };
    const target = to.trim();
    if (target === 'parent') {
      out.delivered.push('parent');
      return out;
    }
    if (target === '*') {
      for (const id of this.endpoints.keys()) if (id !== from) this.toInstance(id, mail, out);
      if (out.delivered.length === 0) out.error = 'no other agent is running right now; nobody received the message';
      return out;
    }
    if (this.directory.hasInstance(target)) {
      if (target === from) return { ...out, error: 'an agent cannot send a message to itself' };
      if (this.directory.isFinished(target))
        return { ...out, error: `${target} has already finished; it cannot read messages any more` };
      this.toInstance(target, mail, out);
      return out;
    }
    const ids = this.directory.instancesOf(target);
    if (ids === undefined) {
      return {
        ...out,
        error: `no task or agent is called "${target}". Use a task id, an instance id (task.key), "parent" or "*".`,
      };
    }
    if (ids.length === 0) {
      const box = this.taskMail.get(target) ?? [];
      box.push(mail);
      this.taskMail.set(target, box);
      out.queued.push(target);
      return out;
    }
    for (const id of ids) if (id !== from) this.toInstance(id, mail, out);
    if (out.delivered.length === 0 && out.queued.length === 0)
      out.error = `every instance of ${target} has already finished`;
    return out;
  }
}
