import { configDefaults, defineConfig } from 'vitest/config';

// Test files that start many processes, kill them at chosen instants, or drive a terminal: they
// run one at a time, after the rest, so nothing else competes with them for the CPU (CI has 2
// cores). Everything else runs two files at a time; vitest's default on 2 cores is one.
// worker-faults.test.ts (reliability) runs with the rest: it spends its time waiting for a task
// timeout of 30 s, far above a thread start on a loaded machine, and times no kill; so does
// peek-linger.test.ts, whose waits are on messages and whose scripted replies outlast the linger.
// The cluster files named in WITH_THE_REST and reliability's confinement.test.ts run with the rest
// too: they start no process but a redis-server and kill nothing (an in-process Redis client,
// message parsing, archives, policies, path checks), and none waits on a clock (#43). So do reliability's bad-input (its CLI runs are
// in-process main() calls, two real ones), api-faults (an in-process run against a faulty fake
// API: it waits out retry delays, times nothing) and secrets (a few CLI processes one after
// another, none killed).
const WITH_THE_REST = [
  'cluster-trust',
  'cluster-wire',
  'module-closure',
  'stream-batch',
  'stream-reader',
  'worker-policy-mcp',
  'worker-roster',
  'workspace-fast-transfer',
  'workspace-transfer',
];
const ONE_AT_A_TIME = [
  `test/cluster/**/!(${WITH_THE_REST.join('|')}).test.ts`,
  'test/reliability/**/!(worker-faults|confinement|bad-input|api-faults|secrets).test.ts',
  'test/**/*tty*.test.ts',
  'test/**/*interactive*.test.ts',
  // (not *kill*: that takes skills.test.ts too)
  'test/**/*-kill*.test.ts',
  'test/**/kill-*.test.ts',
];
const NEVER = [...configDefaults.exclude, 'bench/**', 'test/fixtures/**'];

// The lower layers' tests (`npm run test:quick`) share their worker processes (isolate: false):
// each file in a fresh fork spent more time importing vitest, the SDKs and src/ than running
// (#43). A file here sees the modules another file of its worker loaded, so it must not depend on
// a fresh module state, mock a module, or leave a process-wide change behind (the few that set an
// environment variable restore it). Files that cannot share are listed in OWN_PROCESS with why,
// and run isolated with the rest.
const UNIT_FOLDERS = ['util', 'ai', 'agent', 'session', 'recipe', 'run', 'display', 'tools', 'runtime'];
const OWN_PROCESS = [
  // vi.mock('node:child_process') must apply before product-git.ts is first imported, and the
  // test needs the process's first product git (the sandbox probe is cached per process).
  'test/tools/product-git.test.ts',
  // ink reads CI / CONTINUOUS_INTEGRATION once, when it is first imported; this test clears them to
  // draw as on a terminal, which works only if no earlier file of its process loaded ink (under
  // CI=true, as .ci/run sets, both its tests failed in a shared process).
  'test/display/interactive/scrollback.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT_FOLDERS.map((folder) => `test/${folder}/**/*.test.ts`),
          exclude: [...NEVER, ...ONE_AT_A_TIME, ...OWN_PROCESS],
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'two-at-a-time',
          include: [`test/!(${UNIT_FOLDERS.join('|')})/**/*.test.ts`, ...OWN_PROCESS],
          exclude: [...NEVER, ...ONE_AT_A_TIME],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'one-at-a-time',
          include: ONE_AT_A_TIME,
          exclude: NEVER,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
