// The report page's own scripts, inlined (the page must open from disk with no network).
//
// ERROR_TRAP runs first, in <head>: it counts uncaught errors and rejections into
// <body data-errors="N"> so a headless browser test (and a curious reader) can see that the page
// rendered cleanly. TIMELINE_SCRIPT draws the Gantt chart from the embedded JSON at load time,
// sized to the window: one bar per attempt (data-attempt), permit waits shaded (data-wait),
// failures red, and marks <body data-rendered="1"> when done.
//
// Both are plain ES2017 without template literals, so they can live in a TS template string.

export const ERROR_TRAP = `
(function () {
  var count = 0;
  function note(message) {
    count++;
    var b = document.body;
    if (b) { b.setAttribute('data-errors', String(count)); b.setAttribute('data-last-error', String(message).slice(0, 300)); }
    else window.__reportErrors = count;
  }
  window.addEventListener('error', function (e) { note(e && e.message ? e.message : 'error'); });
  window.addEventListener('unhandledrejection', function (e) { note(e && e.reason ? e.reason : 'unhandled rejection'); });
  window.__noteReportError = note;
})();
`;

export const TIMELINE_SCRIPT = `
(function () {
  var SVG = 'http://www.w3.org/2000/svg';
  var body = document.body;
  if (window.__reportErrors) body.setAttribute('data-errors', String(window.__reportErrors));

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
    if (parent) parent.appendChild(e);
    return e;
  }
  function title(parent, text) { var t = el('title', {}, parent); t.textContent = text; }
  function fmtMs(ms) {
    if (ms < 1000) return Math.round(ms) + 'ms';
    if (ms < 60000) return Math.round(ms / 10) / 100 + 's';
    var m = Math.floor(ms / 60000), s = Math.floor((ms % 60000) / 1000);
    if (m < 60) return m + 'm' + (s < 10 ? '0' : '') + s + 's';
    return Math.floor(m / 60) + 'h' + (m % 60 < 10 ? '0' : '') + (m % 60) + 'm';
  }
  function fmtCost(c) { return '$' + (c >= 1 ? c.toFixed(2) : c.toFixed(4)); }
  function clip(s, n) { return s.length <= n ? s : s.slice(0, n - 1) + '\\u2026'; }

  function drawTimeline(data, host) {
    while (host.firstChild) host.removeChild(host.firstChild);
    var rows = data.rows;
    if (!rows.length) { host.textContent = 'No instances in the log.'; return; }
    var labelW = 220, rowH = 26, top = 28, right = 16;
    var width = Math.max(720, host.clientWidth || 1000);
    var chartW = width - labelW - right;
    var height = top + rows.length * rowH + 8;
    var span = Math.max(1, data.span);
    function x(ms) { return labelW + (Math.max(0, Math.min(span, ms)) / span) * chartW; }
    var svg = el('svg', { width: width, height: height, viewBox: '0 0 ' + width + ' ' + height, 'class': 'gantt', role: 'img', 'aria-label': 'timeline of instances' }, host);
    var defs = el('defs', {}, svg);
    var pat = el('pattern', { id: 'wait-hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, defs);
    el('rect', { width: 6, height: 6, 'class': 'hatch-bg' }, pat);
    el('line', { x1: 0, y1: 0, x2: 0, y2: 6, 'class': 'hatch-line' }, pat);

    var steps = [100, 250, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000];
    var step = steps[steps.length - 1];
    for (var i = 0; i < steps.length; i++) if (span / steps[i] <= 10) { step = steps[i]; break; }
    var axis = el('g', { 'class': 'axis' }, svg);
    for (var t = 0; t <= span; t += step) {
      el('line', { x1: x(t), y1: top - 6, x2: x(t), y2: height - 4, 'class': 'tick' }, axis);
      var lab = el('text', { x: x(t), y: top - 10, 'text-anchor': 'middle' }, axis);
      lab.textContent = fmtMs(t);
    }

    rows.forEach(function (row, r) {
      var y = top + r * rowH;
      var g = el('g', { 'class': 'row status-' + row.status, 'data-instance': row.label }, svg);
      if (r % 2 === 1) el('rect', { x: 0, y: y, width: width, height: rowH, 'class': 'stripe' }, g);
      var name = el('text', { x: 8, y: y + rowH / 2 + 4, 'class': 'row-label' }, g);
      name.textContent = clip(row.label, 30);
      title(name, row.label + ' (' + row.status + ')');
      if (row.queued !== undefined && row.queued !== null && row.bars.length) {
        el('line', { x1: x(row.queued), y1: y + rowH / 2, x2: x(row.bars[0].start), y2: y + rowH / 2, 'class': 'queued-line' }, g);
      }
      row.bars.forEach(function (b) {
        var bx = x(b.start), bw = Math.max(2, x(b.end) - x(b.start));
        var bar = el('rect', {
          x: bx, y: y + 4, width: bw, height: rowH - 8, rx: 3,
          'class': 'bar outcome-' + b.outcome,
          'data-attempt': b.attempt, 'data-instance': row.label, 'data-outcome': b.outcome
        }, g);
        var tip = row.label + ' attempt ' + b.attempt + ': ' + b.outcome + ', ' + fmtMs(b.end - b.start) +
          ', ' + b.tokens.toLocaleString('en-US') + ' tokens, ' + fmtCost(b.cost);
        if (b.failure) tip += '\\n' + b.failure + ': ' + (b.error || '');
        title(bar, tip);
        b.waits.forEach(function (w) {
          var wx = x(w.start), ww = Math.max(1, x(w.end) - x(w.start));
          var wr = el('rect', { x: wx, y: y + 4, width: ww, height: rowH - 8, 'class': 'wait' + (w.denied ? ' denied' : ''), 'data-wait': b.attempt }, g);
          title(wr, 'waiting for a permit: ' + w.reason + ' (' + fmtMs(w.end - w.start) + ')' + (w.denied ? ', denied' : ''));
        });
        if (b.attempt > 1 && bw > 22) {
          var n = el('text', { x: bx + 4, y: y + rowH / 2 + 4, 'class': 'bar-label' }, g);
          n.textContent = '#' + b.attempt;
        }
      });
    });
  }

  try {
    var data = JSON.parse(document.getElementById('report-data').textContent);
    var host = document.getElementById('timeline');
    drawTimeline(data, host);
    var pending = 0;
    window.addEventListener('resize', function () {
      clearTimeout(pending);
      pending = setTimeout(function () { drawTimeline(data, host); }, 150);
    });
    var toggle = document.getElementById('toggle-conversations');
    if (toggle) toggle.addEventListener('click', function () {
      var all = document.querySelectorAll('details.conversation');
      var open = toggle.getAttribute('data-open') !== '1';
      for (var i = 0; i < all.length; i++) all[i].open = open;
      toggle.setAttribute('data-open', open ? '1' : '0');
      toggle.textContent = open ? 'Collapse all' : 'Expand all';
    });
    body.setAttribute('data-rendered', '1');
  } catch (err) {
    if (window.__noteReportError) window.__noteReportError(err && err.message ? err.message : err);
  }
})();
`;
