// Tunable limits of the tools layer, one object so callers can see and override every number.

export const TOOL_DEFAULTS = {
  /** Lines a tool returns before truncating: enough for most source files, small enough for a turn. */
  maxLines: 2000,
  /** Bytes a tool returns before truncating (50 KB): about 12k tokens, a safe share of any window. */
  maxBytes: 51200,
  /** grep caps each printed line so one minified file cannot eat the whole budget. */
  grepMaxLineLength: 500,
  /** grep matches returned by default; the model can ask for more with `limit`. */
  grepLimit: 100,
  /** find results returned by default. */
  findLimit: 1000,
  /** ls entries returned by default. */
  lsLimit: 500,
  /** bash keeps this many recent bytes in memory (2 x maxBytes) so the tail is always exact. */
  bashRollingBytes: 102400,
  /** Minimum gap between two onUpdate calls while a command streams, so UIs are not flooded. */
  bashUpdateIntervalMs: 100,
  /**
   * After the shell exits, how long to wait for its pipes to close. A background process that
   * inherited them would otherwise hold the tool open forever.
   */
  bashExitDrainMs: 500,
  /** Prefix of the temp file holding the full output of a truncated command. */
  bashTempPrefix: 'orchestrate-bash-',
  /** Largest image read returns (the API's limit is 5 MB of base64; no resizer is available). */
  imageMaxBytes: 4.5 * 1024 * 1024,
  /** Bytes inspected to tell text from binary. */
  binarySniffBytes: 8192,
  /** Lines of context around each change in edit's diff. */
  diffContextLines: 3,
  /** Above this many differing lines, the diff stops searching for a minimal script and shows a block replace. */
  diffMaxEditDistance: 4000,
  /** The not-found hint compares oldText with at most this many file lines (keeps the hint cheap). */
  editHintMaxLines: 20000,
  /** Ignore files honoured by grep and find, in every directory. */
  ignoreFileNames: ['.gitignore', '.ignore'] as readonly string[],
  /** Directories never walked by grep and find. */
  alwaysSkipDirs: ['.git'] as readonly string[],
  /** Context files, in order of preference within one directory. */
  contextFileNames: ['AGENTS.md', 'CLAUDE.md'] as readonly string[],
  /** The skill file inside a skill folder. */
  skillFileName: 'SKILL.md',
  /** Skill name rules (warnings only): the limits that keep names usable as commands. */
  skillNameMaxLength: 64,
  skillDescriptionMaxLength: 1024,
  /** Folder names (under the home directory and the project) where skills are discovered by default. */
  userSkillsDir: '.orchestrate/skills',
  projectSkillsDir: '.orchestrate/skills',
} as const;

export type ToolDefaults = typeof TOOL_DEFAULTS;
