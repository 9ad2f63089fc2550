// Validates every Claude Code agent file under the given folders with orchestrate's own loader,
// the way a user meets them: each file as an agent's `system_file:` in a one-task recipe. Prints
// how many load cleanly, load with warnings, or fail, the most common warnings, and every error.
//   npx tsx bench/validate-agent-files.ts <folder>...   (e.g. a checkout of wshobson/agents)
// An agent file is a .md file whose frontmatter has a name: and a description: (READMEs and docs
// of the collections are skipped, and so are skills: SKILL.md has the same two keys). Exit 1 when any file fails to load.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadRecipe } from '../src/recipe/load.js';

function agentFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === '.git' || entry === 'node_modules') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...agentFiles(path));
    else if (entry.endsWith('.md') && entry !== 'SKILL.md') {
      const head = readFileSync(path, 'utf8')
        .replace(/^\uFEFF/, '')
        .slice(0, 4000);
      const fm = /^---\r?\n([\s\S]*?)\r?\n---/.exec(head)?.[1] ?? '';
      if (/^name:/m.test(fm) && /^description:/m.test(fm)) out.push(path);
    }
  }
  return out;
}

const folders = process.argv.slice(2);
if (folders.length === 0) {
  console.error('usage: npx tsx bench/validate-agent-files.ts <folder>...');
  process.exit(2);
}
const tmp = mkdtempSync(join(tmpdir(), 'orchestrate-agent-files-'));
const env = { HOME: tmp }; // no user settings files: only the agent files are measured
let clean = 0;
let warned = 0;
const failed: string[] = [];
const warningKinds = new Map<string, number>();
let total = 0;
for (const folder of folders) {
  for (const file of agentFiles(folder)) {
    total++;
    const recipe = join(tmp, 'recipe.yaml');
    writeFileSync(
      recipe,
      `name: corpus\nmodel: claude-sonnet-4-5\nagents:\n  a: { system_file: ${JSON.stringify(file)} }\ntasks:\n  - id: t\n    prompt: go\n`,
    );
    const r = loadRecipe(recipe, { cwd: tmp, env });
    const shown = relative(process.cwd(), file);
    if (!r.ok) {
      failed.push(`${shown}\n${r.problems.map((p) => `    ${p.line}:${p.col} ${p.message}`).join('\n')}`);
      continue;
    }
    if (r.warnings.length === 0) clean++;
    else warned++;
    for (const w of r.warnings) {
      // Group by message without the agent name and positions: "tool "X" is not available ...".
      const kind = w.message.replace(/^agent "a":? /, '').replace(/ \(.*$/, '');
      warningKinds.set(kind, (warningKinds.get(kind) ?? 0) + 1);
    }
  }
}
rmSync(tmp, { recursive: true, force: true });
console.log(
  `agent files: ${total}  valid: ${clean + warned} (${clean} clean, ${warned} with warnings)  errors: ${failed.length}`,
);
console.log('\nmost common warnings:');
for (const [kind, n] of [...warningKinds].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(`  ${String(n).padStart(5)}  ${kind}`);
if (failed.length) console.log(`\nfiles that do not load:\n${failed.join('\n')}`);
process.exitCode = failed.length > 0 ? 1 : 0;
