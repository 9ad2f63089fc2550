// Benchmark: convergence of many agents in one repository (issue 39), `merge: apply` as it landed
// before (`land: direct`: each patch applied as it is, first come first served) against the merge
// train (`land: train`: one at a time, three-way merged onto the tip, verify on the merged tree,
// repair on a conflict or a broken verify). A monorepo fixture of 12 tasks, scripted models
// editing with bash, and a test suite (check.sh, also each task's verify):
//
//   6 tasks edit files of their own;
//   2 edit one file in separate hunks (they merge);
//   2 edit the same line (one conflicts; a repair keeps both values);
//   2 make a semantic conflict: one renames foo to bar, the other adds a use of foo (each passes
//     the suite alone, together they do not; a repair uses bar).
//
// Printed per mode: tasks whose work landed, whether the suite passes on the final checkout, the
// fraction of tasks landed with the suite green, repairs, and the run's wall time.
//
//   node --import tsx bench/merge-train.bench.ts
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runRecipeFile } from '../src/orchestrator/run-recipe.js';
import { readRunLog } from '../src/run/run-store.js';

const OWN = ['t01', 't02', 't03', 't04', 't05', 't06'];
const EDITS: Record<string, string> = {
  ...Object.fromEntries(OWN.map((t) => [t, `printf '${t} done\\\\n' > ${t}.txt`])),
  t07: "sed -i '1s/.*/top by t07/' shared.txt",
  t08: "sed -i '10s/.*/bottom by t08/' shared.txt",
  t09: "printf 'value=nine\\\\n' > same.txt",
  t10: "printf 'value=ten\\\\n' > same.txt",
  t11: "printf 'bar\\\\n' > defs.txt && printf 'bar\\\\n' > use1.txt",
  t12: "printf 'foo\\\\n' > use2.txt",
};
const REPAIRS: Record<string, string> = {
  t09: "printf 'value=nine,ten\\\\n' > same.txt",
  t10: "printf 'value=nine,ten\\\\n' > same.txt",
  t11: "for f in defs.txt use1.txt use2.txt; do printf 'bar\\\\n' > $f; done",
  t12: "printf 'bar\\\\n' > use2.txt",
};
const CHECK = `set -e
! grep -l '^<<<<<<<' *.txt
grep -Eq '^value=[a-z,]+$' same.txt
test "$(wc -l < same.txt)" -eq 1
for w in $(cat use*.txt); do grep -qx "$w" defs.txt || { echo "undefined: $w"; exit 1; }; done
`;

function project(land: 'direct' | 'train'): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-train-'));
  const tasks = Object.keys(EDITS)
    .map((t) => `  - id: ${t}\n    prompt: "Task ${t}"\n`)
    .join('');
  const turns = (command: string, text: string) =>
    `    turns:\n      - tools: [{ name: bash, args: { command: "${command}" } }]\n      - text: "${text}"\n`;
  const convs = [
    ...Object.entries(REPAIRS).map(
      ([t, c]) => `  - match: "^Repair \\\\d of \\\\d[\\\\s\\\\S]*Task ${t}"\n${turns(c, 'repaired')}`,
    ),
    ...Object.entries(EDITS).map(([t, c]) => `  - match: "^Task ${t}"\n${turns(c, 'done')}`),
  ].join('');
  const files: Record<string, string> = {
    'recipe.yaml': `name: bench-train
provider: scripted
script: script.yaml
concurrency: 12
agents:
  editor: { tools: [bash] }
defaults:
  agent: editor
  cwd: repo
  isolation: worktree
  merge: apply
  land: ${land}
  on_failure: continue
  verify: "sh check.sh"
tasks:
${tasks}`,
    'script.yaml': `conversations:\n${convs}`,
    'repo/check.sh': CHECK,
    'repo/same.txt': 'value=base\n',
    'repo/shared.txt': `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n')}\n`,
    'repo/defs.txt': 'foo\n',
    'repo/use1.txt': 'foo\n',
    ...Object.fromEntries(OWN.map((t) => [`repo/${t}.txt`, `${t}\n`])),
  };
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const repo = join(dir, 'repo');
  const g = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });
  g('init', '-q');
  g('add', '-A');
  g('-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-qm', 'fixture');
  return dir;
}

async function measure(land: 'direct' | 'train') {
  const dir = project(land);
  try {
    const started = Date.now();
    const r = await runRecipeFile(join(dir, 'recipe.yaml'), { cwd: dir }, { runsDir: join(dir, 'runs') });
    const wallMs = Date.now() - started;
    if (!r.ok) throw new Error(`the run did not start: ${JSON.stringify(r)}`);
    const events = readRunLog(join(r.outcome.dir, 'run.jsonl')).events;
    const landed = events.filter((e) => e.type === 'instance_done' && e.applied).length;
    const repairs = events.filter((e) => e.type === 'train_step' && e.phase === 'repair').length;
    const green = spawnSync('sh', ['check.sh'], { cwd: join(dir, 'repo') }).status === 0;
    return { land, landed, green, landedGreen: green ? landed : 0, repairs, wallMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const total = Object.keys(EDITS).length;
console.log(`12-task monorepo, ${total - OWN.length} of ${total} tasks in overlapping pairs; suite: check.sh`);
for (const land of ['direct', 'train'] as const) {
  const m = await measure(land);
  console.log(
    `merge: apply, land: ${m.land.padEnd(6)}  landed ${m.landed}/${total}  suite ${m.green ? 'green' : 'red  '}  landed with the suite green ${((m.landedGreen / total) * 100).toFixed(0).padStart(3)}%  repairs ${m.repairs}  wall ${(m.wallMs / 1000).toFixed(1)} s`,
  );
}
