// `--json=full` (design section 5) prints every run event including message deltas; plain
// `--json` leaves the deltas out.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { cleanupTempDirs, tempProject } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

const files = {
  'recipe.yaml': `name: one
provider: scripted
script: script.yaml
tasks:
  - id: hello
    prompt: "Say hello"
`,
  'script.yaml': `turns:
  - text: "Hello from a scripted agent, streamed in a few chunks."
`,
};

async function runJson(flag: string): Promise<{ type: string; event?: { type: string } }[]> {
  const dir = tempProject(files);
  const out: string[] = [];
  const code = await main([join(dir, 'recipe.yaml'), '--run-dir', join(dir, 'runs'), flag], {
    stdout: (t) => out.push(t),
    stderr: () => undefined,
    cwd: dir,
  });
  expect(code).toBe(0);
  return out
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; event?: { type: string } });
}

describe('--json and --json=full', () => {
  it('--json=full includes message_update deltas of the child agent; --json does not', async () => {
    const full = await runJson('--json=full');
    const plain = await runJson('--json');
    const deltas = (evs: { type: string; event?: { type: string } }[]) =>
      evs.filter((e) => e.type === 'agent_event' && e.event?.type === 'message_update').length;
    expect(full.at(-1)).toMatchObject({ type: 'run_end', status: 'succeeded' });
    expect(deltas(full)).toBeGreaterThan(0);
    expect(deltas(plain)).toBe(0);
    expect(plain.some((e) => e.type === 'agent_event' && e.event?.type === 'message_end')).toBe(true);
  });
});
