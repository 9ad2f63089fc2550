// `orchestrate mcp` as a command with subcommands: help, completion and usage errors (in-process).
import { describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from './run-cli.js';

describe('orchestrate mcp', () => {
  it('is listed by --help and by the shell completion, and completes its subcommands', async () => {
    const help = await runCli(['--help']);
    expect(help.stdout).toMatch(/orchestrate mcp\s+MCP: serve orchestrate/);
    const top = await runCli(['--get-yargs-completions', 'orchestrate', '']);
    expect(top.stdout.split('\n')).toContain('mcp');
    const sub = await runCli(['--get-yargs-completions', 'orchestrate', 'mcp', '']);
    expect(sub.stdout.split('\n')).toContain('serve');
    const flags = await runCli(['--get-yargs-completions', 'orchestrate', 'mcp', 'serve', '--']);
    expect(flags.stdout.split('\n')).toEqual(expect.arrayContaining(['--http', '--run-dir', '--progress-ms']));
    const serveHelp = await runCli(['mcp', 'serve', '--help']);
    expect(serveHelp.code).toBe(0);
    expect(serveHelp.stdout).toContain('--http');
  });

  it.each([
    [['mcp'], 'Give a subcommand: serve'],
    [['mcp', 'srve'], 'Did you mean serve?'],
    [['mcp', 'serve', '--http', 'abc'], '--http takes a number (got "abc")'],
    [['mcp', 'serve', '--http', '70000'], '--http must be a port number from 0 to 65535 (got 70000)'],
    [['mcp', 'serve', '--progress-ms', '10'], '--progress-ms must be a whole number of milliseconds, at least 50'],
  ])('%j is a usage error (exit 2) with the reason', async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });
});
