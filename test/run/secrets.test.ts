// The secrets of a run (every credential the product knows, issue 37 item 4) and the run store's redaction: the log, what listeners see, and files
// written into the run folder (JSON keeps its layout) never hold a secret value.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { LoadedRecipe } from '../../src/recipe/index.js';
import type { McpServerSpec } from '../../src/tools/mcp/config.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/run/run-events.js';
import { RunStore } from '../../src/run/run-store.js';
import { runRedactor, runSecrets } from '../../src/run/secrets.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('run secrets', () => {
  it("are the listed variables that are set, plus the API key (this machine's: local, never shipped to a remote worker)", () => {
    expect(runSecrets({ secrets: ['A', 'MISSING'] }, { A: 'value-a', ANTHROPIC_API_KEY: 'sk-key-1' })).toEqual([
      { name: 'A', value: 'value-a' },
      { name: 'ANTHROPIC_API_KEY', value: 'sk-key-1', local: true },
    ]);
    expect(runRedactor({ secrets: [] }, {})).toBeUndefined();
    // A credential the recipe lists itself travels with its tasks, as every listed secret does.
    expect(runSecrets({ secrets: ['GITHUB_TOKEN'] }, { GITHUB_TOKEN: 'ghp-listed-1' })).toEqual([
      { name: 'GITHUB_TOKEN', value: 'ghp-listed-1' },
    ]);
  });

  it('cover every credential the product knows: api_key_env keys, provider headers, forge tokens, the cluster secret, credential-named MCP env and headers', () => {
    const keyFile = join(mkdtempSync(join(tmpdir(), 'orch-secrets-')), 'cluster.key');
    dirs.push(dirname(keyFile));
    writeFileSync(keyFile, 'cluster-file-secret-0123456789\n');
    const mcp = (name: string, entry: Record<string, unknown>): McpServerSpec => ({
      name,
      entry: entry as McpServerSpec['entry'],
      baseDir: '/',
      source: 'recipe.yaml',
    });
    const recipe = {
      secrets: [],
      providers: [
        {
          name: 'gateway',
          type: 'openai-compatible' as const,
          apiKeyEnv: 'MY_KEY',
          headers: { 'X-Team': 'team-hdr-0123456789abcdef', 'X-Debug': 'true', 'X-Api-Key': 'k-12' },
        },
      ],
      agents: {
        a: {
          providerConfig: { name: 'own', type: 'openai-compatible' as const, apiKeyEnv: 'AGENT_KEY' },
          mcpServers: [
            mcp('db', {
              command: 'db-mcp',
              args: ['--home', '${HOME}'],
              env: { DB_PASSWORD: 'literal-pass-1', LOG_LEVEL: 'debug-level' },
            }),
            mcp('gh', {
              url: 'https://mcp.example/${GH_TOKEN}',
              headers: { Authorization: 'Bearer ${REMOTE_TOKEN}', 'X-Title': 'my title' },
            }),
          ],
        },
      } as unknown as LoadedRecipe['agents'],
    };
    const env = {
      MY_KEY: 'my-key-value-1',
      AGENT_KEY: 'agent-key-value',
      OPENAI_API_KEY: 'openai-key-value',
      UNUSED_KEY: 'never-named-value',
      GITHUB_TOKEN: 'ghp-forge-token',
      GITLAB_TOKEN: 'glpat-forge-token',
      ORCHESTRATE_CLUSTER_SECRET_FILE: keyFile,
      REMOTE_TOKEN: 'remote-token-1',
      GH_TOKEN: 'gh-token-value',
      HOME: '/home/someone',
    };
    const byValue = new Map(runSecrets(recipe, env).map((s) => [s.value, s.name]));
    expect(byValue.get('my-key-value-1')).toBe('MY_KEY');
    expect(byValue.get('agent-key-value')).toBe('AGENT_KEY');
    expect(byValue.get('openai-key-value')).toBe('OPENAI_API_KEY');
    expect(byValue.get('team-hdr-0123456789abcdef')).toBe('gateway.headers.X-Team');
    expect(byValue.get('k-12')).toBe('gateway.headers.X-Api-Key');
    expect(byValue.get('ghp-forge-token')).toBe('GITHUB_TOKEN');
    expect(byValue.get('glpat-forge-token')).toBe('GITLAB_TOKEN');
    expect(byValue.get('gh-token-value')).toBe('GH_TOKEN');
    expect(byValue.get('cluster-file-secret-0123456789')).toBe('cluster secret');
    expect(byValue.get('literal-pass-1')).toBe('mcp.db.env.DB_PASSWORD');
    expect(byValue.get('Bearer remote-token-1')).toBe('mcp.gh.headers.Authorization');
    expect(byValue.get('remote-token-1')).toBeDefined();
    // Names that do not look like credentials, and variables nothing names, stay readable.
    for (const plain of ['true', 'debug-level', 'my title', '/home/someone', 'never-named-value'])
      expect(byValue.has(plain)).toBe(false);
    expect(runSecrets({ secrets: [] }, { ORCHESTRATE_CLUSTER_SECRET: 'cluster-env-secret' })).toEqual([
      { name: 'ORCHESTRATE_CLUSTER_SECRET', value: 'cluster-env-secret', local: true },
    ]);
  });

  it('never reach the run log, the listeners or the files of the run folder', () => {
    const runs = mkdtempSync(join(tmpdir(), 'orch-secrets-'));
    dirs.push(runs);
    const store = RunStore.create(runs, 'r1', {
      redactor: runRedactor({ secrets: ['TOKEN'] }, { TOKEN: 'tok_123456789', ANTHROPIC_API_KEY: 'sk-ant-xyz' }),
    });
    const seen: RunEvent[] = [];
    store.subscribe((e) => seen.push(e));
    store.append({
      type: 'instance_failed',
      task: 't',
      key: 't',
      attempt: 1,
      failure: 'error',
      error: 'key sk-ant-xyz rejected tok_123456789',
      final: true,
      durationMs: 1,
    });
    store.writeFile('result.json', `${JSON.stringify({ errors: [{ error: 'tok_123456789' }] }, null, 2)}\n`);
    store.writeFile('plan.md', '# plan\nuse tok_123456789\n');
    const log = readFileSync(store.logFile, 'utf8');
    expect(log).not.toMatch(/tok_123456789|sk-ant-xyz/);
    expect(log).toContain('key [REDACTED:ANTHROPIC_API_KEY] rejected [REDACTED:TOKEN]');
    expect(JSON.stringify(seen)).not.toContain('tok_123456789');
    expect(readFileSync(join(store.dir, 'result.json'), 'utf8')).toBe(
      `${JSON.stringify({ errors: [{ error: '[REDACTED:TOKEN]' }] }, null, 2)}\n`,
    );
    expect(readFileSync(join(store.dir, 'plan.md'), 'utf8')).toBe('# plan\nuse [REDACTED:TOKEN]\n');
    expect(store.redactText('printed tok_123456789')).toBe('printed [REDACTED:TOKEN]');
  });
});
