// Reading one run's record as data, the body `orchestrate show` and the MCP server's run_status /
// show_instance share: the run folded from its run.jsonl (statuses, usage, outputs, errors), and
// one instance with its agent's conversation. An instance name that matches none or several is a
// reason with the run's instances as data; each caller words it for its own reader.
import { findInstance, loadRunFolder, type RunFolder, sessionFileOf } from '../display/run-folder.js';
import { runJson } from '../display/run-json.js';
import { type Conversation, readConversation } from '../display/session-conversation.js';
import { countStatuses, instancesInTaskOrder } from '../run/run-fold.js';
import type { InstanceState } from '../run/run-fold.js';

/** The run in `runDir`, folded: its JSON (as `show --json`) with the count of instances per status. */
export function runStatus(runDir: string): Record<string, unknown> {
  const folder = loadRunFolder(runDir);
  return { ...runJson(folder), counts: countStatuses(folder.state) };
}

export type InstanceLookup =
  | { ok: true; folder: RunFolder; instance: InstanceState; conversation: Conversation }
  | {
      ok: false;
      /** `ambiguous`: a prefix of several instances; `unknown_instance`: of none. */
      code: 'ambiguous' | 'unknown_instance';
      message: string;
      /** Every instance of the run, in task order, as a user names them. */
      instances: string[];
    };

/** One instance of the run in `runDir` (key, task/key, or a unique prefix) with its conversation. */
export function showInstance(runDir: string, query: string): InstanceLookup {
  const folder = loadRunFolder(runDir);
  const { found, candidates } = findInstance(folder.state, query);
  if (!found) {
    const instances = instancesInTaskOrder(folder.state).map((i) => i.label);
    return candidates.length > 1
      ? {
          ok: false,
          code: 'ambiguous',
          message: `"${query}" matches ${candidates.length} instances: ${candidates.map((c) => c.label).join(', ')}`,
          instances,
        }
      : {
          ok: false,
          code: 'unknown_instance',
          message: `no instance "${query}" in run ${folder.state.runId}`,
          instances,
        };
  }
  return { ok: true, folder, instance: found, conversation: readConversation(sessionFileOf(folder.dir, found)) };
}
