// learned-limits.json in the run folder: the provider limits the run learned from response headers
// (learned-limits.ts), so a resume paces from them at once instead of probing again. Written by
// run-files.ts when a limit is learned or changes and at the run's end; read when the run resumes.
// It holds limits and a short hash of each API key, never a key. A file that is missing, damaged
// or from another version is ignored: the resume learns the limits again.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { LearnedLimitRecord } from './learned-limits.js';

export const LEARNED_LIMITS_FILE = 'learned-limits.json';

const limit = z.number().positive().optional();
const LearnedLimitsFileSchema = z.object({
  limits: z.array(
    z.object({
      provider: z.string(),
      model: z.string(),
      keyHash: z.string(),
      vendor: z.enum(['anthropic', 'openai']),
      limits: z.object({ requests: limit, inputTokens: limit, outputTokens: limit, tokens: limit }),
    }),
  ),
});

/** The file's text for `records`. */
export function learnedLimitsText(records: readonly LearnedLimitRecord[]): string {
  return `${JSON.stringify({ limits: records }, null, 2)}\n`;
}

/** The limits an earlier coordinator of the run in `runDir` learned; none when the file is missing or damaged. */
export function readLearnedLimits(runDir: string): LearnedLimitRecord[] {
  let text: string;
  try {
    text = readFileSync(join(runDir, LEARNED_LIMITS_FILE), 'utf8');
  } catch {
    return [];
  }
  try {
    const parsed = LearnedLimitsFileSchema.safeParse(JSON.parse(text));
    return parsed.success ? (parsed.data.limits as LearnedLimitRecord[]) : [];
  } catch {
    return [];
  }
}
