// What the publish gate tests share: a git-forge campaign recipe (bare file:// remotes made by
// campaign-fixtures.ts's project()) whose publish: block has an approve: gate and whose task gate
// prompt shows the item, and waits on run.jsonl (never on the clock).
import { logOf, until } from '../orchestrator/helpers/run-fixtures.js';

export { logOf, until };

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
