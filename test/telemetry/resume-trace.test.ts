// `orchestrate resume --otel`: a resumed run is a trace of its own, named after the recipe (the
// resume's log line does not repeat the name) and marked resumed, with the instances it runs.
// The first run admits nothing (--budget-usd 0 on a priced model), the resume finishes it.
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai-server.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { startOtlpReceiver } from './otlp-receiver.js';

afterAll(() => cleanupTempDirs());

const KEY = 'sk-otel-resume-test';

describe('orchestrate resume --otel', { timeout: 120_000 }, () => {
  it('the resume exports invoke_workflow {recipe name} (resumed) and the attempts it runs', async () => {
    const server = await startFakeOpenAI({ apiKey: KEY, respond: () => ({ kind: 'chat', text: 'done' }) });
    const receiver = await startOtlpReceiver();
    const before = process.env.OTEL_RESUME_KEY;
    process.env.OTEL_RESUME_KEY = KEY;
    try {
      const dir = tempProject({
        'recipe.yaml': `name: resumable
providers:
  gateway:
    type: openai-compatible
    base_url: ${server.url}
    api_key_env: OTEL_RESUME_KEY
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
`,
      });
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, OTEL_RESUME_KEY: KEY };
      const first = await runCli(['run', 'recipe.yaml', '--budget-usd', '0'], { cwd: dir, env });
      expect(first.code, first.stdout + first.stderr).toBe(1);
      const runId = /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(first.stdout + first.stderr)?.[1];
      expect(runId).toBeDefined();
      const resumed = await runCli(['resume', runId!, '--budget-usd', '10', '--otel', receiver.url], {
        cwd: dir,
        env,
      });
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      const run = receiver.spans.find((s) => s.name === 'invoke_workflow resumable');
      expect(run?.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_workflow',
        'orchestrate.run.id': runId,
        'orchestrate.run.resumed': true,
      });
      const agent = receiver.spans.find((s) => s.name === 'invoke_agent hello');
      expect(agent?.parentSpanId).toBe(run?.spanId);
      expect(receiver.spans.some((s) => s.parentSpanId === agent?.spanId && s.name === 'chat fake-model')).toBe(true);
    } finally {
      if (before === undefined) delete process.env.OTEL_RESUME_KEY;
      else process.env.OTEL_RESUME_KEY = before;
      await receiver.close();
      await server.close();
    }
  });
});
