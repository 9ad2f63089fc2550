// Example extension: a protected-paths gate. It refuses edit and write calls on files matching
// configured globs (secrets, lock files, git internals), so an agent cannot change them by
// accident. The model gets the refusal as the tool result and can work around it.
//
//   orchestrate agent --extension recipes/extensions/protected-paths.ts "..."
//   createAgentSession({ extensions: [{ path: 'recipes/extensions/protected-paths.ts', options: { patterns: ['*.key'] } }] })
//
// Patterns without a "/" match the file name anywhere (".env" protects sub/.env too); patterns
// with a "/" match the path relative to the working directory ("config/prod/**").
// Options: patterns (string[]), tools (string[], default edit and write).
// Environment: ORCHESTRATE_PROTECTED_PATHS="a,b" replaces the default patterns.
// It does not police bash: a shell command can still write anywhere a bash policy allows.
import { basename, relative, resolve, sep } from 'node:path';
// Outside this repository: import type { ExtensionAPI } from 'orchestrate-agents';
import type { ExtensionAPI } from '../../src/runtime/index.js';

export const DEFAULT_PROTECTED = ['.env', '.env.*', '*.lock', 'package-lock.json', '*.pem', '*.key', '.git/**'];

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
}

export default function protectedPaths(api: ExtensionAPI): void {
  const fromEnv = process.env.ORCHESTRATE_PROTECTED_PATHS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const patterns = stringList(api.options.patterns) ?? (fromEnv?.length ? fromEnv : DEFAULT_PROTECTED);
  const tools = new Set(stringList(api.options.tools) ?? ['edit', 'write']);

  api.on('before_tool_call', (call) => {
    if (!tools.has(call.toolName)) return;
    const raw = call.args.path;
    if (typeof raw !== 'string') return;
    const abs = resolve(call.cwd, raw);
    const rel = relative(call.cwd, abs).split(sep).join('/');
    const hit = patterns.find((p) => (p.includes('/') ? api.matchesGlob(p, rel) : api.matchesGlob(p, basename(abs))));
    if (!hit) return;
    return {
      block: true,
      reason: `"${raw}" is a protected file (it matches "${hit}"), so ${call.toolName} was refused. Leave it unchanged, or ask the user to change it.`,
    };
  });

  api.registerCommand('protected', {
    description: 'List the protected path patterns',
    handler: (_args, ctx) => ctx.notify(`Protected paths: ${patterns.join(', ')}`),
  });
}
