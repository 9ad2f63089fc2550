// Issue 37, item 4, as a user meets it: `orchestrate run` (the CLI, in process) with a recipe whose
// provider takes its key from `api_key_env: MY_KEY` and sends a `headers:` token, against a fake
// OpenAI-compatible server on 127.0.0.1 that answers one task with a 400 whose body echoes the
// Authorization and token headers, and another with text quoting the key (its summary too). The
// key and the header token must appear in no file of the run folder (run.jsonl, result.json,
// plan.md, sessions, patches) and not on stdout or stderr, in plain and --json output; the
// placeholders show that they were there and were replaced.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../src/session/summarize.js';
import { runCli } from '../cli/run-cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const KEY = `sk-my-provider-${Math.random().toString(36).slice(2)}`;
const HEADER_TOKEN = `team-token-${Math.random().toString(36).slice(2)}`;

/** Every file under `dir` (not following links) whose bytes hold one of `needles`. */
function filesHolding(dir: string, needles: string[]): string[] {
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) {
        const bytes = readFileSync(p);
        if (needles.some((n) => bytes.includes(n))) hits.push(p);
      }
    }
  };
  walk(dir);
  return hits;
}

function allFileText(dir: string): string {
  let out = '';
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out += readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe('keys named by api_key_env and provider headers are redacted everywhere', { timeout: 120_000 }, () => {
  it('a 400 echoing the Authorization header and a reply quoting the key leave no trace in the run folder, sessions or output', async () => {
    const server = await startFakeOpenAI({
      apiKey: KEY,
      respond: ({ body, headers }) => {
        const messages = body.messages as { role: string; content: unknown }[];
        const first = typeof messages[0]?.content === 'string' ? messages[0].content : '';
        if (first.startsWith(SUMMARIZER_SYSTEM_PROMPT.slice(0, 60)))
          return { kind: 'chat', text: `## Goal\nQuote the key ${KEY}.` };
        const asked = JSON.stringify(messages);
        if (asked.includes('Quote the key'))
          return { kind: 'chat', text: `The key is ${KEY} (sent with ${HEADER_TOKEN}).` };
        // A provider that echoes the request's headers in its error (seen with proxies and gateways).
        return {
          kind: 'http-error',
          status: 400,
          message: `bad request; you sent authorization: ${String(headers.authorization)}, x-team-token: ${String(headers['x-team-token'])}, key ${KEY}`,
        };
      },
    });
    const before = process.env.MY_KEY;
    // The agents' threads read the key where they make the request (as a distributed worker would).
    process.env.MY_KEY = KEY;
    try {
      const dir = tempProject({
        'recipe.yaml': `name: leaky-provider
providers:
  gateway:
    type: openai-compatible
    base_url: ${server.url}
    api_key_env: MY_KEY
    headers:
      X-Team-Token: ${HEADER_TOKEN}
models:
  fake-model:
    price: { input: 1, output: 1 }
    context_window: 64k
    max_tokens: 8k
agents:
  talker: { tools: [], provider: gateway, model: fake-model }
tasks:
  - id: quote
    agent: talker
    prompt: "Quote the key"
  - id: echo
    agent: talker
    prompt: "Fail with an echo"
    on_failure: continue
`,
      });
      const recipeText = readFileSync(join(dir, 'recipe.yaml'), 'utf8');
      const env = { PATH: process.env.PATH, MY_KEY: KEY, HOME: process.env.HOME };
      const plain = await runCli(['run', join(dir, 'recipe.yaml')], { cwd: dir, env });
      const json = await runCli(['run', join(dir, 'recipe.yaml'), '--json'], { cwd: dir, env });
      // The server did echo the key: the attack was really made.
      expect(server.requests.length).toBeGreaterThan(0);
      for (const r of [plain, json]) {
        expect(r.stdout + r.stderr).not.toContain(KEY);
        expect(r.stdout + r.stderr).not.toContain(HEADER_TOKEN);
      }
      // The project's state folder: both runs, their sessions, plan.md, result.json ...
      const runs = join(dir, '.orchestrate');
      expect(filesHolding(runs, [KEY])).toEqual([]);
      // The header token is written in the recipe itself (headers: take no variables), so the
      // recipe's own copy under inputs/ holds it; nothing the run wrote does.
      const recipeCopies = (f: string) => f.includes(`${sep}inputs${sep}`) && readFileSync(f, 'utf8') === recipeText;
      expect(filesHolding(runs, [HEADER_TOKEN]).filter((f) => !recipeCopies(f))).toEqual([]);
      // Replaced, not lost: the placeholders stand where the values were.
      const text = allFileText(runs);
      expect(text).toContain('[REDACTED:MY_KEY]');
      expect(text).toMatch(/\[REDACTED:[^\]]*X-Team-Token\]/);
      expect(plain.stdout + plain.stderr + json.stdout).toContain('[REDACTED:MY_KEY]');
    } finally {
      if (before === undefined) delete process.env.MY_KEY;
      else process.env.MY_KEY = before;
      await server.close();
    }
  });
});
