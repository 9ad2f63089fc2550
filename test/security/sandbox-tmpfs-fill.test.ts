// Attack: one command fills host memory through the sandbox's in-memory folders (/tmp, /dev/shm,
// the private home) or the empty tmpfs that hide a secret folder. The first three are capped
// (kept at 1 MiB here so the test is quick) and a command past the cap fails with a clear
// message; the hiding ones are read-only. Writing the same amount into the workspace still works.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBashTool } from '../../src/tools/bash.js';
import { probeSandbox } from '../../src/tools/sandbox.js';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { errorOf, runTool, tempDir, textOf } from '../tools/harness.js';

const CAP = 1024 * 1024;
const TOO_MUCH = 3 * CAP;

describe.skipIf(skipWithoutBwrap('tmpfs fill'))('the sandbox in-memory folders', () => {
  it('says bwrap caps sizes here (bubblewrap 0.8+)', () => {
    expect(probeSandbox().sizeCap).toBe(true);
  });

  for (const place of ['/tmp', '/dev/shm', '$HOME']) {
    it(`refuse to grow past the cap: ${place}`, async () => {
      const bash = createBashTool({ cwd: tempDir('fill-'), sandbox: { tmpBytes: CAP } });
      try {
        const msg = await errorOf(bash, { command: `head -c ${TOO_MUCH} /dev/zero > ${place}/big` });
        expect(msg).toContain('No space left on device');
        expect(msg).toContain('/tmp holds at most 1 MiB');
        expect(msg).toContain('ORCHESTRATE_SANDBOX_TMP_MB');
      } finally {
        bash.dispose();
      }
    });
  }

  it('keep hidden folders read-only and empty', async () => {
    const ws = tempDir('fill-');
    const runs = join(tempDir('runs-'), 'runs');
    mkdirSync(runs);
    const bash = createBashTool({ cwd: ws, sandbox: { tmpBytes: CAP, hide: [runs] } });
    try {
      const msg = await errorOf(bash, { command: `head -c ${TOO_MUCH} /dev/zero > ${runs}/big` });
      expect(msg).toContain('Read-only file system');
    } finally {
      bash.dispose();
    }
  });

  it('still let a command write that much into the workspace', async () => {
    const bash = createBashTool({ cwd: tempDir('fill-'), sandbox: { tmpBytes: CAP } });
    try {
      expect(textOf(await runTool(bash, { command: `head -c ${TOO_MUCH} /dev/zero > big && wc -c < big` }))).toBe(
        String(TOO_MUCH),
      );
    } finally {
      bash.dispose();
    }
  });
});
