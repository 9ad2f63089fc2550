import { describe, expect, it } from 'vitest';
import type { AgentMessage } from '../../src/agent/types.js';
import { emptyUsage } from '../../src/ai/usage.js';
import type { AssistantMessage } from '../../src/ai/types.js';
import { buildExtractiveSummary } from '../../src/runtime/extractive-summary.js';
import { parseSummary } from '../../src/session/parse-summary.js';

function assistant(content: AssistantMessage['content']): AssistantMessage {
  return {
    role: 'assistant',
    content,
    api: 'scripted',
    provider: 'scripted',
    model: 'scripted',
    usage: emptyUsage(),
    stopReason: 'stop',
    timestamp: 1,
  };
}
const user = (text: string): AgentMessage => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 1 });
const result = (id: string, text: string, isError = false): AgentMessage => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 't',
  content: [{ type: 'text', text }],
  isError,
  timestamp: 1,
});

const conversation: AgentMessage[] = [
  user('Rename log() to logger.info() in src/'),
  assistant([
    { type: 'toolCall', id: 'a', name: 'read', arguments: { path: 'src/app.ts' } },
    { type: 'toolCall', id: 'b', name: 'bash', arguments: { command: 'npm test' } },
  ]),
  result('a', 'file text'),
  result('b', 'Error: 2 tests failed\nmore', true),
  assistant([{ type: 'toolCall', id: 'c', name: 'edit', arguments: { path: 'src/app.ts', edits: [] } }]),
  result('c', 'ok'),
  assistant([{ type: 'text', text: 'Renamed 3 calls in src/app.ts.' }]),
];

describe('buildExtractiveSummary', () => {
  it('fills the fixed sections from the conversation', () => {
    const { summary, details } = buildExtractiveSummary({ messages: conversation });
    const s = parseSummary(summary);
    expect(s.goal).toBe('Rename log() to logger.info() in src/');
    expect(s.done).toEqual(['read src/app.ts', 'edit src/app.ts']);
    expect(s.blocked).toEqual(['bash: npm test: Error: 2 tests failed']);
    expect(s.criticalContext).toEqual(['Renamed 3 calls in src/app.ts.']);
    expect(details).toEqual({ readFiles: [], modifiedFiles: ['src/app.ts'] });
    for (const heading of [
      '## Goal',
      '## Constraints & Preferences',
      '### Done',
      '### In Progress',
      '### Blocked',
      '## Key Decisions',
      '## Next Steps',
      '## Critical Context',
    ]) {
      expect(summary).toContain(heading);
    }
  });

  it('keeps the previous summary and accumulates items and files', () => {
    const first = buildExtractiveSummary({ messages: conversation });
    const next = buildExtractiveSummary({
      previousSummary: first.summary,
      messages: [
        user('now update the docs'),
        assistant([{ type: 'toolCall', id: 'd', name: 'read', arguments: { path: 'README.md' } }]),
        result('d', 'docs'),
      ],
    });
    const s = parseSummary(next.summary);
    expect(s.goal).toBe('Rename log() to logger.info() in src/');
    expect(s.done).toEqual(['read src/app.ts', 'edit src/app.ts', 'read README.md']);
    expect(s.inProgress).toEqual(['Later request: now update the docs']);
    expect(next.details).toEqual({ readFiles: ['README.md'], modifiedFiles: ['src/app.ts'] });
  });
});
