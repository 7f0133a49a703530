/*
 * cyclescope's browser UI, served by the daemon (docs/http-api.md, "The
 * UI"). Three pages, chosen by the URL's hash:
 *   #/                 the runs list
 *   #/run/ID?metric=a,b&from=&to=&device=
 *                      a run: bucketed plots that re-query at every zoom,
 *                      its ranges in lanes under them, CSV links for the view
 *   #/compare?hw=&sim=&hw_metric=&sim_metric=...
 *                      a correlation request built from two runs
 * Everything comes from the HTTP API; plots are uPlot's.
 */
(function () {
	'use strict';
	const API = '/api/v1';
	const app = document.getElementById('app');
	const RANGE_KINDS = ['api', 'kernel', 'memcpy', 'memset', 'graph', 'nvtx', 'window', 'sim-kernel', 'phase', 'overlap'];
	// The overlap analysis' phases (GET /api/v1/runs/{run}/phases), drawn as the 'overlap' lane.
	const PHASE_COLORS = { 'only A': '#ff7f0e', 'A and B': '#d62728', 'only B': '#1f77b4', tail: '#9467bd', neither: '#dddddd' };
	const RANGE_COLORS = {
		api: '#7f7f7f', kernel: '#1f77b4', memcpy: '#2ca02c', memset: '#98df8a', graph: '#9467bd',
		nvtx: '#c49c94', window: '#bcbd22', 'sim-kernel': '#d62728', phase: '#17becf',
	};
	// What the page has asked the API for, for people and tests alike.
	const seen = (window.cyclescope = { seriesRequests: [], loads: 0 });

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

	async function fetchText(url) {
		const r = await fetch(url);
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
				h('td', {}, r.kind), h('td', {}, r.source), h('td', {}, r.status), h('td', {}, r.time_unit),
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
		const full = [run.t_min ?? 0, (run.t_max ?? 0) + 1];
		const origin = full[0];
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
		const kv = (k, v) => info.append(h('dt', {}, k), h('dd', {}, v));
		kv('kind / source', run.kind + ' / ' + run.source);
		kv('status', run.status + (run.dropped ? ', ' + run.dropped + ' samples dropped' : ''));
		kv('time', (unit === 'ns' ? 'ns' : 'cycles') + (run.clock_hz ? ' at ' + (run.clock_hz / 1e6).toFixed(0) + ' MHz' : '') + ', ' +
			fmtSpan(full[1] - full[0], unit, 0) + ' long; the axis counts from the run start');
		kv('samples / metrics', run.samples + ' / ' + metrics.length);
		kv('ranges', (run.range_summary || []).map((r) => r.count + ' ' + r.kind).join(', ') || 'none');
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
		show(h('h1', {}, run.name), info,
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
						bind: { dblclick: () => () => { load(full[0], full[1]); return null; } },
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
			timer = setTimeout(() => load(a, b), 60);
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
			exprList.replaceChildren(...exprs.map((e, i) => h('div', { class: 'expr' }, h('code', {}, e), ' ',
				h('button', { class: 'remove', title: 'remove', onclick: () => { exprs.splice(i, 1); build(); load(view[0], view[1]); } }, '\u00d7'))));
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

		function updateLinks() {
			const [from, to] = view;
			links.replaceChildren(h('span', { class: 'note' }, 'CSV of this view: '),
				h('a', { href: seriesUrl(true), download: 'series-buckets.csv', id: 'csv-buckets' }, 'buckets'),
				h('a', { href: seriesUrl(false), download: 'series.csv', id: 'csv-raw' }, 'raw samples'),
				h('a', { href: API + '/runs/' + run.id + '/ranges.csv?' + qs({ from, to }), download: 'ranges.csv', id: 'csv-ranges' }, 'ranges'),
				h('a', { href: API + '/runs/' + run.id }, 'run JSON'));
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
				load(q.r.t0, q.r.t1);
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
				await fetchText(API + '/runs/' + run.id + '/series.csv?' + qs({ expr: e, from: full[0], to: full[0] + 1, device: devices.length > 1 ? device : undefined }));
			} catch (err) {
				exprIn.classList.add('bad');
				showError(exprErr, err);
				return;
			}
			exprIn.classList.remove('bad');
			exprIn.value = '';
			exprs.push(e);
			build();
			load(view[0], view[1]);
		}
		exprBtn.addEventListener('click', addExpr);
		exprIn.addEventListener('keydown', (e) => e.key === 'Enter' && addExpr());
		rateSel.addEventListener('change', () => {
			rate = rateSel.value;
			build();
			load(view[0], view[1]);
		});
		plotBtn.addEventListener('click', () => {
			chosen = [...picker.selectedOptions].map((o) => o.value);
			build();
			load(view[0], view[1]);
		});
		picker.addEventListener('dblclick', () => plotBtn.click());
		devSel.addEventListener('change', () => {
			device = +devSel.value;
			load(view[0], view[1]);
		});
		resetBtn.addEventListener('click', () => load(full[0], full[1]));
		outBtn.addEventListener('click', () => {
			const mid = (view[0] + view[1]) / 2, half = view[1] - view[0];
			load(Math.max(full[0], Math.floor(mid - half)), Math.min(full[1], Math.ceil(mid + half)));
		});
		build();
		await load(view[0], view[1]);
		setTimeout(() => {
			fill();
			names.replaceChildren(...metrics.map((m) => h('option', { value: m.name })));
			document.body.setAttribute('data-metric-list', metrics.length);
		}, 0);
		if (aIn.value.trim() && bIn.value.trim())
			await splitPhases();
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

	/* ---- routing ---- */

	async function route() {
		const hash = location.hash.replace(/^#/, '') || '/';
		const [path, query] = hash.split('?');
		const params = new URLSearchParams(query || '');
		for (const a of ['data-plots', 'data-points', 'data-loads', 'data-correlated', 'data-ready'])
			document.body.removeAttribute(a);
		if (seen.cleanup)
			seen.cleanup(), (seen.cleanup = null);
		try {
			const m = path.match(/^\/run\/([^/]+)$/);
			if (m) {
				document.body.setAttribute('data-page', 'run');
				await runPage(decodeURIComponent(m[1]), params);
			} else if (path === '/compare') {
				document.body.setAttribute('data-page', 'compare');
				await comparePage(params);
			} else {
				document.body.setAttribute('data-page', 'runs');
				await runsPage();
			}
		} catch (e) {
			document.title = 'cyclescope: error';
			show(h('h1', {}, 'Something went wrong'));
			showError(app, e);
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
