// `orchestrate doctor --recipe FILE [--probe]` checks the recipe's OpenAI-compatible endpoints:
// reachable and serving the model, a one-token request with --probe, and an unreachable or
// model-less endpoint is a warning that says what to do. Through the real CLI and openai SDK.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai-server.js';
import { runCli } from './run-cli.js';

let dir: string;
let server: FakeOpenAI;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-doctor-ep-'));
  server = await startFakeOpenAI({ models: ['qwen-coder'], respond: () => ({ kind: 'chat', text: 'OK' }) });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function recipe(baseUrl: string, model: string): string {
  const file = join(dir, `r-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    `name: doc\nproviders:\n  local: { type: openai-compatible, base_url: "${baseUrl}" }\nmodels:\n  ${model}: { price: { input: 0, output: 0 } }\nagents:\n  w: { provider: local, model: ${model}, tools: [] }\ntasks:\n  - { id: t, agent: w, prompt: hi }\n`,
  );
  return file;
}

describe('orchestrate doctor --recipe', () => {
  it('a reachable endpoint serving the model passes; --probe sends one one-token request', async () => {
    const r = await runCli(['doctor', '--recipe', recipe(server.url, 'qwen-coder'), '--probe'], {
      cwd: dir,
      env: { PATH: process.env.PATH },
    });
    expect(r.stdout).toContain(`ok    local (${server.url}) is reachable and serves qwen-coder`);
    expect(r.stdout).toContain(`ok    local (${server.url}) answered a one-token request with qwen-coder`);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body.max_tokens).toBe(1);
  });

  it('a model the server does not list, and an endpoint that is down, are warnings with a fix', async () => {
    const missing = await runCli(['doctor', '--recipe', recipe(server.url, 'llama-9')], {
      cwd: dir,
      env: { PATH: process.env.PATH },
    });
    expect(missing.stdout).toMatch(
      /^warn {2}local .* does not list llama-9 \(it lists: qwen-coder\); pull or load the model/m,
    );
    const down = await runCli(['doctor', '--recipe', recipe('http://127.0.0.1:9/v1', 'qwen-coder')], {
      cwd: dir,
      env: { PATH: process.env.PATH },
    });
    expect(down.stdout).toMatch(
      /^warn {2}local \(http:\/\/127\.0\.0\.1:9\/v1\) is not reachable: .*start the server or fix base_url/m,
    );
  });

  it('a recipe without such endpoints says it loads and what is left to check; --probe without --recipe is a usage error', async () => {
    const offline = join(dir, 'offline.yaml');
    writeFileSync(offline, 'name: off\nprovider: scripted\nscript: turns.yaml\ntasks:\n  - { id: t, prompt: hi }\n');
    writeFileSync(join(dir, 'turns.yaml'), 'turns:\n  - text: "hi"\n');
    const r = await runCli(['doctor', '--recipe', offline], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(r.stdout).toContain(
      `ok    ${offline} loads; its agents use no OpenAI-compatible endpoint to check (anthropic needs the key above; scripted runs offline)`,
    );
    const probe = await runCli(['doctor', '--probe'], { cwd: dir, env: { PATH: process.env.PATH } });
    expect(probe.stderr).toBe(
      'orchestrate doctor: --probe sends a request to each model endpoint of a recipe: give the recipe with --recipe FILE\n',
    );
    expect(probe.stdout).toBe('');
    expect(probe.code).toBe(2);
  });
});
