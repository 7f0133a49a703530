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
		nvtx: '#ff7f0e', window: '#bcbd22', 'sim-kernel': '#d62728', phase: '#17becf',
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

	function fmtNum(v) {
		if (v === null || v === undefined || Number.isNaN(v))
			return 'n/a';
		const a = Math.abs(v);
		return a !== 0 && (a >= 1e7 || a < 1e-3) ? v.toExponential(3) : String(+v.toPrecision(6));
	}

	// Values on an axis: 1.2M, 350k, 0.25.
	function fmtSI(v) {
		const a = Math.abs(v);
		for (const [d, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']])
			if (a >= d)
				return +(v / d).toPrecision(4) + s;
		return String(+v.toPrecision(4));
	}

	// Times on the axis: ns runs in s/ms/us/ns, cycle runs with k/M/G.
	function fmtTime(v, unit, span) {
		if (unit === 'ns') {
			const [d, s] = span >= 5e8 ? [1e9, ' s'] : span >= 5e5 ? [1e6, ' ms'] : span >= 500 ? [1e3, ' us'] : [1, ' ns'];
			return +(v / d).toPrecision(7) + s;
		}
		const [d, s] = span >= 5e8 ? [1e9, 'G'] : span >= 5e5 ? [1e6, 'M'] : span >= 5e3 ? [1e3, 'k'] : [1, ''];
		return +(v / d).toPrecision(7) + s;
	}

	function showError(where, err) {
		where.append(h('div', { class: 'error', role: 'alert' }, String(err.message || err)));
	}

	function plotWidth() {
		return Math.max(480, Math.min(1600, app.clientWidth - 8));
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
				h('td', { class: 'num' }, span === null ? '' : fmtTime(span, r.time_unit, span) + (r.time_unit === 'cycle' ? ' cycles' : '')),
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

	async function runPage(id, params) {
		const run = await fetchJSON(API + '/runs/' + encodeURIComponent(id));
		document.title = 'cyclescope: ' + run.name;
		seen.loads = 0;
		const unit = run.time_unit;
		const metrics = run.metric_list || [];
		const devices = run.device_list || [];
		const full = [run.t_min ?? 0, (run.t_max ?? 0) + 1];
		let chosen = (params.get('metric') || '').split(',').filter((m) => metrics.some((x) => x.name === m));
		if (!chosen.length)
			chosen = metrics.slice(0, 2).map((m) => m.name);
		let device = +(params.get('device') || (devices[0] ? devices[0].index : 0));
		let view = [num(params.get('from')) ?? full[0], num(params.get('to')) ?? full[1]];

		const info = h('dl', { class: 'kv' });
		const kv = (k, v) => info.append(h('dt', {}, k), h('dd', {}, v));
		kv('kind / source', run.kind + ' / ' + run.source);
		kv('status', run.status + (run.dropped ? ', ' + run.dropped + ' samples dropped' : ''));
		kv('time', unit + (run.clock_hz ? ' at ' + fmtNum(run.clock_hz / 1e6) + ' MHz' : '') + ', ' +
			fmtTime(full[0], unit, full[1] - full[0]) + ' to ' + fmtTime(full[1], unit, full[1] - full[0]));
		kv('samples / metrics', run.samples + ' / ' + metrics.length);
		kv('ranges', (run.range_summary || []).map((r) => r.count + ' ' + r.kind).join(', ') || 'none');
		if (run.host)
			kv(run.pid ? 'host / pid' : 'host', run.host + (run.pid ? ' / ' + run.pid : ''));
		if (run.cmdline)
			kv('command', run.cmdline);

		const filter = h('input', { type: 'search', placeholder: 'filter metrics (' + metrics.length + ')', id: 'metric-filter' });
		const picker = h('select', { multiple: true, size: 10, id: 'metric-picker' });
		const fill = () => {
			const f = filter.value.toLowerCase();
			picker.replaceChildren(...metrics.filter((m) => !f || m.name.toLowerCase().includes(f) || chosen.includes(m.name))
				.map((m) => h('option', { value: m.name, selected: chosen.includes(m.name) }, m.name + (m.unit ? ' (' + m.unit + ')' : ''))));
		};
		filter.addEventListener('input', fill);
		fill();
		const devSel = h('select', { id: 'device' }, devices.map((d) => h('option', { value: d.index, selected: d.index === device }, d.index + ': ' + (d.name || d.chip || 'device'))));
		const plotBtn = h('button', { id: 'plot' }, 'Plot selected');
		const resetBtn = h('button', { id: 'reset-zoom' }, 'Reset zoom');
		const outBtn = h('button', { id: 'zoom-out' }, 'Zoom out');
		const statusLine = h('div', { class: 'note', id: 'status' });
		const plotsDiv = h('div', { class: 'plots' });
		const lanes = h('canvas', { class: 'lanes', id: 'lanes' });
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
		show(h('h1', {}, run.name), info,
			h('div', { class: 'controls' },
				h('div', { class: 'picker' }, h('label', {}, 'metrics (ctrl/shift-click for several)'), filter, h('br'), picker),
				h('div', {}, devices.length > 1 ? [h('label', {}, 'device'), devSel, h('br')] : null,
					h('p', {}, plotBtn), h('p', {}, resetBtn, ' ', outBtn),
					h('p', { class: 'note' }, 'Drag across a plot to zoom; each zoom fetches new buckets.', h('br'),
						'Double-click or Reset zoom for the whole run; click a range to zoom to it.'))),
			errors, statusLine, plotsDiv, lanes, links, (run.range_summary || []).length ? phaseForm : null);

		let plots = [], applying = false, seq = 0, ranges = [];
		// One bucket a pixel, but no more buckets than samples in view
		// (sparse runs would otherwise be mostly empty buckets).
		const buckets = () => {
			const inView = (run.samples / Math.max(1, devices.length)) * ((view[1] - view[0]) / (full[1] - full[0]));
			return Math.max(2, Math.min(2000, Math.round(plotWidth()), Math.ceil(inView) + 1));
		};

		function seriesUrl(from, to, withBuckets) {
			return API + '/runs/' + run.id + '/series.csv?' + qs({
				metric: chosen.join(','), device: devices.length > 1 ? device : undefined,
				from, to, buckets: withBuckets ? buckets() : undefined,
			});
		}

		function build() {
			plots.forEach((p) => p.destroy());
			plots = [];
			plotsDiv.replaceChildren();
			for (const name of chosen) {
				const div = h('div', { class: 'plot', 'data-metric': name });
				plotsDiv.append(div);
				const u = new uPlot({
					width: plotWidth(), height: 220, title: name,
					scales: { x: { time: false } },
					axes: [{ values: (u, vals) => vals.map((v) => fmtTime(v, unit, u.scales.x.max - u.scales.x.min)) },
						{ size: 64, values: (u, vals) => vals.map(fmtSI) }],
					series: [{ label: unit, value: (u, v) => (v === null ? '' : fmtTime(v, unit, u.scales.x.max - u.scales.x.min)) },
						{ label: 'mean', stroke: '#1f77b4', width: 1.5, spanGaps: true, value: (u, v) => fmtNum(v) },
						{ label: 'min', stroke: 'rgba(31,119,180,0.35)', spanGaps: true, value: (u, v) => fmtNum(v) },
						{ label: 'max', stroke: 'rgba(31,119,180,0.35)', spanGaps: true, value: (u, v) => fmtNum(v) }],
					bands: [{ series: [3, 2], fill: 'rgba(31,119,180,0.12)' }],
					cursor: {
						sync: { key: 'cs-run-' + run.id },
						bind: { dblclick: () => () => { load(full[0], full[1]); return null; } },
					},
					hooks: { setScale: [(u, key) => key === 'x' && zoomed(u)] },
				}, [[], [], [], []], div);
				plots.push(u);
			}
		}

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

		async function load(from, to) {
			view = [from, to];
			const mine = ++seq;
			history.replaceState(null, '', '#/run/' + run.id + '?' + qs({
				metric: chosen.join(','), from, to, device: devices.length > 1 ? device : undefined,
				a: aIn.value.trim() || undefined, b: bIn.value.trim() || undefined,
			}));
			errors.replaceChildren();
			updateLinks();
			if (!chosen.length) {
				statusLine.textContent = 'Pick one or more metrics.';
				return;
			}
			const url = seriesUrl(from, to, true);
			seen.seriesRequests.push(url);
			statusLine.textContent = 'loading ' + fmtTime(from, unit, to - from) + ' to ' + fmtTime(to, unit, to - from) + '…';
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
			const x = t.rows.map((r) => (num(r[0]) + num(r[1])) / 2);
			applying = true;
			let points = 0;
			plots.forEach((u, i) => {
				const name = chosen[i];
				const [cmin, cmax, cmean] = [col(name + ':min'), col(name + ':max'), col(name + ':mean')];
				const ys = [cmean, cmin, cmax].map((c) => t.rows.map((r) => num(r[c])));
				points += ys[0].filter((v) => v !== null).length;
				u.setData([x, ys[0], ys[1], ys[2]]);
				u.setScale('x', { min: from, max: to });
			});
			applying = false;
			const rt = parseCSV(rtext);
			ranges = rt.rows.map((r) => ({ kind: r[0], name: r[10] || r[1], stored: r[1], t0: num(r[2]), t1: num(r[3]) }));
			drawLanes();
			seen.loads++;
			const per = (to - from) / buckets();
			statusLine.textContent = t.rows.length + ' buckets of ' + fmtTime(per, unit, per) + ' over ' +
				fmtTime(from, unit, to - from) + ' to ' + fmtTime(to, unit, to - from) + '; ' + ranges.length + ' ranges in view' +
				(ranges.length >= 5000 ? ' (the 5000 longest)' : '');
			document.body.setAttribute('data-plots', plots.length);
			document.body.setAttribute('data-points', points);
			document.body.setAttribute('data-loads', seen.loads);
		}

		function updateLinks() {
			const [from, to] = view;
			links.replaceChildren(h('span', { class: 'note' }, 'CSV of this view: '),
				h('a', { href: seriesUrl(from, to, true), download: 'series-buckets.csv', id: 'csv-buckets' }, 'plotted buckets'),
				h('a', { href: seriesUrl(from, to, false), download: 'series.csv', id: 'csv-raw' }, 'raw samples'),
				h('a', { href: API + '/runs/' + run.id + '/ranges.csv?' + qs({ from, to }), download: 'ranges.csv', id: 'csv-ranges' }, 'ranges'),
				h('a', { href: API + '/runs/' + run.id }, 'run JSON'));
		}

		// Ranges in lanes, one per kind, on the plots' x axis.
		let hits = [];
		function drawLanes() {
			const u = plots[0];
			const all = ranges.concat(phaseSegs);
			const kinds = RANGE_KINDS.filter((k) => all.some((r) => r.kind === k))
				.concat([...new Set(all.map((r) => r.kind))].filter((k) => !RANGE_KINDS.includes(k)));
			// the canvas starts where the plots' container does
			const lane = 18, ob = u ? u.over.getBoundingClientRect() : null;
			const left = ob ? ob.left - plotsDiv.getBoundingClientRect().left : 60, w = ob ? ob.width : plotWidth() - 80;
			const dpr = window.devicePixelRatio || 1;
			const H = kinds.length ? kinds.length * lane + 4 : 0;
			lanes.style.width = left + w + 'px';
			lanes.style.height = H + 'px';
			lanes.width = Math.round((left + w) * dpr);
			lanes.height = Math.round(H * dpr);
			const c = lanes.getContext('2d');
			c.scale(dpr, dpr);
			c.font = '11px system-ui, sans-serif';
			c.textBaseline = 'middle';
			hits = [];
			const [from, to] = view;
			const px = (t) => left + ((t - from) / (to - from)) * w;
			kinds.forEach((k, i) => {
				const y = i * lane + 2;
				c.fillStyle = '#555';
				c.textAlign = 'right';
				c.fillText(k, left - 6, y + lane / 2);
				c.textAlign = 'left';
				for (const r of all.filter((r) => r.kind === k)) {
					const a = Math.max(left, px(r.t0)), b = Math.min(left + w, px(r.t1));
					if (b < left || a > left + w)
						continue;
					const bw = Math.max(1, b - a);
					c.globalAlpha = 0.55;
					c.fillStyle = k === 'overlap' ? PHASE_COLORS[r.name] || '#444' : RANGE_COLORS[k] || '#444';
					c.fillRect(a, y + 1, bw, lane - 3);
					c.globalAlpha = 1;
					if (bw > 40) {
						c.save();
						c.beginPath();
						c.rect(a, y, bw, lane);
						c.clip();
						c.fillStyle = '#000';
						c.fillText(r.name, a + 3, y + lane / 2);
						c.restore();
					}
					hits.push({ a, b: a + bw, y, r });
				}
			});
		}
		const hitAt = (e) => {
			const box = lanes.getBoundingClientRect(), x = e.clientX - box.left, y = e.clientY - box.top;
			return hits.filter((q) => x >= q.a && x <= q.b && y >= q.y && y < q.y + 18).pop();
		};
		lanes.addEventListener('mousemove', (e) => {
			const q = hitAt(e);
			const span = q ? q.r.t1 - q.r.t0 : 0;
			lanes.title = q ? q.r.kind + ' ' + q.r.name + (q.r.stored && q.r.stored !== q.r.name ? '\n' + q.r.stored : '') + '\n' + fmtTime(q.r.t0, unit, span) + ' to ' + fmtTime(q.r.t1, unit, span) +
				' (' + fmtTime(span, unit, span) + ')' : '';
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
						h('td', { class: 'num' }, fmtTime(p.duration, unit, p.duration)),
						h('td', { class: 'num' }, (100 * p.share).toFixed(1) + '%'),
						Object.keys(r.totals).map((m) => h('td', { class: 'num' }, fmtNum(p.metrics[m].mean_rate)))));
				const tail = r.tail ? 'B runs on alone for ' + fmtTime(r.tail.duration, unit, r.tail.duration) + ' after its last overlap with A.'
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
			try {
				const res = await fetchJSON(API + '/correlate?' + qs(Object.assign({}, p, { format: 'json' })));
				const bins = p.kernels ? null : parseCSV(await fetchText(API + '/correlate?' + qs(Object.assign({}, p, { format: 'csv' }))));
				out.replaceChildren(h('p', { class: 'links' },
					h('a', { href: '/report?' + qs(p), id: 'report-link' }, 'full report (HTML)'),
					h('a', { href: API + '/correlate?' + qs(Object.assign({}, p, { format: 'csv' })), download: 'correlation.csv' }, p.kernels ? 'per-kernel CSV' : 'aligned bins CSV'),
					h('a', { href: API + '/correlate?' + qs(p) }, 'JSON')));
				res.forEach((r, i) => out.append(p.kernels ? kernelResult(r) : binnedResult(r, bins, i)));
				document.body.setAttribute('data-correlated', res.length);
			} catch (e) {
				out.replaceChildren();
				showError(out, e);
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

	function binnedResult(r, bins, i) {
		const sec = h('section', { class: 'pair' }, h('h2', {}, r.hw_metric + '  vs  ' + r.sim_metric),
			h('div', { class: 'note' }, 'hardware over ' + r.hw_window + ' (axis: ' + r.hw_axis + '); simulator over ' + r.sim_window +
				(r.sim_clock_hz ? '; simulator cycles at ' + r.sim_clock_hz / 1e6 + ' MHz scaled x' + fix(r.sim_cycle_scale, 4) : '')),
			...(r.warnings || []).map((w) => h('p', { class: 'warn' }, 'warning: ' + w)),
			statsTable([['bins', r.bins + ' x ' + fmtNum(r.bin_cycles) + ' cycles'], ['lag (bins)', r.lag_bins],
				['Pearson r', fix(r.pearson, 4)], ['Spearman rho', fix(r.spearman, 4)],
				['MAPE', pct(r.mape_pct) + ' (' + r.mape_bins + ' bins)'], ['NRMSE', fix(r.nrmse, 4)],
				['total error', pct(100 * r.total_error)], ['duration error', pct(100 * r.duration_error)],
				['time-normalised r / MAPE', fix(r.normalized_pearson, 4) + ' / ' + pct(r.normalized_mape_pct)]]));
		const rows = bins.rows.filter((row) => row[0] === r.hw_metric && row[1] === r.sim_metric);
		const x = rows.map((row) => num(row[3])), hw = rows.map((row) => num(row[4])), sim = rows.map((row) => num(row[5]));
		const div = h('div', { class: 'plot' });
		sec.append(div);
		new uPlot({
			width: plotWidth(), height: 300, title: 'per ' + fmtNum(r.bin_cycles) + '-cycle bin' + (r.rate ? ' (mean per cycle)' : ''),
			scales: { x: { time: false } }, axes: [{ label: 'cycle' }, { size: 70 }],
			series: [{ label: 'cycle' }, { label: 'hardware', stroke: '#1f77b4', width: 1.5 },
				{ label: 'simulator', stroke: '#d62728', width: 1.5 }],
		}, [x, hw, sim], div);
		document.body.setAttribute('data-plots', i + 1);
		return sec;
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
			t.append(h('tr', {}, h('td', { title: k.name }, k.demangled || k.name), h('td', { class: 'num' }, uid), h('td', { class: 'num' }, fmtNum(k.hw)),
				h('td', { class: 'num' }, fmtNum(k.sim)),
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
			show();
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
