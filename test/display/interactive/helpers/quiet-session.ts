// What every interactive-app test's AgentSession shares, so a test's own options (model, tools,
// session file) are the ones it writes: a fixed system prompt, no skills or context files found
// on disk, no notices.
import type { CreateAgentSessionOptions } from '../../../../src/runtime/index.js';

export const QUIET_SESSION = {
  systemPrompt: 'test',
  defaultSkills: false,
  contextFiles: false,
  notify: () => {},
} satisfies Partial<CreateAgentSessionOptions>;
