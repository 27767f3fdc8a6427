// eddy's dashboard: polls the REST API every second and shows the job, its
// graph, checkpoints, state, exceptions and connectors.

import { get, post, jobPath } from './api.js';
import { el, setText, num, bytes, duration, percent, time, watermark, kvTable, replaceRows } from './format.js';
import { Graph } from './graph.js';
import { renderCheckpointChart } from './chart.js';

const POLL_MS = 1000;
const $ = (id) => document.getElementById(id);

const ui = {
  jobId: null, // the job shown: its id in the API
  job: null,
  vertex: null, // the vertex whose subtasks are shown
  busy: false, // an action is in flight
  last: new Map(), // the JSON last rendered per section
};

const graph = new Graph($('graph'), (vid) => {
  ui.vertex = ui.vertex === vid ? null : vid;
  graph.select(ui.vertex);
  $('vertex-detail').hidden = ui.vertex === null;
  if (ui.vertex !== null) refreshVertex();
});

// changed reports whether data differs from what the section last showed.
function changed(section, data) {
  const s = JSON.stringify(data);
  if (ui.last.get(section) === s) return false;
  ui.last.set(section, s);
  return true;
}

function connection(ok, message) {
  const c = $('connection');
  c.dataset.state = ok ? 'live' : 'error';
  setText(c, ok ? 'live' : message);
  c.title = ok ? `updated ${new Date().toLocaleTimeString()}` : message;
}

// Jobs ------------------------------------------------------------------

function renderJobs(jobs) {
  $('no-jobs').hidden = jobs.length > 0;
  if (!changed('jobs', [jobs, ui.jobId])) return;
  replaceRows($('jobs').tBodies[0], jobs.map((j) => {
    const a = el('a', { href: '#', 'data-job': j.id }, j.name);
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      selectJob(j.id);
    });
    return el('tr', { 'data-job': j.id, class: j.id === ui.jobId ? 'selected' : null },
      el('td', {}, a),
      el('td', {}, el('span', { class: `state ${String(j.state).toLowerCase()}` }, j.state)),
      el('td', { class: 'num' }, duration(j.durationMs)),
      el('td', { class: 'num' }, j.restarts ?? 0),
      el('td', {}, time(j.started)));
  }));
}

function selectJob(id) {
  if (id === ui.jobId) return;
  ui.jobId = id;
  ui.vertex = null;
  graph.select(null);
  ui.last.clear();
  $('vertex-detail').hidden = true;
  setText('savepoint-result', '');
  tick();
}

function renderJob(job) {
  ui.job = job;
  setText('job-name', job.name);
  const st = $('job-state');
  setText(st, job.state);
  st.className = `state ${String(job.state).toLowerCase()}`;
  setText('job-uptime', duration(job.durationMs));
  setText('job-restarts', String(job.restarts ?? 0));
  setText('job-started', time(job.started));
  const f = $('job-failure');
  f.hidden = !job.failure;
  setText(f, job.failure ? `failure: ${job.failure}` : '');
  enableActions();
  graph.render(job);
}

// Actions ---------------------------------------------------------------

// enableActions enables the buttons when the job runs and no action is in
// flight.
function enableActions() {
  const running = ui.job?.state === 'RUNNING' || ui.job?.state === 'RESTARTING';
  for (const id of ['savepoint-button', 'stop-button', 'cancel-button']) $(id).disabled = !running || ui.busy;
}

function showResult(status, text, path) {
  const out = $('savepoint-result');
  out.dataset.status = status;
  if (path) out.dataset.path = path; else delete out.dataset.path;
  out.replaceChildren(path ? el('span', {}, text, ' ', el('code', { id: 'savepoint-path' }, path)) : text);
}

async function action(label, sub, body) {
  if (ui.busy || ui.jobId === null) return;
  ui.busy = true;
  enableActions();
  showResult('pending', `${label}…`);
  try {
    const r = await post(jobPath(ui.jobId, sub), body);
    if (r && r.path) showResult('ok', `${label}: written to`, r.path);
    else showResult('ok', `${label}: ${r && r.state ? r.state : 'done'}`);
  } catch (err) {
    showResult('error', `${label} failed: ${err.message}`);
  } finally {
    ui.busy = false;
    enableActions();
    tick();
  }
}

function savepointBody() {
  const name = $('savepoint-name').value.trim();
  return name ? { name } : {};
}

$('actions').addEventListener('submit', (ev) => {
  ev.preventDefault();
  action('savepoint', 'savepoints', savepointBody());
});
$('stop-button').addEventListener('click', () => {
  if (!$('actions').reportValidity()) return;
  if (confirm(`Stop job "${ui.job?.name}" with a savepoint?`)) action('stop with savepoint', 'stop', savepointBody());
});
$('cancel-button').addEventListener('click', () => {
  if (confirm(`Cancel job "${ui.job?.name}"? It stops without a savepoint.`)) action('cancel', 'cancel', {});
});

// Vertex subtasks -------------------------------------------------------

const SUBTASK_COLUMNS = [
  ['subtask', '#', (s, i) => s.subtask ?? i],
  ['recordsIn', 'records in', (s) => num(s.recordsIn)],
  ['recordsOut', 'records out', (s) => num(s.recordsOut)],
  ['recordsInPerSecond', 'in/s', (s) => num(s.recordsInPerSecond)],
  ['recordsOutPerSecond', 'out/s', (s) => num(s.recordsOutPerSecond)],
  ['bytesIn', 'bytes in', (s) => (s.bytesIn ? `${bytes(s.bytesIn)} (${bytes(Math.round(s.bytesInPerSecond ?? 0))}/s)` : '–')],
  ['bytesOut', 'bytes out', (s) => (s.bytesOut ? `${bytes(s.bytesOut)} (${bytes(Math.round(s.bytesOutPerSecond ?? 0))}/s)` : '–')],
  ['busyTimeMsPerSecond', 'busy', (s) => percent(s.busyTimeMsPerSecond)],
  ['backPressuredTimeMsPerSecond', 'backpressured', (s) => percent(s.backPressuredTimeMsPerSecond)],
  ['idleTimeMsPerSecond', 'idle', (s) => percent(s.idleTimeMsPerSecond)],
  ['watermarkLagMs', 'watermark', watermark],
  ['stateBytes', 'state', (s) => bytes(s.stateBytes ?? 0)],
];

const OPERATOR_COUNTERS = [
  ['recordsIn', 'in', num], ['recordsOut', 'out', num], ['bytesIn', 'bytes in', bytes], ['bytesOut', 'bytes out', bytes],
  ['lateRecords', 'late', num],
  ['windowGapRecords', 'window gaps', num], ['deadLetters', 'dead letters', num],
  ['retractionsWithoutState', 'retractions without state', num], ['stateBytes', 'state', bytes],
];

function operatorSummary(ops) {
  return (ops ?? []).map((o) => {
    const name = o.operator ?? o.name ?? '?';
    const counters = OPERATOR_COUNTERS.filter(([k]) => o[k]).map(([k, label, f]) => `${label} ${f(o[k])}`);
    return el('div', { class: 'op-counters', 'data-operator': name },
      el('strong', {}, name), ' ', counters.join(' · ') || 'no records');
  });
}

function renderVertex(v) {
  setText('vertex-title', `Vertex #${v.id}: ${v.name} (parallelism ${v.parallelism})`);
  if (!changed('vertex', v)) return;
  const table = $('subtasks');
  table.tHead.replaceChildren(el('tr', {}, SUBTASK_COLUMNS.map(([, h]) => el('th', {}, h)), el('th', {}, 'operators')));
  replaceRows(table.tBodies[0], (v.subtasks ?? []).map((s, i) =>
    el('tr', { 'data-subtask': s.subtask ?? i },
      SUBTASK_COLUMNS.map(([k, , f]) => el('td', { 'data-metric': k }, f(s, i))),
      el('td', { class: 'ops' }, operatorSummary(s.operators)))));
}

async function refreshVertex() {
  if (ui.jobId === null || ui.vertex === null) return;
  try {
    renderVertex(await get(jobPath(ui.jobId, 'vertices', ui.vertex)));
  } catch (err) {
    setText('vertex-title', `Vertex #${ui.vertex}: ${err.message}`);
  }
}

// Checkpoints, state, exceptions, connectors ---------------------------

function renderCheckpoints(cp) {
  setText('checkpoints-completed', String(cp.counts?.completed ?? 0));
  setText('checkpoints-failed', String(cp.counts?.failed ?? 0));
  if (!changed('checkpoints', cp)) return;
  renderCheckpointChart($('checkpoint-chart'), cp.history);
  const c = cp.latest;
  $('checkpoint-latest').replaceChildren(c ? kvTable({
    id: c.id,
    status: c.status,
    kind: c.savepoint ? 'savepoint' : 'checkpoint',
    triggered: time(c.triggered),
    duration: duration(c.durationMs),
    'sync (longest subtask)': duration(c.syncMs),
    'alignment (longest subtask)': duration(c.alignmentMs),
    'writing files': duration(c.writeMs),
    size: bytes(c.bytes),
    uploaded: bytes(c.uploadedBytes),
    ...(c.failure ? { failure: c.failure } : {}),
  }, 0, false) : el('p', { class: 'muted' }, 'none yet'));
}

function metricList(d) {
  if (Array.isArray(d)) return d;
  return d?.metrics ?? d?.operators ?? d?.subtasks ?? [];
}

function renderState(job, metrics) {
  const rows = [];
  for (const v of job.vertices ?? []) {
    rows.push(el('tr', { class: 'vertex-row', 'data-vertex': v.id },
      el('th', { scope: 'row' }, `#${v.id} ${v.name}`),
      el('td', { class: 'num' }, v.parallelism),
      el('td', { class: 'num', 'data-metric': 'stateBytes' }, bytes(v.metrics?.stateBytes ?? 0))));
    const names = new Set((v.operators ?? []).map((o) => o.name));
    const per = new Map();
    for (const m of metrics) {
      const name = m.operator ?? m.name;
      if (!names.has(name) || (m.vertex !== undefined && m.vertex !== v.id)) continue;
      const p = per.get(name) ?? { bytes: 0, subtasks: 0 };
      p.bytes += m.stateBytes ?? 0;
      p.subtasks++;
      per.set(name, p);
    }
    for (const [name, p] of per) {
      rows.push(el('tr', { 'data-operator': name },
        el('td', { class: 'indent' }, name),
        el('td', { class: 'num' }, p.subtasks),
        el('td', { class: 'num', 'data-metric': 'stateBytes' }, bytes(p.bytes))));
    }
  }
  if (changed('state', rows.map((r) => r.textContent))) replaceRows($('state').tBodies[0], rows);
}

function renderExceptions(d) {
  const xs = d?.exceptions ?? [];
  $('no-exceptions').hidden = xs.length > 0;
  $('exceptions').hidden = xs.length === 0;
  if (!changed('exceptions', xs)) return;
  replaceRows($('exceptions').tBodies[0], xs.map((x) => el('tr', { class: x.restarted ? '' : 'fatal' },
    el('td', {}, time(x.time)),
    el('td', {}, x.operator || '–'),
    el('td', { class: 'num' }, x.subtask === undefined || x.subtask < 0 ? '–' : x.subtask),
    el('td', { class: 'error-text' }, x.error ?? ''),
    el('td', {}, x.restarted ? 'yes' : 'no'))));
}

function renderConnectors(d) {
  const cs = d?.connectors ?? [];
  $('no-connectors').hidden = cs.length > 0;
  if (!changed('connectors', cs)) return;
  $('connectors').replaceChildren(...cs.map((c) => el('div', { class: 'connector', 'data-connector': c.operator, 'data-subtask': c.subtask },
    el('h3', {}, `${c.operator} · subtask ${c.subtask}`),
    c.status && Object.keys(c.status).length ? [el('h4', {}, 'reader'), kvTable(c.status)] : null,
    c.enumerator && Object.keys(c.enumerator).length ? [el('h4', {}, 'enumerator'), kvTable(c.enumerator)] : null)));
}

// Polling ---------------------------------------------------------------

let timer = null;
let inFlight = false;

async function tick() {
  if (inFlight) return;
  inFlight = true;
  clearTimeout(timer);
  timer = null;
  try {
    await refresh();
  } finally {
    inFlight = false;
    if (!document.hidden) timer = setTimeout(tick, POLL_MS);
  }
}

async function refresh() {
  let jobs;
  try {
    if (!$('version').textContent) {
      const o = await get('/v1/overview');
      setText('version', o?.version ? `version ${o.version}` : '');
    }
    jobs = (await get('/v1/jobs'))?.jobs ?? [];
  } catch (err) {
    connection(false, `cannot reach the server: ${err.message}`);
    return;
  }
  if (ui.jobId === null || !jobs.some((j) => j.id === ui.jobId)) {
    ui.jobId = jobs.length ? jobs[jobs.length - 1].id : null;
    ui.vertex = null;
    graph.select(null);
    $('vertex-detail').hidden = true;
  }
  renderJobs(jobs);
  const has = ui.jobId !== null;
  for (const s of ['job', 'graph-section', 'checkpoints-section', 'state-section', 'exceptions-section', 'connectors-section']) $(s).hidden = !has;
  if (!has) {
    connection(true);
    return;
  }
  const id = ui.jobId;
  const [job, cps, xs, conns, metrics] = await Promise.allSettled([
    get(jobPath(id)), get(jobPath(id, 'checkpoints')), get(jobPath(id, 'exceptions')),
    get(jobPath(id, 'connectors')), get(jobPath(id, 'metrics')),
  ]);
  if (id !== ui.jobId) return; // another job was chosen meanwhile
  if (job.status === 'rejected') {
    connection(false, `job ${id}: ${job.reason.message}`);
    return;
  }
  connection(true);
  renderJob(job.value);
  if (cps.status === 'fulfilled') renderCheckpoints(cps.value);
  renderState(job.value, metrics.status === 'fulfilled' ? metricList(metrics.value) : []);
  if (xs.status === 'fulfilled') renderExceptions(xs.value);
  if (conns.status === 'fulfilled') renderConnectors(conns.value);
  await refreshVertex();
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && timer === null) tick();
});

tick();
