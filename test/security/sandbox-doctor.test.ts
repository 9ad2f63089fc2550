// `orchestrate doctor` says which of the sandbox's hardening holds on this machine, measured by a
// real sandboxed command: the private home, /run hidden, the tmpfs cap (changed through
// ORCHESTRATE_SANDBOX_TMP_MB, so the figure is measured, not printed from a constant), the runs
// folder sealed, and the file tools' race-free path walk.
import { describe, expect, it } from 'vitest';
import { skipWithoutBwrap } from '../helpers/bwrap.js';
import { runCli } from '../cli/run-cli.js';
import { tempDir } from '../tools/harness.js';

describe.skipIf(skipWithoutBwrap('doctor hardening'))('orchestrate doctor on the sandbox hardening', () => {
  it('reports each measure as it holds here', async () => {
    const cwd = tempDir('doctor-');
    const r = await runCli(['doctor'], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ORCHESTRATE_SANDBOX_TMP_MB: '8' },
    });
    expect(r.stdout).toMatch(/^ok {4}file tools resolve paths race-free/m);
    expect(r.stdout).toMatch(/^ok {4}sandbox home is private: commands see only .*\.gitconfig/m);
    expect(r.stdout).toMatch(/^ok {4}host sockets in \/run and \/var\/run are hidden/m);
    expect(r.stdout).toMatch(/^ok {4}sandbox \/tmp is capped at 8 MiB/m);
    expect(r.stdout).toMatch(/^ok {4}the runs folder .* is hidden from commands and cannot be written/m);
  });
});
