import { describe, expect, it } from 'vitest';
import { convertToLlm } from '../../src/agent/convert-to-llm.js';
import type { AgentMessage } from '../../src/agent/types.js';

const textOf = (m: { content: unknown }): string =>
  typeof m.content === 'string'
    ? m.content
    : (m.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('');

describe('convertToLlm', () => {
  it('passes user, assistant and tool results through unchanged (same objects)', () => {
    const user: AgentMessage = { role: 'user', content: 'hi', timestamp: 1 };
    const result: AgentMessage = {
      role: 'toolResult',
      toolCallId: 'c',
      toolName: 't',
      content: [],
      isError: false,
      timestamp: 2,
    };
    const out = convertToLlm([user, result]);
    expect(out[0]).toBe(user);
    expect(out[1]).toBe(result);
  });

  it('turns summaries into user messages with a preface and a <summary> block', () => {
    const [compaction, branch] = convertToLlm([
      { role: 'compactionSummary', summary: '## Goal\nship it', tokensBefore: 5000, timestamp: 1 },
      { role: 'branchSummary', summary: 'tried X', fromId: 'abc', timestamp: 2 },
    ]);
    expect(compaction!.role).toBe('user');
    expect(textOf(compaction!)).toMatch(
      /^Earlier history of this conversation was compacted.*\n\n<summary>\n## Goal\nship it\n<\/summary>$/,
    );
    expect(textOf(branch!)).toMatch(
      /summary of a branch this conversation came back from:\n\n<summary>\ntried X\n<\/summary>$/,
    );
  });

  it('custom messages become user messages with their content; peer messages are wrapped and attributed', () => {
    const [custom, peer] = convertToLlm([
      { role: 'custom', customType: 'plan', content: 'the plan', display: false, timestamp: 1 },
      { role: 'peer', from: 'planner "A"', text: 'do step 2', timestamp: 2 },
    ]);
    expect(custom).toEqual({ role: 'user', content: 'the plan', timestamp: 1 });
    expect(textOf(peer!)).toBe(
      '<peer-message from="planner &quot;A&quot;">\nMessage from planner "A":\n\ndo step 2\n</peer-message>',
    );
  });

  it('renders shell runs with output, exit code and cancellation, and drops excluded ones', () => {
    const base = { role: 'bashExecution' as const, cancelled: false, truncated: false, timestamp: 1 };
    const out = convertToLlm([
      { ...base, command: 'ls', output: 'a\nb\n', exitCode: 0 },
      { ...base, command: 'false', output: '', exitCode: 1 },
      { ...base, command: 'sleep 9', output: '', exitCode: null, cancelled: true },
      { ...base, command: 'secret', output: 'x', exitCode: 0, excludeFromContext: true },
      { ...base, command: 'big', output: 'tail', exitCode: 0, truncated: true, fullOutputPath: '/tmp/out.log' },
    ]);
    expect(out).toHaveLength(4);
    expect(textOf(out[0]!)).toBe('Ran `ls`\n```\na\nb\n```');
    expect(textOf(out[1]!)).toBe('Ran `false`\n(no output)\nCommand exited with code 1');
    expect(textOf(out[2]!)).toBe('Ran `sleep 9`\n(no output)\n(command cancelled)');
    expect(textOf(out[3]!)).toContain('[Output truncated. Full output: /tmp/out.log]');
  });

  it('never returns an internal role', () => {
    const all: AgentMessage[] = [
      { role: 'compactionSummary', summary: 's', tokensBefore: 1, timestamp: 1 },
      { role: 'peer', from: 'a', text: 'b', timestamp: 1 },
      { role: 'custom', customType: 'c', content: [{ type: 'text', text: 'x' }], display: true, timestamp: 1 },
      { role: 'made-up', timestamp: 1 } as unknown as AgentMessage,
    ];
    expect(convertToLlm(all).map((m) => m.role)).toEqual(['user', 'user', 'user']);
  });
});
