// Tracing never breaks a run: a collector nobody listens on is one warning line and the run's own
// exit code; a bad --otel address is a usage error (exit 2) before anything runs, without a stack.
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from '../cli/run-cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const KEY = 'sk-otel-cli-test';

const RECIPE = (baseUrl: string) => `name: quiet
providers:
  gateway:
    type: openai-compatible
    base_url: ${baseUrl}
    api_key_env: OTEL_CLI_KEY
models:
  fake-model:
    price: { input: 1, output: 1 }
    context_window: 64k
    max_tokens: 8k
agents:
  talker: { tools: [], provider: gateway, model: fake-model, summaries: extractive }
tasks:
  - id: hello
    agent: talker
    prompt: "Say hello"
`;

/** A 127.0.0.1 port nothing listens on (taken, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('--otel at the edges', { timeout: 120_000 }, () => {
  it('an unreachable collector: the run succeeds (exit 0) with one warning line naming the address', async () => {
    const server = await startFakeOpenAI({ apiKey: KEY, respond: () => ({ kind: 'chat', text: 'hello' }) });
    const before = process.env.OTEL_CLI_KEY;
    process.env.OTEL_CLI_KEY = KEY;
    try {
      const dir = tempProject({ 'recipe.yaml': RECIPE(server.url) });
      const collector = `http://127.0.0.1:${await deadPort()}`;
      const r = await runCli(['run', 'recipe.yaml', '--otel', collector], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, OTEL_CLI_KEY: KEY },
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const warnings = (r.stdout + r.stderr).split('\n').filter((l) => l.includes('could not send traces'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`${collector}/v1/traces`);
      expect(hasStackTrace(r.stderr)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.OTEL_CLI_KEY;
      else process.env.OTEL_CLI_KEY = before;
      await server.close();
    }
  });

  it('a bad address: exit 2, what is wrong and how to fix it, nothing run', async () => {
    const dir = tempProject({ 'recipe.yaml': RECIPE('http://127.0.0.1:9') });
    const r = await runCli(['run', 'recipe.yaml', '--otel', 'ftp://collector'], {
      cwd: dir,
      env: { PATH: process.env.PATH, OTEL_CLI_KEY: KEY },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--otel must be an http:\/\/ or https:\/\/ address/);
    expect(hasStackTrace(r.stderr)).toBe(false);
    const env = { PATH: process.env.PATH, OTEL_CLI_KEY: KEY, OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' };
    const fromEnv = await runCli(['run', 'recipe.yaml'], { cwd: dir, env });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: "not a url"/);
  });
});
