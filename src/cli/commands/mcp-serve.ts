// `orchestrate mcp serve [--http PORT]`: orchestrate as an MCP server, on stdin/stdout (the way
// Claude Code, Codex and Cursor start servers) or as Streamable HTTP on 127.0.0.1. The flags are
// the CLI's contract and stay here; the server is src/mcp/, the other entry point beside cli/ (both
// rank 9, both on top of service/, neither importing the other). `orchestrate` is one program, so
// this command hands the process over to that entry: it loads src/mcp/serve by the path in
// MCP_ENTRY, only when it runs (the server brings the MCP SDK, which other commands never pay for).
// That hand-over is the one place cli/ names mcp/, and test/architecture/entry-handover.test.ts
// holds it to that: the path must name src/mcp/serve, nothing else in cli/ may name mcp/, and
// nothing in mcp/ may import cli/.
import { MCP_SERVER_DEFAULTS } from '../../service/mcp-server-defaults.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../command.js';

/** The MCP entry point's module, relative to this file (a hand-over between entries, see the header). */
export const MCP_ENTRY = '../../mcp/serve.js';

/** What this command needs of src/mcp/serve (its real signature is checked by the hand-over test). */
export interface McpEntry {
  serveMcp(
    opts: { httpPort?: number; runsDir?: string; progressMs: number },
    io: {
      stderr: (text: string) => void;
      cwd: string;
      env: Record<string, string | undefined>;
    },
  ): Promise<{ ok: boolean }>;
}

export const mcpServeCommand: CliCommand = {
  command: 'serve',
  describe:
    'Serve orchestrate as an MCP server (stdio; --http PORT: Streamable HTTP on 127.0.0.1): validate, dry-run, start, watch, cancel, steer and resume runs',
  builder: (y) =>
    y
      .option('http', {
        type: 'number',
        describe:
          'Serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio (0: a free port, printed on stderr); clients must send Authorization: Bearer <token>: ORCHESTRATE_MCP_TOKEN, or without it a token made once and kept in ~/.orchestrate/mcp-token (ORCHESTRATE_HOME; mode 0600)',
      })
      .option('run-dir', {
        type: 'string',
        describe:
          'Folder holding run records, for tools that are not given run_dir (default .orchestrate/runs in the current folder)',
      })
      .option('progress-ms', {
        type: 'number',
        default: MCP_SERVER_DEFAULTS.progressMs,
        describe:
          'While a tool waits for a run: a progress notification at least this often (keeps clients with short request timeouts waiting)',
      })
      .check((a) => {
        const port = a.http;
        if (port !== undefined && !(typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535))
          throw new Error(`--http must be a port number from 0 to 65535 (got ${String(port)})`);
        const every = a['progress-ms'];
        if (!(typeof every === 'number' && Number.isInteger(every) && every >= 50))
          throw new Error(`--progress-ms must be a whole number of milliseconds, at least 50 (got ${String(every)})`);
        if (Array.isArray(a['run-dir'])) throw new Error('--run-dir was given more than once');
        return true;
      })
      .example([
        ['orchestrate mcp serve', 'stdio: what `claude mcp add orchestrate -- orchestrate mcp serve` starts'],
        ['orchestrate mcp serve --http 8765', 'Streamable HTTP on http://127.0.0.1:8765/mcp'],
      ]),
  run: async (args, ctx) => {
    const { serveMcp } = (await import(MCP_ENTRY)) as McpEntry;
    const served = await serveMcp(
      {
        ...(typeof args.http === 'number' ? { httpPort: args.http } : {}),
        ...(typeof args['run-dir'] === 'string' ? { runsDir: args['run-dir'] } : {}),
        progressMs: typeof args['progress-ms'] === 'number' ? args['progress-ms'] : MCP_SERVER_DEFAULTS.progressMs,
      },
      ctx,
    );
    // Could not start (no usable token, the port taken): the reason is already on stderr.
    return served.ok ? EXIT.ok : EXIT.usage;
  },
};
