// Where a session's command hooks run: the same confinement as its bash commands (the sandbox
// mode and hidden paths of the bash tool's options), with the workspace root writable. A hook
// script kept next to its settings file (~/.claude/hooks/fmt.sh), its recipe or its agent file is
// made visible read-only, since the sandbox's home is private and ~/.claude is hidden.
import { dirname, isAbsolute, join } from 'node:path';
import { resolveSandboxMode, warnOnce, type SandboxOptions } from '../tools/sandbox.js';
import { HOOK_EVENTS, type HooksConfig } from './command-hooks.js';
import type { HookSandbox } from './hook-runner.js';

export function hookSandbox(
  config: HooksConfig,
  workspaceRoot: string,
  sandbox: SandboxOptions | undefined,
  notify: (message: string) => void,
): { config: HooksConfig; projectDir: string; sandbox: HookSandbox } {
  const resolved = resolveSandboxMode(sandbox);
  if (resolved.warning) warnOnce(resolved.warning, sandbox?.warn ?? notify);
  const hookDirs = new Set<string>();
  for (const event of HOOK_EVENTS) {
    for (const group of config[event] ?? [])
      for (const h of group.hooks) {
        if (h.source?.endsWith('.json')) hookDirs.add(join(dirname(h.source), 'hooks'));
        // A recipe's or an agent file's hooks: scripts kept next to it stay readable.
        else if (h.source && /\.(ya?ml|md)$/.test(h.source) && isAbsolute(h.source)) hookDirs.add(dirname(h.source));
      }
  }
  return {
    config,
    projectDir: workspaceRoot,
    sandbox: {
      mode: resolved.mode,
      ...(sandbox?.bwrapPath ? { bwrapPath: sandbox.bwrapPath } : {}),
      writable: [workspaceRoot],
      ...(sandbox?.hide ? { hide: sandbox.hide } : {}),
      readOnly: [...(sandbox?.readOnly ?? []), ...hookDirs],
      network: sandbox?.network ?? false,
    },
  };
}
