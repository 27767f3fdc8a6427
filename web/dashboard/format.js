// Formatting and DOM helpers of the dashboard.

const SVG_NS = 'http://www.w3.org/2000/svg';

// el makes an HTML element with attributes and children (strings become
// text nodes: data never goes through innerHTML).
export function el(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// svg makes an SVG element with attributes and children.
export function svg(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// setText sets the text of the element with the id, if it changed.
export function setText(id, text) {
  const node = typeof id === 'string' ? document.getElementById(id) : id;
  if (node && node.textContent !== text) node.textContent = text;
}

// num formats a count or a rate: 987, 12.3k, 4.56M.
export function num(v) {
  if (v === undefined || v === null || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 1 : 2) + 'G';
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 1 : 2) + 'M';
  if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + 'k';
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(a >= 100 ? 0 : 1);
}

// bytes formats a size in bytes: 512 B, 1.5 KiB, 3.2 MiB.
export function bytes(v) {
  if (v === undefined || v === null) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? String(v) : v.toFixed(v >= 100 ? 0 : 1)) + ' ' + units[i];
}

// duration formats milliseconds: 850 ms, 12.3 s, 4m 05s, 3h 02m, 2d 04h.
export function duration(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '–';
  if (ms < 0) return '-' + duration(-ms);
  if (ms < 1000) return Math.round(ms) + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + ' s';
  const pad = (n) => String(Math.floor(n)).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${pad((s % 86400) / 3600)}h`;
}

// percent formats a time in ms per second as a percentage.
export function percent(msPerSecond) {
  if (msPerSecond === undefined || msPerSecond === null) return '–';
  return Math.round(msPerSecond / 10) + '%';
}

// time formats a timestamp (RFC 3339 string or ms) as local date and time.
export function time(t) {
  if (!t) return '–';
  const d = new Date(t);
  if (Number.isNaN(d.getTime()) || d.getFullYear() < 1971) return '–';
  return d.toLocaleString(undefined, { hour12: false });
}

// value formats any JSON value for a key/value table cell.
export function value(v) {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : String(Math.round(v * 1000) / 1000);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

// kvTable renders a JSON object as a key/value table, objects nested as
// tables of their own (arrays of objects as tables with a row per item);
// keys sorted unless sorted is false.
export function kvTable(obj, depth = 0, sorted = true) {
  const entries = Object.entries(obj ?? {});
  if (sorted) entries.sort(([a], [b]) => a.localeCompare(b));
  const rows = entries.map(([k, v]) =>
    el('tr', { 'data-key': k }, el('th', { scope: 'row' }, k), el('td', {}, cell(v, depth))));
  return el('table', { class: 'kv' }, el('tbody', {}, rows));
}

function cell(v, depth) {
  if (depth < 4 && v && typeof v === 'object') {
    if (Array.isArray(v)) {
      if (v.every((x) => x && typeof x === 'object' && !Array.isArray(x))) {
        return el('div', { class: 'kv-list' }, v.map((x) => kvTable(x, depth + 1)));
      }
      return v.map(value).join(', ');
    }
    return kvTable(v, depth + 1);
  }
  return value(v);
}

// replaceRows replaces the rows of a table body.
export function replaceRows(tbody, rows) {
  tbody.replaceChildren(...rows);
}

// watermark formats a watermark: its lag behind now when it is event time in
// milliseconds, else its value.
export function watermark(m) {
  if (m?.watermarkLagMs !== undefined && m?.watermarkLagMs !== null) return `lag ${duration(m.watermarkLagMs)}`;
  if (m?.watermark !== undefined && m?.watermark !== null) return `at ${m.watermark}`;
  return 'none';
}
