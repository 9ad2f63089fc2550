// Layer 2, tools: the built-in coding tools, truncation, globs, workspace confinement, skills,
// context files and the system prompt.
export { TOOL_DEFAULTS, type ToolDefaults } from './defaults.js';
export {
  BUILTIN_TOOL_NAMES,
  DEFAULT_TOOL_NAMES,
  READ_ONLY_TOOL_NAMES,
  createCodingTools,
  createTool,
  isBuiltinToolName,
  type BuiltinToolName,
  type CodingToolsOptions,
} from './coding-tools.js';

export { createReadTool, readParameters, type ReadToolDetails, type ReadToolOptions } from './read.js';
export { createBashTool, bashParameters, type BashToolDetails, type BashToolOptions } from './bash.js';
export { checkBashPolicy, compileBashRule, splitShellCommands, type BashPolicy } from './bash-policy.js';
export { OutputCapture, type OutputCaptureOptions, type OutputSnapshot } from './output-capture.js';
export { createEditTool, editParameters, type EditToolDetails, type EditToolOptions } from './edit.js';
export { createWriteTool, writeParameters, type WriteToolOptions } from './write.js';
export { HardLinkedFileError, replaceFile, replaceFileSync, type ReplaceFileOptions } from './atomic-write.js';
export { createLsTool, lsParameters, type LsToolDetails, type LsToolOptions } from './ls.js';
export { createGrepTool, grepParameters, type GrepToolDetails, type GrepToolOptions } from './grep.js';
export { createFindTool, findParameters, type FindToolDetails, type FindToolOptions } from './find.js';

export {
  countNewlines,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
  type TruncationOptions,
  type TruncationResult,
} from './truncate.js';
export { unifiedDiff, type DiffOptions, type DiffResult } from './diff.js';
export { locate, normalizeForMatch, type MatchResult, type NormalizedText } from './fuzzy-match.js';
export {
  GlobSyntaxError,
  compileGlob,
  globError,
  globStaticBase,
  hasGlobSyntax,
  matchGlob,
  type GlobOptions,
} from './glob.js';
export { expandGlob, type ExpandGlobOptions } from './glob-expand.js';
export { parseIgnoreRules, ignoreFileAt, isIgnored, type IgnoreRule } from './gitignore.js';
export { walkTree, type WalkEntry, type WalkOptions } from './file-walk.js';
export {
  Workspace,
  expandPath,
  isInside,
  realpathOfNearest,
  type PathAccess,
  type WorkspaceOptions,
} from './workspace.js';
export { detectImageMime } from './image-sniff.js';

export { parseFrontmatter, type Frontmatter } from './frontmatter.js';
export {
  defaultSkillRoots,
  expandSkillCommand,
  formatSkillsForPrompt,
  loadSkills,
  type LoadSkillsResult,
  type Skill,
  type SkillDiagnostic,
  type SkillRoot,
} from './skills.js';
export { loadContextFiles, type ContextFile, type LoadContextFilesOptions } from './context-files.js';
export { buildSystemPrompt, type BuildSystemPromptOptions, type PromptTool } from './system-prompt.js';
