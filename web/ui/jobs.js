// The jobs (#/jobs) and one job (#/job/NAME?a=&b=&align=&instances=): its
// ranks stacked on one time axis (the figure GET /api/v1/jobs/{job}/figure.svg
// draws, the same as `cyclescope plot --job`), the per-rank table, the
// summary and the instances with the largest start skew (docs/phases.md).
import { API, authed, fetchJSON, fetchText, fmtTime, h, qs, show } from './common.js';

export async function jobsPage() {
	document.title = 'cyclescope: jobs';
	const jobs = await fetchJSON(API + '/jobs');
	const table = h('table', { class: 'list', id: 'jobs' }, h('tr', {}, ['job', 'runs', 'ranks'].map((c) => h('th', {}, c))));
	for (const j of jobs)
		table.append(h('tr', { 'data-job': j.job },
			h('td', {}, h('a', { href: '#/job/' + encodeURIComponent(j.job) }, j.job)),
			h('td', { class: 'num' }, j.runs),
			h('td', {}, j.ranks.map((r) => r.rank).join(', '))));
	show(h('h1', {}, 'Jobs'), jobs.length ? table
		: h('p', {}, 'No runs are labelled with a job: import each rank with --job J --rank N, or record with CYCLESCOPE_JOB set.'));
}

export async function jobPage(job, params) {
	document.title = 'cyclescope: job ' + job;
	const a = params.get('a') || 'kernel:nccl*', b = params.get('b') || '*gemm*';
	const align = params.get('align') || 'collectives', instances = params.get('instances') || '20';
	const field = (id, value, size) => h('input', { id, value, size });
	const fa = field('job-a', a, 18), fb = field('job-b', b, 18), fi = field('job-instances', instances, 5);
	const fal = h('select', { id: 'job-align' }, ['collectives', 'none'].map((v) => h('option', { value: v, selected: v === align }, v)));
	const go = h('button', {
		id: 'job-go',
		onclick: () => (location.hash = '#/job/' + encodeURIComponent(job) + '?' + qs({ a: fa.value, b: fb.value, align: fal.value, instances: fi.value })),
	}, 'Analyse');
	const q = qs({ a, b, align });
	const base = API + '/jobs/' + encodeURIComponent(job);
	const [res, svg] = await Promise.all([fetchJSON(base + '/phases?' + q), fetchText(base + '/figure.svg?' + qs({ a, b, align, instances }))]);
	const fig = h('div', { id: 'job-figure', class: 'figure' });
	fig.innerHTML = svg; // the daemon's own SVG, its text escaped there
	const save = h('a', { id: 'job-svg', download: 'job-' + job + '.svg', href: authed(base + '/figure.svg?' + qs({ a, b, align, instances })) }, 'save the figure as SVG');
	const pct = (v) => (v === null || v === undefined ? '' : (100 * v).toFixed(1) + '%');
	const cols = ['rank', 'run', 'host', 'A time', 'exposed', 'overlap', 'waited', 'times last', 'clock offset'];
	const ranks = h('table', { class: 'list', id: 'job-ranks' }, h('tr', {}, cols.map((c) => h('th', {}, c))));
	for (const r of res.ranks) {
		const aTime = r.phases['only A'] + r.phases['A and B'];
		ranks.append(h('tr', { 'data-rank': r.rank },
			h('td', { class: 'num' }, r.rank), h('td', {}, h('a', { href: '#/run/' + r.run }, r.run)), h('td', {}, r.host || '-'),
			h('td', { class: 'num' }, fmtTime(aTime, 0)), h('td', { class: 'num' }, fmtTime(r.exposed_ns, 0)),
			h('td', { class: 'num' }, pct(r.overlap_fraction)), h('td', { class: 'num' }, fmtTime(r.wait_ns, 0)),
			h('td', { class: 'num' }, r.times_last), h('td', { class: 'num' }, r.offset_ns + ' ns')));
	}
	const top = [...res.collectives].sort((x, y) => y.start_skew_ns - x.start_skew_ns).slice(0, 10);
	const skews = h('table', { class: 'list', id: 'job-skews' },
		h('tr', {}, ['collective', 'instance', 'start skew', 'straggler', 'others waited'].map((c) => h('th', {}, c))),
		top.map((c) => h('tr', {}, h('td', {}, c.collective), h('td', { class: 'num' }, c.index),
			h('td', { class: 'num' }, fmtTime(c.start_skew_ns, 0)), h('td', { class: 'num' }, 'rank ' + c.straggler_rank),
			h('td', { class: 'num' }, fmtTime(c.wait_ns.reduce((s, v) => s + v, 0), 0)))));
	const s = res.summary;
	const last = s.most_often_last.map((x) => 'rank ' + x.rank + ' (' + x.times + ' of ' + s.instances + ')').join(', ');
	show(h('h1', {}, 'Job ' + job),
		h('p', { class: 'form' }, 'A ', fa, ' B ', fb, ' clocks ', fal, ' instances drawn ', fi, ' ', go),
		h('p', { id: 'job-headline' }, res.ranks.length + ' ranks, ' + s.instances + ' collective instances; mean start skew ',
			fmtTime(s.mean_start_skew_ns || 0, 0), ', largest ', fmtTime(s.max_start_skew_ns, 0),
			last ? '; most often last: ' + last : '', res.align === 'collectives' ? '; clocks aligned on the collectives\u2019 ends' : '; clocks as stored'),
		res.warnings.length ? h('ul', { class: 'warnings', id: 'job-warnings' }, res.warnings.map((w) => h('li', {}, w))) : null,
		fig, h('p', {}, save),
		h('h2', {}, 'Ranks'), ranks,
		h('h2', {}, 'Largest start skews'), skews);
}
