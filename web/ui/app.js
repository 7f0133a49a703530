/*
 * cyclescope's browser UI, served by the daemon (docs/http-api.md, "The
 * UI"). Four pages, chosen by the URL's hash:
 *   #/                 the runs list
 *   #/run/ID?metric=a,b&from=&to=&device=
 *                      a run: bucketed plots that re-query at every zoom,
 *                      its ranges in lanes under them, CSV links for the view
 *                      (a running run followed live: &last=S&keep=N)
 *   #/compare?hw=&sim=&hw_metric=&sim_metric=...
 *                      a correlation request built from two runs
 *   #/collectors       the live collectors, grouped by job, with triggers
 * Everything comes from the HTTP API; plots are uPlot's.
 */
(function () {
	'use strict';
	const API = '/api/v1';
	const app = document.getElementById('app');
	const RANGE_KINDS = ['api', 'kernel', 'memcpy', 'memset', 'graph', 'nvtx', 'window', 'trigger', 'sim-kernel', 'phase', 'overlap'];
	// The overlap analysis' phases (GET /api/v1/runs/{run}/phases), drawn as the 'overlap' lane.
	const PHASE_COLORS = { 'only A': '#ff7f0e', 'A and B': '#d62728', 'only B': '#1f77b4', tail: '#9467bd', neither: '#dddddd' };
	const RANGE_COLORS = {
		api: '#7f7f7f', kernel: '#1f77b4', memcpy: '#2ca02c', memset: '#98df8a', graph: '#9467bd',
		nvtx: '#c49c94', window: '#bcbd22', trigger: '#e377c2', 'sim-kernel': '#d62728', phase: '#17becf',
	};
	// A live run's page keeps at most this many of the newest samples
	// (each with its t0, t1 and one value per plotted metric; ?keep=N, 100
	// to 1000000, changes it) and this many ranges (docs/ui.md).
	const LIVE_KEEP = 50000, LIVE_RANGES = 5000;
	// What the page has asked the API for, for people and tests alike.
	const seen = (window.cyclescope = { seriesRequests: [], loads: 0 });

	// The daemon's bearer token, when it has one: asked for on a 401 and
	// kept for this tab (sessionStorage), sent as the Authorization header,
	// and as access_token= on what the browser fetches without headers (the
	// follow stream, download links), which the daemon takes on GETs only.
	let TOKEN = sessionStorage.getItem('cyclescope_token') || '';
	const authHeaders = () => (TOKEN ? { Authorization: 'Bearer ' + TOKEN } : {});
	const authed = (url) => (TOKEN && url.startsWith(API) ? url + (url.includes('?') ? '&' : '?') + 'access_token=' + encodeURIComponent(TOKEN) : url);

	function h(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		for (const k in attrs || {}) {
			const v = attrs[k];
			if (v === undefined || v === null || v === false)
				continue;
			if (k.startsWith('on'))
				e.addEventListener(k.slice(2), v);
			else if (k === 'value')
				e.value = v;
			else if (k === 'href')
				e.setAttribute(k, authed(v));
			else
				e.setAttribute(k, v === true ? '' : v);
		}
		for (const kid of kids.flat())
			if (kid !== null && kid !== undefined && kid !== false)
				e.append(kid.nodeType ? kid : String(kid));
		return e;
	}

	// The page's content, replaced (arrays flattened, empty parts left out).
	function show(...kids) {
		app.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
	}

	function qs(p) {
		const u = new URLSearchParams();
		for (const k in p)
			if (p[k] !== undefined && p[k] !== null && p[k] !== '' && p[k] !== false)
				u.set(k, p[k]);
		return u.toString();
	}

	// A daemon with a token answers 401 until the page has it (docs/ui.md).
	function tokenError(r) {
		const e = new Error('this daemon needs its bearer token (HTTP 401)');
		e.needsToken = true;
		return e;
	}

	async function fetchText(url) {
		const r = await fetch(url, { headers: authHeaders() });
		if (r.status === 401)
			throw tokenError(r);
		const t = await r.text();
		if (!r.ok) {
			let msg = t;
			try {
				msg = JSON.parse(t).error || t;
			} catch (e) {
				/* not JSON: the text as it is */
			}
			throw new Error(msg + ' (HTTP ' + r.status + ')');
		}
		return t;
	}
	const fetchJSON = async (url) => JSON.parse(await fetchText(url));

	// RFC 4180: quoted fields, doubled quotes, CRLF.
	function parseCSV(text) {
		const rows = [];
		let row = [], f = '', q = false;
		for (let i = 0; i < text.length; i++) {
			const c = text[i];
			if (q) {
				if (c !== '"')
					f += c;
				else if (text[i + 1] === '"')
					f += '"', i++;
				else
					q = false;
			} else if (c === '"') {
				q = true;
			} else if (c === ',') {
				row.push(f), (f = '');
			} else if (c === '\n') {
				row.push(f), rows.push(row), (row = []), (f = '');
			} else if (c !== '\r') {
				f += c;
			}
		}
		if (f !== '' || row.length)
			row.push(f), rows.push(row);
		return { header: rows.shift() || [], rows };
	}
	const num = (s) => (s === '' || s === undefined || s === null ? null : +s);
	// The next time after t that a number holds: t + 1 is t itself past 2^53,
	// and a collector's wall-clock ns (about 1.8e18) are well past it.
	function after(t) {
		let d = 1;
		while (t + d === t)
			d *= 2;
		return t + d;
	}

	// Numbers and times read the same here, in the CLI's SVG figures and in
	// the report (web/figure.h, docs/ui.md): an SI prefix chosen by the
	// value, and only the decimals the tick step (or 3 digits) needs.
	function decimalsFor(step) {
		for (let d = 0; d < 7; d++) {
			const x = step * 10 ** d;
			if (Math.abs(x - Math.round(x)) <= 1e-6 * Math.max(1, x))
				return d;
		}
		return 6;
	}
	function trimZeros(t) {
		return t.includes('.') ? t.replace(/0+$/, '').replace(/\.$/, '') : t;
	}
	function fmtNum(v, step) {
		if (v === null || v === undefined || Number.isNaN(v))
			return 'n/a';
		if (v === 0)
			return '0';
		const a = Math.abs(v);
		let [d, p] = [1, ''];
		for (const [q, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1e-3, ''], [1e-6, '\u00b5'], [0, 'n']])
			if (a >= q) {
				[d, p] = q >= 1e3 ? [q, s] : q === 1e-6 ? [1e-6, s] : q === 0 ? [1e-9, s] : [1, s];
				break;
			}
		const x = v / d;
		const t = step > 0 ? trimZeros(x.toFixed(decimalsFor(step / d))) : String(+x.toPrecision(3));
		return (t === '-0' ? '0' : t) + p;
	}
	const TIME_UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s'], [1, 'ns']];
	function fmtTime(v, step) {
		if (v === null || v === undefined || Number.isNaN(v))
			return 'n/a';
		const ref = step > 0 ? 100 * step : Math.abs(v);
		const [d, u] = TIME_UNITS.find(([q]) => q <= ref) || [1, 'ns'];
		const x = v / d;
		const t = step > 0 ? trimZeros(x.toFixed(decimalsFor(step / d))) : String(+x.toPrecision(4));
		return (t === '-0' ? '0' : t) + ' ' + u;
	}
	// A value in a table: exact for integers, 6 significant digits otherwise.
	const fmtExact = (v) => (v === null || v === undefined || Number.isNaN(v) ? 'n/a' : Number.isInteger(v) ? String(v) : String(+v.toPrecision(6)));
	// A length or time of a run: ns runs in s/ms/µs/ns, cycle runs in cycles.
	const fmtSpan = (v, unit, step) => (unit === 'ns' ? fmtTime(v, step) : fmtNum(v, step) + ' cycles');
	seen.format = { fmtNum, fmtTime }; // docs/ui.md's table is checked against these

	function showError(where, err) {
		where.append(h('div', { class: 'error', role: 'alert' }, String(err.message || err)));
	}

	// The content box of the page: plots never make it scroll sideways.
	function plotWidth() {
		const cs = getComputedStyle(app);
		return Math.max(480, Math.min(1600, Math.floor(app.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)) - 2));
	}

	/* ---- the runs list ---- */

	async function runsPage() {
		document.title = 'cyclescope: runs';
		const runs = await fetchJSON(API + '/runs');
		const cols = ['id', 'name', 'kind', 'source', 'status', 'unit', 'devices', 'metrics', 'samples', 'ranges', 'span', 'hw', 'sim'];
		const firstHw = runs.find((r) => r.kind === 'hw'), firstSim = runs.find((r) => r.kind === 'sim');
		const table = h('table', { class: 'list', id: 'runs' }, h('tr', {}, cols.map((c) => h('th', {}, c))));
		for (const r of runs) {
			const span = r.t_max !== null && r.t_min !== null ? r.t_max - r.t_min : null;
			table.append(h('tr', { 'data-run': r.id },
				h('td', { class: 'num' }, r.id),
				h('td', {}, h('a', { href: '#/run/' + r.id }, r.name)),
				h('td', {}, r.kind), h('td', {}, r.source),
				h('td', {}, r.status, r.status === 'running' ? [' ', h('a', { class: 'live-badge', href: '#/run/' + r.id, title: 'follow it live' }, 'live')] : null),
				h('td', {}, r.time_unit),
				h('td', { class: 'num' }, r.devices), h('td', { class: 'num' }, r.metrics),
				h('td', { class: 'num' }, r.samples), h('td', { class: 'num' }, r.ranges),
				h('td', { class: 'num' }, span === null ? '' : fmtSpan(span, r.time_unit, 0)),
				h('td', {}, h('input', { type: 'radio', name: 'hw', value: r.id, checked: r === firstHw, title: 'hardware side' })),
				h('td', {}, h('input', { type: 'radio', name: 'sim', value: r.id, checked: r === firstSim, title: 'simulator side' }))));
		}
		const compare = h('button', {
			onclick: () => {
				const pick = (n) => (document.querySelector('input[name=' + n + ']:checked') || {}).value;
				location.hash = '#/compare?' + qs({ hw: pick('hw'), sim: pick('sim') });
			},
		}, 'Compare the selected hw and sim runs');
		show(h('h1', {}, 'Runs'),
			runs.length ? [table, h('p', {}, compare)]
				: h('p', {}, 'No runs yet: import one (cyclescope import FILE) or record one (cyclescope run -- CMD).'));
	}

	/* ---- a run ---- */

	// tab10: kernels coloured by name, the names running longest in view
	// first (as the CLI's figures, web/plot.c), past ten grey.
	const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
	function kernelColors(all) {
		const tot = new Map();
		for (const r of all)
			if (r.kind === 'kernel' || r.kind === 'sim-kernel')
				tot.set(r.short, (tot.get(r.short) || 0) + (r.t1 - r.t0));
		const rank = [...tot.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
		return new Map(rank.map(([name], i) => [name, PALETTE[i] || '#999999']));
	}
	// "void ns::gemm<float, 128>(float const*, int)" -> "ns::gemm"; a name
	// that is no signature ("kernel 2") stays as it is
	function shortName(full) {
		let s = String(full || '');
		if (!s.includes('('))
			return s;
		for (let k = 0; k < 8 && /[<(]/.test(s); k++)
			s = s.replace(/<[^<>]*>/g, '').replace(/\([^()]*\)/g, '');
		s = s.trim();
		const sp = s.lastIndexOf(' ');
		return (sp >= 0 ? s.slice(sp + 1) : s) || String(full || '');
	}

	// Downloads: the view's figure as the daemon draws it (web/figure.h),
	// as SVG, or rasterised at 2x into a PNG.
	function download(blob, name) {
		const a = h('a', { href: URL.createObjectURL(blob), download: name });
		document.body.append(a);
		a.click();
		a.remove();
		setTimeout(() => URL.revokeObjectURL(a.href), 10000);
	}
	async function saveFigure(url, name, png) {
		const svg = await fetchText(url);
		if (!png)
			return download(new Blob([svg], { type: 'image/svg+xml' }), name + '.svg');
		const img = new Image();
		const src = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
		await new Promise((ok, bad) => { img.onload = ok; img.onerror = () => bad(new Error('the SVG did not render')); img.src = src; });
		const c = document.createElement('canvas');
		c.width = img.naturalWidth * 2;
		c.height = img.naturalHeight * 2;
		const g = c.getContext('2d');
		g.fillStyle = '#fff';
		g.fillRect(0, 0, c.width, c.height);
		g.drawImage(img, 0, 0, c.width, c.height);
		URL.revokeObjectURL(src);
		const blob = await new Promise((ok) => c.toBlob(ok, 'image/png'));
		download(blob, name + '.png');
	}
	function figureButtons(url, name, where) {
		const b = (label, png) => h('button', { class: 'fig', 'data-format': png ? 'png' : 'svg', title: 'save this figure as ' + label,
			onclick: () => saveFigure(url(), name(), png).catch((e) => showError(where || app, e)) }, label);
		return h('span', { class: 'figbtns' }, b('SVG', false), ' ', b('PNG', true));
	}

	async function runPage(id, params) {
		const run = await fetchJSON(API + '/runs/' + encodeURIComponent(id));
		document.title = 'cyclescope: ' + run.name;
		seen.loads = 0;
		const unit = run.time_unit;
		const metrics = run.metric_list || [];
		const byName = new Map(metrics.map((m) => [m.name, m]));
		const devices = run.device_list || [];
		// the whole run; a live run's grows as its samples arrive
		const full = [run.t_min ?? 0, (run.t_max ?? 0) + 1];
		let origin = full[0];
		let chosen = (params.get('metric') || '').split(',').filter((m) => byName.has(m));
		if (!chosen.length && !params.get('expr'))
			chosen = (run.default_metrics && run.default_metrics.length ? run.default_metrics : metrics.slice(0, 2).map((m) => m.name))
				.filter((m) => byName.has(m));
		let exprs = (params.get('expr') || '').split(';').map((e) => e.trim()).filter(Boolean);
		// per sample (as stored), per second or per cycle (counters, by the sample's own length)
		const canCycle = unit === 'cycle' || run.clock_hz > 0, canSecond = unit === 'ns' || run.clock_hz > 0;
		let rate = params.get('rate') || 'sample';
		if ((rate === 'cycle' && !canCycle) || (rate === 'second' && !canSecond))
			rate = 'sample';
		let device = +(params.get('device') || (devices[0] ? devices[0].index : 0));
		let view = [num(params.get('from')) ?? full[0], num(params.get('to')) ?? full[1]];

		const info = h('dl', { class: 'kv' });
		const kv = (k, v, id) => { const dd = h('dd', { id }, v); info.append(h('dt', {}, k), dd); return dd; };
		kv('kind / source', run.kind + ' / ' + run.source);
		const statusDd = kv('status', run.status + (run.dropped ? ', ' + run.dropped + ' samples dropped' : ''), 'run-status');
		// (a live run's time, samples and ranges change as it grows)
		const timeText = () => (unit === 'ns' ? 'ns' : 'cycles') + (run.clock_hz ? ' at ' + (run.clock_hz / 1e6).toFixed(0) + ' MHz' : '') + ', ' +
			fmtSpan(full[1] - full[0], unit, 0) + (run.status === 'running' ? ' long so far' : ' long') + '; the axis counts from the run start';
		const rangesText = (summary) => summary.map((r) => r.count + ' ' + r.kind).join(', ') || 'none';
		const timeDd = kv('time', timeText(), 'run-time');
		const samplesDd = kv('samples / metrics', run.samples + ' / ' + metrics.length, 'run-samples');
		const rangesDd = kv('ranges', rangesText(run.range_summary || []), 'run-ranges');
		if (run.host)
			kv(run.pid ? 'host / pid' : 'host', run.host + (run.pid ? ' / ' + run.pid : ''));
		if (run.cmdline)
			kv('command', run.cmdline);

		const filter = h('input', { type: 'search', placeholder: 'filter metrics (' + metrics.length + ')', id: 'metric-filter' });
		const picker = h('select', { multiple: true, size: 10, id: 'metric-picker' });
		// The list is filled after the plots are drawn: 4000 options must not hold them up.
		const fill = () => {
			const f = filter.value.toLowerCase();
			picker.replaceChildren(...metrics.filter((m) => !f || m.name.toLowerCase().includes(f) || chosen.includes(m.name))
				.map((m) => h('option', { value: m.name, selected: chosen.includes(m.name) }, m.name + (m.unit ? ' [' + m.unit + ']' : ''))));
		};
		filter.addEventListener('input', fill);
		const names = h('datalist', { id: 'metric-names' });
		const exprIn = h('input', { id: 'expr-input', list: 'metric-names', placeholder: 'e.g. lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum' });
		const exprBtn = h('button', { id: 'add-expr' }, 'Add expression');
		const exprErr = h('div', { id: 'expr-error' });
		const exprList = h('div', { id: 'expr-list' });
		const rateSel = h('select', { id: 'rate' },
			[['sample', 'per sample (as stored)'], canSecond ? ['second', 'per second'] : null, canCycle ? ['cycle', 'per cycle'] : null]
				.filter(Boolean).map(([v, t]) => h('option', { value: v, selected: v === rate }, t)));
		const devSel = h('select', { id: 'device' }, devices.map((d) => h('option', { value: d.index, selected: d.index === device }, d.index + ': ' + (d.name || d.chip || 'device'))));
		const plotBtn = h('button', { id: 'plot' }, 'Plot selected');
		const resetBtn = h('button', { id: 'reset-zoom' }, 'Reset zoom');
		const outBtn = h('button', { id: 'zoom-out' }, 'Zoom out');
		const statusLine = h('div', { class: 'note', id: 'status' });
		const plotsDiv = h('div', { class: 'plots' });
		const lanes = h('canvas', { class: 'lanes', id: 'lanes' });
		const legend = h('div', { class: 'kernel-legend', id: 'kernel-legend' });
		const links = h('div', { class: 'links', id: 'csv-links' });
		const errors = h('div');
		// The overlap analysis: A and B globs over range names.
		let phaseSegs = [];
		const aIn = h('input', { id: 'phase-a', placeholder: 'A: e.g. kernel:nccl*', value: params.get('a') || '' });
		const bIn = h('input', { id: 'phase-b', placeholder: 'B: e.g. *gemm*', value: params.get('b') || '' });
		const phaseBtn = h('button', { id: 'phases' }, 'Split into phases');
		const phaseOut = h('div', { id: 'phase-result' });
		const phaseForm = h('div', { class: 'phases' }, h('h2', {}, 'Overlap phases'),
			h('p', { class: 'note' }, 'Only A, A and B, only B, neither; and B\'s tail after its last overlap with A (docs/phases.md).'),
			h('p', {}, aIn, ' ', bIn, ' ', phaseBtn), phaseOut);
		const figUrl = (cols) => () => API + '/runs/' + run.id + '/plot.svg?' + qs(figQuery(cols));
		const figName = () => (run.name + '-' + (chosen[0] || 'expr')).replace(/[^A-Za-z0-9_.-]+/g, '_');
		// a running run is followed as it is committed (liveFollow below)
		const liveBadge = run.status === 'running' ? h('span', { class: 'live-badge', id: 'live-badge', title: 'following the run as the daemon commits it' }, 'live') : null;
		const liveBar = run.status === 'running' ? h('div', { class: 'live-bar', id: 'live-bar' }) : null;
		show(h('h1', {}, run.name, liveBadge ? [' ', liveBadge] : null), liveBar, info,
			h('div', { class: 'controls' },
				h('div', { class: 'picker' }, h('label', {}, 'metrics (ctrl/shift-click for several)'), filter, h('br'), picker),
				h('div', { class: 'exprbox' }, h('label', { for: 'expr-input' }, 'add an expression (correlate\'s grammar: + - * / ( ), sum("GLOB"), rate(E), delta(E))'),
					exprIn, ' ', exprBtn, exprErr, exprList, names,
					h('label', { for: 'rate' }, 'counters'), rateSel,
					devices.length > 1 ? [h('label', {}, 'device'), devSel] : null,
					h('p', {}, plotBtn, ' ', resetBtn, ' ', outBtn, ' ', h('span', { class: 'note' }, 'figure of the view: '), figureButtons(figUrl(null), figName, errors)),
					h('p', { class: 'note' }, 'Drag across a plot to zoom; each zoom fetches new data.', h('br'),
						'Double-click or Reset zoom for the whole run; click a range to zoom to it.'))),
			errors, statusLine, plotsDiv, lanes, legend, links, (run.range_summary || []).length ? phaseForm : null);

		let plots = [], applying = false, seq = 0, ranges = [];
		let live = null; // the follower of a running run, while it runs
		const inView = () => (run.samples / Math.max(1, devices.length)) * ((view[1] - view[0]) / (full[1] - full[0]));
		// Raw samples when no more than about one a pixel are in view (each
		// drawn over its own interval: whole kernels stay whole), else one
		// bucket a pixel.
		const rawView = () => inView() <= plotWidth() / 2;
		const buckets = () => Math.max(2, Math.min(2000, Math.round(plotWidth())));

		// The plotted columns: metrics and expressions, counters as rates when asked.
		const isCounter = (name) => (byName.get(name) || {}).kind !== 'ratio';
		function columns() {
			const cols = chosen.map((name) => ({ label: name, unit: (byName.get(name) || {}).unit || '', metric: name, isMetric: true, counter: isCounter(name) }))
				.concat(exprs.map((e) => ({ label: e, unit: '', expr: e, counter: !/rate\(/.test(e) })));
			for (const c of cols) {
				c.col = c.metric || c.expr;
				if (rate !== 'sample' && c.counter) {
					// a metric's name quoted, so that any name reads as one
					c.col = c.isMetric ? 'rate("' + c.metric + '")' : 'rate(' + c.expr + ')';
					c.expr = c.col;
					c.rated = true;
					delete c.metric;
					c.unit = (c.unit || 'count') + (rate === 'second' ? '/s' : '/cycle');
					// the server's rate() is per second on ns runs, per cycle on cycle runs
					c.scale = rate === 'second' ? (unit === 'ns' ? 1 : run.clock_hz) : (unit === 'ns' ? 1 / run.clock_hz : 1);
				}
			}
			return cols;
		}
		function viewQuery(withBuckets) {
			const cols = columns();
			const [from, to] = view;
			return {
				metric: cols.filter((c) => c.metric).map((c) => c.metric).join(',') || undefined,
				expr: cols.filter((c) => c.expr).map((c) => c.expr).join(';') || undefined,
				device: devices.length > 1 ? device : undefined, from, to,
				buckets: withBuckets ? buckets() : undefined,
			};
		}
		// A figure of the view: the names as plotted, the rate for the
		// server to apply (web/plot.c), so its units and caption say so.
		function figQuery(cols) {
			cols = cols || columns();
			const [from, to] = view;
			return {
				metric: cols.filter((c) => c.isMetric).map((c) => c.label).join(',') || undefined,
				expr: cols.filter((c) => !c.isMetric).map((c) => c.label).join(';') || undefined,
				device: devices.length > 1 ? device : undefined, from, to,
				rate: rate !== 'sample' ? rate : undefined, ranges: 'all',
			};
		}
		const seriesUrl = (withBuckets) => API + '/runs/' + run.id + '/series.csv?' + qs(viewQuery(withBuckets));

		function xAxis() {
			return {
				label: unit === 'ns' ? 'time since run start' : 'cycles since run start', labelSize: 18,
				values: (u, vals, ax, space, incr) => vals.map((v) => (unit === 'ns' ? fmtTime(v - origin, incr) : fmtNum(v - origin, incr))),
			};
		}

		function build() {
			plots.forEach((p) => p.destroy());
			plots = [];
			plotsDiv.replaceChildren();
			const stepped = uPlot.paths.stepped({ align: 1 });
			for (const c of columns()) {
				const head = h('div', { class: 'plot-head' }, h('span', { class: 'plot-title', title: c.label }, c.label), ' ',
					h('span', { class: 'note' }, c.unit ? '[' + c.unit + ']' : ''), ' ',
					figureButtons(figUrl([c]), () => (run.name + '-' + c.label).replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 80), errors));
				const div = h('div', { class: 'plot', 'data-metric': c.label });
				plotsDiv.append(head, div);
				const fmtV = (u, v) => (v === null || v === undefined ? '' : fmtNum(v, 0));
				const u = new uPlot({
					width: plotWidth(), height: 200,
					legend: { live: true },
					scales: { x: { time: false } },
					axes: [xAxis(),
						{ size: 70, label: c.unit || 'value', labelSize: 18, values: (u, vals, ax, space, incr) => vals.map((v) => fmtNum(v, incr)) }],
					series: [{ label: unit === 'ns' ? 'time' : 'cycle', value: (u, v) => (v === null ? '' : fmtSpan(v - origin, unit, 0)) },
						{ label: 'mean', stroke: '#1f77b4', width: 1.5, paths: stepped, value: fmtV, fill: 'rgba(31,119,180,0.08)', points: { show: false } },
						{ label: 'min', stroke: 'rgba(31,119,180,0.3)', paths: stepped, value: fmtV, points: { show: false } },
						{ label: 'max', stroke: 'rgba(31,119,180,0.3)', paths: stepped, value: fmtV, points: { show: false } }],
					cursor: {
						sync: { key: 'cs-run-' + run.id },
						bind: { dblclick: () => () => { goto(full[0], full[1]); return null; } },
					},
					hooks: {
						setScale: [(u, key) => key === 'x' && zoomed(u)],
						draw: plots.length ? [] : [() => drawLanes()],
					},
				}, [[], [], [], []], div);
				u.csCol = c;
				plots.push(u);
				seen.plots = plots;
			}
		}
		const onResize = () => {
			clearTimeout(build.t);
			build.t = setTimeout(() => plots.forEach((u) => u.setSize({ width: plotWidth(), height: 200 })), 50);
		};
		window.addEventListener('resize', onResize);
		// leaving the page: its plots and handlers go (route() calls this)
		seen.cleanup = () => {
			if (live)
				live.stop();
			clearTimeout(timer);
			seq++; // a load in flight finds itself stale and stops
			window.removeEventListener('resize', onResize);
			plots.forEach((p) => p.destroy());
			plots = [];
		};

		let timer = null;
		function zoomed(u) {
			if (applying)
				return;
			const a = Math.max(full[0], Math.floor(u.scales.x.min)), b = Math.min(full[1], Math.ceil(u.scales.x.max));
			if (!(b > a) || (a === view[0] && b === view[1]))
				return;
			clearTimeout(timer);
			timer = setTimeout(() => goto(a, b), 60);
		}
		// A view the user chose (zoom, reset, a range clicked): a live run's
		// view stops following the newest samples there.
		function goto(from, to) {
			if (live)
				live.detach();
			return load(from, to);
		}
		// The same view again after the plotted columns changed.
		function refresh() {
			listExprs();
			if (live)
				live.sync();
			if (live && live.following)
				return live.redraw();
			return load(view[0], view[1]);
		}
		function listExprs() {
			exprList.replaceChildren(...exprs.map((e, i) => h('div', { class: 'expr' }, h('code', {}, e), ' ',
				h('button', { class: 'remove', title: 'remove', onclick: () => { exprs.splice(i, 1); build(); refresh(); } }, '\u00d7'))));
		}

		// Rows [t0, t1, values...] -> x and y arrays drawn as steps: each
		// value held over its own interval, a break where intervals do not touch.
		function steps(rows, ys) {
			const x = [], out = ys.map(() => []);
			rows.forEach((r, i) => {
				x.push(r.t0);
				ys.forEach((y, k) => out[k].push(y[i]));
				const next = rows[i + 1];
				if (!next || next.t0 !== r.t1) {
					x.push(r.t1);
					ys.forEach((y, k) => out[k].push(next ? null : y[i]));
				}
			});
			return [x, out];
		}

		async function load(from, to) {
			view = [from, to];
			const mine = ++seq;
			history.replaceState(null, '', '#/run/' + run.id + '?' + qs({
				metric: chosen.join(','), expr: exprs.join(';') || undefined, from, to, rate: rate !== 'sample' ? rate : undefined,
				device: devices.length > 1 ? device : undefined, a: aIn.value.trim() || undefined, b: bIn.value.trim() || undefined,
			}));
			errors.replaceChildren();
			updateLinks();
			listExprs();
			const cols = columns();
			if (!cols.length) {
				statusLine.textContent = 'Pick one or more metrics, or add an expression.';
				return;
			}
			const raw = rawView();
			const url = seriesUrl(!raw);
			seen.seriesRequests.push(url);
			const ends = () => { const st = 10 ** Math.floor(Math.log10(Math.max(1, to - from)) - 2); return fmtSpan(from - origin, unit, st) + ' to ' + fmtSpan(to - origin, unit, st); };
			statusLine.textContent = 'loading ' + ends() + '…';
			let csv, rtext;
			try {
				[csv, rtext] = await Promise.all([fetchText(url),
					fetchText(API + '/runs/' + run.id + '/ranges.csv?' + qs({ from, to, limit: 5000 }))]);
			} catch (e) {
				if (mine === seq)
					showError(errors, e), (statusLine.textContent = '');
				return;
			}
			if (mine !== seq)
				return; // a newer view was asked for meanwhile
			const t = parseCSV(csv);
			const col = (name) => t.header.indexOf(name);
			const [c0, c1] = [col('t0'), col('t1')]; // a device column may lead
			const rows = t.rows.map((r) => ({ t0: num(r[c0]), t1: num(r[c1]) }));
			applying = true;
			let points = 0;
			plots.forEach((u) => {
				const c = u.csCol, k = c.scale || 1;
				const pick = (j) => t.rows.map((r) => (j < 0 ? null : num(r[j]) === null ? null : num(r[j]) * k));
				const ys = raw ? [pick(col(c.col)), [], []] : [pick(col(c.col + ':mean')), pick(col(c.col + ':min')), pick(col(c.col + ':max'))];
				if (raw)
					ys[1] = ys[0].map(() => null), (ys[2] = ys[0].map(() => null));
				points += ys[0].filter((v) => v !== null).length;
				const [x, sy] = steps(rows, ys);
				u.setData([x, sy[0], sy[1], sy[2]]);
				u.setScale('x', { min: from, max: to });
			});
			applying = false;
			const rt = parseCSV(rtext);
			// the short name worked out once here, not at every draw
			ranges = rt.rows.map((r) => ({ kind: r[0], name: r[10] || r[1], short: shortName(r[10] || r[1]), stored: r[1], t0: num(r[2]), t1: num(r[3]), stream: r[5] }));
			drawLanes();
			seen.loads++;
			if (seen.loads === 1)
				seen.firstPlotMs = performance.now(); // since navigation: the first load's plots are drawn
			const per = (to - from) / buckets();
			statusLine.textContent = (raw ? t.rows.length + ' samples' : t.rows.length + ' buckets of ' + fmtSpan(per, unit, 0)) + ' from ' +
				ends() + '; ' + ranges.length + (ranges.length === 1 ? ' range' : ' ranges') + ' in view' +
				(ranges.length >= 5000 ? ' (the 5000 longest)' : '');
			document.body.setAttribute('data-plots', plots.length);
			document.body.setAttribute('data-points', points);
			document.body.setAttribute('data-loads', seen.loads);
			document.body.setAttribute('data-raw', raw ? '1' : '0');
		}

		// (the addresses change in place: a live view moves them several
		// times a second, and a link must stay clickable meanwhile)
		const csvLinks = [h('a', { download: 'series-buckets.csv', id: 'csv-buckets' }, 'buckets'),
			h('a', { download: 'series.csv', id: 'csv-raw' }, 'raw samples'),
			h('a', { download: 'ranges.csv', id: 'csv-ranges' }, 'ranges')];
		links.replaceChildren(h('span', { class: 'note' }, 'CSV of this view: '), ...csvLinks, h('a', { href: API + '/runs/' + run.id }, 'run JSON'));
		function updateLinks() {
			const [from, to] = view;
			csvLinks[0].href = authed(seriesUrl(true));
			csvLinks[1].href = authed(seriesUrl(false));
			csvLinks[2].href = authed(API + '/runs/' + run.id + '/ranges.csv?' + qs({ from, to }));
		}

		/* ---- a running run, followed (GET /api/v1/runs/{run}/follow) ---- */

		// The plotted metrics' newest samples (of one device) stream into a
		// buffer of at most `keep` samples and the run's ranges into one of
		// LIVE_RANGES, the oldest dropped first, so the page's memory is
		// bounded whatever the run's length. Following, the view is the
		// newest `last` seconds (cycles on a cycle run), redrawn from the
		// buffer up to 4 times a second; a view the user chose stays put
		// (goto) until "Follow the newest". Pause closes the stream (the
		// daemon does no work for it); resume reopens it from where it
		// stopped, at most a window back. At the run's end: the stream
		// closed, the final status, the view loaded as any run's.
		function liveFollow(following) {
			const keep = Math.round(Math.max(100, Math.min(1e6, num(params.get('keep')) ?? LIVE_KEEP)));
			const perUnit = unit === 'ns' ? 1e9 : 1; // the window is in s on ns runs, in cycles on cycle runs
			let span = Math.max(unit === 'ns' ? 1e6 : 1, (num(params.get('last')) || (unit === 'ns' ? 10 : 1e7)) * perUnit);
			const L = (seen.live = { following, paused: false, ended: false, es: null, keep, received: 0, kept: 0, draws: 0, t1: null, lagNs: null, follows: 0 });
			let buf = null, lastT0 = null, streamed = null, header = null, nowNs = null, lastData = 0, dirty = false;
			let rangeBuf = [], exprData = null, exprAsked = 0, exprBusy = false, retry = null;
			const rangeCounts = new Map(); // by kind, of all the run's ranges (a stream sends them all)
			const winIn = h('input', { type: 'number', id: 'live-window', min: unit === 'ns' ? 0.001 : 1, step: 'any', value: span / perUnit,
				title: 'how much of the run\'s newest end the view shows while following' });
			const followBtn = h('button', { id: 'live-follow', title: 'the view scrolls with the newest samples again' }, 'Follow the newest');
			const pauseBtn = h('button', { id: 'live-pause', title: 'stop streaming (the view stays as it is); Resume goes on from where it stopped' }, 'Pause');
			const lagEl = h('span', { id: 'live-lag', class: 'live-lag', title: unit === 'ns'
				? 'How far behind the run the newest sample shown is: the daemon\'s clock when it last sent samples (now_ns of the follow stream\'s status event) minus the end (t1) of the newest sample received. It includes the collector\'s buffering, the daemon\'s commit (commit_ms, 50 ms; partial chunks every live_flush_ms, 100 ms, while followed) and its look at the store (100 ms). Meaningful when the run\'s times are wall-clock ns, as a collector\'s are.'
				: 'A cycle run\'s times are not wall-clock: no lag can be worked out.' });
			const countEl = h('span', { id: 'live-count', class: 'note', title: 'the browser keeps at most ' + keep + ' samples (the newest) and ' + LIVE_RANGES + ' ranges; older ones are dropped (zoom to fetch any span from the daemon)' });
			followBtn.hidden = following;
			liveBar.replaceChildren(h('label', { for: 'live-window' }, 'follow the newest '), winIn, unit === 'ns' ? ' s ' : ' cycles ', followBtn, ' ', pauseBtn, ' ', lagEl, ' ', countEl);

			const wanted = () => ({ metric: (chosen.length ? chosen : metrics.slice(0, 1).map((m) => m.name)).join(','), device: devices.length > 1 ? device : undefined });
			const same = (a, b) => a && b && a.metric === b.metric && a.device === b.device;
			// the address of the followed view: no from/to, so that it opens following
			function address() {
				history.replaceState(null, '', '#/run/' + run.id + '?' + qs({
					metric: chosen.join(','), expr: exprs.join(';') || undefined, rate: rate !== 'sample' ? rate : undefined,
					device: devices.length > 1 ? device : undefined, last: span / perUnit, keep: params.get('keep') || undefined,
				}));
			}
			function state() {
				const s = L.ended ? 'ended' : L.paused ? 'paused' : L.following ? 'following' : 'detached';
				document.body.setAttribute('data-live', s);
				if (liveBadge) {
					liveBadge.textContent = L.paused ? 'paused' : 'live';
					liveBadge.classList.toggle('paused', L.paused);
				}
				followBtn.hidden = L.following;
				pauseBtn.textContent = L.paused ? 'Resume' : 'Pause';
			}
			function close() {
				if (L.es)
					L.es.close(), (L.closed = L.es.readyState);
				L.es = null;
				clearTimeout(retry);
			}
			// The stream from `from` (a t0 as a decimal string: the run's
			// times are past 2^53, so exact only as text or BigInt).
			function open(from) {
				const w = wanted();
				if (!same(w, streamed))
					buf = null, lastT0 = null, header = null, exprData = null; // other columns: a new buffer
				streamed = w;
				// every stream sends the run's ranges from its first: the ones held go
				rangeBuf = [];
				rangeCounts.clear();
				const es = new EventSource(authed(API + '/runs/' + run.id + '/follow?' + qs({ metric: w.metric || undefined, device: w.device, from })));
				L.es = es;
				L.follows++;
				const mine = (f) => (e) => es === L.es && f(e.data);
				es.addEventListener('header', mine((d) => (header = parseCSV(d + '\n').header)));
				es.addEventListener('samples', mine(addSamples));
				es.addEventListener('ranges', mine(addRanges));
				es.addEventListener('status', mine((d) => onStatus(JSON.parse(d))));
				es.addEventListener('end', mine((d) => finish(JSON.parse(d))));
				// a broken stream is not left to the browser's own reconnect,
				// which would ask for the same from= again
				es.onerror = () => {
					if (es !== L.es)
						return;
					close();
					lagEl.textContent = 'connection lost: reconnecting…';
					retry = setTimeout(reopen, 2000);
				};
			}
			// Open again after a pause or a lost connection: where it stopped
			// (its next t0), but at most one window (or `keep` samples) back.
			async function reopen() {
				let r;
				try {
					r = await fetchJSON(API + '/runs/' + run.id);
				} catch (e) {
					retry = setTimeout(reopen, 2000);
					return;
				}
				if (L.paused || L.ended || L.es)
					return;
				if (r.status !== 'running')
					return finish({ status: r.status, samples: r.samples });
				let back = span;
				if (buf && buf.t0.length > 1)
					back = Math.min(back, (keep * (buf.t1[buf.t1.length - 1] - buf.t0[0])) / buf.t0.length);
				let from = r.t_max === null ? 0n : BigInt(Math.max(0, Math.floor(r.t_max - back)));
				if (lastT0 !== null && same(wanted(), streamed) && BigInt(lastT0) + 1n > from)
					from = BigInt(lastT0) + 1n;
				open(String(from));
				state();
			}
			// Rows of series.csv (the header's columns) into the buffer.
			function addSamples(text) {
				if (!header)
					return;
				if (!buf) {
					buf = { t0: [], t1: [], cols: new Map() };
					header.forEach((name, i) => name !== 't0' && name !== 't1' && name !== 'device' && name !== 'seq' && buf.cols.set(name, { i, v: [] }));
				}
				const i0 = header.indexOf('t0'), i1 = header.indexOf('t1');
				let n = 0, last = null;
				for (const line of text.split('\n')) {
					if (!line)
						continue;
					const f = line.split(',');
					buf.t0.push(+f[i0]);
					buf.t1.push(+f[i1]);
					for (const c of buf.cols.values())
						c.v.push(f[c.i] === '' || f[c.i] === undefined ? null : +f[c.i]);
					last = f[i0];
					n++;
				}
				if (!n)
					return;
				lastT0 = last;
				L.received += n;
				const extra = buf.t0.length - keep;
				if (extra > 0) {
					buf.t0.splice(0, extra);
					buf.t1.splice(0, extra);
					for (const c of buf.cols.values())
						c.v.splice(0, extra);
				}
				L.kept = buf.t0.length;
				L.t1 = buf.t1[buf.t1.length - 1];
				if (run.t_min === null && full[1] <= 1)
					full[0] = origin = buf.t0[0], (run.t_min = buf.t0[0]);
				full[1] = Math.max(full[1], L.t1 + 1);
				lastData = performance.now();
				dirty = true;
			}
			function addRanges(text) {
				const t = parseCSV((text.startsWith('kind,name,') ? '' : 'kind,name,t0,t1,device,stream,correlation_id,pid,tid,bytes\n') + text + '\n');
				for (const r of t.rows)
					rangeCounts.set(r[0], (rangeCounts.get(r[0]) || 0) + 1), rangeBuf.push({ kind: r[0], name: r[1], short: shortName(r[1]), stored: r[1], t0: num(r[2]), t1: num(r[3]), stream: r[5] });
				if (rangeBuf.length > LIVE_RANGES)
					rangeBuf.splice(0, rangeBuf.length - LIVE_RANGES);
				dirty = true;
			}
			function onStatus(s) {
				nowNs = s.now_ns;
				run.samples = s.samples;
				samplesDd.textContent = s.samples + ' / ' + metrics.length;
				L.lagNs = unit === 'ns' && L.t1 !== null ? nowNs - L.t1 : null;
				showLag();
			}
			function showLag() {
				const idle = lastData ? (performance.now() - lastData) / 1000 : 0;
				let t;
				if (L.lagNs === null)
					t = unit === 'ns' ? '' : 'lag: n/a (cycles)';
				else if (L.lagNs < -1e9 || L.lagNs > 864e11)
					t = 'lag: n/a (the times are not wall-clock)';
				else
					t = 'lag ' + fmtTime(Math.max(0, L.lagNs), 0);
				if (idle > 2 && !L.paused)
					t += (t ? ', ' : '') + 'no new samples for ' + Math.floor(idle) + ' s';
				lagEl.textContent = t;
				countEl.textContent = L.received + ' samples received, ' + L.kept + ' kept (at most ' + keep + ')';
				if (rangeCounts.size)
					rangesDd.textContent = rangesText([...rangeCounts].map(([kind, count]) => ({ kind, count })));
				timeDd.textContent = timeText();
			}

			// The view: the newest `span` of the buffer, bucketed in the
			// browser (min, max, mean a pixel) when it holds more samples than
			// half the plot's pixels, as the daemon buckets a fixed view.
			function redraw() {
				dirty = false;
				if (!buf || !buf.t0.length) {
					statusLine.textContent = 'following: waiting for samples…';
					return;
				}
				const to = L.t1, from = Math.max(full[0], to - span);
				view = [from, to];
				const n = buf.t0.length;
				let i = 0, hi = n;
				while (i < hi) {
					const mid = (i + hi) >> 1;
					if (buf.t0[mid] < from)
						i = mid + 1;
					else
						hi = mid;
				}
				const count = n - i, raw = count <= plotWidth() / 2;
				const nb = buckets(), per = (to - from) / nb;
				// sample k's bucket, and the buckets' [t0, t1)
				let rows, slot;
				if (raw) {
					rows = [];
					for (let k = i; k < n; k++)
						rows.push({ t0: buf.t0[k], t1: buf.t1[k] });
				} else {
					const used = new Map();
					slot = [];
					for (let k = i; k < n; k++) {
						const b = Math.min(nb - 1, Math.floor((buf.t0[k] - from) / per));
						if (!used.has(b))
							used.set(b, used.size);
						slot.push(used.get(b));
					}
					rows = [...used.keys()].map((b) => ({ t0: from + b * per, t1: from + (b + 1) * per }));
				}
				ranges = rangeBuf.filter((r) => r.t1 >= from && r.t0 <= to);
				let points = 0;
				applying = true;
				for (const u of plots) {
					const c = u.csCol;
					let ys, x;
					if (c.isMetric) {
						const col = buf.cols.get(c.label);
						const k = c.scale || 1;
						const val = (j) => {
							const v = col ? col.v[j] : null;
							return v === null ? null : c.rated ? ((v * perUnit) / (buf.t1[j] - buf.t0[j])) * k : v * k;
						};
						if (raw) {
							const m = [];
							for (let j = i; j < n; j++)
								m.push(val(j));
							ys = [m, m.map(() => null), m.map(() => null)];
						} else {
							const lo = rows.map(() => null), top = rows.map(() => null), sum = rows.map(() => 0), cnt = rows.map(() => 0);
							for (let j = i; j < n; j++) {
								const v = val(j), s = slot[j - i];
								if (v === null)
									continue;
								lo[s] = lo[s] === null ? v : Math.min(lo[s], v);
								top[s] = top[s] === null ? v : Math.max(top[s], v);
								sum[s] += v;
								cnt[s]++;
							}
							ys = [sum.map((s, b) => (cnt[b] ? s / cnt[b] : null)), lo, top];
						}
						points += ys[0].filter((v) => v !== null).length;
						[x, ys] = steps(rows, ys);
					} else {
						// an expression: the daemon evaluates it, asked for
						// the view at most once a second (fetchExprs)
						[x, ys] = exprData ? exprSteps(exprData, c) : [[], [[], [], []]];
					}
					u.batch(() => {
						u.setData([x, ys[0], ys[1], ys[2]]);
						u.setScale('x', { min: from, max: to });
					});
				}
				applying = false;
				fetchExprs(raw);
				L.draws++;
				// what the view ends on: the newest sample (its t0 exactly, as text)
				L.shown = { t1: to, t0: lastT0, values: Object.fromEntries([...buf.cols].map(([name, c]) => [name, c.v[c.v.length - 1]])) };
				const st = 10 ** Math.floor(Math.log10(Math.max(1, to - from)) - 2);
				statusLine.textContent = 'following the newest ' + fmtSpan(to - from, unit, 0) + ': ' +
					(raw ? count + ' samples' : count + ' samples in ' + rows.length + ' buckets of ' + fmtSpan(per, unit, 0)) + ' up to ' +
					fmtSpan(to - origin, unit, st) + '; ' + ranges.length + (ranges.length === 1 ? ' range' : ' ranges') + ' in view' +
					(buf.t0[0] > from && L.received > n ? '; samples before ' + fmtSpan(buf.t0[0] - origin, unit, st) + ' are past the browser\'s bound (' + keep + ')' : '');
				updateLinks();
				document.body.setAttribute('data-plots', plots.length);
				document.body.setAttribute('data-points', points);
				document.body.setAttribute('data-live-draws', L.draws);
			}
			function fetchExprs(raw) {
				const cols = plots.map((u) => u.csCol).filter((c) => !c.isMetric);
				// once a second, or 4 times a window when that is shorter
				const every = Math.max(200, Math.min(1000, (1000 * (view[1] - view[0])) / perUnit / 4 / (unit === 'ns' ? 1 : run.clock_hz || 1e9)));
				if (!cols.length || exprBusy || performance.now() - exprAsked < every)
					return;
				exprBusy = true;
				exprAsked = performance.now();
				const [from, to] = view;
				const url = API + '/runs/' + run.id + '/series.csv?' + qs({ expr: cols.map((c) => c.expr).join(';'), device: devices.length > 1 ? device : undefined,
					from: Math.floor(from), to: Math.ceil(to) + 1, buckets: raw ? undefined : buckets() });
				fetchText(url).then((t) => ((exprData = { t: parseCSV(t), raw }), (dirty = true)))
					.catch((e) => { errors.replaceChildren(); showError(errors, e); })
					.finally(() => (exprBusy = false));
			}
			function exprSteps(d, c) {
				const t = d.t, col = (name) => t.header.indexOf(name);
				const rows = t.rows.map((r) => ({ t0: num(r[col('t0')]), t1: num(r[col('t1')]) }));
				const k = c.scale || 1;
				const pick = (j) => t.rows.map((r) => (j < 0 || num(r[j]) === null ? null : num(r[j]) * k));
				const ys = d.raw ? [pick(col(c.col)), t.rows.map(() => null), t.rows.map(() => null)]
					: [pick(col(c.col + ':mean')), pick(col(c.col + ':min')), pick(col(c.col + ':max'))];
				return steps(rows, ys);
			}

			async function finish(end) {
				if (L.ended)
					return;
				L.ended = true;
				close();
				clearInterval(tick);
				if (liveBadge)
					liveBadge.remove();
				liveBar.replaceChildren(h('span', { class: 'note', id: 'live-ended' }, 'The run ended (' + end.status + ', ' + end.samples + ' samples) and is no longer followed.'));
				statusDd.textContent = end.status;
				live = null;
				try {
					const r = await fetchJSON(API + '/runs/' + run.id);
					Object.assign(run, r);
					statusDd.textContent = r.status + (r.dropped ? ', ' + r.dropped + ' samples dropped' : '');
					samplesDd.textContent = r.samples + ' / ' + metrics.length;
					rangesDd.textContent = rangesText(r.range_summary || []);
					if (r.t_min !== null)
						full[0] = r.t_min, (full[1] = r.t_max + 1);
					timeDd.textContent = timeText();
				} catch (e) {
					/* the status from the stream stays */
				}
				// the view as it was, now from the daemon, as for any run
				await load(Math.max(full[0], Math.floor(view[0])), Math.min(full[1], Math.ceil(view[1]) + 1));
				state();
			}

			winIn.addEventListener('change', () => {
				const v = +winIn.value;
				if (!(v > 0))
					return;
				span = Math.max(unit === 'ns' ? 1e6 : 1, v * perUnit);
				if (L.following)
					address(), redraw();
			});
			followBtn.addEventListener('click', () => L.follow());
			pauseBtn.addEventListener('click', () => {
				if (L.ended)
					return;
				L.paused = !L.paused;
				if (L.paused)
					close(), showLag();
				else
					reopen();
				state();
			});
			const tick = setInterval(() => {
				if (dirty && L.following && !L.paused)
					redraw();
				showLag();
			}, 250);

			Object.assign(L, {
				// the user chose a view: it stays (the stream goes on)
				detach() {
					if (!L.following)
						return;
					L.following = false;
					state();
				},
				follow() {
					L.following = true;
					address();
					state();
					redraw();
				},
				// the plotted columns changed: stream the new ones
				sync() {
					if (L.following)
						address();
					exprData = null;
					exprAsked = 0;
					if (!L.paused && !L.ended && !same(wanted(), streamed)) {
						close();
						reopen();
					}
				},
				redraw,
				stop() {
					close();
					clearInterval(tick);
				},
				// for the tests: every sample kept once, in order
				ordered: () => !buf || buf.t0.every((t, k) => k === 0 || t > buf.t0[k - 1]),
			});
			state();
			open(run.t_max === null ? undefined : String(Math.max(0, Math.floor(run.t_max - span))));
			if (following)
				redraw();
			return L;
		}

		// Ranges in lanes under the plots, on the first plot's x scale (drawn
		// from its draw hook, so every zoom, resize and redraw moves them
		// together): one lane per kind, kernels one per stream and coloured by
		// name, labelled where the name fits.
		let hits = [];
		const LANE = 18;
		function laneKey(r, streams) {
			return (r.kind === 'kernel' || r.kind === 'sim-kernel') && (streams.get(r.kind) || new Set()).size > 1 && r.stream !== '' && r.stream !== undefined
				? r.kind + ' s' + r.stream : r.kind;
		}
		function drawLanes() {
			const u = plots[0];
			if (!u || !u.over || !lanes.isConnected)
				return;
			const all = ranges.concat(phaseSegs);
			const streams = new Map();
			for (const r of ranges)
				streams.set(r.kind, (streams.get(r.kind) || new Set()).add(r.stream));
			all.forEach((r) => (r.lane = laneKey(r, streams)));
			const order = (k) => { const i = RANGE_KINDS.indexOf(k.split(' ')[0]); return i < 0 ? 99 : i; };
			const keys = [...new Set(all.map((r) => r.lane))].sort((a, b) => order(a) - order(b) || a.localeCompare(b, 'en', { numeric: true }));
			const box = plotsDiv.getBoundingClientRect(), ob = u.over.getBoundingClientRect();
			const left = ob.left - box.left, w = ob.width;
			const dpr = window.devicePixelRatio || 1;
			const H = keys.length ? keys.length * LANE + 4 : 0;
			const W = Math.ceil(left + w);
			lanes.style.width = W + 'px';
			lanes.style.height = H + 'px';
			lanes.width = Math.round(W * dpr);
			lanes.height = Math.round(H * dpr);
			const c = lanes.getContext('2d');
			c.scale(dpr, dpr);
			c.font = '11px system-ui, sans-serif';
			c.textBaseline = 'middle';
			hits = [];
			const px = (t) => left + u.valToPos(t, 'x');
			const kernelNames = new Map(), colorOf = kernelColors(all);
			keys.forEach((k, i) => {
				const y = i * LANE + 2;
				c.fillStyle = '#555';
				c.textAlign = 'right';
				c.fillText(k, left - 6, y + LANE / 2);
				c.textAlign = 'left';
				c.save();
				c.beginPath();
				c.rect(left, y, w, LANE);
				c.clip();
				for (const r of all.filter((r) => r.lane === k)) {
					const a = Math.max(left, px(r.t0)), b = Math.min(left + w, px(r.t1));
					if (b < left || a > left + w)
						continue;
					const bw = Math.max(1, b - a);
					const kernel = r.kind === 'kernel' || r.kind === 'sim-kernel';
					const color = r.kind === 'overlap' ? PHASE_COLORS[r.name] || '#444' : kernel ? colorOf.get(r.short) : RANGE_COLORS[r.kind] || '#444';
					if (kernel)
						kernelNames.set(r.short, { color, full: r.name, t: (kernelNames.get(r.short) || { t: 0 }).t + (r.t1 - r.t0) });
					c.globalAlpha = 0.7;
					c.fillStyle = color;
					c.fillRect(a, y + 1, bw, LANE - 3);
					c.globalAlpha = 1;
					// a separator at the end, so that back-to-back spans of one colour stay two
					c.fillStyle = '#fff';
					c.fillRect(a + bw - 1, y + 1, bw > 3 ? 1 : 0, LANE - 3);
					const label = kernel ? r.short : r.name;
					if (bw > 7 * label.length * 0.62 + 6) {
						c.fillStyle = '#000';
						c.fillText(label, a + 3, y + LANE / 2);
					}
					hits.push({ a, b: a + bw, y, r });
				}
				c.restore();
			});
			legend.replaceChildren(...[...kernelNames.entries()].sort((p, q) => q[1].t - p[1].t).slice(0, 12).map(([name, v]) =>
				h('span', { class: 'kl', title: v.full }, h('span', { class: 'swatch', style: 'background:' + v.color }), ' ', name)));
			seen.lanes = { left: ob.left, width: w, from: u.scales.x.min, to: u.scales.x.max, keys };
		}
		const hitAt = (e) => {
			const box = lanes.getBoundingClientRect(), x = e.clientX - box.left, y = e.clientY - box.top;
			return hits.filter((q) => x >= q.a && x <= q.b && y >= q.y && y < q.y + LANE).pop();
		};
		lanes.addEventListener('mousemove', (e) => {
			const q = hitAt(e);
			const span = q ? q.r.t1 - q.r.t0 : 0;
			lanes.title = q ? q.r.kind + ' ' + q.r.name + (q.r.stored && q.r.stored !== q.r.name ? '\n' + q.r.stored : '') + '\n' +
				fmtSpan(q.r.t0 - origin, unit, 0) + ' to ' + fmtSpan(q.r.t1 - origin, unit, 0) + ' (' + fmtSpan(span, unit, 0) + ')' : '';
			lanes.style.cursor = q ? 'zoom-in' : 'default';
		});
		lanes.addEventListener('click', (e) => {
			const q = hitAt(e);
			if (q && q.r.t1 > q.r.t0)
				goto(q.r.t0, q.r.t1);
		});

		async function splitPhases() {
			const a = aIn.value.trim(), b = bIn.value.trim();
			if (!a || !b)
				return;
			phaseOut.replaceChildren(h('p', { class: 'note' }, 'splitting…'));
			try {
				const r = await fetchJSON(API + '/runs/' + run.id + '/phases?' + qs({ a, b, metric: chosen.join(',') || undefined }));
				phaseSegs = r.segments.map(([t0, t1, name]) => ({ kind: 'overlap', name, t0, t1 }));
				const per = r.rate_unit === 'per second' ? '/s' : '/cycle';
				const cols = ['phase', 'duration', 'share'].concat(Object.keys(r.totals).map((m) => m + ' (mean ' + per + ')'));
				const t = h('table', { class: 'list', id: 'phase-table' }, h('tr', {}, cols.map((c) => h('th', {}, c))));
				for (const p of r.phases)
					t.append(h('tr', {}, h('td', {}, h('span', { class: 'swatch', style: 'background:' + (PHASE_COLORS[p.phase] || '#bbb') }), ' ', p.phase),
						h('td', { class: 'num' }, fmtSpan(p.duration, unit, 0)),
						h('td', { class: 'num' }, (100 * p.share).toFixed(1) + '%'),
						Object.keys(r.totals).map((m) => h('td', { class: 'num' }, fmtNum(p.metrics[m].mean_rate, 0)))));
				const tail = r.tail ? 'B runs on alone for ' + fmtSpan(r.tail.duration, unit, 0) + ' after its last overlap with A.'
					: 'No tail: B does not run on alone after an overlap with A.';
				phaseOut.replaceChildren(h('p', { class: 'note' }, 'A = ' + r.a + ' (' + r.a_ranges + ' ranges), B = ' + r.b + ' (' + r.b_ranges + ' ranges). ' + tail,
					' ', h('a', { href: API + '/runs/' + run.id + '/phases?' + qs({ a, b, metric: chosen.join(',') || undefined, format: 'csv' }), download: 'phases.csv' }, 'CSV')), t);
				document.body.setAttribute('data-phases', r.phases.length);
			} catch (e) {
				phaseSegs = [];
				phaseOut.replaceChildren();
				showError(phaseOut, e);
			}
			drawLanes();
			history.replaceState(null, '', location.hash.replace(/&?(a|b)=[^&]*/g, '') + '&' + qs({ a, b }));
		}
		phaseBtn.addEventListener('click', splitPhases);

		async function addExpr() {
			const e = exprIn.value.trim();
			exprErr.replaceChildren();
			if (!e)
				return;
			try {
				// checked by the server over the run's first time unit (cheap at any
				// size): a malformed expression is a 400 naming its column
				await fetchText(API + '/runs/' + run.id + '/series.csv?' + qs({ expr: e, from: full[0], to: after(full[0]), device: devices.length > 1 ? device : undefined }));
			} catch (err) {
				exprIn.classList.add('bad');
				showError(exprErr, err);
				return;
			}
			exprIn.classList.remove('bad');
			exprIn.value = '';
			exprs.push(e);
			build();
			refresh();
		}
		exprBtn.addEventListener('click', addExpr);
		exprIn.addEventListener('keydown', (e) => e.key === 'Enter' && addExpr());
		rateSel.addEventListener('change', () => {
			rate = rateSel.value;
			build();
			refresh();
		});
		plotBtn.addEventListener('click', () => {
			chosen = [...picker.selectedOptions].map((o) => o.value);
			build();
			refresh();
		});
		picker.addEventListener('dblclick', () => plotBtn.click());
		devSel.addEventListener('change', () => {
			device = +devSel.value;
			refresh();
		});
		resetBtn.addEventListener('click', () => goto(full[0], full[1]));
		outBtn.addEventListener('click', () => {
			const mid = (view[0] + view[1]) / 2, half = view[1] - view[0];
			goto(Math.max(full[0], Math.floor(mid - half)), Math.min(full[1], Math.ceil(mid + half)));
		});
		build();
		if (liveBar) {
			// a view in the address stays put; otherwise the newest samples are followed
			const fixed = params.has('from') || params.has('to');
			if (fixed)
				await load(view[0], view[1]);
			live = liveFollow(!fixed);
		} else {
			await load(view[0], view[1]);
		}
		setTimeout(() => {
			fill();
			names.replaceChildren(...metrics.map((m) => h('option', { value: m.name })));
			document.body.setAttribute('data-metric-list', metrics.length);
		}, 0);
		if (aIn.value.trim() && bIn.value.trim())
			await splitPhases();
	}

	/* ---- live collectors ---- */

	// GET /api/v1/collectors every second, grouped by job; triggers through
	// POST /api/v1/collectors/{id}/window and .../collectors/window (job=,
	// all=1). Rows are updated in place, so a button stays under the mouse.
	async function collectorsPage() {
		document.title = 'cyclescope: collectors';
		const secs = h('input', { type: 'number', id: 'trigger-seconds', min: 0, step: 'any', value: 5, title: 'how long each window samples' });
		const label = h('input', { id: 'trigger-name', placeholder: 'label (optional)', maxlength: 120,
			title: 'the trigger range\'s name in the run, so that what was asked for shows' });
		const allBtn = h('button', { id: 'trigger-all', title: 'open a window in every live collector' }, 'Trigger all');
		const result = h('div', { id: 'trigger-result', class: 'trigger-result' });
		const groups = h('div', { id: 'collector-groups' });
		const stamp = h('span', { class: 'note', id: 'collectors-stamp' });
		show(h('h1', {}, 'Live collectors'),
			h('p', { class: 'note' }, 'The collectors streaming to this daemon now, refreshed every second. A trigger opens a sampling window ',
				'(armed collectors sample only then); each one is stored as a trigger range in the run.'),
			h('p', { class: 'trigger-form' }, h('label', { for: 'trigger-seconds' }, 'window '), secs, ' s',
				h('label', { for: 'trigger-name' }, 'label '), label, allBtn, stamp),
			result, groups);

		const COLS = ['id', 'host', 'pid', 'command', 'mode', 'state', 'devices', 'metrics', 'interval', 'samples', 'samples/s', 'dropped', 'windows', 'refused', 'run', '', ''];
		const rows = new Map(), sections = new Map();
		let timer = null, gone = false, latest = [];
		const form = (extra) => {
			const f = new URLSearchParams(extra);
			f.set('seconds', secs.value);
			if (label.value.trim())
				f.set('name', label.value.trim());
			return f;
		};
		// a POST's answer: the JSON (an object, or one per collector), or its error
		async function post(url, body) {
			const r = await fetch(url, { method: 'POST', body, headers: authHeaders() });
			if (r.status === 401)
				throw tokenError(r);
			const t = await r.text();
			let j = null;
			try {
				j = JSON.parse(t);
			} catch (e) {
				/* not JSON */
			}
			if (!r.ok && !Array.isArray(j))
				throw new Error(((j && j.error) || t || r.statusText) + ' (HTTP ' + r.status + ')');
			return j;
		}
		function note(id, text, bad) {
			const row = rows.get(String(id));
			if (!row)
				return;
			row.msg.textContent = text + ' (' + new Date().toLocaleTimeString() + ')';
			row.msg.classList.toggle('bad', !!bad);
		}
		function report(what, results) {
			const ok = results.filter((x) => x.status === 200 || x.done).length;
			result.replaceChildren(h('div', { class: ok === results.length ? 'ok' : 'warn' }, what + ': ' + ok + ' of ' + results.length + ' windows opened'),
				...results.filter((x) => x.error).map((x) => h('div', { class: 'warn' }, 'collector ' + x.collector + ': ' + x.error + ' (' + x.status + ')')));
			for (const x of results)
				note(x.collector, x.error ? x.error : x.done, !!x.error);
		}
		async function trigger(what, url, body, one) {
			result.replaceChildren();
			try {
				const j = await post(url, body);
				if (one)
					note(one, j.done || 'done');
				else
					report(what, Array.isArray(j) ? j : [j]);
			} catch (e) {
				if (one)
					note(one, String(e.message || e), true);
				else
					showError(result, e);
			}
			refresh();
		}
		allBtn.addEventListener('click', () => trigger('all', API + '/collectors/window', form({ all: '1' })));

		function cells(c) {
			const age = c.status_age_ms > 5000 ? ' (no status for ' + Math.round(c.status_age_ms / 1000) + ' s)' : '';
			return [c.id, c.host, c.pid, c.cmdline, c.mode, c.state + age, c.devices, c.metrics,
				c.interval_ns ? fmtTime(c.interval_ns, 0) : '', c.samples, fmtNum(c.samples_per_s, 0), c.dropped, c.windows,
				c.refused + c.rate_limited ? c.refused + ' / ' + c.rate_limited + ' limited' : '0'];
		}
		function rowFor(c) {
			let row = rows.get(String(c.id));
			if (!row) {
				const td = COLS.slice(0, 14).map((k, i) => h('td', { class: [0, 2, 9, 10, 11, 12].includes(i) ? 'num' : i === 3 ? 'cmd' : undefined }));
				const run = h('td', { class: 'run' });
				const btn = h('button', { class: 'trigger', title: 'open a window in this collector now',
					onclick: () => trigger(null, API + '/collectors/' + c.id + '/window', form({}), c.id) }, 'trigger');
				const close = h('button', { class: 'close', title: 'close its window now',
					onclick: () => trigger(null, API + '/collectors/' + c.id + '/window/close', new URLSearchParams(), c.id) }, 'close');
				const msg = h('td', { class: 'msg' });
				row = { tr: h('tr', { 'data-collector': c.id, 'data-pid': c.pid }, td, run, h('td', { class: 'act' }, btn, ' ', close), msg), td, run, btn, close, msg, runId: undefined };
				rows.set(String(c.id), row);
			}
			cells(c).forEach((v, i) => {
				const s = v === null || v === undefined ? '' : String(v);
				if (row.td[i].textContent !== s)
					row.td[i].textContent = s;
			});
			row.td[3].title = c.cmdline;
			row.td[0].title = 'registered ' + new Date(c.since_ns / 1e6).toLocaleString() + '; last status ' + c.status_age_ms + ' ms ago';
			row.tr.setAttribute('data-state', c.state);
			row.close.disabled = c.state !== 'sampling';
			const rid = c.run ? c.run_id ?? c.run : null;
			if (rid !== row.runId) {
				row.runId = rid;
				row.run.replaceChildren(rid === null ? '' : h('a', { href: '#/run/' + encodeURIComponent(rid), title: 'its run, followed live: ' + c.run }, 'run ' + rid));
			}
			return row;
		}
		// one table (its columns line up across jobs), a tbody per job
		// headed by the job's name and its trigger
		const table = h('table', { class: 'list collectors', id: 'collectors' }, h('thead', {}, h('tr', {}, COLS.map((k) => h('th', {}, k)))));
		function sectionFor(job) {
			let s = sections.get(job);
			if (!s) {
				const count = h('span', { class: 'note' });
				const cell = h('th', { colspan: COLS.length }, h('span', { class: 'job-name' }, job ? 'job ' + job : 'no job'), ' ', count);
				if (job)
					cell.append(' ', h('button', { class: 'trigger-job', 'data-job': job, title: 'open a window in every collector of job ' + job,
						onclick: () => trigger('job ' + job, API + '/collectors/window', form({ job })) }, 'trigger job'));
				const head = h('tr', { class: 'job-head' }, cell);
				s = { el: h('tbody', { class: 'job', 'data-job': job }, head), count, head };
				sections.set(job, s);
			}
			return s;
		}
		function render(list) {
			latest = list;
			// jobs by name, the collectors without one last; in a job, by id
			const jobs = [...new Set(list.map((c) => c.job || ''))].sort((a, b) => (a === '') - (b === '') || (a < b ? -1 : a > b ? 1 : 0));
			const want = [];
			for (const job of jobs) {
				const s = sectionFor(job), mine = list.filter((c) => (c.job || '') === job).sort((a, b) => a.id - b.id);
				s.count.textContent = '(' + mine.length + (mine.length === 1 ? ' collector)' : ' collectors)');
				const trs = [s.head, ...mine.map((c) => rowFor(c).tr)];
				// moved only when the order changed: a click in progress survives a refresh
				if (trs.length !== s.el.children.length || trs.some((tr, i) => s.el.children[i] !== tr))
					s.el.replaceChildren(...trs);
				want.push(s.el);
			}
			for (const [id, row] of rows)
				if (!list.some((c) => String(c.id) === id))
					rows.delete(id), row.tr.remove();
			for (const [job, s] of sections)
				if (!jobs.includes(job))
					sections.delete(job);
			if (want.length + 1 !== table.children.length || want.some((e, i) => table.children[i + 1] !== e))
				table.replaceChildren(table.firstChild, ...want);
			if (!list.length)
				groups.replaceChildren(h('p', { class: 'note', id: 'no-collectors' }, 'No live collectors. One appears here when an application runs under ',
					h('code', {}, 'cyclescope run [--armed] -- CMD'), ' (or with the collector injected) streaming to this daemon\'s socket.'));
			else if (groups.firstChild !== table)
				groups.replaceChildren(table);
			allBtn.disabled = !list.length;
			stamp.textContent = list.length + (list.length === 1 ? ' collector' : ' collectors') + ', as of ' + new Date().toLocaleTimeString();
			document.body.setAttribute('data-collectors', list.length);
		}
		async function refresh() {
			clearTimeout(timer);
			try {
				const list = await fetchJSON(API + '/collectors');
				if (gone)
					return;
				render(list);
			} catch (e) {
				if (gone)
					return;
				stamp.textContent = 'refresh failed: ' + (e.message || e);
			}
			if (!gone)
				timer = setTimeout(refresh, 1000);
		}
		seen.cleanup = () => {
			gone = true;
			clearTimeout(timer);
		};
		seen.collectors = () => latest;
		await refresh();
	}

	/* ---- compare ---- */

	const CORR_FIELDS = [
		['hw_metric', 'hardware metric expression', 'lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum'],
		['sim_metric', 'simulator metric expression', 'Ltworeadmiss + Ltworeadhit'],
		['hw_window', 'hardware window', 'whole run; T0:T1, kernel:*gemm*#2, #N'],
		['sim_window', 'simulator window', 'whole run; T0:T1, sim-kernel:*#1, #N'],
		['bin_cycles', 'bin width (cycles)', 'default: the longer median sample'],
		['max_lag', 'lag search (± bins)', '0'],
		['hw_clock_mhz', 'hardware clock (MHz)', "default: the run's cycle counter, else its clock"],
		['sim_clock', 'simulator clock (MHz or core/l2/icnt/dram)', 'default: cycles compared 1:1'],
	];

	async function comparePage(params) {
		document.title = 'cyclescope: compare';
		const runs = await fetchJSON(API + '/runs');
		const pick = (name, kind) => params.get(name) || ((runs.find((r) => r.kind === kind) || runs[0] || {}).id ?? '');
		const runSelect = (name, value) => h('select', { name, id: name }, runs.map((r) =>
			h('option', { value: r.id, selected: String(r.id) === String(value) || r.name === value }, r.id + ': ' + r.name + ' (' + r.kind + ')')));
		const hwSel = runSelect('hw', pick('hw', 'hw')), simSel = runSelect('sim', pick('sim', 'sim'));
		const lists = { hw: h('datalist', { id: 'hw-metrics' }), sim: h('datalist', { id: 'sim-metrics' }) };
		const inputs = {};
		for (const [name, label, hint] of CORR_FIELDS)
			inputs[name] = h('input', { name, id: name, placeholder: hint, value: params.get(name) || '',
				list: name === 'hw_metric' ? 'hw-metrics' : name === 'sim_metric' ? 'sim-metrics' : undefined });
		const kernels = h('input', { type: 'checkbox', name: 'kernels', id: 'kernels', checked: params.get('kernels') === '1' });
		const field = (label, e, wide) => h('div', { class: wide ? 'wide' : undefined }, h('label', {}, label), e);
		const out = h('div', { id: 'result' });
		const form = h('form', { class: 'compare' },
			field('hardware run', hwSel), field('simulator run', simSel),
			CORR_FIELDS.map(([name, label]) => field(label, inputs[name])),
			field('', h('span', {}, kernels, ' kernel level (per-kernel totals, Accel-Sim style)'), true),
			h('div', { class: 'wide' }, h('button', { type: 'submit', id: 'correlate' }, 'Correlate')),
			lists.hw, lists.sim);
		show(h('h1', {}, 'Compare a hardware run with a simulator run'),
			h('p', { class: 'note' }, 'Expressions: metric names, numbers, + - * /, ( ), sum("GLOB"), sum_sm("NAME"), rate(E), delta(E). Method: docs/correlation.md.'),
			form, out);
		const metricList = async (side, sel) => {
			try {
				const ms = await fetchJSON(API + '/runs/' + sel.value + '/metrics');
				lists[side].replaceChildren(...ms.map((m) => h('option', { value: m.name })));
			} catch (e) {
				lists[side].replaceChildren();
			}
		};
		hwSel.addEventListener('change', () => metricList('hw', hwSel));
		simSel.addEventListener('change', () => metricList('sim', simSel));
		metricList('hw', hwSel);
		metricList('sim', simSel);

		async function correlate() {
			const p = { hw: hwSel.value, sim: simSel.value, kernels: kernels.checked ? 1 : undefined };
			for (const name in inputs)
				p[name] = inputs[name].value.trim();
			history.replaceState(null, '', '#/compare?' + qs(p));
			out.replaceChildren(h('p', { class: 'note' }, 'correlating…'));
			form.querySelectorAll('.bad').forEach((e) => e.classList.remove('bad'));
			form.querySelectorAll('.field-error').forEach((e) => e.remove());
			try {
				const res = await fetchJSON(API + '/correlate?' + qs(Object.assign({}, p, { format: 'json' })));
				out.replaceChildren(h('p', { class: 'links' },
					h('a', { href: '/report?' + qs(p), id: 'report-link' }, 'full report (HTML)'),
					h('a', { href: API + '/correlate?' + qs(Object.assign({}, p, { format: 'csv' })), download: 'correlation.csv' }, p.kernels ? 'per-kernel CSV' : 'aligned bins CSV'),
					h('a', { href: API + '/correlate?' + qs(p) }, 'JSON')));
				for (let i = 0; i < res.length; i++) {
					const sec = p.kernels ? kernelResult(res[i]) : binnedResult(res[i]);
					out.append(sec);
					await figure(sec, API + '/correlate?' + qs(Object.assign({}, p, { format: 'svg', pair: i })),
						'correlation-' + (p.kernels ? 'kernels-' : '') + i);
				}
				document.body.setAttribute('data-plots', res.length);
				document.body.setAttribute('data-correlated', res.length);
			} catch (e) {
				out.replaceChildren();
				showError(out, e);
				// the form field the message names, marked: a side's expression
				// or window, or a field by its name
				const msg = String(e.message || e);
				const fields = CORR_FIELDS.concat([['hw', 'hardware run'], ['sim', 'simulator run']]);
				const side = /^(hardware|simulator) side: (.*)/.exec(msg);
				let named = null;
				if (side) {
					const p = side[1] === 'hardware' ? 'hw' : 'sim', rest = side[2];
					named = /no run '/.test(rest) ? p : /window/.test(rest) ? p + '_window'
						: /clock/.test(rest) ? (p === 'hw' ? 'hw_clock_mhz' : 'sim_clock') : p + '_metric';
				}
				for (const [name, label] of fields)
					if (named ? name === named : new RegExp('\\b' + name + '\\b').test(msg)) {
						const el = name in inputs ? inputs[name] : name === 'hw' ? hwSel : simSel;
						el.classList.add('bad');
						el.after(h('div', { class: 'field-error' }, label + ': see the message below'));
						break;
					}
			}
		}
		form.addEventListener('submit', (e) => {
			e.preventDefault();
			correlate();
		});
		if (params.get('hw_metric') && params.get('sim_metric'))
			await correlate();
	}

	function statsTable(rows) {
		return h('table', { class: 'stats' }, rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))));
	}
	const pct = (v) => (v === null || v === undefined ? 'n/a' : (+v).toFixed(2) + '%');
	const fix = (v, d) => (v === null || v === undefined ? 'n/a' : (+v).toFixed(d));

	function binnedResult(r) {
		const sec = h('section', { class: 'pair' }, h('h2', {}, r.hw_metric + '  vs  ' + r.sim_metric),
			h('div', { class: 'note' }, 'hardware over ' + r.hw_window + ' (axis: ' + r.hw_axis + '); simulator over ' + r.sim_window +
				(r.sim_clock_hz ? '; simulator cycles at ' + r.sim_clock_hz / 1e6 + ' MHz scaled x' + fix(r.sim_cycle_scale, 4) : '')),
			...(r.warnings || []).map((w) => h('p', { class: 'warn' }, 'warning: ' + w)),
			statsTable([['bins', r.bins + ' x ' + fmtExact(r.bin_cycles) + ' cycles'], ['lag (bins)', r.lag_bins],
				['Pearson r', fix(r.pearson, 4)], ['Spearman rho', fix(r.spearman, 4)],
				['MAPE', pct(r.mape_pct) + ' (' + r.mape_bins + ' bins)'], ['NRMSE', fix(r.nrmse, 4)],
				['total error', pct(100 * r.total_error)], ['duration error', pct(100 * r.duration_error)],
				['time-normalised r / MAPE', fix(r.normalized_pearson, 4) + ' / ' + pct(r.normalized_mape_pct)]]));
		return sec;
	}

	// A figure the daemon draws (web/figure.h), inline, with its download buttons.
	async function figure(sec, url, name) {
		const div = h('div', { class: 'figure' });
		sec.append(h('p', {}, figureButtons(() => url, () => name, sec)), div);
		const svg = await fetchText(url);
		div.innerHTML = svg.replace(/^<\?xml[^>]*>\s*/, '');
	}

	function kernelResult(r) {
		const t = h('table', { class: 'list' }, h('tr', {}, ['kernel', 'uid', 'hw', 'sim', 'error', 'matched by'].map((c) => h('th', {}, c))));
		for (const k of r.per_kernel) {
			const uid = k.uid >= 0 ? String(k.uid) : '';
			if (k.shared) {
				t.append(h('tr', { class: 'shared', title: k.note || '' }, h('td', { title: k.name }, k.demangled || k.name), h('td', { class: 'num' }, uid),
					h('td', { colspan: 3 }, 'shared: ' + (k.note || 'ran beside other kernels')), h('td', {}, k.matched_by)));
				continue;
			}
			t.append(h('tr', {}, h('td', { title: k.name }, k.demangled || k.name), h('td', { class: 'num' }, uid), h('td', { class: 'num' }, fmtExact(k.hw)),
				h('td', { class: 'num' }, fmtExact(k.sim)),
				h('td', { class: 'num' }, k.hw ? pct((100 * (k.sim - k.hw)) / k.hw) : 'n/a'), h('td', {}, k.matched_by)));
		}
		const warn = (r.warnings || []).map((w) => h('p', { class: 'warn' }, 'warning: ' + w));
		return h('section', { class: 'kernels' }, h('h2', {}, 'kernel level: ' + r.hw_metric + '  vs  ' + r.sim_metric),
			statsTable([['kernels matched / compared', r.kernels + ' / ' + r.compared], ['Pearson r', fix(r.pearson, 4)], ['MAPE', pct(r.mape_pct)],
				['aggregate error', pct(r.aggregate_error_pct)]]), ...warn, t);
	}

	/* ---- the token ---- */

	// The daemon's token, asked for on a 401 and kept for this tab.
	function tokenPage() {
		document.title = 'cyclescope: token';
		const input = h('input', { type: 'password', id: 'token', autocomplete: 'current-password', size: 40 });
		const use = () => {
			TOKEN = input.value;
			sessionStorage.setItem('cyclescope_token', TOKEN);
			route();
		};
		input.addEventListener('keydown', (ev) => ev.key === 'Enter' && use());
		show(h('h1', {}, 'This daemon needs its token'),
			h('p', {}, 'It was started with --token (or token = in its config). Give the token to read its runs; this tab keeps it until it closes.'),
			h('p', {}, h('label', { for: 'token' }, 'token '), input, ' ', h('button', { type: 'button', id: 'token-use', onclick: use }, 'Use it')));
		input.focus();
	}

	/* ---- routing ---- */

	async function route() {
		const hash = location.hash.replace(/^#/, '') || '/';
		const [path, query] = hash.split('?');
		const params = new URLSearchParams(query || '');
		for (const a of ['data-plots', 'data-points', 'data-loads', 'data-correlated', 'data-ready', 'data-live', 'data-live-draws', 'data-collectors'])
			document.body.removeAttribute(a);
		if (seen.cleanup)
			seen.cleanup(), (seen.cleanup = null);
		try {
			const m = path.match(/^\/run\/([^/]+)$/);
			if (m) {
				document.body.setAttribute('data-page', 'run');
				await runPage(decodeURIComponent(m[1]), params);
			} else if (path === '/collectors') {
				document.body.setAttribute('data-page', 'collectors');
				await collectorsPage();
			} else if (path === '/compare') {
				document.body.setAttribute('data-page', 'compare');
				await comparePage(params);
			} else {
				document.body.setAttribute('data-page', 'runs');
				await runsPage();
			}
		} catch (e) {
			if (e.needsToken) {
				tokenPage();
			} else {
				document.title = 'cyclescope: error';
				show(h('h1', {}, 'Something went wrong'));
				showError(app, e);
			}
		}
		document.body.setAttribute('data-ready', '1');
	}
	if (typeof uPlot === 'undefined') {
		showError(app, new Error('uPlot did not load (/ui/uPlot.iife.min.js): run "make web-assets" where the daemon was built'));
		return;
	}
	window.addEventListener('hashchange', route);
	route();
})();
