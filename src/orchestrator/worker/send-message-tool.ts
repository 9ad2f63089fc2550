// The send_message tool: how an agent talks to other agents of the run. The coordinator routes
// the message (see message-router.ts); the recipient gets it as a peer message between its tool
// batches, or at the start of its next prompt when it is idle.
import { z } from 'zod';
import type { AgentTool } from '../../agent/types.js';
import type { WorkerLink } from './worker-link.js';

const SendMessageParams = z.object({
  to: z
    .string()
    .min(1)
    .describe(
      'Who gets the message: a task id (every instance of it), an instance id like "apply.alpha", "parent" (the person running the orchestration) or "*" (every other running agent)',
    ),
  text: z.string().min(1).describe('The message. Be specific: what you found, decided or need.'),
});

export function createSendMessageTool(link: WorkerLink, self: string): AgentTool<typeof SendMessageParams> {
  return {
    name: 'send_message',
    label: 'Send message',
    description:
      'Send a message to another agent of this orchestration run (or to the parent). It arrives in their conversation before their next model call. Use it to share findings, hand over work or ask a question; it does not wait for an answer.',
    promptSnippet: 'send a message to another agent of the run (task id, instance id, "parent" or "*")',
    parameters: SendMessageParams,
    argumentAliases: { recipient: 'to', target: 'to', message: 'text', content: 'text' },
    async execute(_id, params) {
      const r = await link.sendMessage(params.to, params.text);
      if (r.error && r.delivered.length === 0 && r.queued.length === 0) throw new Error(`Message not sent: ${r.error}`);
      const parts: string[] = [];
      if (r.delivered.length) parts.push(`delivered to ${r.delivered.join(', ')}`);
      if (r.queued.length)
        parts.push(
          `queued for ${r.queued.join(', ')} (delivered when ${r.queued.length === 1 ? 'it starts' : 'they start'})`,
        );
      return { content: [{ type: 'text', text: `Message from ${self} ${parts.join('; ')}.` }], details: r };
    },
  };
}
