// What a job carries besides the workspace: the task as plain JSON for a machine that shares
// nothing with the coordinator (no ports, no API key, no local secret), and the agent's own files
// (skills, extension modules with the local files they import, the scripted provider's script),
// read when the attempt is queued and capped at MAX_SHIPPED_BYTES.
import { readdirSync, readFileSync, type Stats, statSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import type { InstanceTask } from '../orchestrator/execution/instance-task.js';
import { b64 } from './cluster-wire.js';
import { moduleClosure } from './module-closure.js';
import { megabytes } from './workspace-transfer.js';

/** Skill, extension and script files shipped with a job, at most this much in all (past it the instance fails). */
export const MAX_SHIPPED_BYTES = 4 * 1024 * 1024;

/**
 * The task as plain JSON for a machine that shares nothing with this one: no ports, no API key
 * (a worker uses its own), no secret holding the key or known only here (`local`: forge tokens,
 * provider keys, the cluster secret), no paths to hide here.
 */
export function portableTask(task: InstanceTask): Record<string, unknown> {
  const { port: _port, peerPort: _peer, apiKey, ...rest } = task;
  const secrets = (task.secrets ?? []).filter((s) => !s.local && s.value !== apiKey && !/API_KEY$/.test(s.name));
  const sandbox = task.sandbox ? { ...task.sandbox, hide: [] } : undefined;
  // A parsed script holds RegExps, which JSON cannot carry: the worker parses the shipped file.
  const { scriptData: _parsed, ...agent } = task.agent;
  return JSON.parse(JSON.stringify({ ...rest, agent, secrets, ...(sandbox ? { sandbox } : {}) })) as Record<
    string,
    unknown
  >;
}

export type ShippedFile = { path: string; data: string };

/**
 * Skill folders (every file in them), extension modules with the local files they import (their
 * relative layout kept, so the entry's imports resolve where the worker recreates them), and the
 * script, by their path here. Past MAX_SHIPPED_BYTES: an error naming the largest files.
 */
export function shippedFiles(agent: {
  skills: readonly string[];
  extensions: readonly string[];
  script?: string | undefined;
}): { ok: true; files: ShippedFile[] } | { ok: false; error: string } {
  const sizes = new Map<string, number>();
  const add = (p: string): void => {
    let st: Stats;
    try {
      st = statSync(p);
    } catch {
      return; // the worker reports the missing file as a local run would
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(p)) if (name !== 'node_modules' && name !== '.git') add(join(p, name));
    } else if (st.isFile()) sizes.set(p, st.size);
  };
  for (const p of agent.skills) add(p);
  for (const p of agent.extensions) {
    if (isDirectory(p)) add(p);
    else for (const f of moduleClosure(p).files) add(f);
  }
  if (agent.script) add(agent.script);
  const total = [...sizes.values()].reduce((a, b) => a + b, 0);
  if (total > MAX_SHIPPED_BYTES) {
    const largest = [...sizes].sort((a, b) => b[1] - a[1]);
    const shown = largest.slice(0, 5).map(([p, n]) => `${p} (${megabytes(n)})`);
    if (largest.length > shown.length) shown.push(`and ${largest.length - shown.length} more`);
    return {
      ok: false,
      error: `its skill, extension and script files come to ${megabytes(total)} (${total} bytes), over the limit of ${megabytes(MAX_SHIPPED_BYTES)} (${MAX_SHIPPED_BYTES} bytes) for files shipped with an agent; the largest: ${shown.join(', ')}`,
    };
  }
  const files: ShippedFile[] = [];
  for (const p of sizes.keys()) {
    try {
      // Relative on the wire (the worker refuses absolute paths): the coordinator's path without its leading '/'.
      files.push({ path: resolvePath(p).replace(/^\/+/, ''), data: b64(readFileSync(p)) });
    } catch {
      // gone since the stat: the worker reports it missing
    }
  }
  return { ok: true, files };
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
