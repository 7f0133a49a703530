// The runs list (#/).
import { API, fetchJSON, fmtSpan, h, qs, show } from './common.js';

export async function runsPage() {
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
