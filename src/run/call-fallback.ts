// The shape of a model call that moved to a `fallback:` model, apart from run-events.ts: the
// worker protocol (orchestrator/protocol.ts) validates it in every agent thread, and importing
// run-events.ts there built every run event's schema at each thread's start.
import { z } from 'zod';

/**
 * A model call that did not end on the agent's own model (recipe `fallback:`): `served` is the
 * provider/model that answered it (or failed last, with `failed`), `reason` why the ones before
 * it were not used (their failure, or a cool-down after one). The worker reports it in this shape
 * (orchestrator/protocol.ts) and the run log records it with the instance it belongs to.
 */
export const CallFallbackSchema = z.object({
  type: z.literal('call_fallback'),
  primary: z.string(),
  served: z.string(),
  reason: z.string(),
  kind: z.string().optional(),
  status: z.number().optional(),
  failed: z.boolean().optional(),
});
