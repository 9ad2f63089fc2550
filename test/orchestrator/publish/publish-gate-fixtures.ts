// What the publish gate tests share: a git-forge campaign recipe (bare file:// remotes made by
// campaign-fixtures.ts's project()) whose publish: block has an approve: gate and whose task gate
// prompt shows the item, and waits on run.jsonl (never on the clock).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '../../../src/run/run-events.js';
import { events } from '../helpers/run-fixtures.js';

export const logOf = (runDir: string): RunEvent[] => (existsSync(join(runDir, 'run.jsonl')) ? events(runDir) : []);

export async function until<T>(what: string, probe: () => T | undefined | false, limitMs = 60_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A git-forge campaign whose publish block has `gate` as approve:, and whose task gate shows the item. */
export function gitRecipe(dir: string, branch: string, gate: string): string {
  return `name: gated-campaign
provider: scripted
script: script.yaml
agents:
  editor: { tools: [read, edit] }
publish:
  forge: git
  remote: file://${dir}/remotes/\${{ repo.name }}.git
  branch: ${branch}/\${{ repo.name }}
  approve: ${gate}
tasks:
  - id: change
    agent: editor
    for_each: [repo-a, repo-b, repo-c]
    cwd: \${{ item }}
    prompt: "Change \${{ item }}"
    approve: { prompt: "Change \${{ item }} now?", timeout: 10ms, on_timeout: approve }
`;
}
