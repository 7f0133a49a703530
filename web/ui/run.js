// A run (#/run/ID): plots that re-query at every zoom, CSV links for the
// view; a running run is followed (live.js), its ranges drawn in lanes
// (lanes.js).
import { API, PHASE_COLORS, after, authed, fetchJSON, fetchText, fmtNum, fmtSpan, fmtTime, h, num, parseCSV, parseTime, plotWidth, qs, seen, show, showError } from './common.js';
import { figureButtons, shortName, steps } from './plots.js';
import { liveFollow } from './live.js';
import { makeLanes } from './lanes.js';

export async function runPage(id, params) {
	const run = await fetchJSON(API + '/runs/' + encodeURIComponent(id));
	document.title = 'cyclescope: ' + run.name;
	seen.loads = 0;
	const unit = run.time_unit;
	const metrics = run.metric_list || [];
	const byName = new Map(metrics.map((m) => [m.name, m]));
	const devices = run.device_list || [];
	// the whole run; a live run's grows as its samples arrive
	const full = [run.t_min ?? 0, (run.t_max ?? 0) + 1];
	// where its times count from: its first sample, else its first range
	let origin = run.t_min ?? run.origin ?? 0;
	// times in the address count from the run's start (origin), in its unit
	const rel = (v) => String(Math.round(v - origin));
	// what the address asks for and the run cannot give is said, not dropped
	const notices = [];
	const asked = (params.get('metric') || '').split(',').filter(Boolean);
	const unknown = asked.filter((m) => !byName.has(m));
	if (unknown.length)
		notices.push('this run has no metric ' + unknown.map((m) => "'" + m + "'").join(', ') + (asked.length === unknown.length ? ': showing its default metrics' : ''));
	let chosen = asked.filter((m) => byName.has(m));
	if (!chosen.length && !params.get('expr'))
		chosen = (run.default_metrics && run.default_metrics.length ? run.default_metrics : metrics.slice(0, 2).map((m) => m.name))
			.filter((m) => byName.has(m));
	let exprs = (params.get('expr') || '').split(';').map((e) => e.trim()).filter(Boolean);
	// per sample (as stored), per second or per cycle (counters, by the sample's own length)
	// (an ns run with no clock counts cycles by its per-sample cycle counter, as plot.svg does)
	const cycleCounter = unit === 'ns' && !(run.clock_hz > 0) ? ['gpc__cycles_elapsed.max', 'gr__cycles_elapsed.max', 'sm__cycles_elapsed.avg',
		'sm__cycles_elapsed.max', 'sys__cycles_elapsed.avg', 'sys__cycles_elapsed.max'].find((m) => byName.has(m)) : undefined;
	const canCycle = unit === 'cycle' || run.clock_hz > 0 || !!cycleCounter, canSecond = unit === 'ns' || run.clock_hz > 0;
	let rate = params.get('rate') || 'sample';
	if ((rate === 'cycle' && !canCycle) || (rate === 'second' && !canSecond)) {
		notices.push('counters per ' + rate + ' need ' + (rate === 'cycle' ? 'a clock or cycle counter' : 'ns times or a clock') + ', which this run does not record: showing them per sample');
		rate = 'sample';
	}
	if (!run.samples)
		notices.push('this run has no samples' + ((run.range_summary || []).length ? ': only its ranges are drawn' : ''));
	let device = +(params.get('device') || (devices[0] ? devices[0].index : 0));
	const asTime = (k, dflt) => {
		if (!params.get(k))
			return dflt;
		const t = parseTime(params.get(k), run);
		if (!(t instanceof Error))
			return t;
		notices.push(k + ': ' + t.message + ': showing the whole run');
		return dflt;
	};
	let view = [asTime('from', full[0]), asTime('to', full[1])];
	if (view[1] <= view[0]) {
		notices.push('the window asked for ends before it starts: showing the whole run');
		view = full.slice();
	}
	if (view[1] <= full[0] || view[0] >= full[1]) {
		notices.push('the window asked for (' + fmtSpan(view[0] - full[0], unit, 0) + ' to ' + fmtSpan(view[1] - full[0], unit, 0) +
			' from the run start) lies outside the run (0 to ' + fmtSpan(full[1] - full[0], unit, 0) + '): showing the whole run');
		view = full.slice();
	}

	const info = h('dl', { class: 'kv' });
	const kv = (k, v, id) => { const dd = h('dd', { id }, v); info.append(h('dt', {}, k), dd); return dd; };
	kv('kind / source', run.kind + ' / ' + run.source);
	const statusDd = kv('status', run.status + (run.dropped ? ', ' + run.dropped + ' samples dropped' : ''), 'run-status');
	// (a live run's time, samples and ranges change as it grows)
	const timeText = () => (unit === 'ns' ? 'ns' : 'cycles') + (run.clock_hz ? ' at ' + (run.clock_hz / 1e6).toFixed(0) + ' MHz' : '') + ', ' +
		(run.t_max === null || run.t_max === undefined ? 'no time recorded yet' : fmtSpan(full[1] - full[0], unit, 0) + (run.status === 'running' ? ' long so far' : ' long')) +
		'; the axis counts from the run start';
	const rangesText = (summary) => summary.map((r) => r.count + ' ' + r.kind).join(', ') || 'none';
	const timeDd = kv('time', timeText(), 'run-time');
	const samplesDd = kv('samples / metrics', run.samples + ' / ' + metrics.length, 'run-samples');
	const rangesDd = kv('ranges', rangesText(run.range_summary || []), 'run-ranges');
	if (run.host)
		kv(run.pid ? 'host / pid' : 'host', run.host + (run.pid ? ' / ' + run.pid : ''));
	if (run.cmdline)
		kv('command', run.cmdline);

	const filter = h('input', { type: 'search', placeholder: 'filter metrics (' + metrics.length + ')', id: 'metric-filter' });
	const picker = h('select', { multiple: true, size: 6, id: 'metric-picker' });
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
	// a running run is followed as it is committed (live.js)
	const liveBadge = run.status === 'running' ? h('span', { class: 'live-badge', id: 'live-badge', title: 'following the run as the daemon commits it' }, 'live') : null;
	const liveBar = run.status === 'running' ? h('div', { class: 'live-bar', id: 'live-bar' }) : null;
	show(h('h1', {}, run.name, liveBadge ? [' ', liveBadge] : null), liveBar, info,
		notices.map((t) => h('p', { class: 'warn notice' }, t)),
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

	// ranges drawn one by one (the longest in view); the rest as density
	const RANGES_DRAWN = 5000;
	let plots = [], applying = false, seq = 0, ranges = [], density = [];
	let live = null; // the follower of a running run, while it runs
	const inView = () => (run.samples / Math.max(1, devices.length)) * ((view[1] - view[0]) / (full[1] - full[0]));
	// Raw samples when no more than about one a pixel are in view (each
	// drawn over its own interval: whole kernels stay whole), else one
	// bucket a pixel.
	const rawView = () => inView() <= plotWidth() / 2;
	const buckets = () => Math.max(2, Math.min(2000, Math.round(plotWidth())));

	// The plotted columns: metrics and expressions, counters as rates when asked.
	const isCounter = (name) => (byName.get(name) || {}).kind !== 'ratio';
	// An expression's unit from its metrics' units: sums and differences of
	// one unit keep it, A / B is uA/uB, rate(E) per second or per cycle (as
	// the server's rate() is on this run); anything else has none.
	function exprUnit(e) {
		const names = [...e.matchAll(/"([^"]*)"|([A-Za-z_][A-Za-z0-9_.\[\]]*)(?!\s*\()/g)].map((m) => m[1] ?? m[2]);
		const units = names.map((n) => (byName.get(n) || {}).unit || (n.includes('*') ? null : ''));
		const perRate = /^\s*rate\((.*)\)\s*$/.exec(e);
		if (perRate) {
			const inner = exprUnit(perRate[1]);
			return inner ? inner + (unit === 'ns' ? '/s' : '/cycle') : '';
		}
		if (!names.length || /\b(delta|sum_sm)\(|\*/.test(e.replace(/"[^"]*"/g, '""')))
			return '';
		const div = /^\s*([^/]+?)\s*\/\s*([^/]+?)\s*$/.exec(e);
		if (div) {
			const [a, b] = [exprUnit(div[1]), exprUnit(div[2])];
			return a && b ? (a === b ? a + '/' + b + ' (ratio)' : a + '/' + b) : '';
		}
		if (/\//.test(e))
			return '';
		const known = units.filter((u) => u !== null);
		return known.length && known.every((u) => u && u === known[0]) ? known[0] : '';
	}
	function columns() {
		const cols = chosen.map((name) => ({ label: name, unit: (byName.get(name) || {}).unit || '', metric: name, isMetric: true, counter: isCounter(name) }))
			.concat(exprs.map((e) => ({ label: e, unit: exprUnit(e), expr: e, counter: !/rate\(/.test(e) })));
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
				if (rate === 'cycle' && cycleCounter) {
					// each sample over the cycles its own counter gives
					c.col = c.expr = c.isMetric ? '"' + c.label + '" / ' + cycleCounter : '(' + c.label + ') / ' + cycleCounter;
					c.scale = 1;
				}
			}
		}
		return cols;
	}
	// (the page's own requests name stored times, '@', exact whatever the
	// origin; the links it shows count from the run start)
	function viewQuery(withBuckets, at) {
		const cols = columns();
		const [from, to] = view.map(at ? (v) => '@' + Math.round(v) : rel);
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
		const [from, to] = view.map(rel);
		return {
			metric: cols.filter((c) => c.isMetric).map((c) => c.label).join(',') || undefined,
			expr: cols.filter((c) => !c.isMetric).map((c) => c.label).join(';') || undefined,
			device: devices.length > 1 ? device : undefined, from, to,
			rate: rate !== 'sample' ? rate : undefined, ranges: 'all',
			// the phases shaded in the view are shaded in its figure
			a: phaseSegs.length && aIn.value.trim() ? aIn.value.trim() : undefined,
			b: phaseSegs.length && bIn.value.trim() ? bIn.value.trim() : undefined,
		};
	}
	const seriesUrl = (withBuckets, at) => API + '/runs/' + run.id + '/series.csv?' + qs(viewQuery(withBuckets, at));

	function xAxis() {
		return {
			label: unit === 'ns' ? 'time since run start' : 'cycles since run start', labelSize: 18,
			// ticks at whole steps from the run's start, as the SVG figures
			// have them (uPlot's own fall on whole steps of the stored time)
			splits: (u, i, min, max, incr) => {
				const out = [];
				for (let k = Math.ceil((min - origin) / incr); out.length < 1000; k++) {
					const v = origin + k * incr;
					if (v > max + incr * 1e-9)
						break;
					out.push(v);
				}
				return out;
			},
			values: (u, vals, ax, space, incr) => {
				const t = vals.map((v) => (unit === 'ns' ? fmtTime(v - origin, incr) : fmtNum(v - origin, incr)));
				seen.xTicks = t;
				return t;
			},
		};
	}

	// lower plots when there are several: two above the fold at 1280x800
	const plotH = () => (columns().length > 1 ? 160 : 200);
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
			const last = plots.length === columns().length - 1;
			const xa = xAxis();
			if (!last)
				xa.label = undefined, (xa.labelSize = 0), (xa.size = 28); // (one x title, under the last plot)
			const u = new uPlot({
				width: plotWidth(), height: plotH(),
				legend: { live: true },
				scales: { x: { time: false } },
				axes: [xa,
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
					// the overlap phases shaded behind the data, as in the lanes
					drawAxes: [(u) => shadePhases(u)],
					draw: plots.length ? [] : [() => ln.draw()],
				},
			}, [[], [], [], []], div);
			u.csCol = c;
			u.over.addEventListener('wheel', (e) => {
				e.preventDefault();
				const b = u.over.getBoundingClientRect();
				zoomAbout(e.deltaY > 0 ? 1.25 : 0.8, u.posToVal(e.clientX - b.left, 'x'));
			}, { passive: false });
			plots.push(u);
			seen.plots = plots;
		}
	}
	function shadePhases(u) {
		if (!phaseSegs.length)
			return;
		const c = u.ctx, { left, top, width, height } = u.bbox;
		c.save();
		c.beginPath();
		c.rect(left, top, width, height);
		c.clip();
		c.globalAlpha = 0.13;
		for (const p of phaseSegs) {
			if (p.name === 'neither')
				continue;
			const a = u.valToPos(p.t0, 'x', true), b = u.valToPos(p.t1, 'x', true);
			c.fillStyle = PHASE_COLORS[p.name] || '#999';
			c.fillRect(a, top, Math.max(1, b - a), height);
		}
		c.restore();
		seen.phaseShaded = (seen.phaseShaded || 0) + 1;
	}
	const onResize = () => {
		clearTimeout(build.t);
		build.t = setTimeout(() => plots.forEach((u) => u.setSize({ width: plotWidth(), height: plotH() })), 50);
	};
	window.addEventListener('resize', onResize);
	// Perfetto's keys: W/S zoom in and out about the middle, A/D pan by a
	// fifth of the view; the wheel zooms about the pointer (over the plots
	// or the lanes). Each is a view the user chose, fetched as a zoom is.
	function zoomAbout(f, at) {
		const [a, b] = view, m = at ?? (a + b) / 2;
		moveTo(m - (m - a) * f, m + (b - m) * f);
	}
	function moveTo(lo, hi) {
		if (hi - lo >= full[1] - full[0])
			[lo, hi] = full;
		else if (lo < full[0])
			[lo, hi] = [full[0], full[0] + hi - lo];
		else if (hi > full[1])
			[lo, hi] = [full[1] - (hi - lo), full[1]];
		lo = Math.floor(lo), hi = Math.ceil(hi);
		if (hi > lo && (lo !== view[0] || hi !== view[1])) {
			clearTimeout(timer);
			timer = setTimeout(() => goto(lo, hi), 60);
			view = [lo, hi]; // (a second key before the load lands goes on from here)
		}
	}
	const onKey = (e) => {
		if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|SELECT|TEXTAREA)$/.test((e.target || {}).tagName || ''))
			return;
		const k = e.key.toLowerCase(), w = view[1] - view[0];
		if (k === 'w')
			zoomAbout(0.8);
		else if (k === 's')
			zoomAbout(1.25);
		else if (k === 'a' || k === 'd') {
			const d = (k === 'a' ? -w : w) / 5;
			moveTo(view[0] + d, view[1] + d);
		} else
			return;
		e.preventDefault();
	};
	document.addEventListener('keydown', onKey);
	lanes.addEventListener('wheel', (e) => {
		const u = plots[0];
		if (!u)
			return;
		e.preventDefault();
		const b = u.over.getBoundingClientRect();
		zoomAbout(e.deltaY > 0 ? 1.25 : 0.8, u.posToVal(e.clientX - b.left, 'x'));
	}, { passive: false });
	// leaving the page: its plots and handlers go (route() calls this)
	seen.cleanup = () => {
		if (live)
			live.stop();
		clearTimeout(timer);
		seq++; // a load in flight finds itself stale and stops
		window.removeEventListener('resize', onResize);
		document.removeEventListener('keydown', onKey);
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

	async function load(from, to) {
		view = [from, to];
		const mine = ++seq;
		history.replaceState(null, '', '#/run/' + run.id + '?' + qs({
			metric: chosen.join(','), expr: exprs.join(';') || undefined, from: rel(from), to: rel(to), rate: rate !== 'sample' ? rate : undefined,
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
		const url = seriesUrl(!raw, true);
		seen.seriesRequests.push(url);
		const ends = () => { const st = 10 ** Math.floor(Math.log10(Math.max(1, to - from)) - 2); return fmtSpan(from - origin, unit, st) + ' to ' + fmtSpan(to - origin, unit, st); };
		statusLine.textContent = 'loading ' + ends() + '…';
		let csv, rtext;
		try {
			[csv, rtext] = await Promise.all([fetchText(url),
				fetchText(API + '/runs/' + run.id + '/ranges.csv?' + qs({ from: '@' + from, to: '@' + to, limit: RANGES_DRAWN }))]);
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
		// more ranges than are drawn one by one: every one of them as the
		// lanes' density (how busy each pixel's time is), none cut silently
		density = [];
		if (ranges.length >= RANGES_DRAWN) {
			try {
				const d = parseCSV(await fetchText(API + '/runs/' + run.id + '/density.csv?' + qs({ from: '@' + from, to: '@' + to, bins: Math.max(1, Math.round(plotWidth())) })));
				if (mine !== seq)
					return;
				density = d.rows.map((r) => ({ kind: r[0], stream: r[1], t0: num(r[2]), t1: num(r[3]), count: num(r[4]), busy: num(r[5]) }));
			} catch (e) {
				showError(errors, e);
			}
		}
		const inAll = density.length ? density.reduce((n, d) => n + d.count, 0) : ranges.length;
		seen.density = { bins: density.length, ranges: inAll };
		ln.draw();
		seen.loads++;
		if (seen.loads === 1)
			seen.firstPlotMs = performance.now(); // since navigation: the first load's plots are drawn
		const per = (to - from) / buckets();
		statusLine.textContent = (raw ? t.rows.length + ' samples' : t.rows.length + ' buckets of ' + fmtSpan(per, unit, 0)) + ' from ' +
			ends() + '; ' + inAll + (inAll === 1 ? ' range' : ' ranges') + ' in view' +
			(density.length ? ' (the ' + ranges.length + ' longest drawn one by one, all of them as the lanes\' shading)' : '');
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
		const [from, to] = view.map(rel);
		csvLinks[0].href = authed(seriesUrl(true));
		csvLinks[1].href = authed(seriesUrl(false));
		csvLinks[2].href = authed(API + '/runs/' + run.id + '/ranges.csv?' + qs({ from, to }));
	}

	// What live.js and lanes.js share with this page: its elements and
	// functions, and its mutable state through accessors.
	const pg = {
		run, unit, metrics, devices, full, params, errors, statusLine, statusDd, timeDd, samplesDd, rangesDd, cycleCounter,
		liveBar, liveBadge, plotsDiv, lanes, legend, aIn, bIn, phaseOut, timeText, rangesText,
		buckets, columns, load, updateLinks, goto,
		get origin() { return origin; }, set origin(v) { origin = v; },
		get chosen() { return chosen; },
		get exprs() { return exprs; },
		get rate() { return rate; },
		get device() { return device; },
		get view() { return view; }, set view(v) { view = v; },
		get plots() { return plots; }, set plots(v) { plots = v; },
		get applying() { return applying; }, set applying(v) { applying = v; },
		get ranges() { return ranges; }, set ranges(v) { ranges = v; },
		get density() { return density; }, set density(v) { density = v; },
		get live() { return live; }, set live(v) { live = v; },
		get phaseSegs() { return phaseSegs; }, set phaseSegs(v) { phaseSegs = v; },
	};
	const ln = makeLanes(pg);
	phaseBtn.addEventListener('click', ln.splitPhases);
	// Overlap first: a run with NCCL kernels and other kernels is split
	// into them on opening (A = the collectives, B = the rest), unless the
	// address names its own A and B.
	function proposeSplit() {
		if (params.get('a') || params.get('b') || aIn.value || bIn.value)
			return;
		const kernels = ranges.filter((r) => r.kind === 'kernel');
		const nccl = kernels.filter((r) => /^nccl/.test(r.stored));
		if (!nccl.length || nccl.length === kernels.length)
			return;
		aIn.value = 'kernel:nccl*';
		bIn.value = 'kernel:!nccl*';
	}

	async function addExpr() {
		const e = exprIn.value.trim();
		exprErr.replaceChildren();
		if (!e)
			return;
		try {
			// checked by the server over the run's first time unit (cheap at any
			// size): a malformed expression is a 400 naming its column
			await fetchText(API + '/runs/' + run.id + '/series.csv?' + qs({ expr: e, from: '@' + full[0], to: '@' + after(full[0]), device: devices.length > 1 ? device : undefined }));
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
		live = liveFollow(pg, !fixed);
	} else {
		await load(view[0], view[1]);
	}
	setTimeout(() => {
		fill();
		names.replaceChildren(...metrics.map((m) => h('option', { value: m.name })));
		document.body.setAttribute('data-metric-list', metrics.length);
	}, 0);
	if (!liveBar)
		proposeSplit(); /* (from the first view's ranges) */
	if (aIn.value.trim() && bIn.value.trim())
		await ln.splitPhases();
}
