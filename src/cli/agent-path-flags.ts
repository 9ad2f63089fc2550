// The path flags of `orchestrate agent` checked before a session starts: --cwd must be a folder,
// each --skills a folder or one skill's .md file, --session a file (or nothing yet), --session-dir
// a folder (or nothing yet) and only without --session / --no-session. A mistyped --skills path
// and a --session-dir beside --session were dropped without a word; the others
// surfaced later as something else: tools failing in a missing folder while the model spent on,
// an "internal error" stack trace for a --session folder, "free disk space" for a --session-dir file.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentSessionConfigError } from '../runtime/create-agent-session.js';
import type { CommandArgs } from './command.js';

/** What is at `path`: a folder, a file (anything else that is not a folder), or nothing. */
function kindOf(path: string): 'folder' | 'file' | 'none' {
  const st = statSync(path, { throwIfNoEntry: false });
  return st === undefined ? 'none' : st.isDirectory() ? 'folder' : 'file';
}

/** Throws AgentSessionConfigError (a usage error) for a path flag that cannot work; `cwd` resolves them. */
export function checkAgentPathFlags(args: CommandArgs, cwd: string): void {
  if (typeof args.cwd === 'string') {
    const dir = resolve(cwd, args.cwd);
    const kind = kindOf(dir);
    if (kind !== 'folder')
      throw new AgentSessionConfigError(
        `--cwd ${args.cwd}: ${kind === 'file' ? `${dir} is a file, not a folder` : `no folder ${dir}`}; give the folder the agent works in.`,
      );
  }
  for (const skills of [args.skills].flat()) {
    if (typeof skills !== 'string') continue;
    const kind = kindOf(resolve(cwd, skills));
    // A skill root is a folder of skills, or one skill's .md file (tools/skills.ts).
    if (kind === 'none' || (kind === 'file' && !skills.endsWith('.md')))
      throw new AgentSessionConfigError(
        `--skills ${skills}: ${kind === 'file' ? 'not a folder or a .md skill file' : 'nothing is there'}; give a folder of skills or one skill's .md file.`,
      );
  }
  // --session-dir is where new sessions go: with a named session file, or none, it did nothing.
  if (typeof args['session-dir'] === 'string' && (typeof args.session === 'string' || args.session === false))
    throw new AgentSessionConfigError(
      `--session-dir is the folder for new sessions; with ${args.session === false ? '--no-session nothing is written' : `--session ${args.session} the session is that file`}: give one of the two.`,
    );
  if (typeof args.session === 'string' && kindOf(resolve(cwd, args.session)) === 'folder')
    throw new AgentSessionConfigError(
      `--session ${args.session} is a folder; give a session file (.jsonl), or --session-dir ${args.session} to keep new sessions in that folder.`,
    );
  if (typeof args['session-dir'] === 'string' && kindOf(resolve(cwd, args['session-dir'])) === 'file')
    throw new AgentSessionConfigError(
      `--session-dir ${args['session-dir']} is a file, not a folder; give a folder for the session files, or --session ${args['session-dir']} to use that one file.`,
    );
}
