// The user's scenario: a 6-repo rename through the real SDK against a strict stand-in API (two
// user turns in a row, or a tool_use without its tool_result, is a 400), the coordinator killed
// with kill -9 again and again (inside a running tool call, or at a random point of the run log),
// then `orchestrate resume` until the run ends. The stand-in model behaves like a careful one: it
// reads the config, renames with bash, and when it hears a call was interrupted it reads again
// before redoing. After the last resume every repo is renamed (none left unfinished under a
// `succeeded` run), no rename ran twice, and every request was one a strict endpoint accepts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  startFakeAnthropic,
  turnOrderProblem,
  type FakeBlock,
  type RespondInput,
  type ResponseSpec,
} from '../helpers/fake-anthropic-server.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { cleanupTempDirs, conversationKey, events, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { checkJsonl, exited, printSummary, spawnCli, until, type Exited } from './helpers/reliability-fixtures.js';
import { runFolderName } from '../helpers/run-folder.js';

afterAll(() => cleanupTempDirs());

const REPOS = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];

type WireBlock = { type: string; text?: string; name?: string; content?: unknown; is_error?: boolean };
type WireMessage = { role: string; content: string | WireBlock[] };

/** The careful model: read, rename, and after an interrupted call check again before redoing. */
function renamer({ body }: RespondInput): ResponseSpec {
  const repo = /Rename the service in (r\d)/.exec(conversationKey(body))?.[1] ?? '?';
  const messages = body.messages as WireMessage[];
  const blocks = (m: WireMessage | undefined): WireBlock[] => (m && Array.isArray(m.content) ? m.content : []);
  const lastCall = blocks([...messages].reverse().find((m) => m.role === 'assistant')).find(
    (b) => b.type === 'tool_use',
  );
  const lastResult = blocks(messages[messages.length - 1]).find((b) => b.type === 'tool_result');
  const resultText =
    typeof lastResult?.content === 'string' ? lastResult.content : JSON.stringify(lastResult?.content ?? '');
  const read: FakeBlock = { type: 'tool_use', name: 'read', input: { path: `${repo}/config.txt` } };
  const rename: FakeBlock = {
    type: 'tool_use',
    name: 'bash',
    input: {
      command: `sleep 1; sed -i 's/^name: old$/name: new-${repo}/' ${repo}/config.txt && echo ${repo} >> renames.log`,
    },
  };
  const say = (text: string): ResponseSpec => ({ kind: 'message', content: [{ type: 'text', text }] });
  if (!lastCall || !lastResult) return { kind: 'message', content: [read] };
  if (lastResult.is_error) return { kind: 'message', content: [read] }; // interrupted (or failed): look before redoing
  if (lastCall.name === 'read')
    return resultText.includes(`name: new-${repo}`) ? say(`renamed ${repo}`) : { kind: 'message', content: [rename] };
  return say(`renamed ${repo}`);
}

const recipe = `name: rename6
provider: anthropic
model: claude-haiku-4-5
concurrency: 3
agents:
  renamer: { tools: [read, bash], summaries: extractive }
tasks:
  - id: rename
    for_each: [${REPOS.join(', ')}]
    agent: renamer
    prompt: "Rename the service in \${{ item }}"
    verify: "grep -qx 'name: new-\${{ item }}' \${{ item }}/config.txt"
`;

describe('6-repo rename, kill -9 of the coordinator at random moments, then resume (real SDK, strict API)', {
  timeout: 240_000,
}, () => {
  it('every repo ends renamed exactly once, and no request breaks role alternation', async () => {
    const server = await startFakeAnthropic({ respond: renamer, strictTurns: true });
    const files: Record<string, string> = { 'recipe.yaml': recipe };
    for (const r of REPOS) files[`${r}/config.txt`] = 'name: old\nport: 80\n';
    const dir = tempProject(files);
    const env = {
      ANTHROPIC_API_KEY: 'sk-ant-rename-test',
      ANTHROPIC_BASE_URL: server.url,
      ORCHESTRATE_RETRY_BASE_MS: '20',
    };
    const dice = seededRandom(17);
    const runsDir = join(dir, 'runs');
    const runDirNow = (): string | undefined => {
      const name = runFolderName(runsDir);
      return name === undefined ? undefined : join(runsDir, name);
    };
    const logLines = (): number => {
      const d = runDirNow();
      return d ? checkJsonl(join(d, 'run.jsonl')).lines.length : 0;
    };
    /** Some agent has started a bash call that has not ended (it sleeps 1 s before renaming). */
    const inBash = (): boolean => {
      const d = runDirNow();
      if (!d || !existsSync(join(d, 'run.jsonl'))) return false;
      const open = new Set<string>();
      for (const e of events(d)) {
        if (e.type !== 'agent_event') continue;
        const ev = e.event as { type: string; toolName?: string; toolCallId?: string };
        if (ev.type === 'tool_execution_start' && ev.toolName === 'bash') open.add(`${e.key}/${ev.toolCallId}`);
        if (ev.type === 'tool_execution_end') open.delete(`${e.key}/${ev.toolCallId}`);
      }
      return open.size > 0;
    };
    let kills = 0;
    let killsInTool = 0;
    let finished: Exited | undefined;
    try {
      for (let round = 0; round < 6 && !finished; round++) {
        const runDir = runDirNow();
        const child = spawnCli(runDir ? ['resume', runDir] : [join(dir, 'recipe.yaml'), '--run-dir', runsDir], env);
        const done = exited(child);
        // Even rounds: kill inside a running bash call. Odd rounds: after a random number of new log lines.
        const start = logLines();
        const grow = 2 + Math.floor(dice() * 40);
        const trigger = round % 2 === 0 ? inBash : () => logLines() > start + grow;
        await until(() => trigger() || child.exitCode !== null, 'the kill point', 60_000);
        if (child.exitCode !== null) {
          finished = await done;
          break;
        }
        if (round % 2 === 0) killsInTool++;
        child.kill('SIGKILL');
        await done;
        kills++;
      }
      finished ??= await exited(spawnCli(['resume', runDirNow()!], env));
      expect(finished.code, finished.stderr + finished.stdout).toBe(0);
      const runDir = runDirNow()!;
      const result = JSON.parse(readFileSync(join(runDir, 'result.json'), 'utf8')) as {
        status: string;
        instances: { id: string; status: string }[];
      };
      expect(result.status).toBe('succeeded');
      expect(result.instances.map((i) => [i.id, i.status])).toEqual(REPOS.map((r) => [`rename.${r}`, 'done']));
      // Nothing left unfinished: every repo renamed (the verify says so too), none renamed twice.
      for (const r of REPOS)
        expect(readFileSync(join(dir, r, 'config.txt'), 'utf8'), r).toBe(`name: new-${r}\nport: 80\n`);
      const renames = existsSync(join(dir, 'renames.log'))
        ? readFileSync(join(dir, 'renames.log'), 'utf8').split('\n').filter(Boolean)
        : [];
      for (const r of REPOS)
        expect(renames.filter((x) => x === r).length, `${r} renamed more than once`).toBeLessThanOrEqual(1);
      for (const q of server.requests) expect(turnOrderProblem(q.body?.messages), `request ${q.index}`).toBeUndefined();
      expect(kills).toBeGreaterThan(0);
      printSummary('resume-rename', {
        kills,
        kills_in_tool: killsInTool,
        requests: server.requests.length,
        clean_run_requests: REPOS.length * 3,
        renamed: REPOS.length,
      });
    } finally {
      await server.close();
    }
  });
});
