// The report's stylesheet, inlined into the page (no network, one file). Status colours match the
// terminal views: green done, red failed, amber retried/waiting, grey skipped.

export const REPORT_CSS = `
:root {
  --fg: #1d2330; --muted: #6b7280; --bg: #ffffff; --panel: #f6f7f9; --line: #e3e6eb;
  --done: #2f9e5b; --failed: #d64545; --retry: #e0a43a; --interrupted: #8a94a6; --skipped: #b8bec9;
  --wait: #f1d48a; --tokens: #4f7bd9; --cost: #8a5cd6;
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 18px 28px 8px; border-bottom: 1px solid var(--line); background: var(--panel); }
h1 { margin: 0 0 4px; font-size: 22px; }
h2 { font-size: 17px; margin: 26px 0 10px; display: flex; align-items: center; gap: 12px; }
h3, h4, h5, h6 { margin: 14px 0 6px; }
main { padding: 0 28px 40px; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #eef0f3; padding: 1px 4px; border-radius: 3px; }
pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-word;
  background: var(--panel); border: 1px solid var(--line); border-radius: 5px; padding: 8px 10px; margin: 4px 0; max-height: 420px; overflow: auto; }
.meta { color: var(--muted); margin: 2px 0 8px; }
.muted { color: var(--muted); font-weight: normal; }
.small { font-size: 12px; }
.note { color: var(--muted); font-size: 12px; font-style: italic; margin: 2px 0 6px; }
.error { color: var(--failed); }
.scroll { overflow-x: auto; }
.status { display: inline-block; font-size: 12px; font-weight: 600; padding: 1px 8px; border-radius: 10px; color: #fff; background: var(--interrupted); vertical-align: middle; }
.status.done, .status.succeeded { background: var(--done); }
.status.failed, .status.budget_exhausted { background: var(--failed); }
.status.skipped { background: var(--skipped); }
.status.partial { background: var(--retry); }
.status.retrying, .status.waiting { background: var(--retry); }
button { font: inherit; font-size: 12px; padding: 2px 10px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
.legend { color: var(--muted); font-size: 12px; margin-bottom: 6px; }
.legend .key { display: inline-block; width: 14px; height: 10px; border-radius: 2px; margin: 0 4px 0 12px; vertical-align: middle; }
.legend .key:first-child { margin-left: 0; }
.key.done { background: var(--done); } .key.failed { background: var(--failed); } .key.retry { background: var(--retry); }
.key.interrupted { background: var(--interrupted); } .key.wait { background: var(--wait); }
#timeline { width: 100%; min-height: 40px; }
svg text { font: 12px system-ui, sans-serif; fill: var(--fg); }
.gantt .stripe { fill: #f8f9fb; }
.gantt .tick { stroke: var(--line); }
.gantt .axis text { fill: var(--muted); font-size: 11px; }
.gantt .queued-line { stroke: var(--skipped); stroke-dasharray: 3 3; }
.gantt .bar.outcome-done { fill: var(--done); }
.gantt .bar.outcome-failed { fill: var(--failed); }
.gantt .bar.outcome-retry { fill: var(--retry); }
.gantt .bar.outcome-interrupted, .gantt .bar.outcome-running { fill: var(--interrupted); }
.gantt .wait { fill: url(#wait-hatch); opacity: 0.9; }
.gantt .wait.denied { stroke: var(--failed); stroke-width: 1; }
.gantt .hatch-bg { fill: var(--wait); }
.gantt .hatch-line { stroke: #c99a2e; stroke-width: 2; }
.gantt .bar-label { fill: #fff; font-size: 11px; font-weight: 600; pointer-events: none; }
.dag .edge { fill: none; stroke: #9aa3b2; stroke-width: 1.5; }
.dag .arrow { fill: #9aa3b2; }
.dag .node rect { fill: #fff; stroke: var(--interrupted); stroke-width: 2; }
.dag .node.done rect { stroke: var(--done); fill: #eef8f2; }
.dag .node.failed rect { stroke: var(--failed); fill: #fdeeee; }
.dag .node.partial rect { stroke: var(--retry); fill: #fdf6e8; }
.dag .node.skipped rect { stroke: var(--skipped); fill: #f4f5f7; }
.dag .node-title { font-weight: 600; }
.dag .node-sub { fill: var(--muted); font-size: 11px; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
.chart { margin: 0; }
.chart figcaption { font-weight: 600; margin-bottom: 4px; }
.chart rect.tokens { fill: var(--tokens); }
.chart rect.cost { fill: var(--cost); }
.chart .value { fill: var(--muted); font-size: 11px; }
table.instances { border-collapse: collapse; width: 100%; font-size: 13px; }
table.instances th, table.instances td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.instances td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
details.conversation { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 6px 12px; }
details.conversation > summary { cursor: pointer; padding: 2px 0; }
details.conversation[open] > summary { margin-bottom: 8px; }
.msg { margin: 10px 0; }
.msg .role { font-weight: 600; font-size: 12px; text-transform: none; }
.msg.user .role { color: #2f5fb3; }
.msg.assistant .role { color: var(--done); }
.msg.peer .role { color: var(--cost); }
.tool-call, .tool-result { margin: 4px 0 4px 18px; }
.tool-name { font: 12px ui-monospace, Menlo, monospace; font-weight: 600; color: #4b5563; }
.tool-result.is-error .tool-name { color: var(--failed); }
.tool-result.is-error pre { border-color: #f1b5b5; background: #fdf3f3; }
details.thinking summary { color: var(--muted); font-size: 12px; cursor: pointer; }
.plan { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 4px 18px; }
`;
