// The compare page's aligned view: the hardware and the simulator run on
// one zoomable cycle axis (correlate's clock, scale and lag, as its bins
// are aligned), their kernels in two lanes with each matched pair linked
// across the lane between them, coloured by its error. Drag or the wheel
// zooms, A/D pan, W/S zoom in and out, a double-click shows it all, a
// click on a kernel (or a kernel row or scatter point of the page) zooms
// both runs to that pair.
import { fmtNum, h, plotWidth, seen } from './common.js';
import { shortName } from './plots.js';

export const errColor = (pct) => (pct === null || pct === undefined || !Number.isFinite(pct) ? '#999999'
	: Math.abs(pct) <= 10 ? '#2ca02c' : Math.abs(pct) <= 30 ? '#ff7f0e' : '#d62728');

// r: one pair of GET /api/v1/correlate?...&aligned=1 (hw_bins, sim_bins,
// bin_cycles, hw_kernels, sim_kernel_spans, links). Returns the section
// and zoomTo(link index).
export function alignedView(r) {
	const bin = r.bin_cycles, n = r.bins, unit = r.axis_unit === 'ns' ? 'ns' : 'cycles';
	const hk = (r.hw_kernels || []).map(([t0, t1, name]) => ({ t0, t1, name, short: shortName(name) }));
	const sk = (r.sim_kernel_spans || []).map(([t0, t1, name]) => ({ t0, t1, name, short: shortName(name) }));
	const links = (r.links || []).map(([hw, sim, err]) => ({ hw, sim, err }));
	const full = [0, Math.max(n * bin, ...hk.map((k) => k.t1), ...sk.map((k) => k.t1), 1)];
	const x = [], yh = [], ys = [];
	for (let i = 0; i < n; i++)
		x.push(i * bin), yh.push(r.hw_bins[i]), ys.push(r.sim_bins[i]);
	x.push(n * bin), yh.push(r.hw_bins[n - 1] ?? null), ys.push(r.sim_bins[n - 1] ?? null);

	const plotDiv = h('div', { class: 'plot aligned-plot' });
	const lanes = h('canvas', { class: 'lanes', id: 'aligned-lanes', tabindex: 0 });
	const status = h('p', { class: 'note', id: 'aligned-status' });
	const sec = h('section', { class: 'aligned', id: 'aligned' },
		h('h2', {}, 'Hardware and simulator on one ' + (unit === 'ns' ? 'time' : 'cycle') + ' axis'),
		h('p', { class: 'note' }, 'Aligned as the bins are (' + (r.hw_axis || '') + (r.lag_bins ? '; simulator shifted ' + r.lag_bins + ' bins' : '') +
			'). Lines link matched kernels: green within 10%, orange within 30%, red beyond, grey unknown. ' +
			'Drag or wheel to zoom, A/D pan, W/S zoom, double-click for all; click a kernel to zoom to its pair.'),
		h('p', { class: 'key' }, h('span', { class: 'swatch', style: 'background:#6baed6' }), ' hardware: ' + r.hw_metric + '   ',
			h('span', { class: 'swatch', style: 'background:#d62728' }), ' simulator: ' + r.sim_metric + ' (dashed)'),
		plotDiv, lanes, status);

	const stepped = uPlot.paths.stepped({ align: 1 });
	const LANE = 18, ROWS = ['hw kernels', 'matched', 'sim kernels'];
	let hits = [];
	const u = new uPlot({
		width: plotWidth(), height: 220,
		legend: { show: false }, // (the lanes sit right under the plot; the key is above it)
		scales: { x: { time: false, range: (u, a, b) => [a, b] } },
		axes: [{ label: unit + ' from the window start', labelSize: 18, values: (u, v, ax, sp, incr) => v.map((t) => fmtNum(t, incr)) },
			{ size: 70, label: 'per ' + fmtNum(bin, 0) + '-' + (unit === 'ns' ? 'ns' : 'cycle') + ' bin', labelSize: 18, values: (u, v, ax, sp, incr) => v.map((t) => fmtNum(t, incr)) }],
		series: [{ label: unit === 'ns' ? 'ns' : 'cycle', value: (u, v) => (v === null ? '' : fmtNum(v, 0)) },
			{ label: 'hardware: ' + r.hw_metric, stroke: '#6baed6', width: 3, paths: stepped, points: { show: false } },
			{ label: 'simulator: ' + r.sim_metric, stroke: '#d62728', width: 1.4, dash: [5, 3], paths: stepped, points: { show: false } }],
		cursor: { bind: { dblclick: () => () => { zoom(full[0], full[1]); return null; } } },
		hooks: { draw: [() => drawLanes()] },
	}, [x, yh, ys], plotDiv);
	u.setScale('x', { min: full[0], max: full[1] });

	function zoom(a, b) {
		a = Math.max(full[0] - (full[1] - full[0]), a);
		b = Math.min(full[1] + (full[1] - full[0]), b);
		if (b > a)
			u.setScale('x', { min: a, max: b });
	}
	// both runs to one matched pair, with a tenth of its span either side
	function zoomTo(i) {
		const l = links[i];
		if (!l || !hk[l.hw] || !sk[l.sim])
			return;
		const a = Math.min(hk[l.hw].t0, sk[l.sim].t0), b = Math.max(hk[l.hw].t1, sk[l.sim].t1), m = (b - a) / 10 || 1;
		zoom(a - m, b + m);
		lanes.focus();
	}

	function drawLanes() {
		if (!u.over || !lanes.isConnected)
			return;
		const ob = u.over.getBoundingClientRect(), box = plotDiv.getBoundingClientRect();
		const left = ob.left - box.left, w = ob.width, dpr = window.devicePixelRatio || 1;
		const W = Math.ceil(left + w), H = ROWS.length * LANE + 4;
		lanes.style.width = W + 'px';
		lanes.style.height = H + 'px';
		lanes.width = Math.round(W * dpr);
		lanes.height = Math.round(H * dpr);
		const c = lanes.getContext('2d');
		c.scale(dpr, dpr);
		c.font = '11px system-ui, sans-serif';
		c.textBaseline = 'middle';
		const px = (t) => left + u.valToPos(t, 'x');
		hits = [];
		ROWS.forEach((name, k) => {
			c.fillStyle = '#555';
			c.textAlign = 'right';
			c.fillText(name, left - 6, k * LANE + 2 + LANE / 2);
			c.fillStyle = '#f5f5f5';
			c.fillRect(left, k * LANE + 2, w, LANE - 3);
		});
		c.save();
		c.beginPath();
		c.rect(left, 0, w, H);
		c.clip();
		c.textAlign = 'left';
		const row = (ks, k, color) => ks.forEach((r, i) => {
			const a = px(r.t0), b = px(r.t1), y = k * LANE + 2;
			if (b < left || a > left + w)
				return;
			const bw = Math.max(1, b - a);
			c.globalAlpha = 0.75;
			c.fillStyle = color;
			c.fillRect(a, y, bw, LANE - 3);
			c.globalAlpha = 1;
			c.fillStyle = '#fff';
			c.fillRect(a + bw - 1, y, bw > 3 ? 1 : 0, LANE - 3);
			let label = r.short;
			const room = bw - 6;
			if (room < 24)
				label = '';
			while (label.length > 3 && c.measureText(label + '\u2026').width > room)
				label = label.slice(0, -1);
			if (label && label !== r.short)
				label += '\u2026';
			if (label && c.measureText(label).width <= room) {
				c.fillStyle = k ? '#fff' : '#000';
				c.fillText(label, Math.max(a, left) + 3, y + LANE / 2 - 1);
			}
			hits.push({ a, b: a + bw, y, side: k ? 'sim' : 'hw', i, r });
		});
		row(hk, 0, '#6baed6');
		row(sk, 2, '#d62728');
		let drawn = 0;
		links.forEach((l) => {
			const a = hk[l.hw], b = sk[l.sim];
			if (!a || !b)
				return;
			const xa = px((a.t0 + a.t1) / 2), xb = px((b.t0 + b.t1) / 2);
			if (Math.max(xa, xb) < left || Math.min(xa, xb) > left + w)
				return;
			c.strokeStyle = errColor(l.err);
			c.lineWidth = 1.5;
			c.beginPath();
			c.moveTo(xa, LANE - 1);
			c.lineTo(xb, 2 * LANE + 2);
			c.stroke();
			drawn++;
		});
		c.restore();
		const [x0, x1] = [u.scales.x.min, u.scales.x.max];
		status.textContent = fmtNum(x0, 0) + ' to ' + fmtNum(x1, 0) + ' ' + unit + '; ' + hk.length + ' hardware and ' + sk.length +
			' simulator kernels, ' + links.length + ' matched (' + drawn + ' in view)';
		seen.aligned = { xmin: x0, xmax: x1, left: ob.left, width: w, hw: hk.length, sim: sk.length, links: links.length, drawn,
			hwSpans: hk.map((k) => [k.t0, k.t1]), simSpans: sk.map((k) => [k.t0, k.t1]), linkList: links };
		document.body.setAttribute('data-aligned-draws', String(+(document.body.getAttribute('data-aligned-draws') || 0) + 1));
	}

	const hitAt = (e) => {
		const b = lanes.getBoundingClientRect(), x = e.clientX - b.left, y = e.clientY - b.top;
		return hits.filter((q) => x >= q.a && x <= q.b && y >= q.y && y < q.y + LANE).pop();
	};
	lanes.addEventListener('mousemove', (e) => {
		const q = hitAt(e);
		const l = q && links.findIndex((l) => (q.side === 'hw' ? l.hw : l.sim) === q.i);
		lanes.title = q ? (q.side === 'hw' ? 'hardware: ' : 'simulator: ') + q.r.name + '\n' + fmtNum(q.r.t0, 0) + ' to ' + fmtNum(q.r.t1, 0) + ' ' + unit +
			(l >= 0 && Number.isFinite(links[l].err) ? '\nsimulator ' + (links[l].err >= 0 ? '+' : '') + links[l].err.toFixed(1) + '% of hardware' : '') : '';
		lanes.style.cursor = q ? 'zoom-in' : 'default';
	});
	lanes.addEventListener('click', (e) => {
		const q = hitAt(e);
		if (!q)
			return;
		const l = links.findIndex((l) => (q.side === 'hw' ? l.hw : l.sim) === q.i);
		if (l >= 0)
			zoomTo(l);
		else
			zoom(q.r.t0, q.r.t1);
	});
	// wheel: zoom about the pointer; W/S zoom, A/D pan (as Perfetto)
	const span = () => u.scales.x.max - u.scales.x.min;
	const zoomBy = (f, at) => {
		const a = u.scales.x.min, b = u.scales.x.max, m = at ?? (a + b) / 2;
		zoom(m - (m - a) * f, m + (b - m) * f);
	};
	const onWheel = (e) => {
		e.preventDefault();
		const b = u.over.getBoundingClientRect();
		zoomBy(e.deltaY > 0 ? 1.25 : 0.8, u.posToVal(e.clientX - b.left, 'x'));
	};
	u.over.addEventListener('wheel', onWheel, { passive: false });
	lanes.addEventListener('wheel', (e) => {
		e.preventDefault();
		const b = u.over.getBoundingClientRect();
		zoomBy(e.deltaY > 0 ? 1.25 : 0.8, u.posToVal(e.clientX - b.left, 'x'));
	}, { passive: false });
	const onKey = (e) => {
		const k = e.key.toLowerCase();
		if (k === 'w')
			zoomBy(0.8);
		else if (k === 's')
			zoomBy(1.25);
		else if (k === 'a')
			zoom(u.scales.x.min - span() / 5, u.scales.x.max - span() / 5);
		else if (k === 'd')
			zoom(u.scales.x.min + span() / 5, u.scales.x.max + span() / 5);
		else
			return;
		e.preventDefault();
	};
	lanes.addEventListener('keydown', onKey);
	plotDiv.tabIndex = 0;
	plotDiv.addEventListener('keydown', onKey);
	return { sec, zoomTo, destroy: () => u.destroy() };
}
