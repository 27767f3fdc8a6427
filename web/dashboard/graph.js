// The job graph: vertices (operator chains) as boxes laid out left to right
// by topological depth, exchanges as labelled SVG paths. The drawing is
// rebuilt only when the graph changes; each poll updates its metrics.

import { svg, num, percent, bytes, watermark, setText } from './format.js';

const FONT = '12px system-ui, sans-serif';
const LINE = 16;
const HEADER = 22;
const PAD = 8;
const COL_GAP = 140;
const ROW_GAP = 28;
const MIN_W = 200;
const MAX_W = 380;

let measureCtx;
function textWidth(s) {
  measureCtx ??= document.createElement('canvas').getContext('2d');
  measureCtx.font = FONT;
  return measureCtx.measureText(s).width;
}

// truncate shortens s to at most w pixels, with an ellipsis.
function truncate(s, w) {
  if (textWidth(s) <= w) return s;
  let lo = 0, hi = s.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textWidth(s.slice(0, mid) + '…') <= w) lo = mid; else hi = mid - 1;
  }
  return s.slice(0, lo) + '…';
}

// depths returns each vertex's depth: the longest path to it from a vertex
// without inputs (vertices on a cycle, which a job graph has not, go last).
export function depths(vertices, edges) {
  const ids = vertices.map((v) => v.id);
  const indeg = new Map(ids.map((id) => [id, 0]));
  const out = new Map(ids.map((id) => [id, []]));
  for (const e of edges) {
    if (!indeg.has(e.source) || !indeg.has(e.target) || e.source === e.target) continue;
    indeg.set(e.target, indeg.get(e.target) + 1);
    out.get(e.source).push(e.target);
  }
  const depth = new Map(ids.map((id) => [id, 0]));
  const queue = ids.filter((id) => indeg.get(id) === 0);
  const seen = new Set();
  while (queue.length) {
    const id = queue.shift();
    seen.add(id);
    for (const t of out.get(id)) {
      depth.set(t, Math.max(depth.get(t), depth.get(id) + 1));
      indeg.set(t, indeg.get(t) - 1);
      if (indeg.get(t) === 0) queue.push(t);
    }
  }
  const max = Math.max(0, ...depth.values());
  for (const id of ids) if (!seen.has(id)) depth.set(id, max + 1);
  return depth;
}

// busyColour is Flink's colour of a vertex: blue when idle, red when busy,
// in between by the busy time (ms per second).
export function busyColour(busyMs) {
  const b = Math.min(1, Math.max(0, (busyMs ?? 0) / 1000));
  const idle = [59, 130, 246], busy = [220, 38, 38];
  const c = idle.map((v, i) => Math.round(v + (busy[i] - v) * b));
  return `rgb(${c.join(',')})`;
}

// backpressured reports that a vertex spends more time waiting for room
// downstream than working (Flink shows it striped, black and grey).
export function backpressured(m) {
  const bp = m?.backPressuredTimeMsPerSecond ?? 0;
  return bp >= 100 && bp >= (m?.busyTimeMsPerSecond ?? 0);
}

const shapeKey = (job) => JSON.stringify([
  job.vertices.map((v) => [v.id, v.name, v.parallelism, v.operators?.map((o) => [o.name, o.changelog])]),
  job.edges,
]);

// Graph draws a job graph into an <svg> element.
export class Graph {
  constructor(root, onSelect) {
    this.root = root;
    this.onSelect = onSelect;
    this.key = null;
    this.boxes = new Map();
    this.selected = null;
  }

  // render draws the job's graph, or updates the metrics of the one drawn.
  render(job) {
    const vertices = job.vertices ?? [];
    const edges = job.edges ?? [];
    const key = shapeKey({ vertices, edges });
    if (key !== this.key) {
      this.key = key;
      this.build(vertices, edges);
    }
    for (const v of vertices) this.update(v);
  }

  select(id) {
    this.selected = id;
    for (const [vid, b] of this.boxes) b.g.classList.toggle('selected', vid === id);
  }

  build(vertices, edges) {
    const depth = depths(vertices, edges);
    const boxes = new Map();
    for (const v of vertices) boxes.set(v.id, this.layoutBox(v));

    // Columns by depth; within a column, order by the mean row of the
    // inputs, so that edges cross less.
    const cols = [];
    for (const v of vertices) (cols[depth.get(v.id)] ??= []).push(v.id);
    const row = new Map();
    cols.forEach((col, d) => {
      if (!col) return;
      if (d > 0) {
        const mean = (id) => {
          const ins = edges.filter((e) => e.target === id && row.has(e.source)).map((e) => row.get(e.source));
          return ins.length ? ins.reduce((a, b) => a + b, 0) / ins.length : Infinity;
        };
        col.sort((a, b) => mean(a) - mean(b) || a - b);
      }
      col.forEach((id, i) => row.set(id, i));
    });

    const heights = cols.map((col) => (col ?? []).reduce((h, id) => h + boxes.get(id).h, 0) + ROW_GAP * Math.max(0, (col ?? []).length - 1));
    const tallest = Math.max(0, ...heights);
    let x = 20;
    cols.forEach((col, d) => {
      if (!col) return;
      const w = Math.max(...col.map((id) => boxes.get(id).w));
      let y = 20 + (tallest - heights[d]) / 2;
      for (const id of col) {
        const b = boxes.get(id);
        b.w = w;
        b.x = x;
        b.y = y;
        y += b.h + ROW_GAP;
      }
      x += w + COL_GAP;
    });
    const width = Math.max(x - COL_GAP + 20, 300);
    const height = tallest + 40;

    const defs = svg('defs', {},
      svg('pattern', { id: 'bp-stripes', width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
        svg('rect', { width: 8, height: 8, fill: '#555' }),
        svg('rect', { width: 4, height: 8, fill: '#111' })),
      svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head' })));

    const edgeLayer = svg('g', { class: 'edges' });
    const labelLayer = svg('g', { class: 'edge-labels' });
    const seenPairs = new Map();
    for (const e of edges) {
      const s = boxes.get(e.source), t = boxes.get(e.target);
      if (!s || !t) continue;
      const pair = `${e.source}-${e.target}`;
      const k = seenPairs.get(pair) ?? 0;
      seenPairs.set(pair, k + 1);
      const x1 = s.x + s.w, y1 = s.y + s.h / 2 + k * 10, x2 = t.x, y2 = t.y + t.h / 2 + k * 10;
      const dx = Math.max(30, Math.abs(x2 - x1) / 2);
      const label = e.partitioning + (e.sideOutput ? ` (${e.sideOutput})` : '');
      edgeLayer.append(svg('path', {
        class: 'edge', 'data-edge': pair, 'data-partitioning': e.partitioning, 'data-side-output': e.sideOutput || null,
        d: `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`, 'marker-end': 'url(#arrow)',
      }));
      // Labels go above the boxes, so that none hides one.
      labelLayer.append(svg('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 6 + k * 14, 'text-anchor': 'middle', class: 'edge-label', 'data-edge': pair }, label));
    }

    const vertexLayer = svg('g', { class: 'vertices' });
    this.boxes = new Map();
    for (const v of vertices) {
      const b = boxes.get(v.id);
      const g = this.drawBox(v, b);
      vertexLayer.append(g);
      this.boxes.set(v.id, b);
    }
    this.root.replaceChildren(defs, edgeLayer, vertexLayer, labelLayer);
    this.root.setAttribute('viewBox', `0 0 ${width} ${height}`);
    this.root.setAttribute('width', width);
    this.root.setAttribute('height', height);
    if (this.selected !== null && !this.boxes.has(this.selected)) this.selected = null;
    this.select(this.selected);
  }

  layoutBox(v) {
    const ops = v.operators ?? [];
    const lines = ops.map((o) => `${o.name}  ${o.changelog ?? ''}`);
    lines.push('in 000.0k/s  ·  out 000.0k/s', 'busy 100%  ·  backpressured 100%  ·  idle 100%',
      'bytes in 000.0 KiB/s  ·  out 000.0 KiB/s');
    const w = Math.min(MAX_W, Math.max(MIN_W, ...lines.map((l) => textWidth(l) + 2 * PAD)));
    const h = HEADER + PAD + (ops.length + 5) * LINE + PAD / 2;
    return { w, h, x: 0, y: 0, ops: ops.length };
  }

  drawBox(v, b) {
    const m = (name) => svg('tspan', { 'data-metric': name }, '–');
    const header = svg('rect', { class: 'vertex-header', width: b.w, height: HEADER, rx: 4 });
    const headerText = svg('text', { x: PAD, y: 15, class: 'vertex-header-text' },
      `#${v.id} · parallelism ${v.parallelism}`);
    const busyText = svg('text', { x: b.w - PAD, y: 15, 'text-anchor': 'end', class: 'vertex-header-text', 'data-metric': 'busy' }, '');
    const ops = (v.operators ?? []).map((o, i) => {
      const y = HEADER + PAD + (i + 1) * LINE - 4;
      const avail = b.w - 2 * PAD - textWidth(`  ${o.changelog ?? ''}`);
      return svg('text', { x: PAD, y, class: 'operator', 'data-operator': o.name },
        svg('title', {}, `${o.name}\nuid ${o.uid ?? '–'} · max parallelism ${o.maxParallelism ?? '–'} · changelog ${o.changelog ?? '–'}`),
        truncate(o.name, avail),
        svg('tspan', { class: 'changelog', dx: 6 }, o.changelog ?? ''));
    });
    const y0 = HEADER + PAD + (v.operators?.length ?? 0) * LINE + LINE - 4;
    const lines = [
      svg('text', { x: PAD, y: y0, class: 'metrics' }, 'in ', m('recordsInPerSecond'), '/s  ·  out ', m('recordsOutPerSecond'), '/s'),
      svg('text', { x: PAD, y: y0 + LINE, class: 'metrics' }, 'busy ', m('busyTimeMsPerSecond'), '  ·  backpressured ', m('backPressuredTimeMsPerSecond'), '  ·  idle ', m('idleTimeMsPerSecond')),
      svg('text', { x: PAD, y: y0 + 2 * LINE, class: 'metrics' }, 'watermark ', m('watermarkLagMs')),
      svg('text', { x: PAD, y: y0 + 3 * LINE, class: 'metrics' }, 'state ', m('stateBytes')),
      svg('text', { x: PAD, y: y0 + 4 * LINE, class: 'metrics' }, 'bytes ', m('bytes')),
    ];
    const g = svg('g', {
      class: 'vertex', 'data-vertex': v.id, transform: `translate(${b.x},${b.y})`,
      tabindex: 0, role: 'button', 'aria-label': `vertex ${v.id}: ${v.name}`,
    },
    svg('title', {}, v.name),
    svg('rect', { class: 'vertex-box', width: b.w, height: b.h, rx: 4 }),
    header, headerText, busyText, ...ops, ...lines);
    const choose = () => this.onSelect(v.id);
    g.addEventListener('click', choose);
    g.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        choose();
      }
    });
    b.g = g;
    b.header = header;
    b.busyText = busyText;
    b.metric = (name) => g.querySelector(`[data-metric="${name}"]`);
    return g;
  }

  update(v) {
    const b = this.boxes.get(v.id);
    if (!b) return;
    const m = v.metrics ?? {};
    setText(b.metric('recordsInPerSecond'), num(m.recordsInPerSecond));
    setText(b.metric('recordsOutPerSecond'), num(m.recordsOutPerSecond));
    setText(b.metric('busyTimeMsPerSecond'), percent(m.busyTimeMsPerSecond));
    setText(b.metric('backPressuredTimeMsPerSecond'), percent(m.backPressuredTimeMsPerSecond));
    setText(b.metric('idleTimeMsPerSecond'), percent(m.idleTimeMsPerSecond));
    setText(b.metric('watermarkLagMs'), watermark(m));
    setText(b.metric('stateBytes'), bytes(m.stateBytes ?? 0));
    setText(b.metric('bytes'), externalBytes(m));
    const bp = backpressured(m);
    b.g.dataset.backpressured = bp;
    b.header.setAttribute('fill', bp ? 'url(#bp-stripes)' : busyColour(m.busyTimeMsPerSecond));
    setText(b.busyText, bp ? `backpressured ${percent(m.backPressuredTimeMsPerSecond)}` : `busy ${percent(m.busyTimeMsPerSecond)}`);
    // Raw values for tests and tools.
    b.metric('recordsOutPerSecond').dataset.value = m.recordsOutPerSecond ?? '';
    b.metric('recordsInPerSecond').dataset.value = m.recordsInPerSecond ?? '';
    b.metric('bytes').dataset.in = m.bytesIn ?? '';
    b.metric('bytes').dataset.out = m.bytesOut ?? '';
  }
}

// externalBytes describes the bytes per second a vertex's connectors read
// and wrote ('–' for a vertex without connectors that count bytes: its
// operators exchange records in process).
function externalBytes(m) {
  const parts = [];
  if (m.bytesIn) parts.push(`in ${bytes(Math.round(m.bytesInPerSecond ?? 0))}/s`);
  if (m.bytesOut) parts.push(`out ${bytes(Math.round(m.bytesOutPerSecond ?? 0))}/s`);
  return parts.join('  ·  ') || '–';
}
