// MCP servers in a distributed run: a real redis-server and an `orchestrate worker` process; the
// agent runs on the worker, which starts the stdio fixture server there (sandboxed, as locally)
// and expands its ${VAR}s with the worker's own environment, not the coordinator's. The worker
// policy applies to MCP servers like to commands: an unconfined server (sandbox: none) is refused
// by a worker started without --allow-unsandboxed, and the failure names the flag.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOnCluster } from './helpers/run-on-cluster.js';
import { cleanupTempDirs, events, ofType, tempProject } from '../orchestrator/helpers/run-fixtures.js';
import { SECRET_ENV, useCluster } from './helpers/cluster-fixture.js';

const STDIO_FIXTURE = fileURLToPath(new URL('../fixtures/mcp/stdio-server.mjs', import.meta.url));
const cluster = useCluster('MCP in distributed runs');
const skip = cluster.skip;

beforeAll(async () => {
  if (!skip)
    await cluster.startWorker('far', {
      concurrency: 1,
      drainLimitMs: 2_000,
      env: { MCP_WORKER_GREETING: 'hello from the worker' },
    });
}, 90_000);
afterAll(() => cleanupTempDirs());

function project(sandbox: 'workspace' | 'none'): string {
  return tempProject({
    'recipe.yaml': `name: mcp-cluster
provider: scripted
script: script.yaml
mcp_servers:
  alpha:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(STDIO_FIXTURE)}, alpha]
    env: { GREETING: "\${MCP_WORKER_GREETING:-from the coordinator}" }
    sandbox: ${sandbox}
agents:
  helper: { tools: [read, mcp__alpha__echo, mcp__alpha__env] }
tasks:
  - id: t
    agent: helper
    prompt: go
    retries: 0
`,
    'script.yaml': `turns:
  - tools:
      - { name: mcp__alpha__echo, args: { text: far away } }
      - { name: mcp__alpha__env, args: { name: GREETING } }
  - text: done
`,
  });
}

describe.skipIf(skip)('MCP servers in a distributed run', () => {
  it("the worker starts the agent's server in its sandbox, with its own environment", async () => {
    const outcome = await runOnCluster(cluster.redis.url, SECRET_ENV, project('workspace'));
    expect(outcome.status).toBe('succeeded');
    const log = events(outcome.dir);
    expect(ofType(log, 'instance_start').map((e) => e.worker)).toEqual(['far']);
    const ends = ofType(log, 'agent_event').filter((e) => e.event.type === 'tool_execution_end');
    const text = JSON.stringify(ends);
    expect(text).toContain('alpha: far away');
    expect(text).toContain('GREETING=hello from the worker');
    const sessions = readdirSync(join(outcome.dir, 'sessions')).map((f) =>
      readFileSync(join(outcome.dir, 'sessions', f), 'utf8'),
    );
    expect(sessions.join('\n')).toContain('alpha: far away');
  }, 180_000);

  it('an unconfined server is refused by a worker without --allow-unsandboxed, naming the flag', async () => {
    const outcome = await runOnCluster(cluster.redis.url, SECRET_ENV, project('none'));
    expect(outcome.status).toBe('failed');
    const failed = ofType(events(outcome.dir), 'instance_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toMatch(/MCP server "alpha" unconfined \(sandbox: none\).*--allow-unsandboxed/);
  }, 180_000);
});
