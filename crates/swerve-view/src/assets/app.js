// swerve view: the pages of runs and trajectories, drawn from the JSON the server answers
// (or, in an export, from data scripts). Every string from a trajectory is set as text
// (`textContent`, text nodes, attributes): nothing is ever parsed as markup.
'use strict';

(function () {
  const MODE = document.querySelector('meta[name="swerve-data"]').content;
  const TOKEN = new URLSearchParams(location.search).get('token');
  const POLL_MS = 2000;
  const SVG_NS = 'http://www.w3.org/2000/svg';

  // ---- elements -------------------------------------------------------------------------

  /** An element with attributes (className, other names as attributes) and children
   *  (nodes, or strings that become text nodes; null and false are skipped). */
  function el(tag, attrs, ...children) {
    return build(document.createElement(tag), attrs, children);
  }

  function svg(tag, attrs, ...children) {
    return build(document.createElementNS(SVG_NS, tag), attrs, children);
  }

  function build(node, attrs, children) {
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'className') node.setAttribute('class', value);
      else if (name === 'onclick' || name === 'oninput' || name === 'onchange') {
        node.addEventListener(name.slice(2), value);
      } else node.setAttribute(name, String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function link(href, text) {
    return el('a', { href }, text);
  }

  function trajHref(key) {
    return '#/traj/' + encodeURIComponent(key);
  }

  // ---- numbers --------------------------------------------------------------------------

  const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
  const cost = (n) => (n === null || n === undefined ? '–' : '$' + n.toFixed(n < 1 ? 4 : 2));
  const secs = (n) => (n === null || n === undefined ? '–' : n < 100 ? n.toFixed(1) + ' s' : (n / 60).toFixed(1) + ' min');
  const pct = (n) => (n === null || n === undefined ? '–' : (100 * n).toFixed(1) + '%');

  // ---- data -----------------------------------------------------------------------------

  const waiting = {};
  // Export data scripts call this.
  window.swerveData = function (name, value) {
    const pending = waiting[name];
    if (pending) {
      delete waiting[name];
      pending.forEach((resolve) => resolve(value));
    }
  };

  function hex(text) {
    return Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('');
  }

  /** The index, a run (`arg` its number) or a trajectory (`arg` its key). */
  function load(kind, arg) {
    if (MODE === 'export') {
      const name = kind === 'index' ? 'index' : kind === 'run' ? 'run-' + arg : 'traj-' + hex(arg);
      return new Promise((resolve, reject) => {
        (waiting[name] = waiting[name] || []).push(resolve);
        const script = document.createElement('script');
        script.src = 'data/' + name + '.js';
        script.onload = () => script.remove();
        script.onerror = () => {
          delete waiting[name];
          script.remove();
          reject(new Error('not in this export: ' + script.src));
        };
        document.head.appendChild(script);
      });
    }
    const path = kind === 'index' ? 'api/index' : kind === 'run' ? 'api/run/' + arg : 'api/traj/' + encodeURIComponent(arg);
    const headers = TOKEN ? { Authorization: 'Bearer ' + TOKEN } : {};
    return fetch(path, { headers, cache: 'no-store' }).then(async (response) => {
      if (!response.ok) throw new Error(response.status + ' ' + (await response.text()));
      return response.json();
    });
  }

  // ---- pages and live updates -----------------------------------------------------------

  let generation = 0; // bumped on every navigation: stale loads and polls stop
  let pollTimer = null;

  /** Shows a page: `fetchData` loads, `render(data)` returns the page's nodes; pages of
   *  live data (`isLive(data)`) are loaded again every POLL_MS and redrawn when changed,
   *  keeping the scroll position and which sections are open. */
  async function show(name, crumbs, fetchData, render, isLive) {
    const mine = ++generation;
    clearTimeout(pollTimer);
    document.body.removeAttribute('data-page');
    setCrumbs(crumbs);
    let last = null;
    const draw = async (first) => {
      let data;
      try {
        data = await fetchData();
        if (mine !== generation) return;
        const text = JSON.stringify(data);
        if (text !== last) {
          last = text;
          const open = first ? [] : Array.from(document.querySelectorAll('details[open][id]'), (d) => d.id);
          const scroll = window.scrollY;
          const focused = document.activeElement && document.activeElement.id;
          replaceMain(render(data));
          open.forEach((id) => {
            const details = document.getElementById(id);
            if (details) details.open = true;
          });
          if (!first) window.scrollTo(0, scroll);
          // A redraw while typing in the filter keeps the caret where it was.
          const again = focused && document.getElementById(focused);
          if (!first && again) {
            again.focus();
            if (typeof again.value === 'string' && again.setSelectionRange) again.setSelectionRange(again.value.length, again.value.length);
          }
        }
      } catch (error) {
        if (mine !== generation) return;
        if (first) replaceMain(el('p', { className: 'error' }, String(error.message || error)));
        document.body.setAttribute('data-page', name);
        return;
      }
      const live = MODE !== 'export' && isLive(data);
      document.getElementById('live').textContent = live ? '● live' : '';
      document.body.setAttribute('data-page', name);
      if (live) pollTimer = setTimeout(() => draw(false), POLL_MS);
    };
    await draw(true);
  }

  function replaceMain(node) {
    const main = document.getElementById('main');
    main.replaceChildren(node);
  }

  function setCrumbs(crumbs) {
    const nav = document.getElementById('crumbs');
    nav.replaceChildren(...crumbs.map(([href, text]) => (href ? link(href, text) : el('span', {}, text))));
  }

  function route() {
    const parts = location.hash.replace(/^#\/?/, '').split('/');
    if (parts[0] === 'run' && parts[1] !== undefined) return runPage(Number(parts[1]));
    if (parts[0] === 'compare' && parts[2] !== undefined) return comparePage(Number(parts[1]), Number(parts[2]));
    if (parts[0] === 'traj' && parts[1] !== undefined) return trajPage(decodeURIComponent(parts.slice(1).join('/')));
    return indexPage();
  }

  // ---- index ----------------------------------------------------------------------------

  function indexPage() {
    return show('index', [], () => load('index'), (index) => {
      const page = el('div', {});
      if (index.runs.length) {
        page.append(el('h1', {}, 'Runs'));
        page.append(el('table', { className: 'grid', id: 'runs' },
          el('thead', {}, el('tr', {}, el('th', {}, 'run'), el('th', {}, 'rollouts'))),
          el('tbody', {}, index.runs.map((run) =>
            el('tr', {}, el('td', {}, link('#/run/' + run.index, run.path)), el('td', { className: 'num' }, int(run.rollouts)))))));
        if (index.runs.length > 1) page.append(compareForm(index.runs));
      }
      if (index.files.length) {
        page.append(el('h1', {}, 'Trajectory files'));
        for (const file of index.files) {
          page.append(el('h2', {}, file.path));
          if (file.error) page.append(el('pre', { className: 'error' }, file.error));
          else page.append(rolloutTable(file.rows, COLUMNS.filter((c) => c.brief), { key: 'id', dir: 1 }, () => {}));
        }
      }
      return page;
    }, () => false);
  }

  function compareForm(runs) {
    const pick = (id, selected) => el('select', { id }, runs.map((run) =>
      el('option', { value: run.index, selected: run.index === selected ? 'selected' : null }, run.path)));
    const a = pick('compare-a', 0);
    const b = pick('compare-b', 1);
    return el('p', { className: 'compare' }, 'Compare ', a, ' with ', b, ' ',
      el('button', { onclick: () => { location.hash = '#/compare/' + a.value + '/' + b.value; } }, 'side by side'));
  }

  // ---- run ------------------------------------------------------------------------------

  const COLUMNS = [
    { key: 'id', label: 'rollout', brief: true, cell: (r) => link(trajHref(r.key), r.id) },
    { key: 'instance_id', label: 'instance', brief: true },
    { key: 'status', label: 'exit reason', brief: true, cell: (r) => badge(r.status, r.error) },
    { key: 'resolved', label: 'resolved', cell: (r) => (r.resolved === null ? '–' : r.resolved ? '✔' : '✘') },
    { key: 'steps', label: 'steps', num: true, brief: true },
    { key: 'prompt_tokens', label: 'prompt tok', num: true, fmt: int },
    { key: 'completion_tokens', label: 'completion tok', num: true, fmt: int },
    { key: 'cost', label: 'cost', num: true, fmt: cost },
    { key: 'model_seconds', label: 'model', num: true, fmt: secs },
    { key: 'env_seconds', label: 'tools', num: true, fmt: secs },
    { key: 'format_errors', label: 'format err', num: true },
    { key: 'subagent_calls', label: 'subagent calls', num: true },
    { key: 'patch_lines', label: 'patch lines', num: true },
  ];

  function badge(status, title) {
    return el('span', { className: 'badge st-' + status.replace(/[^a-z_]/g, ''), title: title || null }, status);
  }

  /** The sortable table of `rows`; `sort` is {key, dir} and changes on header clicks. */
  function rolloutTable(rows, columns, sort, onSort) {
    const sorted = rows.slice().sort((a, b) => {
      const x = a[sort.key], y = b[sort.key];
      if (x === y) return a.id < b.id ? -1 : 1;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * sort.dir;
    });
    const head = el('tr', {}, columns.map((column) =>
      el('th', {
        className: (column.num ? 'num ' : '') + 'sortable' + (sort.key === column.key ? (sort.dir > 0 ? ' asc' : ' desc') : ''),
        'data-key': column.key,
        onclick: () => onSort(column.key),
      }, column.label)));
    const body = el('tbody', {});
    const fragment = document.createDocumentFragment();
    for (const row of sorted) {
      fragment.appendChild(el('tr', { className: 'rollout', 'data-status': row.status },
        columns.map((column) => el('td', { className: column.num ? 'num' : null },
          column.cell ? column.cell(row) : column.fmt ? column.fmt(row[column.key]) : String(row[column.key])))));
    }
    body.appendChild(fragment);
    return el('table', { className: 'grid rollouts' }, el('thead', {}, head), body);
  }

  const runState = {}; // per run: sort and filter, kept across live redraws

  function runPage(index) {
    const state = runState[index] || (runState[index] = { sort: { key: 'id', dir: 1 }, text: '', status: '' });
    return show('run', [['#/', 'runs'], [null, 'run ' + index]], () => load('run', index), (run) => {
      const page = el('div', {});
      page.append(el('h1', {}, run.path));
      page.append(summaryCards(run));
      page.append(el('div', { className: 'row' },
        el('div', {}, el('h2', {}, 'Exit reasons'), barChart('chart-exits', Object.entries(run.totals.exit_reasons).concat(run.totals.running ? [['running', run.totals.running]] : []))),
        atKTable(run)));
      page.append(el('h2', {}, 'Context per step, across the run'));
      page.append(runContextChart(run.rows));
      page.append(el('div', { className: 'row' },
        el('div', {}, el('h2', {}, 'Completion tokens per step, across the run'), lineChart('chart-run-tokens', [
          { name: 'mean', label: 'mean completion tokens', values: meanByStep(run.rows, (r) => r.completion) },
        ], 'step', 'tokens', 420)),
        el('div', {}, el('h2', {}, 'Cost over steps, across the run'), lineChart('chart-run-cost', [
          { name: 'mean', label: 'mean cumulative cost ($)', values: meanByStep(run.rows, (r) => cumulative(r.step_costs)) },
        ], 'step', 'dollars', 420))));
      page.append(el('h2', {}, 'Rollouts'));
      const holder = el('div', {});
      const count = el('span', { className: 'muted', id: 'row-count' });
      const statuses = Array.from(new Set(run.rows.map((r) => r.status))).sort();
      const redraw = () => {
        const needle = state.text.toLowerCase();
        const rows = run.rows.filter((r) => (!state.status || r.status === state.status) &&
          (!needle || r.id.toLowerCase().includes(needle) || r.instance_id.toLowerCase().includes(needle)));
        count.textContent = rows.length + ' of ' + run.rows.length + ' rollouts';
        holder.replaceChildren(rolloutTable(rows, COLUMNS, state.sort, (key) => {
          state.sort = { key, dir: state.sort.key === key ? -state.sort.dir : 1 };
          redraw();
        }));
      };
      const filter = el('input', { id: 'filter', type: 'search', placeholder: 'filter by id or instance', value: state.text,
        oninput: (event) => { state.text = event.target.value; redraw(); } });
      const status = el('select', { id: 'status-filter', onchange: (event) => { state.status = event.target.value; redraw(); } },
        el('option', { value: '' }, 'every exit reason'),
        statuses.map((s) => el('option', { value: s, selected: s === state.status ? 'selected' : null }, s)));
      page.append(el('p', { className: 'filters' }, filter, ' ', status, ' ', count));
      page.append(holder);
      redraw();
      return page;
    }, (run) => run.live);
  }

  function summaryCards(run) {
    const t = run.totals;
    const wall = run.summary && run.summary.process ? run.summary.process.wall_seconds : null;
    const cards = [
      ['rollouts', int(t.rollouts) + (run.summary && run.summary.expected ? ' / ' + int(run.summary.expected) : '')],
      ['finished', int(t.finished) + (t.running ? ' (' + t.running + ' running)' : '')],
      ['submitted', int(t.exit_reasons.submitted || 0)],
      ['resolved', t.evaluated ? t.resolved + ' / ' + t.evaluated + ' (' + pct(t.resolved / t.evaluated) + ')' : 'not graded'],
      ['steps', int(t.steps)],
      ['tokens', int(t.prompt_tokens) + ' + ' + int(t.completion_tokens)],
      ['cost', cost(t.cost)],
      ['model time', secs(t.model_seconds)],
      ['tool time', secs(t.env_seconds)],
      ['wall time', wall === null ? '–' : secs(wall)],
    ];
    return el('div', { className: 'cards' }, cards.map(([label, value]) =>
      el('div', { className: 'card' }, el('div', { className: 'label' }, label), el('div', { className: 'value' }, value))));
  }

  function atKTable(run) {
    const box = el('div', {});
    if (run.pass_at_k.length) {
      box.append(el('h2', {}, 'pass@k'));
      box.append(el('table', { className: 'grid', id: 'pass-at-k' },
        el('thead', {}, el('tr', {}, el('th', {}, 'k'), el('th', {}, 'pass@k'), el('th', {}, 'tasks'))),
        el('tbody', {}, run.pass_at_k.map((row) => el('tr', {}, el('td', {}, row.k), el('td', { className: 'num' }, pct(row.pass_at_k)), el('td', { className: 'num' }, row.tasks))))));
    }
    if (Array.isArray(run.selection) && run.selection.length) {
      box.append(el('h2', {}, 'TTS@k (swerve select)'));
      box.append(el('table', { className: 'grid', id: 'tts-at-k' },
        el('thead', {}, el('tr', {}, el('th', {}, 'k'), el('th', {}, 'TTS@k'), el('th', {}, 'pass@k'))),
        el('tbody', {}, run.selection.map((row) => el('tr', {}, el('td', {}, row.k), el('td', { className: 'num' }, pct(row.tts)), el('td', { className: 'num' }, pct(row.pass_at_k)))))));
    }
    return box;
  }

  /** The mean over the rollouts that reached each step of `pick(row)[step]`. */
  function meanByStep(rows, pick) {
    const lists = rows.map(pick);
    const longest = lists.reduce((m, l) => Math.max(m, l.length), 0);
    const means = [];
    for (let i = 0; i < longest; i++) {
      const values = lists.filter((l) => i < l.length).map((l) => l[i]);
      means.push(values.reduce((a, b) => a + b, 0) / values.length);
    }
    return means;
  }

  function runContextChart(rows) {
    const longest = rows.reduce((m, r) => Math.max(m, r.context.length), 0);
    const mean = [], most = [];
    for (let i = 0; i < longest; i++) {
      const values = rows.map((r) => r.context[i]).filter((v) => v > 0);
      mean.push(values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
      most.push(values.length ? Math.max(...values) : null);
    }
    if (!mean.some((v) => v !== null)) return el('p', { className: 'muted' }, 'No prompt tokens were reported.');
    return lineChart('chart-run-context', [
      { name: 'mean', label: 'mean prompt tokens', values: mean },
      { name: 'max', label: 'max prompt tokens', values: most },
    ], 'step', 'tokens');
  }

  // ---- compare --------------------------------------------------------------------------

  function comparePage(a, b) {
    return show('compare', [['#/', 'runs'], [null, 'compare ' + a + ' and ' + b]],
      () => Promise.all([load('run', a), load('run', b)]), ([left, right]) => {
        const page = el('div', {});
        page.append(el('div', { className: 'side-by-side' },
          [left, right].map((run) => el('div', {}, el('h2', {}, link('#/run/' + run.index, run.path)), summaryCards(run), atKTable(run)))));
        const byId = (run) => new Map(run.rows.map((r) => [r.id, r]));
        const l = byId(left), r = byId(right);
        const ids = Array.from(new Set([...l.keys(), ...r.keys()])).sort();
        const cell = (row, pick) => (row ? pick(row) : '–');
        const side = (row) => [
          el('td', {}, row ? link(trajHref(row.key), row.status) : '–'),
          el('td', {}, cell(row, (x) => (x.resolved === null ? '–' : x.resolved ? '✔' : '✘'))),
          el('td', { className: 'num' }, cell(row, (x) => x.steps)),
          el('td', { className: 'num' }, cell(row, (x) => cost(x.cost))),
        ];
        page.append(el('h2', {}, 'Rollouts'));
        page.append(el('table', { className: 'grid', id: 'compare' },
          el('thead', {}, el('tr', {}, el('th', {}, 'rollout'), ['left', 'right'].map((s) => [
            el('th', {}, s + ' exit'), el('th', {}, 'resolved'), el('th', { className: 'num' }, 'steps'), el('th', { className: 'num' }, 'cost')]))),
          el('tbody', {}, ids.map((id) => {
            const x = l.get(id), y = r.get(id);
            const differs = !x || !y || x.status !== y.status || x.resolved !== y.resolved;
            return el('tr', { className: differs ? 'differs' : null }, el('td', {}, id), side(x), side(y));
          }))));
        return page;
      }, ([left, right]) => left.live || right.live);
  }

  // ---- trajectory -----------------------------------------------------------------------

  function trajPage(key) {
    const crumbs = [['#/', 'runs']];
    const run = /^r(\d+):/.exec(key);
    if (run) crumbs.push(['#/run/' + run[1], 'run ' + run[1]]);
    crumbs.push([null, key.replace(/^[rf]\d+:/, '')]);
    return show('traj', crumbs, () => load('traj', key), renderTrajectory, (t) => !t.outcome);
  }

  function renderTrajectory(t) {
    const page = el('div', {});
    const o = t.outcome;
    page.append(el('h1', {}, t.instance_id || t.id));
    page.append(el('p', { className: 'muted' }, [t.id, t.model, t.created_at].filter(Boolean).join(' · ')));
    page.append(outcomeCards(t));
    page.append(el('h2', {}, 'Context size per step'));
    page.append(lineChart('chart-context', [
      { name: 'sent', label: 'as sent (reported prompt tokens)', values: t.steps.map((s) => s.context.sent) },
      { name: 'window', label: 'under the window (estimated)', values: t.steps.map((s) => s.context.window) },
      { name: 'full', label: 'with all reasoning (estimated)', values: t.steps.map((s) => s.context.full) },
    ], 'step', 'tokens'));
    page.append(el('div', { className: 'row' },
      el('div', {}, el('h2', {}, 'Tokens per step'), lineChart('chart-tokens', [
        { name: 'completion', label: 'completion', values: t.steps.map((s) => (s.usage ? s.usage.completion_tokens : null)) },
        { name: 'reasoning', label: 'reasoning', values: t.steps.map((s) => (s.usage && s.usage.reasoning_tokens ? s.usage.reasoning_tokens : null)) },
      ], 'step', 'tokens', 420)),
      el('div', {}, el('h2', {}, 'Cost over steps'), lineChart('chart-cost', [
        { name: 'cost', label: 'cumulative cost ($)', values: cumulative(t.steps.map((s) => s.cost)) },
      ], 'step', 'dollars', 420))));
    if (t.config !== null && t.config !== undefined) {
      page.append(el('details', { id: 'config' }, el('summary', {}, 'Run configuration'), el('pre', {}, JSON.stringify(t.config, null, 2))));
    }
    if (Object.keys(t.extra).length) {
      page.append(el('details', { id: 'extra' }, el('summary', {}, 'More about this trajectory'), el('pre', {}, JSON.stringify(t.extra, null, 2))));
    }
    if (t.prompt.length) {
      page.append(el('details', { className: 'prompt', id: 'prompt' },
        el('summary', {}, 'Prompt: ' + t.prompt.length + ' messages'), t.prompt.map(message)));
    }
    page.append(el('h2', {}, 'Steps (' + t.steps.length + ')'));
    const steps = el('div', { id: 'steps' });
    const fragment = document.createDocumentFragment();
    t.steps.forEach((s) => fragment.appendChild(step(s)));
    steps.appendChild(fragment);
    page.append(steps);
    if (o) page.append(outcomeDetails(t));
    else page.append(el('p', { className: 'badge st-running' }, 'running: no outcome recorded yet'));
    return page;
  }

  function cumulative(values) {
    let sum = 0, any = false;
    return values.map((v) => {
      if (v !== null && v !== undefined) { sum += v; any = true; }
      return any ? sum : null;
    });
  }

  function outcomeCards(t) {
    const o = t.outcome;
    const usage = o && o.usage;
    const timings = (o && o.timings) || {};
    const resolved = o && o.reward !== undefined ? (o.reward >= 1 ? 'resolved' : 'not resolved') : 'not graded';
    const cards = [
      ['exit', o ? badge(o.exit_reason) : badge('running')],
      ['steps', int(t.steps.length)],
      ['grade', resolved],
      ['tokens', usage ? int(usage.prompt_tokens) + ' + ' + int(usage.completion_tokens) : '–'],
      ['cost', o ? cost(o.cost) : '–'],
      ['model time', secs(timings.model_seconds)],
      ['tool time', secs(timings.env_seconds)],
    ];
    const box = el('div', { className: 'cards' }, cards.map(([label, value]) =>
      el('div', { className: 'card' }, el('div', { className: 'label' }, label), el('div', { className: 'value' }, value))));
    if (o && o.exit_detail) return el('div', {}, box, el('pre', { className: 'detail' }, o.exit_detail));
    return box;
  }

  function step(s) {
    const badges = [];
    if (s.usage) badges.push(el('span', { className: 'chip' }, int(s.usage.prompt_tokens) + ' + ' + int(s.usage.completion_tokens) + ' tok'));
    if (s.timings.model_seconds !== undefined) badges.push(el('span', { className: 'chip' }, 'model ' + s.timings.model_seconds.toFixed(2) + ' s'));
    if (s.timings.env_seconds !== undefined) badges.push(el('span', { className: 'chip' }, 'tools ' + s.timings.env_seconds.toFixed(2) + ' s'));
    if (s.cost !== undefined && s.cost !== null) badges.push(el('span', { className: 'chip' }, cost(s.cost)));
    if (s.format_error) badges.push(el('span', { className: 'chip bad' }, 'format error'));
    if (s.error) badges.push(el('span', { className: 'chip bad' }, 'error'));
    if (s.rewritten) badges.push(el('span', { className: 'chip window' }, s.rewritten + ' earlier message' + (s.rewritten > 1 ? 's' : '') + ' rewritten'));
    if (s.dropped_reasoning) badges.push(el('span', { className: 'chip window' }, 'reasoning dropped from ' + s.dropped_reasoning + ' earlier turn' + (s.dropped_reasoning > 1 ? 's' : '')));
    if (s.subagents.length) badges.push(el('span', { className: 'chip' }, s.subagents.length + ' subagent' + (s.subagents.length > 1 ? 's' : '')));
    const id = 'step-' + s.index;
    const section = el('section', { className: 'step' + (s.format_error ? ' has-format-error' : ''), id, 'data-index': s.index },
      el('h3', {}, el('span', { className: 'step-no' }, 'Step ' + (s.index + 1)), ' ', badges));
    if (s.new_messages) {
      section.append(el('details', { className: 'request', id: id + '-request' },
        el('summary', {}, 'Request: ' + s.request_messages + ' messages, ' + s.new_messages.length + ' new'),
        s.new_messages.map(message)));
    }
    if (s.reasoning && s.reasoning.trim()) {
      section.append(folded('reasoning', id + '-reasoning', 'Reasoning (' + int(s.reasoning.length) + ' characters)', s.reasoning));
    }
    if (s.digest) section.append(folded('digest', id + '-digest', 'Reasoning digest', s.digest));
    if (s.tool_call) {
      section.append(el('div', { className: 'call' }, el('span', { className: 'call-name' }, '▶ ' + s.tool_call.name),
        Object.entries(s.tool_call.arguments).map(([name, value]) =>
          el('div', { className: 'arg' }, el('span', { className: 'arg-name' }, name), text(typeof value === 'string' ? value : JSON.stringify(value, null, 2))))));
    }
    if (s.format_error) section.append(el('div', { className: 'format-error' }, el('strong', {}, 'Format error: '), text(s.format_error)));
    if (!s.tool_call || s.format_error) section.append(folded('response', id + '-response', 'Answer as returned', s.response_text, !s.tool_call && !s.format_error));
    else if (s.call_text) section.append(folded('response', id + '-response', 'Answer as returned', s.response_text));
    if (s.observation !== undefined && s.observation !== null) {
      section.append(el('div', { className: 'observation' }, el('div', { className: 'label' }, 'Observation'), text(s.observation)));
    }
    if (s.error) section.append(el('div', { className: 'step-error' }, el('strong', {}, 'Error: '), text(s.error)));
    s.subagents.forEach((sub, at) => section.append(subagent(sub, id + '-sub-' + at)));
    return section;
  }

  function folded(kind, id, summary, body, open) {
    return el('details', { className: kind, id, open: open ? 'open' : null }, el('summary', {}, summary), text(body));
  }

  /** A block of text: a diff gets its lines coloured. */
  function text(body) {
    const value = body === null || body === undefined ? '' : String(body);
    if (!looksLikeDiff(value)) return el('pre', {}, value);
    const pre = el('pre', { className: 'diff' });
    const fragment = document.createDocumentFragment();
    for (const line of value.split('\n')) {
      let kind = null;
      if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') || line.startsWith('index ')) kind = 'meta';
      else if (line.startsWith('@@')) kind = 'hunk';
      else if (line.startsWith('+')) kind = 'add';
      else if (line.startsWith('-')) kind = 'del';
      fragment.appendChild(el('span', { className: kind }, line + '\n'));
    }
    pre.appendChild(fragment);
    return pre;
  }

  function looksLikeDiff(value) {
    return /^(diff --git |--- \S.*\n\+\+\+ |@@ -\d)/m.test(value);
  }

  function message(m) {
    const content = m.content === null || m.content === undefined ? '' :
      typeof m.content === 'string' ? m.content : m.content.map((part) => part.text || '').join('');
    return el('div', { className: 'msg role-' + m.role },
      el('div', { className: 'label' }, m.role + (m.name ? ' · ' + m.name : '') + (m.tool_call_id ? ' · answers ' + m.tool_call_id : '')),
      m.reasoning_content ? el('details', { className: 'reasoning' }, el('summary', {}, 'reasoning'), text(m.reasoning_content)) : null,
      content ? text(content) : null,
      (m.tool_calls || []).map((call) => el('div', { className: 'call' }, el('span', { className: 'call-name' }, '▶ ' + call.function.name), text(call.function.arguments))));
  }

  function subagent(sub, id) {
    const tokens = sub.calls.reduce((sum, call) => sum + (call.usage ? call.usage.prompt_tokens + call.usage.completion_tokens : 0), 0);
    const spent = sub.calls.reduce((sum, call) => sum + (call.cost || 0), 0);
    return el('details', { className: 'subagent', id },
      el('summary', {}, sub.agent + ' · ' + sub.model + ' · ' + sub.calls.length + ' call' + (sub.calls.length === 1 ? '' : 's') +
        (sub.status ? ' · ' + sub.status : '') + ' · ' + int(tokens) + ' tok' + (spent ? ' · ' + cost(spent) : '')),
      sub.calls.map((call, at) => el('div', { className: 'subcall' },
        el('div', { className: 'label' }, 'call ' + (at + 1) + (call.model_seconds !== undefined ? ' · ' + call.model_seconds.toFixed(2) + ' s' : '')),
        el('details', { id: id + '-call-' + at }, el('summary', {}, call.messages.length + ' messages sent'), call.messages.map(message)),
        call.reasoning ? folded('reasoning', id + '-reasoning-' + at, 'reasoning', call.reasoning) : null,
        el('div', { className: 'label' }, 'answer'), text(call.response_text),
        call.error ? el('div', { className: 'step-error' }, text(call.error)) : null)));
  }

  function outcomeDetails(t) {
    const o = t.outcome;
    const box = el('div', { id: 'outcome' });
    box.append(el('h2', {}, 'Final patch'));
    box.append(o.patch ? text(o.patch) : el('p', { className: 'muted' }, 'No patch.'));
    const report = o.eval_report;
    if (report) {
      box.append(el('h2', {}, 'Evaluation'));
      box.append(el('p', {}, report.resolved === true ? badge('resolved') : report.resolved === false ? badge('unresolved') : '',
        report.evaluator ? ' ' + report.evaluator : ''));
      const status = report.tests_status || {};
      for (const list of ['FAIL_TO_PASS', 'PASS_TO_PASS']) {
        const tests = status[list];
        if (!tests) continue;
        const rows = [].concat(
          (tests.success || []).map((name) => [name, 'pass']),
          (tests.failure || []).map((name) => [name, 'fail']));
        box.append(el('h3', {}, list + ' (' + (tests.success || []).length + ' of ' + rows.length + ' pass)'));
        box.append(el('table', { className: 'grid tests', id: 'tests-' + list },
          el('tbody', {}, rows.map(([name, result]) => el('tr', { className: result }, el('td', {}, result === 'pass' ? '✔' : '✘'), el('td', {}, name))))));
      }
      box.append(el('details', { id: 'report-json' }, el('summary', {}, 'Report (JSON)'), el('pre', {}, JSON.stringify(report, null, 2))));
    }
    if (t.test_log) box.append(el('details', { id: 'test-log', className: 'test-log' }, el('summary', {}, 'Test log'), el('pre', {}, t.test_log)));
    return box;
  }

  // ---- charts ---------------------------------------------------------------------------

  /** A line chart with one point per value (null values leave a gap): `series` is
   *  [{name, label, values}], all of the same length, x = index + 1. */
  function lineChart(id, series, xLabel, yLabel, width) {
    const W = width || 860, H = 240, left = 64, right = 12, top = 12, bottom = 36;
    // A series with nothing but zeros and gaps was not recorded (a replayed model reports
    // no tokens, an unpriced one no cost): it is left out rather than drawn flat.
    series = series.filter((s) => s.values.some((v) => v));
    const count = Math.max(0, ...series.map((s) => s.values.length));
    const all = series.flatMap((s) => s.values.filter((v) => v !== null && v !== undefined));
    const box = el('figure', { className: 'chart', id });
    if (!count || !all.length) {
      box.append(el('p', { className: 'muted' }, 'Nothing recorded.'));
      return box;
    }
    const maxY = niceCeiling(Math.max(...all));
    const x = (i) => left + (count === 1 ? (W - left - right) / 2 : (i * (W - left - right)) / (count - 1));
    const y = (v) => top + (H - top - bottom) * (1 - v / maxY);
    const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': yLabel + ' by ' + xLabel });
    for (let t = 0; t <= 4; t++) {
      const v = (maxY * t) / 4;
      chart.append(svg('line', { className: 'grid-line', x1: left, x2: W - right, y1: y(v), y2: y(v) }));
      chart.append(svg('text', { className: 'tick', x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, shortNumber(v)));
    }
    const ticks = Math.min(count, 10);
    for (let t = 0; t < ticks; t++) {
      const i = Math.round((t * (count - 1)) / Math.max(1, ticks - 1));
      chart.append(svg('text', { className: 'tick', x: x(i), y: H - bottom + 16, 'text-anchor': 'middle' }, String(i + 1)));
    }
    chart.append(svg('text', { className: 'axis', x: (W + left) / 2, y: H - 4, 'text-anchor': 'middle' }, xLabel));
    series.forEach((s, n) => {
      const group = svg('g', { className: 'series s' + n, 'data-series': s.name });
      let d = '';
      let pen = false;
      s.values.forEach((v, i) => {
        if (v === null || v === undefined) { pen = false; return; }
        d += (pen ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1);
        pen = true;
      });
      if (d) group.append(svg('path', { className: 'line', d }));
      s.values.forEach((v, i) => {
        if (v === null || v === undefined) return;
        group.append(svg('circle', { className: 'pt', cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: count > 120 ? 1.5 : 3, 'data-step': i },
          svg('title', {}, s.label + ', ' + xLabel + ' ' + (i + 1) + ': ' + shortNumber(v))));
      });
      chart.append(group);
    });
    box.append(chart);
    box.append(el('figcaption', {}, series.map((s, n) => el('span', { className: 'legend s' + n }, s.label))));
    return box;
  }

  /** Horizontal bars of [label, count] pairs. */
  function barChart(id, pairs) {
    const W = 420, row = 22, left = 130;
    const most = Math.max(1, ...pairs.map(([, n]) => n));
    const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + Math.max(row, pairs.length * row), width: W, height: Math.max(row, pairs.length * row), id });
    pairs.forEach(([label, n], i) => {
      const g = svg('g', { className: 'bar st-' + label.replace(/[^a-z_]/g, ''), 'data-label': label });
      g.append(svg('text', { className: 'tick', x: left - 6, y: i * row + 15, 'text-anchor': 'end' }, label));
      g.append(svg('rect', { x: left, y: i * row + 3, height: row - 6, width: Math.max(2, ((W - left - 40) * n) / most) }));
      g.append(svg('text', { className: 'tick', x: left + ((W - left - 40) * n) / most + 6, y: i * row + 15 }, String(n)));
      chart.append(g);
    });
    return chart;
  }

  function niceCeiling(v) {
    if (v <= 0) return 1;
    const magnitude = Math.pow(10, Math.floor(Math.log10(v)));
    for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= v) return step * magnitude;
    return 10 * magnitude;
  }

  function shortNumber(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (v >= 1e4) return (v / 1e3).toFixed(0) + 'k';
    if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
    if (v > 0 && v < 1) return v.toFixed(4);
    return String(Math.round(v * 100) / 100);
  }

  window.addEventListener('hashchange', route);
  route();
})();
