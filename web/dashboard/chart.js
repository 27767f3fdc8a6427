// The checkpoint history as SVG bar charts: duration above, size below, one
// bar per checkpoint (oldest left), failed ones red, savepoints marked.

import { svg, duration, bytes, time } from './format.js';

const W = 760;
const PANEL = 90;
const LEFT = 70;
const TOP = 18;
const GAP = 34;
const MAX_BARS = 60;

// renderCheckpointChart draws history (newest first, as the API gives it).
export function renderCheckpointChart(root, history) {
  const items = (history ?? []).slice(0, MAX_BARS).reverse();
  const height = TOP + 2 * PANEL + GAP + 24;
  root.setAttribute('viewBox', `0 0 ${W} ${height}`);
  root.setAttribute('width', W);
  root.setAttribute('height', height);
  if (!items.length) {
    root.replaceChildren(svg('text', { x: W / 2, y: height / 2, 'text-anchor': 'middle', class: 'muted-text' }, 'no checkpoints yet'));
    return;
  }
  const plotW = W - LEFT - 10;
  const step = plotW / Math.max(items.length, 20);
  const barW = Math.max(2, step * 0.7);
  const panel = (y0, title, val, fmt, metric) => {
    const max = Math.max(1, ...items.map(val));
    const g = svg('g', { class: 'panel', 'data-panel': metric },
      svg('text', { x: 0, y: y0 - 6, class: 'axis-title' }, title),
      svg('text', { x: LEFT - 6, y: y0 + 10, 'text-anchor': 'end', class: 'axis' }, fmt(max)),
      svg('text', { x: LEFT - 6, y: y0 + PANEL, 'text-anchor': 'end', class: 'axis' }, fmt(0)),
      svg('line', { x1: LEFT, x2: W - 10, y1: y0 + PANEL, y2: y0 + PANEL, class: 'axis-line' }));
    items.forEach((c, i) => {
      const h = Math.max(c.status === 'FAILED' ? 2 : 1, (val(c) / max) * PANEL);
      const status = c.status === 'FAILED' ? 'failed' : c.savepoint ? 'savepoint' : 'completed';
      g.append(svg('rect', {
        x: LEFT + i * step + (step - barW) / 2, y: y0 + PANEL - h, width: barW, height: h,
        class: `bar ${status}`, 'data-checkpoint': c.id, 'data-status': status,
      }, svg('title', {}, tooltip(c))));
    });
    return g;
  };
  const first = items[0].id, last = items[items.length - 1].id;
  root.replaceChildren(
    panel(TOP, 'duration', (c) => c.durationMs ?? 0, duration, 'duration'),
    panel(TOP + PANEL + GAP, 'size', (c) => c.bytes ?? 0, bytes, 'size'),
    svg('text', { x: LEFT, y: height - 4, class: 'axis' }, `#${first}`),
    svg('text', { x: W - 10, y: height - 4, 'text-anchor': 'end', class: 'axis' }, `#${last}`));
}

function tooltip(c) {
  const lines = [
    `${c.savepoint ? 'savepoint' : 'checkpoint'} #${c.id} ${c.status}`,
    `triggered ${time(c.triggered)}`,
    `duration ${duration(c.durationMs)} (sync ${duration(c.syncMs)}, alignment ${duration(c.alignmentMs)}, write ${duration(c.writeMs)})`,
    `size ${bytes(c.bytes)}, uploaded ${bytes(c.uploadedBytes)}`,
  ];
  if (c.failure) lines.push(`failure: ${c.failure}`);
  return lines.join('\n');
}
