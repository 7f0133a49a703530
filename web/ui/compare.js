// A correlation request built from two runs (#/compare).
import { API, fetchJSON, fetchText, fmtExact, h, qs, show, showError } from './common.js';
import { figureButtons } from './plots.js';
import { alignedView } from './aligned.js';

export const CORR_FIELDS = [
	['hw_metric', 'hardware metric expression', 'lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum'],
	['sim_metric', 'simulator metric expression', 'Ltworeadmiss + Ltworeadhit'],
	['hw_window', 'hardware window', 'whole run; T0:T1, kernel:*gemm*#2, #N'],
	['sim_window', 'simulator window', 'whole run; T0:T1, sim-kernel:*#1, #N'],
	['bin_cycles', 'bin width (cycles)', 'default: the longer median sample'],
	['max_lag', 'lag search (± bins)', '0'],
	['hw_clock_mhz', 'hardware clock (MHz)', "default: the run's cycle counter, else its clock"],
	['sim_clock', 'simulator clock (MHz or core/l2/icnt/dram)', 'default: cycles compared 1:1'],
];

export async function comparePage(params) {
	document.title = 'cyclescope: compare';
	const runs = await fetchJSON(API + '/runs');
	// without a choice in the address: the hardware and simulator runs
	// whose names share the longest leading word (qv100-hw with
	// qv100-visualizer, not the first H100 run with a QV100 simulation)
	const word = (r) => String(r.name).toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)[0] || '';
	let best = null;
	for (const a of runs.filter((r) => r.kind === 'hw'))
		for (const b of runs.filter((r) => r.kind === 'sim'))
			if (word(a) && word(a) === word(b) && (!best || b.id > best[1].id))
				best = [a, b];
	const pick = (name, kind) => params.get(name) || (best ? best[kind === 'hw' ? 0 : 1].id
		: (runs.find((r) => r.kind === kind) || runs[0] || {}).id ?? '');
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

	let aligned = null;
	// a kernel pair picked in the table or the scatter: its row marked, both runs zoomed to it
	function pickPair(sec, i, al) {
		sec.querySelectorAll('tr.picked').forEach((t) => t.classList.remove('picked'));
		const tr = sec.querySelector('tr[data-pair="' + i + '"]');
		if (tr)
			tr.classList.add('picked');
		al.zoomTo(i);
		document.getElementById('aligned').scrollIntoView({ block: 'nearest' });
	}
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
			// both runs on one axis first (the first pair's): the binned
			// request with the kernels of both sides and their matches
			const binned = Object.assign({}, p, { kernels: undefined });
			let al = null;
			try {
				const ar = await fetchJSON(API + '/correlate?' + qs(Object.assign({}, binned, { format: 'json', aligned: 1 })));
				if (aligned)
					aligned.destroy();
				aligned = al = ar.length ? alignedView(ar[0]) : null;
				if (al)
					out.append(al.sec);
			} catch (e) {
				showError(out, e);
			}
			for (let i = 0; i < res.length; i++) {
				const sec = p.kernels ? kernelResult(res[i]) : binnedResult(res[i]);
				out.append(sec);
				await figure(sec, API + '/correlate?' + qs(Object.assign({}, p, { format: 'svg', pair: i })),
					'correlation-' + (p.kernels ? 'kernels-' : '') + i);
				if (p.kernels && i === 0 && al) {
					// a row or a scatter point zooms both runs to its pair (the
					// points are the pairs compared: alone on both sides, both > 0)
					const pts = res[i].per_kernel.map((k, j) => (!k.shared && k.hw > 0 && k.sim > 0 ? j : -1)).filter((j) => j >= 0);
					sec.querySelectorAll('tr[data-pair]').forEach((tr) => tr.addEventListener('click', () => pickPair(sec, +tr.dataset.pair, al)));
					sec.querySelectorAll('.figure circle[data-i]').forEach((c) => c.addEventListener('click', () => pickPair(sec, pts[+c.dataset.i], al)));
				}
			}
			if (p.kernels) {
				// kernel mode shows the binned figure too
				const sec = h('section', { class: 'pair' }, h('h2', {}, 'binned: ' + (p.hw_metric || '') + '  vs  ' + (p.sim_metric || '')));
				out.append(sec);
				await figure(sec, API + '/correlate?' + qs(Object.assign({}, binned, { format: 'svg', pair: 0 })), 'correlation-0');
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

export function statsTable(rows) {
	return h('table', { class: 'stats' }, rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))));
}
export const pct = (v) => (v === null || v === undefined ? 'n/a' : (+v).toFixed(2) + '%');
export const fix = (v, d) => (v === null || v === undefined ? 'n/a' : (+v).toFixed(d));

export function binnedResult(r) {
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
export async function figure(sec, url, name) {
	const div = h('div', { class: 'figure' });
	sec.append(h('p', {}, figureButtons(() => url, () => name, sec)), div);
	const svg = await fetchText(url);
	div.innerHTML = svg.replace(/^<\?xml[^>]*>\s*/, '');
}

export function kernelResult(r) {
	const t = h('table', { class: 'list' }, h('tr', {}, ['kernel', 'uid', 'hw', 'sim', 'error', 'matched by'].map((c) => h('th', {}, c))));
	for (const [i, k] of r.per_kernel.entries()) {
		const uid = k.uid >= 0 ? String(k.uid) : '';
		// a simulator log that numbers its kernels ("kernel 1") says nothing
		// the hardware side's name does not say better
		const sname = k.demangled || k.name;
		const label = /^kernel \d+$/.test(sname) && k.hw_demangled ? sname + ': ' + k.hw_demangled : sname;
		if (k.shared) {
			t.append(h('tr', { class: 'shared', title: k.note || '', 'data-pair': i }, h('td', { title: k.name }, label), h('td', { class: 'num' }, uid),
				h('td', { colspan: 3 }, 'shared: ' + (k.note || 'ran beside other kernels')), h('td', {}, k.matched_by)));
			continue;
		}
		t.append(h('tr', { 'data-pair': i, title: 'click: both runs zoomed to this pair' }, h('td', { title: k.name }, label), h('td', { class: 'num' }, uid), h('td', { class: 'num' }, fmtExact(k.hw)),
			h('td', { class: 'num' }, fmtExact(k.sim)),
			h('td', { class: 'num' }, k.hw ? pct((100 * (k.sim - k.hw)) / k.hw) : 'n/a'), h('td', {}, k.matched_by)));
	}
	const warn = (r.warnings || []).map((w) => h('p', { class: 'warn' }, 'warning: ' + w));
	return h('section', { class: 'kernels' }, h('h2', {}, 'kernel level: ' + r.hw_metric + '  vs  ' + r.sim_metric),
		statsTable([['kernels matched / compared', r.kernels + ' / ' + r.compared], ['Pearson r', fix(r.pearson, 4)], ['MAPE', pct(r.mape_pct)],
			['aggregate error', pct(r.aggregate_error_pct)]]), ...warn, t);
}
