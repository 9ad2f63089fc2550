// The worker policy for a job's MCP servers (unit): they are programs and connections the job
// asks the worker to start, so each kind needs the flag its command or connection would need.
import { describe, expect, it } from 'vitest';
import { policyRefusal, STRICT_POLICY, type PolicyTask } from '../../src/cluster/worker-policy.js';

const sandboxed = { mode: 'workspace', network: false };
const job = (
  servers: { name: string; entry: Record<string, unknown> }[],
  extra: Partial<PolicyTask> = {},
): PolicyTask => ({
  sandbox: sandboxed,
  agent: { mcpServers: servers },
  ...extra,
});
const stdio = { command: 'node', args: ['server.js'] };

describe('worker policy: MCP servers', () => {
  it('a sandboxed stdio server without network runs on a strict worker', () => {
    expect(policyRefusal(job([{ name: 'a', entry: stdio }]), STRICT_POLICY, undefined)).toBeUndefined();
  });

  it('unconfined, networked and remote servers need --allow-unsandboxed / --allow-network', () => {
    expect(policyRefusal(job([{ name: 'a', entry: { ...stdio, sandbox: 'none' } }]), STRICT_POLICY, undefined)).toMatch(
      /"a" unconfined.*--allow-unsandboxed/,
    );
    expect(policyRefusal(job([{ name: 'a', entry: { ...stdio, network: true } }]), STRICT_POLICY, undefined)).toMatch(
      /"a" reach the network.*--allow-network/,
    );
    const remote = job([{ name: 'gh', entry: { type: 'http', url: 'https://mcp.example.com/x?token=1' } }]);
    expect(policyRefusal(remote, STRICT_POLICY, undefined)).toMatch(
      /"gh" at https:\/\/mcp\.example\.com; start the worker with --allow-network/,
    );
    expect(policyRefusal(remote, { ...STRICT_POLICY, allowNetwork: true }, undefined)).toBeUndefined();
  });

  it("a provider key is never expanded into a job's server, whatever the flags", () => {
    const all = {
      allowBaseUrl: true,
      allowUnsandboxed: true,
      allowNetwork: true,
      allowExtensions: true,
      allowRepoConfig: true,
    };
    const leak = job([{ name: 'x', entry: { ...stdio, env: { K: '${ANTHROPIC_API_KEY}' } } }]);
    expect(policyRefusal(leak, all, undefined)).toMatch(/"x" asks for this worker's ANTHROPIC_API_KEY/);
  });

  it("servers from the repository's .mcp.json (trust_repo_config) need --allow-repo-config", () => {
    const repo: PolicyTask = { sandbox: sandboxed, trustRepoConfig: true, agent: { mcpRepoPick: 'all' } };
    expect(policyRefusal(repo, STRICT_POLICY, undefined)).toMatch(/trust_repo_config.*--allow-repo-config/);
    expect(policyRefusal(repo, { ...STRICT_POLICY, allowRepoConfig: true }, undefined)).toBeUndefined();
    expect(policyRefusal({ ...repo, trustRepoConfig: undefined }, STRICT_POLICY, undefined)).toBeUndefined();
  });
});
