// Turn counts agree everywhere (issue 38: the summary table said `2t` where the log said
// `5 turns`): the table counted the agent loop's turns (turn_end) while the log, result.json and
// run_end counted every model call, the handoff summary and compactions included. One definition
// now (run/turn-count.ts): a turn is one completed reply of the agent loop. A real run through the
// Anthropic SDK against the fake Messages API: two turns (a tool call, then the answer) and the
// handoff summary call, which is a call but no turn.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatFinalSummary } from '../../src/display/final-summary.js';
import { buildHtmlReport } from '../../src/display/html-report.js';
import { PlainLog } from '../../src/display/plain-log.js';
import { formatRunDetails } from '../../src/display/run-details-text.js';
import { loadRunFolder } from '../../src/display/run-folder.js';
import type { ResultFile } from '../../src/run/run-state.js';
import { runOnFakeAnthropic, withFakeAnthropic } from '../helpers/fake-anthropic-run.js';
import type { RespondInput } from '../helpers/fake-anthropic-server.js';
import { isSummaryRequest } from '../helpers/summary-request.js';
import { cleanupTempDirs, conversationResponder, ofType } from '../orchestrator/helpers/run-fixtures.js';

afterAll(() => cleanupTempDirs());

describe('turn counts', () => {
  it('the summary table, the plain log, show, the report, result.json and run_end say the same number of turns', async () => {
    let summaryCalls = 0;
    let calls = 0;
    const base = conversationResponder([
      { match: /Count the files/, turns: [{ tools: [{ name: 'ls', args: { path: '.' } }] }, { text: 'two files' }] },
    ]);
    const respond = (req: RespondInput) => {
      calls++;
      if (isSummaryRequest(req.body as { system?: unknown; messages?: unknown })) summaryCalls++;
      return base(req);
    };
    await withFakeAnthropic({ respond }, async (server) => {
      const { outcome } = await runOnFakeAnthropic(
        server,
        `name: turns
model: claude-haiku-4-5
agents:
  counter: { tools: [ls] }
tasks:
  - id: count
    agent: counter
    prompt: "Count the files"
`,
        { files: { 'a.txt': 'a' } },
      );
      expect(outcome.status).toBe('succeeded');
      // The run made more calls than turns: that is what the counts used to disagree on.
      expect(summaryCalls).toBeGreaterThan(0);
      expect(calls).toBe(2 + summaryCalls);

      const folder = loadRunFolder(outcome.dir);
      // The summary table: "count  done  2t ...".
      expect(formatFinalSummary(folder.state)).toMatch(/^ {2}count\s+done\s+2t\s/m);
      // The plain log of the same events: "count: done in ..., 2 turns, ...".
      const lines: string[] = [];
      const log = new PlainLog({
        write: (s: string) => {
          lines.push(s);
          return true;
        },
      });
      for (const e of folder.events) log.handle(e);
      expect(lines.join('')).toMatch(/ count: done in \S+, 2 turns, /);
      // show and the report.
      expect(formatRunDetails(folder)).toMatch(/usage: 2 turns · /);
      expect(buildHtmlReport(folder)).toMatch(/<td>count<\/td>.*?<td class="num">1<\/td><td class="num">2<\/td>/);
      // The coordinator's own counts: instance_done, result.json, run_end.
      expect(ofType(folder.events, 'instance_done')[0]?.usage.turns).toBe(2);
      const result = JSON.parse(readFileSync(join(outcome.dir, 'result.json'), 'utf8')) as ResultFile;
      expect(result.instances[0]?.usage.turns).toBe(2);
      expect(result.usage.turns).toBe(2);
      expect(ofType(folder.events, 'run_end')[0]?.usage.turns).toBe(2);
    });
  }, 120_000);
});
