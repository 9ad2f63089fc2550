// Secrets never reach a record: a recipe lists DEPLOY_TOKEN under `secrets:`; its agents read a
// file holding the token, echo it from bash through the environment, and answer with it; a
// verify command and a shell step print it; the model API (fake) rejects one agent with an error
// that quotes the API key and the token. Then every command a user would run on the run (run,
// --json run, resume, show, show --instance, runs, report) and EVERY file under the run folder
// are searched for the API key and the token: zero hits. The model itself did see the token.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type RespondInput, type ResponseSpec } from '../helpers/fake-anthropic-server.js';
import { cleanupTempDirs, conversationKey, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { isSummaryRequest } from '../helpers/summary-request.js';
import { exited, filesUnder, printSummary, spawnCli } from './helpers/reliability-fixtures.js';

afterAll(() => cleanupTempDirs());

const API_KEY = 'sk-ant-api03-Zq8RealLookingKey4reliability-XyZ';
const TOKEN = 'tok_live_7f3a9c1e5b2d4f6a8c0e';

/** The fake model repeats whatever token it finds in what it was sent, like a careless model would. */
function leakyModel(): (req: RespondInput) => ResponseSpec {
  return ({ body }) => {
    const all = JSON.stringify(body);
    const seen = /tok_live_[0-9a-f]+/.exec(all)?.[0] ?? 'nothing';
    if (isSummaryRequest(body)) {
      return {
        kind: 'message',
        content: [
          {
            type: 'text',
            text: `## Goal\nFind the token.\n\n## Progress\n### Done\n- [x] found ${seen}\n\n## Critical Context\n- the token is ${seen}`,
          },
        ],
      };
    }
    const key = conversationKey(body);
    if (/item three/.test(key))
      return { kind: 'http-error', status: 400, message: `key ${API_KEY} may not use token ${TOKEN}` };
    const wrote = all.includes('"tool_result"');
    if (!wrote) {
      return {
        kind: 'message',
        content: [
          { type: 'tool_use', name: 'read', input: { path: 'notes.txt' } },
          {
            type: 'tool_use',
            name: 'bash',
            input: { command: 'echo "env has $DEPLOY_TOKEN"; echo "and stderr $DEPLOY_TOKEN" >&2; exit 3' },
          },
        ],
        usage: { input_tokens: 3_000 },
      };
    }
    return {
      kind: 'message',
      content: [{ type: 'text', text: `The token is ${seen}. Key: ${API_KEY}.` }],
      usage: { input_tokens: 3_000 },
    };
  };
}

const RECIPE = `name: secret-run
provider: anthropic
model: claude-haiku-4-5
secrets: [DEPLOY_TOKEN]
agents:
  reader: { tools: [read, bash], compaction: { keep_recent_tokens: 1 } }
tasks:
  - id: leak
    for_each: [one, two, three]
    agent: reader
    prompt: "Handle item \${{ item }}: read notes.txt and tell me the token"
    verify: "echo verify sees $DEPLOY_TOKEN"
    on_failure: continue
    max_failed: 1
  - id: shell
    needs: [leak]
    run: "echo shell step sees $DEPLOY_TOKEN; echo key $ANTHROPIC_API_KEY"
`;

describe('secrets stay out of every record', { timeout: 120_000 }, () => {
  it('run, --json run, resume, show, runs and report: no file and no output holds the API key or a secret value', async () => {
    const server = await startFakeAnthropic({ respond: leakyModel() });
    try {
      const dir = tempProject({ 'recipe.yaml': RECIPE, 'notes.txt': `deploy with ${TOKEN}\n` });
      const runs = join(dir, 'runs');
      const env = {
        ANTHROPIC_API_KEY: API_KEY,
        ANTHROPIC_BASE_URL: server.url,
        DEPLOY_TOKEN: TOKEN,
        ORCHESTRATE_RETRY_BASE_MS: '10',
        ORCHESTRATE_HOME: join(dir, '.home'),
      };
      const outputs: { what: string; text: string }[] = [];
      const run = async (what: string, args: string[]) => {
        const r = await exited(spawnCli(args, env));
        outputs.push({ what: `${what} stdout`, text: r.stdout }, { what: `${what} stderr`, text: r.stderr });
        return r;
      };

      const first = await run('run', [join(dir, 'recipe.yaml'), '--run-dir', runs]);
      expect(first.code, first.stderr + first.stdout).toBe(1); // item three was refused by the API
      const runIds = readdirSync(runs);
      const runDir = join(runs, runIds[0]!);
      await run('run --json', [join(dir, 'recipe.yaml'), '--run-dir', runs, '--json', '--full-events']);
      await run('resume', ['resume', runDir]);
      await run('show', ['show', runDir]);
      await run('show --instance', ['show', runDir, '--instance', 'leak.one']);
      await run('runs', ['runs', '--run-dir', runs]);
      const report = await run('report', ['report', runDir]);
      expect(report.code, report.stderr).toBe(0);

      // The agents really worked with the secret: the model was sent it, and it answered with it.
      expect(server.requests.some((q) => q.rawBody.includes(TOKEN))).toBe(true);
      const files = filesUnder(runs);
      expect(files.some((f) => f.endsWith('report.html'))).toBe(true);
      expect(files.filter((f) => f.includes('/sessions/')).length).toBeGreaterThanOrEqual(3);

      const hits: string[] = [];
      for (const f of files) {
        const text = readFileSync(f, 'latin1');
        for (const [name, secret] of [
          ['API key', API_KEY],
          ['DEPLOY_TOKEN', TOKEN],
        ] as const)
          if (text.includes(secret)) hits.push(`${name} in ${f}`);
      }
      for (const o of outputs)
        for (const [name, secret] of [
          ['API key', API_KEY],
          ['DEPLOY_TOKEN', TOKEN],
        ] as const)
          if (o.text.includes(secret)) hits.push(`${name} in ${o.what}`);
      expect(hits).toEqual([]);

      // What stands in their place says which secret it was.
      const session = readFileSync(join(runDir, 'sessions', 'leak.one.jsonl'), 'utf8');
      expect(session).toContain('[REDACTED:DEPLOY_TOKEN]');
      expect(session).toContain('[REDACTED:ANTHROPIC_API_KEY]');
      const result = readFileSync(join(runDir, 'result.json'), 'utf8');
      expect(JSON.parse(result)).toBeTruthy();
      expect(result).toContain('[REDACTED:ANTHROPIC_API_KEY]');
      printSummary('secrets', {
        commands: outputs.length / 2,
        files_checked: files.length,
        bytes_checked:
          files.reduce((n, f) => n + readFileSync(f).length, 0) + outputs.reduce((n, o) => n + o.text.length, 0),
        requests_with_secret: server.requests.filter((q) => q.rawBody.includes(TOKEN)).length,
        hits: hits.length,
      });
    } finally {
      await server.close();
    }
  });
});
