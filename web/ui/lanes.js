import { API, PHASE_COLORS, RANGE_COLORS, RANGE_KINDS, fetchJSON, fmtNum, fmtSpan, h, qs, seen, showError } from './common.js';
import { kernelColors } from './plots.js';

// Ranges in lanes under a run page's plots, and its overlap phases
// (GET /api/v1/runs/{run}/phases) drawn as the 'overlap' lane. pg is the
// run page (run.js): its ranges, plots, view and elements.
export function makeLanes(pg) {
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
		const u = pg.plots[0];
		if (!u || !u.over || !pg.lanes.isConnected)
			return;
		const all = pg.ranges.concat(pg.phaseSegs), dens = pg.density || [];
		const streams = new Map();
		for (const r of pg.ranges.concat(dens))
			streams.set(r.kind, (streams.get(r.kind) || new Set()).add(r.stream));
		all.concat(dens).forEach((r) => (r.lane = laneKey(r, streams)));
		const order = (k) => { const i = RANGE_KINDS.indexOf(k.split(' ')[0]); return i < 0 ? 99 : i; };
		const keys = [...new Set(all.concat(dens).map((r) => r.lane))].sort((a, b) => order(a) - order(b) || a.localeCompare(b, 'en', { numeric: true }));
		const box = pg.plotsDiv.getBoundingClientRect(), ob = u.over.getBoundingClientRect();
		const left = ob.left - box.left, w = ob.width;
		const dpr = window.devicePixelRatio || 1;
		const H = keys.length ? keys.length * LANE + 4 : 0;
		const W = Math.ceil(left + w);
		pg.lanes.style.width = W + 'px';
		pg.lanes.style.height = H + 'px';
		pg.lanes.width = Math.round(W * dpr);
		pg.lanes.height = Math.round(H * dpr);
		const c = pg.lanes.getContext('2d');
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
			// the density under the ranges drawn one by one: how busy
			// each bin's time is in this lane, darker for busier
			for (const d of dens.filter((d) => d.lane === k)) {
				const a = Math.max(left, px(d.t0)), b = Math.min(left + w, px(d.t1));
				if (b < left || a > left + w)
					continue;
				c.globalAlpha = 0.2 + 0.6 * Math.min(1, d.busy / Math.max(1, d.t1 - d.t0));
				c.fillStyle = RANGE_COLORS[d.kind] || '#666';
				c.fillRect(a, y + 1, Math.max(1, b - a), LANE - 3);
				c.globalAlpha = 1;
				hits.push({ a, b: Math.max(a + 1, b), y, r: { kind: d.kind, name: d.count + ' ranges (' + (100 * d.busy / Math.max(1, d.t1 - d.t0)).toFixed(0) + '% busy)', t0: d.t0, t1: d.t1, density: true } });
			}
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
				// the name inside its bar, cut with an ellipsis where the bar is
				// shorter (three characters at least, else none)
				let label = kernel ? r.short : r.name;
				const room = bw - 6;
				if (room < 24) // (no room for three characters: nothing measured)
					label = '';
				if (label && c.measureText(label).width > room) {
					let n = label.length;
					while (n > 3 && c.measureText(label.slice(0, n) + '\u2026').width > room)
						n--;
					label = n > 3 || c.measureText(label.slice(0, n) + '\u2026').width <= room ? label.slice(0, n) + '\u2026' : '';
				}
				if (label && c.measureText(label).width <= room) {
					c.fillStyle = '#000';
					c.fillText(label, a + 3, y + LANE / 2);
				}
				hits.push({ a, b: a + bw, y, r });
			}
			c.restore();
		});
		pg.legend.replaceChildren(...[...kernelNames.entries()].sort((p, q) => q[1].t - p[1].t).slice(0, 12).map(([name, v]) =>
			h('span', { class: 'kl', title: v.full }, h('span', { class: 'swatch', style: 'background:' + v.color }), ' ', name)));
		seen.lanes = { left: ob.left, width: w, from: u.scales.x.min, to: u.scales.x.max, keys };
	}
	const hitAt = (e) => {
		const box = pg.lanes.getBoundingClientRect(), x = e.clientX - box.left, y = e.clientY - box.top;
		return hits.filter((q) => x >= q.a && x <= q.b && y >= q.y && y < q.y + LANE).pop();
	};
	pg.lanes.addEventListener('mousemove', (e) => {
		const q = hitAt(e);
		const span = q ? q.r.t1 - q.r.t0 : 0;
		pg.lanes.title = q ? q.r.kind + ' ' + q.r.name + (q.r.stored && q.r.stored !== q.r.name ? '\n' + q.r.stored : '') + '\n' +
			fmtSpan(q.r.t0 - pg.origin, pg.unit, 0) + ' to ' + fmtSpan(q.r.t1 - pg.origin, pg.unit, 0) + ' (' + fmtSpan(span, pg.unit, 0) + ')' : '';
		pg.lanes.style.cursor = q ? 'zoom-in' : 'default';
	});
	pg.lanes.addEventListener('click', (e) => {
		const q = hitAt(e);
		if (q && q.r.t1 > q.r.t0)
			pg.goto(q.r.t0, q.r.t1);
	});

	async function splitPhases() {
		const a = pg.aIn.value.trim(), b = pg.bIn.value.trim();
		if (!a || !b)
			return;
		pg.phaseOut.replaceChildren(h('p', { class: 'note' }, 'splitting…'));
		try {
			// per cycle too on an ns run with a per-sample cycle counter: each
			// phase's rate over the counter's rate in that phase
			const cc = pg.cycleCounter, asked = pg.chosen.slice();
			const withCc = cc && asked.length && !asked.includes(cc) ? asked.concat([cc]) : asked;
			const r = await fetchJSON(API + '/runs/' + pg.run.id + '/phases?' + qs({ a, b, metric: withCc.join(',') || undefined }));
			pg.phaseSegs = r.segments.map(([t0, t1, name]) => ({ kind: 'overlap', name, t0, t1 }));
			const per = r.rate_unit === 'per second' ? '/s' : '/cycle';
			const ms = Object.keys(r.totals).filter((m) => m !== cc || asked.includes(cc));
			const byCycle = cc && r.rate_unit === 'per second' && cc in r.totals ? ms.filter((m) => m !== cc) : [];
			const perCycle = (p, m) => (p.metrics[cc].mean_rate ? p.metrics[m].mean_rate / p.metrics[cc].mean_rate : NaN);
			const cols = ['phase', 'duration', 'share'].concat(ms.map((m) => m + ' (mean ' + per + ')'), byCycle.map((m) => m + ' (mean /cycle)'));
			const t = h('table', { class: 'list', id: 'phase-table' }, h('tr', {}, cols.map((c) => h('th', {}, c))));
			for (const p of r.phases)
				t.append(h('tr', {}, h('td', {}, h('span', { class: 'swatch', style: 'background:' + (PHASE_COLORS[p.phase] || '#bbb') }), ' ', p.phase),
					h('td', { class: 'num' }, fmtSpan(p.duration, pg.unit, 0)),
					h('td', { class: 'num' }, (100 * p.share).toFixed(1) + '%'),
					ms.map((m) => h('td', { class: 'num' }, fmtNum(p.metrics[m].mean_rate, 0))),
					byCycle.map((m) => h('td', { class: 'num per-cycle' }, Number.isFinite(perCycle(p, m)) ? fmtNum(perCycle(p, m), 0) : 'n/a'))));
			const tail = r.tail ? 'B runs on alone for ' + fmtSpan(r.tail.duration, pg.unit, 0) + ' after its last overlap with A.'
				: 'No tail: B does not run on alone after an overlap with A.';
			// the headline: how much of A is exposed, how much B hides
			const ph = Object.fromEntries(r.phases.map((p) => [p.phase, p]));
			const onlyA = ph['only A'] ? ph['only A'].duration : 0, both = ph['A and B'] ? ph['A and B'].duration : 0;
			const headline = h('p', { id: 'phase-headline', class: 'headline' },
				'A exposed ' + fmtSpan(onlyA, pg.unit, 0) + ', hidden behind B ' + fmtSpan(both, pg.unit, 0) +
				(onlyA + both > 0 ? ': ' + (100 * both / (onlyA + both)).toFixed(1) + '% of A overlapped.' : '.'));
			// tail / B alone, per metric: B's rate in its tail over its rate alone before it
			const tail2 = ph['tail'], alone2 = ph['only B outside the tail'];
			const ratio = (x, y) => (y && Number.isFinite(x / y) ? (x / y).toFixed(3) + 'x' : 'n/a');
			const tb = tail2 && alone2 ? ms.map((m) => ratio(tail2.metrics[m].mean_rate, alone2.metrics[m].mean_rate))
				.concat(byCycle.map((m) => ratio(perCycle(tail2, m), perCycle(alone2, m)))) : null;
			if (tb)
				t.append(h('tr', { class: 'ratio' }, h('td', { colspan: 3 }, 'tail / B alone (mean rate)'), tb.map((x) => h('td', { class: 'num' }, x))));
			pg.phaseOut.replaceChildren(headline, h('p', { class: 'note' }, 'A = ' + r.a + ' (' + r.a_ranges + ' ranges), B = ' + r.b + ' (' + r.b_ranges + ' ranges). ' + tail,
				' ', h('a', { href: API + '/runs/' + pg.run.id + '/phases?' + qs({ a, b, metric: pg.chosen.join(',') || undefined, format: 'csv' }), download: 'phases.csv' }, 'CSV')), t);
			document.body.setAttribute('data-phases', r.phases.length);
		} catch (e) {
			pg.phaseSegs = [];
			pg.phaseOut.replaceChildren();
			showError(pg.phaseOut, e);
		}
		pg.plots.forEach((u) => u.redraw(false)); // (the phases shaded behind the data; the lanes redraw with the first)
		if (!pg.plots.length)
			drawLanes();
		history.replaceState(null, '', location.hash.replace(/&?(a|b)=[^&]*/g, '') + '&' + qs({ a, b }));
	}
	return { draw: drawLanes, splitPhases };
}
