// No MCP server process outlives its run: after Ctrl-C (SIGINT) and after kill -9 of the CLI,
// both the sandboxed server (bwrap --die-with-parent, scope: agent) and the unconfined one (the
// lifeline; scope: run, so hosted by the coordinator's thread) end.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'vitest';
import { until } from './helpers.js';
import { env, processesWith, removeDirs, setup } from './run-setup.js';
import { CLI_NODE_ARGS } from '../../helpers/cli-entry.js';

afterEach(removeDirs);

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

describe('MCP servers end with the run', () => {
  for (const signal of ['SIGINT', 'SIGKILL'] as const) {
    it(`no server process is left after ${signal === 'SIGINT' ? 'Ctrl-C' : 'kill -9'} of the CLI`, async () => {
      const s = setup(
        `turns:\n  - tools:\n      - { name: mcp__alpha__echo, args: { text: started } }\n      - { name: mcp__plain__slow, args: { steps: 600, ms: 100 } }\n  - text: done\n`,
        { scope: 'run' },
      );
      const child = spawn(process.execPath, [...CLI_NODE_ARGS, 'run', join(s.dir, 'recipe.yaml')], {
        cwd: s.dir,
        env: { ...env(s.dir), NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout.resume();
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      // Both servers run (the sandboxed alpha and the unconfined plain one) once plain has started.
      await until(
        () => existsSync(s.pidFile) && processesWith(s.marker).length >= 2,
        `both servers to start (${stderr})`,
        60_000,
      );
      child.kill(signal);
      await exited;
      await until(
        () => processesWith(s.marker).length === 0,
        `servers to end after ${signal}: ${processesWith(s.marker).map(commandLine).join(' | ')}`,
      );
    }, 120_000);
  }
});
