// The web view's page script, shipped as text in the package (no build step, no CDN): a Preact
// app written with Preact's `h()` (no JSX, no tagged templates, so it lives in this TS string
// unescaped). It renders what the server sends over Server-Sent Events and nothing else: the runs
// of the folder, and for one run its DAG, gates, cost, board, changesets, how work lands (the
// merge train, best-of-N picks) and the open instance's conversation. Actions are POSTs to the server, which carries them through the same control paths
// as the terminal. Elements carry data-* attributes (instance, status, gate) that tests and
// scripts select on.

export const APP_SCRIPT = `
import { h, render } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// The token came in the URL; the server has set it as a cookie: keep it out of the address bar and history.
if (/[?&]token=/.test(location.search)) history.replaceState(null, '', location.pathname + location.hash);

function parseRoute() {
  var m = /^#\\/run\\/([^/]+)(?:\\/(.+))?$/.exec(location.hash);
  return m ? { run: decodeURIComponent(m[1]), instance: m[2] ? decodeURIComponent(m[2]) : undefined } : {};
}
function runHref(run, instance) {
  return '#/run/' + encodeURIComponent(run) + (instance ? '/' + encodeURIComponent(instance) : '');
}
function money(n) { return '$' + (n || 0).toFixed(n >= 100 ? 0 : n >= 1 ? 2 : 4); }
function tokens(n) { return n >= 1e6 ? (n / 1e6).toFixed(1) + 'M' : n >= 1e3 ? (n / 1e3).toFixed(1) + 'k' : String(n || 0); }
/** The time of day, with the date when it is not today (a run of last week did not start "at 3:11 PM"). */
function clock(ts) {
  if (!ts) return '';
  var d = new Date(ts);
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}
function duration(ms) {
  if (ms === undefined) return '';
  var s = Math.round(ms / 1000);
  return s >= 60 ? Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's' : s + 's';
}

/**
 * Opens an EventSource on url; the latest data of each named event, whether it is connected, and
 * why the server refused it. A stream answered with an error (no such run, a token that changed)
 * is not retried by the browser, and says nothing of why: \`probe\` (the same thing as plain JSON)
 * is asked, and its message shown instead of "connecting…" for ever.
 */
function useStream(url, names, probe) {
  var [data, setData] = useState({});
  var [connected, setConnected] = useState(false);
  var [failure, setFailure] = useState('');
  useEffect(function () {
    setData({});
    setFailure('');
    var es = new EventSource(url);
    es.onopen = function () { setConnected(true); setFailure(''); };
    es.onerror = function () {
      setConnected(false);
      if (es.readyState !== EventSource.CLOSED) return; // the browser reconnects by itself
      fetch(probe, { credentials: 'same-origin' }).then(function (res) {
        if (res.ok) return;
        return res.json().then(function (body) { setFailure(body.message || 'HTTP ' + res.status); },
          function () { setFailure('HTTP ' + res.status); });
      }, function () { setFailure('the server does not answer: is orchestrate serve still running?'); });
    };
    names.forEach(function (name) {
      es.addEventListener(name, function (ev) {
        var value = JSON.parse(ev.data);
        setData(function (prev) { var next = Object.assign({}, prev); next[name] = value; return next; });
      });
    });
    return function () { es.close(); };
  }, [url]);
  return [data, connected, failure];
}

async function act(run, action, body) {
  var res = await fetch('/api/runs/' + encodeURIComponent(run) + '/' + action, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
  var reply;
  try { reply = await res.json(); } catch (e) { reply = { ok: false, message: 'HTTP ' + res.status }; }
  return reply;
}

function Badge(props) {
  return h('span', { class: 'badge s-' + props.status, 'data-status': props.status }, props.status.replace('_', ' '));
}

function RunList() {
  var [data, connected, failure] = useStream('/api/runs/stream', ['runs'], '/api/runs');
  var list = data.runs;
  return h('main', { class: 'runs' },
    h('h1', null, 'Runs', connected || failure ? null : h('span', { class: 'muted' }, ' (connecting…)')),
    failure ? h('p', { class: 'error', 'data-failure': '1' }, failure) : null,
    !list ? (failure ? null : h('p', { class: 'muted' }, 'loading…'))
      : list.error ? h('p', { class: 'error' }, list.error)
      : list.runs.length === 0 ? h('p', { class: 'muted' }, 'No runs in this folder yet: start one with orchestrate <recipe.yaml>.')
      : h('table', { class: 'grid' },
          h('thead', null, h('tr', null, ['run', 'name', 'status', 'started', 'cost', 'waiting'].map(function (c) { return h('th', null, c); }))),
          h('tbody', null, list.runs.map(function (r) {
            return h('tr', { key: r.runId, 'data-run': r.runId },
              h('td', null, h('a', { href: runHref(r.runId) }, r.runId)),
              h('td', null, r.name),
              h('td', null, h(Badge, { status: r.status })),
              h('td', null, new Date(r.startedAt).toLocaleString()),
              h('td', null, money(r.cost)),
              h('td', null, (r.waiting || []).join(', ')));
          }))));
}

function CostBar(props) {
  var run = props.run;
  var parts = [h('b', null, money(run.cost)), ' · ' + tokens(run.tokens) + ' tokens'];
  var bar = null;
  if (run.budgetUsd) {
    var pct = Math.min(100, (run.cost / run.budgetUsd) * 100);
    parts.push(' of ' + money(run.budgetUsd) + ' budget');
    bar = h('div', { class: 'meter' }, h('div', { class: pct > 90 ? 'fill hot' : 'fill', style: 'width:' + pct.toFixed(1) + '%' }));
  }
  return h('div', { class: 'cost', 'data-cost': run.cost }, parts, bar,
    run.budgetExhausted ? h('div', { class: 'error' }, 'budget exhausted: ' + run.budgetExhausted) : null);
}

function Gates(props) {
  var run = props.run;
  // A note per gate: one typed for a gate goes with that gate's answer only, and is gone once sent.
  var [notes, setNotes] = useState({});
  if (!run.gates.length) return null;
  return h('section', { class: 'gates' }, h('h2', null, 'Gates'),
    run.gates.map(function (g) {
      var id = g.kind === 'publish' ? 'publish:' + g.task : g.kind === 'follow_up' ? 'follow_up:' + g.instance + ':' + g.round : g.instance;
      var waiting = g.state === 'waiting';
      var note = notes[id] || '';
      var setNote = function (text) { setNotes(function (prev) { var next = Object.assign({}, prev); next[id] = text; return next; }); };
      var answer = function (action) {
        var body = { task: g.task };
        if (g.kind === 'publish') body.gate = 'publish'; else body.instance = g.instance;
        if (g.kind === 'follow_up') body.gate = 'follow_up';
        if (note.trim()) body.note = note.trim();
        props.onAct(action, body, action + ' ' + id);
        setNote('');
      };
      return h('div', { class: 'gate' + (waiting ? ' waiting' : ''), key: id, 'data-gate': id, 'data-state': g.state },
        h('div', null, h('b', null, g.kind === 'publish' ? 'publish ' + g.task : g.kind === 'follow_up' ? g.instance + ' follow-up round ' + g.round : id), ' ', h(Badge, { status: g.state })),
        h('div', { class: 'prompt' }, g.prompt),
        g.deadline ? h('div', { class: 'muted' }, 'on timeout (' + new Date(g.deadline).toLocaleString() + '): ' + g.onTimeout) : null,
        waiting
          ? h('div', { class: 'row' },
              h('input', { placeholder: 'note (optional)', value: note, onInput: function (e) { setNote(e.target.value); } }),
              h('button', { class: 'approve', 'data-action': 'approve', onClick: function () { answer('approve'); } }, 'Approve'),
              h('button', { class: 'reject', 'data-action': 'reject', onClick: function () { answer('reject'); } }, 'Reject'))
          : g.by ? h('div', { class: 'muted' }, g.state + ' by ' + g.by + (g.via ? ' via ' + g.via : '') + (g.note ? ': ' + g.note : '')) : null);
    }));
}

function Dag(props) {
  var run = props.run;
  var byKey = {};
  run.instances.forEach(function (i) { byKey[i.key] = i; });
  var depth = 0;
  run.tasks.forEach(function (t) { depth = Math.max(depth, t.level); });
  var columns = [];
  for (var l = 0; l <= depth; l++) columns.push(run.tasks.filter(function (t) { return t.level === l; }));
  return h('section', { class: 'dag' }, h('h2', null, 'Tasks'),
    h('div', { class: 'columns' }, columns.map(function (tasks, l) {
      return h('div', { class: 'column', key: l }, tasks.map(function (t) {
        return h('div', { class: 'task', key: t.id, 'data-task': t.id },
          h('div', { class: 'task-head' }, h('b', null, t.id), t.needs.length ? h('span', { class: 'muted' }, ' ← ' + t.needs.join(', ')) : null),
          t.instances.length === 0 ? h('div', { class: 'muted' }, 'not started') : null,
          t.instances.map(function (k) {
            var i = byKey[k];
            if (!i) return null;
            var selected = props.selected === i.key;
            // An attempt that lost to one that landed is no failure: it reads "not picked", in grey.
            // Once the run stopped, an unfinished instance reads "interrupted" or "never started", not live.
            var shown = i.stopped || i.status;
            return h('a', {
              key: k, href: runHref(run.runId, i.key), class: 'inst s-' + (i.notPicked ? 'not_picked' : i.stopped ? (i.stopped === 'interrupted' ? 'interrupted' : 'not_picked') : i.status) + (selected ? ' selected' : ''),
              'data-instance': i.key, 'data-status': i.status, 'data-not-picked': i.notPicked ? '1' : '0', 'data-stopped': i.stopped || '',
              title: (i.error || (i.stopped ? '' : i.doing) || shown),
            },
              h('span', { class: 'dot' }), h('span', { class: 'name' }, i.label),
              h('span', { class: 'meta' }, shown + (i.notPicked ? ', not picked' : '') + (i.attempt > 1 ? ' #' + i.attempt : '') + ' · ' + money(i.cost)),
              i.doing && !i.stopped ? h('span', { class: 'doing' }, i.doing) : null,
              i.error ? h('span', { class: 'error' }, i.error) : null);
          }));
      }));
    })));
}

function Item(props) {
  var it = props.item;
  switch (it.kind) {
    case 'assistant':
      return h('div', { class: 'msg assistant' },
        h('div', { class: 'who' }, 'assistant', h('span', { class: 'muted' }, [it.model, it.tokens !== undefined ? tokens(it.tokens) + ' tokens' : '', it.cost !== undefined ? money(it.cost) : ''].filter(Boolean).join(', '))),
        it.thinking ? h('pre', { class: 'thinking' }, it.thinking) : null,
        it.text ? h('pre', { class: 'text' }, it.text) : null,
        it.toolCalls.map(function (c, n) { return h('div', { class: 'call', key: n }, '→ ' + c.name + '(' + c.args + ')'); }),
        it.error ? h('div', { class: 'error' }, it.error) : null);
    case 'toolResult':
      return h('div', { class: 'msg result' + (it.isError ? ' failed' : '') },
        h('div', { class: 'who' }, '← ' + it.toolName + (it.isError ? ' (error)' : '')), h('pre', null, it.text));
    case 'bash':
      return h('div', { class: 'msg result' }, h('div', { class: 'who' }, '$ ' + it.command + (it.exitCode ? ' (exit ' + it.exitCode + ')' : '')), h('pre', null, it.output));
    default:
      return h('div', { class: 'msg ' + it.kind }, h('div', { class: 'who' }, it.label || it.kind), h('pre', { class: 'text' }, it.text));
  }
}

/** The instance's attempts as they started and ended, and where its work landed. */
function Attempts(props) {
  var inst = props.inst;
  if (inst.attempts.length < 2 && !inst.landed) return null;
  return h('div', { class: 'attempts muted', 'data-attempts': inst.attempts.length },
    inst.attempts.map(function (a) {
      return h('span', { key: a.attempt, class: 's-' + a.outcome }, '#' + a.attempt + ' ' + a.outcome + (a.failure ? ' (' + a.failure + ')' : '') +
        (a.startTs && a.endTs ? ' ' + duration(a.endTs - a.startTs) : ''));
    }),
    inst.landed ? h('span', { 'data-landed': '1' }, 'landed: ' + inst.landed) : null);
}

function Conversation(props) {
  var conv = props.conversation;
  var run = props.run;
  var [text, setText] = useState('');
  if (!conv) return h('section', { class: 'conversation' }, h('p', { class: 'muted' }, 'loading the conversation…'));
  if (conv.missing) return h('section', { class: 'conversation' }, h('p', { class: 'muted' }, 'no instance ' + conv.instance + ' in this run (yet)'));
  var inst = run.instances.find(function (i) { return i.key === conv.instance; });
  var live = inst && !run.readOnly && ['done', 'failed', 'cancelled', 'skipped'].indexOf(inst.status) < 0;
  return h('section', { class: 'conversation', 'data-conversation': conv.instance },
    h('h2', null, conv.label, ' ', h(Badge, { status: (inst && inst.stopped) || conv.status }), h('a', { class: 'close', href: runHref(run.runId) }, '×')),
    inst ? h(Attempts, { inst: inst }) : null,
    conv.exists ? null : h('p', { class: 'muted' }, 'no session file yet: the instance has not had its first reply'),
    conv.warnings.map(function (w, n) { return h('div', { class: 'warn', key: 'w' + n }, w); }),
    conv.items.map(function (it, n) { return h(Item, { item: it, key: n }); }),
    conv.writing ? h('div', { class: 'msg assistant writing', 'data-writing': '1' }, h('div', { class: 'who' }, 'writing…'), h('pre', { class: 'text' }, conv.writing)) : null,
    live ? h('form', { class: 'row steer', onSubmit: function (e) {
      e.preventDefault();
      if (!text.trim()) return;
      props.onAct('steer', { instance: conv.instance, text: text }, 'steer ' + conv.label);
      setText('');
    } },
      h('input', { name: 'steer', placeholder: 'steer ' + conv.label + ': a message into its loop', value: text, onInput: function (e) { setText(e.target.value); } }),
      h('button', { type: 'submit', 'data-action': 'steer' }, 'Steer'),
      h('button', { type: 'button', class: 'reject', 'data-action': 'cancel-instance', onClick: function () {
        if (confirm('Cancel ' + conv.label + '?')) props.onAct('cancel', { instance: conv.instance }, 'cancel ' + conv.label);
      } }, 'Cancel instance')) : null);
}

/** The merge train of each repository: a line per car (its repairs, verify on the merged tree, commit). */
function Train(props) {
  var trains = props.run.trains;
  if (!trains || !trains.length) return null;
  return h('section', { class: 'train' }, h('h2', null, 'Merge train'),
    trains.map(function (t) {
      var c = t.counts;
      return h('div', { key: t.repo, 'data-train': t.repo },
        h('div', { class: 'train-head' }, h('b', null, t.repo), ': ' + c.landed + ' landed, ' + c.repairing + ' repairing, ' + c.failed + ' failed' + (c.landing ? ', ' + c.landing + ' landing' : '') + (c.waiting ? ', ' + c.waiting + ' waiting for its turn' : '')),
        h('table', { class: 'grid' }, h('tbody', null, t.cars.map(function (car) {
          return h('tr', { key: car.key, 'data-train-car': car.key, 'data-status': car.status },
            h('td', null, h('a', { href: runHref(props.run.runId, car.key) }, car.key)),
            h('td', null, h(Badge, { status: car.status }), car.status === 'waiting' ? h('span', { class: 'muted', 'data-behind': (car.behind || []).join(',') }, ' for its turn behind ' + ((car.behind && car.behind.length) ? car.behind.join(', ') : 'earlier tasks'))
              : car.status === 'repairing' ? ' (repair ' + car.repairs + ')' : car.repairs ? ' after ' + car.repairs + (car.repairs === 1 ? ' repair' : ' repairs') : ''),
            h('td', { 'data-verify': car.verifyOk === undefined ? '' : car.verifyOk ? 'passed' : 'failed', class: car.verifyOk === false ? 'error' : '' },
              car.verifyOk === undefined ? '' : 'verify ' + (car.verifyOk ? 'passed' : 'failed')),
            h('td', { class: 'muted', 'data-commit': car.commit || '' }, car.commit ? 'commit ' + car.commit.slice(0, 12) : ''),
            h('td', { class: car.status === 'landed' ? 'muted' : 'error' },
              car.status !== 'landed' && car.files ? 'conflicts in ' + car.files.join(', ') : car.status === 'failed' && car.error ? car.error : ''));
        }))));
    }));
}

/** Each instance's best-of-N attempts: every attempt's verify, lines and cost; the picked one and why. */
function Picks(props) {
  var picks = props.run.picks;
  if (!picks || !picks.length) return null;
  return h('section', { class: 'picks' }, h('h2', null, 'Attempts'),
    picks.map(function (p) {
      var landing = !p.landed ? (p.picked ? 'not landed yet' : '')
        : p.landed.ok ? 'landed' + (p.landed.where ? ': ' + p.landed.where : '') : 'landing failed: ' + (p.landed.error || '');
      return h('div', { key: p.group, class: 'pick', 'data-pick': p.group, 'data-picked': p.picked || '' },
        h('div', null, h('b', null, p.group), ' ',
          p.picked ? 'picked ' + p.picked : 'no attempt picked', h('span', { class: 'muted' }, ' (pick: ' + p.rule + (p.judge ? ', judge ' + (p.judge.model || '') + ' ' + money(p.judge.cost) : '') + ')'),
          landing ? h('span', { class: p.landed && !p.landed.ok ? 'error' : 'muted', 'data-pick-landed': p.landed ? (p.landed.ok ? 'ok' : 'failed') : 'pending' }, ' · ' + landing) : null),
        h('div', { class: 'reason', 'data-reason': '1' }, p.reason),
        h('table', { class: 'grid' }, h('tbody', null, p.candidates.map(function (c) {
          return h('tr', { key: c.key, class: c.picked ? 'picked' : '', 'data-attempt': c.key, 'data-outcome': c.outcome, 'data-chosen': c.picked ? '1' : '0' },
            h('td', null, (c.picked ? '★ ' : '') + 'attempt ' + c.attempt),
            h('td', null, h('a', { href: runHref(props.run.runId, c.key) }, c.key)),
            h('td', { 'data-verify': c.verify ? (c.verify.ok ? 'passed' : 'failed') : '', class: c.outcome === 'passed' ? '' : 'error' },
              c.verify ? 'verify ' + (c.verify.ok ? 'passed' : 'failed') : c.outcome),
            h('td', { 'data-lines': c.lines === undefined ? '' : c.lines }, c.lines === undefined ? '' : c.lines + ' lines'),
            h('td', null, money(c.cost)),
            h('td', { class: 'muted' }, [c.model, c.error].filter(Boolean).join(' · ')),
            h('td', { 'data-not-landed': c.notLanded || '' }, c.notLanded ? 'not landed: ' + c.notLanded : 'landed'),
            h('td', { 'data-patch': c.patchFile || '' }, c.patchFile || ''));
        }))));
    }));
}

function Board(props) {
  var items = props.run.board;
  if (!items.length) return null;
  return h('section', { class: 'board' }, h('h2', null, 'Task board'),
    h('table', { class: 'grid' }, h('tbody', null, items.map(function (b) {
      return h('tr', { key: b.id, 'data-board': b.id },
        h('td', null, b.id), h('td', null, h(Badge, { status: b.status })), h('td', null, b.subject),
        h('td', { class: 'muted' }, b.owner || ''), h('td', { class: 'muted' }, b.blockedBy.length ? 'after ' + b.blockedBy.join(', ') : ''));
    }))));
}

/** Merged changesets over time, as a step line (one point each time the count grew). */
function Burndown(props) {
  var pts = props.points;
  if (pts.length < 2 || !props.total) return null;
  var W = 320, H = 48, t0 = pts[0].ts, span = Math.max(1, pts[pts.length - 1].ts - t0);
  var line = pts.map(function (p) {
    return ((p.ts - t0) / span * W).toFixed(1) + ',' + (H - (p.merged / props.total) * H).toFixed(1);
  }).join(' ');
  return h('svg', { class: 'burndown', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'data-burndown': pts.length },
    h('title', null, 'merged over time'),
    h('polyline', { points: line, fill: 'none', stroke: 'currentColor', 'stroke-width': 2 }));
}

/** A follow-up round at its gate, as the terminal says it: the round, the command that answers it, its timeout. */
function followUpWaitingText(w) {
  return 'round ' + w.round + ' waiting for approval: ' + w.answer + ' (or reject; the Gates section answers it too)' +
    (w.deadline ? '; on timeout (' + new Date(w.deadline).toLocaleString() + '): ' + (w.onTimeout === 'approve' ? 'approved' : 'rejected') : '; no timeout');
}

function Changesets(props) {
  var c = props.run.changesets;
  if (!c) return null;
  if (c.error) return h('section', { class: 'changesets' }, h('h2', null, 'Changesets'), h('p', { class: 'error' }, c.error));
  var pct = c.total ? (c.merged / c.total) * 100 : 0;
  return h('section', { class: 'changesets' }, h('h2', null, 'Changesets'),
    c.publish ? h('div', { class: 'muted', 'data-publish': '1' }, 'publish: ' + c.publish) : null,
    h('div', null, 'burndown: ' + c.merged + '/' + c.total + ' merged'),
    h('div', { class: 'meter' }, h('div', { class: 'fill', style: 'width:' + pct.toFixed(1) + '%' })),
    h(Burndown, { points: c.burndown, total: c.total }),
    h('table', { class: 'grid' }, h('tbody', null, c.rows.map(function (r) {
      return h('tr', { key: r.key, 'data-changeset': r.key },
        h('td', null, r.key), h('td', null, r.repo), h('td', null, h(Badge, { status: r.state })), h('td', { class: 'muted' }, r.diffstat || ''),
        h('td', null, r.url ? h('a', { href: r.url, rel: 'noreferrer', target: '_blank' }, r.url) : ''),
        h('td', { class: 'muted' }, [r.checks, r.review, r.mergeable].filter(Boolean).join(' · ')),
        h('td', { 'data-follow-up-waiting': r.followUpWaiting ? r.followUpWaiting.round : null }, r.followUpWaiting ? followUpWaitingText(r.followUpWaiting) : ''));
    }))));
}

function Controls(props) {
  var list = props.run.controls;
  if (!list.length) return null;
  return h('section', { class: 'controls' }, h('h2', null, 'Actions'),
    list.slice().reverse().map(function (c, n) {
      return h('div', { key: n, class: c.ok ? '' : 'error' },
        clock(c.ts) + ' ' + c.action + (c.instance ? ' ' + c.instance : '') + (c.text ? ': "' + c.text + '"' : '') + ' by ' + c.by + (c.ok ? '' : ' (refused: ' + (c.message || '') + ')'));
    }));
}

function RunPage(props) {
  var url = '/api/runs/' + encodeURIComponent(props.run) + '/stream' + (props.instance ? '?instance=' + encodeURIComponent(props.instance) : '');
  var [data, connected, failure] = useStream(url, ['run', 'conversation'], '/api/runs/' + encodeURIComponent(props.run));
  var [status, setStatus] = useState('');
  var run = data.run;
  var onAct = function (action, body, what) {
    setStatus(what + '…');
    act(props.run, action, body).then(function (reply) {
      setStatus(what + ': ' + (reply.ok ? '' : 'failed: ') + reply.message);
    }, function (err) { setStatus(what + ': failed: ' + err); });
  };
  if (!run)
    return h('main', null, h('a', { href: '#/' }, '← runs'),
      failure ? h('p', { class: 'error', 'data-failure': '1' }, failure) : h('p', { class: 'muted' }, connected ? 'reading the run…' : 'connecting…'));
  var c = run.counts;
  return h('main', { class: 'run', 'data-run': run.runId, 'data-run-status': run.status },
    h('header', null,
      h('a', { href: '#/' }, '← runs'),
      h('h1', null, run.name || run.runId, ' ', h(Badge, { status: run.status })),
      h('div', { class: 'muted' }, run.runId + ' · ' + run.recipe + ' · started ' + clock(run.startTs) + (run.durationMs !== undefined ? ' · ' + duration(run.durationMs) : '')),
      h('div', { class: 'muted', 'data-run-dir': run.dir }, 'folder: ' + run.dir),
      h(CostBar, { run: run }),
      h('div', { class: 'counts' }, c.done + ' done · ' + (run.unfinished === undefined ? c.running + ' running · ' + c.queued + ' queued · ' : run.unfinished ? run.unfinished + ' unfinished · ' : '') + c.awaitingApproval + ' at a gate · ' + c.failed + ' failed' + (c.cancelled ? ' · ' + c.cancelled + ' cancelled' : '') + (c.notPicked ? ' · ' + c.notPicked + ' not picked' : '') + (c.skipped ? ' · ' + c.skipped + ' skipped' : '')),
      run.resumable ? h('button', { class: 'approve', 'data-action': 'resume', onClick: function () {
        if (confirm('Resume the run? Its agents start again where they stopped (this spends tokens).')) onAct('resume', {}, 'resume');
      } }, 'Resume') : null,
      run.readOnly ? h('div', { class: 'muted', 'data-read-only': '1' }, 'read only: ' + run.readOnly)
        : h('button', { class: 'reject', 'data-action': 'cancel-run', onClick: function () {
            if (confirm('Cancel the whole run? (sessions are kept; orchestrate resume continues it)')) onAct('cancel', {}, 'cancel run');
          } }, 'Cancel run'),
      failure ? h('div', { class: 'error', 'data-failure': '1' }, failure) : connected ? null : h('div', { class: 'warn' }, 'reconnecting…'),
      status ? h('div', { class: 'status', 'data-action-status': '1' }, status) : null),
    h(Gates, { run: run, onAct: onAct }),
    h('div', { class: 'split' }, h(Dag, { run: run, selected: props.instance }),
      props.instance ? h(Conversation, { run: run, conversation: data.conversation, onAct: onAct, key: props.instance }) : null),
    h(Train, { run: run }),
    h(Picks, { run: run }),
    h(Board, { run: run }),
    h(Changesets, { run: run }),
    run.providerLines.length ? h('section', null, h('h2', null, 'Cost'), h('pre', null, run.providerLines.join('\\n'))) : null,
    h(Controls, { run: run }));
}

function App() {
  var [route, setRoute] = useState(parseRoute());
  useEffect(function () {
    var on = function () { setRoute(parseRoute()); };
    window.addEventListener('hashchange', on);
    return function () { window.removeEventListener('hashchange', on); };
  }, []);
  return route.run ? h(RunPage, { run: route.run, instance: route.instance, key: route.run }) : h(RunList, null);
}

render(h(App, null), document.getElementById('app'));
document.body.setAttribute('data-ready', '1');
`;
