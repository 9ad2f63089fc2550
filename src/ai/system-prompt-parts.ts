// A system prompt in two parts: the part every session of one agent definition shares (identity,
// tool guidance, the recipe's agent text, skills) and the part that is this session's own (context
// files, date, working folder). The prompt stays one string through every layer; the marker
// between the parts tells a caching provider where the shared prefix ends (Anthropic: a cache
// breakpoint after the shared block, so a fan-out writes tools + shared text to the cache once
// and every other instance reads it). Providers without caching send the plain text.

/** Sits between the shared and the per-session part; never reaches a model (see plainSystemPrompt). */
export const SYSTEM_PROMPT_SESSION_MARKER = '\n\n<!-- orchestrate: per-session part -->\n\n';

/** The two parts as one prompt string (an empty part leaves the marker out). */
export function joinSystemPrompt(shared: string, session: string): string {
  if (session.trim() === '') return shared;
  if (shared.trim() === '') return session;
  return `${shared}${SYSTEM_PROMPT_SESSION_MARKER}${session}`;
}

/** The shared part and the per-session part ('' when the prompt has no marker). */
export function splitSystemPrompt(prompt: string): { shared: string; session: string } {
  const at = prompt.indexOf(SYSTEM_PROMPT_SESSION_MARKER);
  if (at === -1) return { shared: prompt, session: '' };
  // A prompt put together from several marked prompts keeps only its first split.
  const session = prompt
    .slice(at + SYSTEM_PROMPT_SESSION_MARKER.length)
    .split(SYSTEM_PROMPT_SESSION_MARKER)
    .join('\n\n');
  return { shared: prompt.slice(0, at), session };
}

/** The text a model reads: the parts separated by a blank line, as before the split existed. */
export function plainSystemPrompt(prompt: string): string {
  const { shared, session } = splitSystemPrompt(prompt);
  return session === '' ? shared : `${shared}\n\n${session}`;
}
