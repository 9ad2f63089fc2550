// The web view's stylesheet: one column of sections, the DAG as columns by depth, status colours
// that match the terminal's (green done, blue running, yellow waiting, red failed).

export const PAGE_STYLE = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1d2330; --muted: #6b7280; --line: #e5e7eb; --card: #f8fafc;
  --run: #2563eb; --ok: #15803d; --wait: #b45309; --bad: #b91c1c; --off: #6b7280; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1218; --fg: #e5e7eb; --muted: #9ca3af; --line: #262b36; --card: #161b24;
  --run: #60a5fa; --ok: #4ade80; --wait: #fbbf24; --bad: #f87171; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, Segoe UI, sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 20px; margin: 6px 0; } h2 { font-size: 15px; margin: 0 0 8px; }
a { color: var(--run); text-decoration: none; } a:hover { text-decoration: underline; }
section { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; margin-top: 14px; background: var(--card); }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
.muted { color: var(--muted); } .error { color: var(--bad); } .warn { color: var(--wait); }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; border: 1px solid currentColor; color: var(--off); }
.s-running, .s-responding, .s-retrying, .s-queued, .s-in_progress, .s-landing { color: var(--run); }
.s-done, .s-landed, .s-passed, .s-succeeded, .s-approved, .s-completed, .s-merged, .s-opened, .s-pushed { color: var(--ok); }
.s-waiting, .s-repairing, .s-partial, .s-interrupted, .s-pending, .s-unpublished { color: var(--wait); }
.s-failed, .s-rejected, .s-budget_exhausted, .s-cancelled { color: var(--bad); }
.s-not_picked { color: var(--off); }
.grid { border-collapse: collapse; width: 100%; } .grid td, .grid th { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); }
header .counts, header .cost { margin-top: 4px; }
.meter { height: 6px; background: var(--line); border-radius: 3px; overflow: hidden; max-width: 360px; margin-top: 4px; }
.meter .fill { height: 100%; background: var(--ok); } .meter .fill.hot { background: var(--bad); }
button { font: inherit; padding: 4px 12px; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; margin-left: 6px; }
button.approve { border-color: var(--ok); color: var(--ok); } button.reject { border-color: var(--bad); color: var(--bad); }
input { font: inherit; padding: 4px 8px; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); flex: 1; min-width: 12em; }
.row { display: flex; gap: 4px; align-items: center; margin-top: 8px; }
.status { margin-top: 6px; font-weight: 600; }
.gate { padding: 8px 0; border-top: 1px solid var(--line); } .gate:first-of-type { border-top: 0; }
.gate.waiting .prompt { font-weight: 600; }
.split { display: grid; grid-template-columns: minmax(0, 1fr); gap: 14px; }
.split:has(.conversation) { grid-template-columns: minmax(0, 1.1fr) minmax(0, 1fr); }
.columns { display: flex; gap: 18px; overflow-x: auto; align-items: flex-start; }
.column { display: flex; flex-direction: column; gap: 10px; min-width: 220px; }
.task { border: 1px solid var(--line); border-radius: 8px; padding: 8px; background: var(--bg); }
.task-head { margin-bottom: 6px; }
/* An instance's colour is its status's (.s-*): the dot shows it, the text keeps its own. */
.inst { display: grid; grid-template-columns: 12px 1fr; column-gap: 6px; padding: 4px 6px; border-radius: 6px; }
.inst:hover, .inst.selected { background: var(--card); text-decoration: none; outline: 1px solid var(--line); }
.inst .dot { width: 10px; height: 10px; border-radius: 50%; background: currentColor; margin-top: 5px; grid-row: span 3; }
.inst.s-running .dot { animation: pulse 1.2s ease-in-out infinite; }
.inst .name { color: var(--fg); font-weight: 600; } .inst .meta, .inst .doing { color: var(--muted); font-size: 12px; }
.inst > span { min-width: 0; } .inst .doing { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.inst .error { font-size: 12px; }
@keyframes pulse { 50% { opacity: 0.35; } }
.conversation { max-height: 80vh; overflow-y: auto; position: relative; }
.conversation .close { position: absolute; right: 14px; top: 8px; font-size: 18px; }
.msg { border-left: 3px solid var(--line); padding: 2px 10px; margin: 8px 0; }
.msg .who { font-weight: 600; font-size: 12px; } .msg .who .muted { font-weight: 400; margin-left: 6px; }
.msg.assistant { border-color: var(--ok); } .msg.user, .msg.peer { border-color: var(--run); }
.msg.result { border-color: var(--off); } .msg.result.failed { border-color: var(--bad); }
.msg.writing { border-style: dashed; } .msg .call { font-family: ui-monospace, monospace; font-size: 12.5px; color: var(--run); }
.thinking { color: var(--muted); }
.attempts { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; margin-bottom: 6px; }
.train-head { margin: 6px 0 2px; } .pick { padding: 6px 0; border-top: 1px solid var(--line); } .pick:first-of-type { border-top: 0; }
.pick .reason { margin: 2px 0 4px; } .pick tr.picked td { font-weight: 600; }
.burndown { color: var(--ok); display: block; margin: 6px 0; overflow: visible; }
.steer { position: sticky; bottom: 0; background: var(--card); padding-top: 6px; }
`;
