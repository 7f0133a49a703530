// A suite correlation (#/suite): hardware repeats against simulator
// configurations over every kernel of every application, as
// GET /api/v1/correlate?suite=1 answers it (docs/correlation.md): the
// statistics per configuration, the scatter figure, and the pairs; a
// click on a point shows that kernel's two sides.
import { API, fetchText, fetchJSON, h, parseCSV, show, showError } from './common.js';
import { figure, fix, pct } from './compare.js';

const lines = (t) => t.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

// The request from the form's text: a line per side or statistic
// ("HW_EXPR" for both sides, or "HW_EXPR | SIM_EXPR").
function request(f) {
	const q = new URLSearchParams();
	q.set('suite', '1');
	for (const l of lines(f.hw.value)) q.append('hw', l);
	for (const l of lines(f.sim.value)) q.append('sim', l);
	for (const c of f.sim_config.value.split(',').map((x) => x.trim()).filter(Boolean)) q.append('sim_config', c);
	for (const l of lines(f.stats.value)) {
		const [a, b] = l.split('|').map((x) => x.trim());
		if (b) q.append('hw_metric', a), q.append('sim_metric', b);
		else q.append('metric', a);
	}
	if (f.app_map.value.trim()) q.set('app_map', f.app_map.value);
	if (f.hw_clock_mhz.value.trim()) q.set('hw_clock_mhz', f.hw_clock_mhz.value.trim());
	return q;
}

// The form's text from a request (the page's own URL).
function fill(f, p) {
	f.hw.value = p.getAll('hw').join('\n');
	f.sim.value = p.getAll('sim').join('\n');
	f.sim_config.value = p.getAll('sim_config').join(', ');
	const hm = p.getAll('hw_metric'), sm = p.getAll('sim_metric');
	f.stats.value = p.getAll('metric').concat(hm.map((m, i) => m + ' | ' + (sm[i] || ''))).join('\n');
	f.app_map.value = p.get('app_map') || '';
	f.hw_clock_mhz.value = p.get('hw_clock_mhz') || '';
}

function statsTable(stat) {
	const cols = ['configuration', 'pairs', 'Pearson r', 'Spearman ρ', 'MAPE', 'mean error', 'RPD', 'within 1%', 'within 10%', 'aggregate error'];
	return h('table', { class: 'list suite-stats' }, h('tr', {}, cols.map((c) => h('th', {}, c))),
		stat.configurations.map((c) => h('tr', {}, h('td', {}, c.configuration), h('td', { class: 'num' }, String(c.pairs)),
			h('td', { class: 'num' }, fix(c.pearson, 4)), h('td', { class: 'num' }, fix(c.spearman, 4)), h('td', { class: 'num' }, pct(c.mape_pct)),
			h('td', { class: 'num' }, pct(c.mean_error_pct)), h('td', { class: 'num' }, pct(c.rpd_pct)),
			h('td', { class: 'num' }, String(c.within_1pct)), h('td', { class: 'num' }, String(c.within_10pct)),
			h('td', { class: 'num' }, pct(c.aggregate_error_pct)))));
}

// The pairs of one statistic, worst first (500 at most), each row the
// two sides of one kernel.
const SHOWN = 500;
function pairTable(rows, stat) {
	const mine = rows.filter((r) => r.statistic === stat).map((r, i) => Object.assign({ at: i }, r));
	mine.sort((a, b) => Math.abs(+b.error_pct || 0) - Math.abs(+a.error_pct || 0));
	const t = h('table', { class: 'list', id: 'pair-table' }, h('tr', {}, ['configuration', 'application', 'kernel', 'launch', 'hardware', 'simulator', 'error'].map((c) => h('th', {}, c))));
	for (const r of mine.slice(0, SHOWN))
		t.append(h('tr', { 'data-key': r.configuration + '\u0001' + r.hw_app + '\u0001' + r.kernel + '\u0001' + r.launch },
			h('td', {}, r.configuration), h('td', { title: 'simulator: ' + r.sim_app }, r.hw_app), h('td', {}, r.kernel),
			h('td', { class: 'num' }, r.launch), h('td', { class: 'num' }, r.hw), h('td', { class: 'num' }, r.sim),
			h('td', { class: 'num' }, r.error_pct === '' ? 'n/a' : pct(+r.error_pct))));
	return [h('p', { class: 'note' }, mine.length > SHOWN ? 'the ' + SHOWN + ' of ' + mine.length + ' pairs furthest from the hardware' : mine.length + ' pairs, furthest from the hardware first'), t];
}

// The kernel behind a clicked point, its two sides side by side.
function detail(r) {
	const side = (title, run, app, v, extra) => h('div', { class: 'side' }, h('h3', {}, title),
		h('p', {}, h('a', { href: '#/run/' + run }, 'run ' + run), ' · ', app), h('p', { class: 'big' }, v), extra || '');
	const spread = +r.repeats > 1 ? h('p', { class: 'note' }, r.repeats + ' repeats: ' + r.hw_min + ' to ' + r.hw_max) : '';
	return h('div', { id: 'pair-detail' }, h('h2', {}, r.kernel + ' #' + r.launch + ' (' + r.configuration + ')'),
		h('p', { class: 'note' }, r.statistic + (r.error_pct === '' ? '' : ': simulator ' + pct(+r.error_pct) + ' off')),
		h('div', { class: 'sides' }, side('hardware', r.hw_run, r.hw_app, r.hw, spread), side('simulator', r.sim_run, r.sim_app, r.sim)));
}

export async function suitePage(params) {
	document.title = 'cyclescope: suite';
	const area = (name, rows, hint) => h('textarea', { name, id: name, rows, placeholder: hint });
	const f = {
		hw: area('hw', 2, 'a repeat per line: ids, names, GLOBs or job:LABEL (h100=job:h100-a)'),
		sim: area('sim', 2, 'a configuration per line: ids, names, GLOBs or job:LABEL'),
		sim_config: h('input', { name: 'sim_config', id: 'sim_config', placeholder: 'configurations inside the runs: QV100-SASS, QV100-PTX' }),
		stats: area('stats', 3, 'a statistic per line: EXPR, or HW_EXPR | SIM_EXPR'),
		app_map: area('app_map', 2, 'optional: HW_APP,SIM_APP per line'),
		hw_clock_mhz: h('input', { name: 'hw_clock_mhz', id: 'hw_clock_mhz', placeholder: 'when ns meets cycles' }),
	};
	fill(f, params);
	const field = (label, e, wide) => h('div', { class: wide ? 'wide' : undefined }, h('label', {}, label), e);
	const out = h('div', { id: 'result' });
	const form = h('form', { class: 'compare' },
		field('hardware (repeats)', f.hw), field('simulator (configurations)', f.sim),
		field('configurations inside the simulator runs', f.sim_config), field('hardware clock (MHz)', f.hw_clock_mhz),
		field('statistics', f.stats, true), field('application map', f.app_map, true),
		h('div', { class: 'wide' }, h('button', { type: 'submit', id: 'suite-correlate' }, 'Correlate the suite')));
	show(h('h1', {}, 'Correlate a suite: every kernel of every application'),
		h('p', { class: 'note' }, 'Applications pair by name (or the map), kernels by name and launch order. Method: docs/correlation.md, Suites.'),
		form, out);

	async function run() {
		const q = request(f);
		history.replaceState(null, '', '#/suite?' + q.toString());
		out.replaceChildren(h('p', { class: 'note' }, 'correlating…'));
		try {
			const res = await fetchJSON(API + '/correlate?' + q.toString() + '&format=json');
			const csv = parseCSV(await fetchText(API + '/correlate?' + q.toString() + '&format=csv'));
			const rows = csv.rows.map((r) => Object.fromEntries(csv.header.map((c, i) => [c, r[i]])));
			out.replaceChildren(h('p', { class: 'links' },
				h('a', { href: '/report?' + q.toString(), id: 'suite-report-link' }, 'report (HTML)'),
				h('a', { href: API + '/correlate?' + q.toString() + '&format=csv', download: 'suite-pairs.csv' }, 'pairs CSV'),
				h('a', { href: API + '/correlate?' + q.toString() }, 'JSON')),
				h('p', { class: 'note' }, res.hw_runs + ' hardware runs, ' + res.sim_runs + ' simulator runs; ' + res.applications.length + ' applications paired'));
			for (const w of res.warnings)
				out.append(h('p', { class: 'warn' }, 'warning: ' + w));
			for (const st of res.statistics)
				out.append(h('h2', {}, st.statistic), statsTable(st));
			const fig = h('section', { class: 'suite-figure' });
			out.append(fig);
			await figure(fig, API + '/correlate?' + q.toString() + '&format=svg', 'suite');
			const box = h('div', { id: 'pair-box' });
			const tableAt = h('div', {});
			out.append(box, h('h2', {}, 'Pairs'), tableAt);
			let current = null;
			const showPairs = (stat) => {
				if (stat !== current)
					tableAt.replaceChildren(...pairTable(rows, stat)), (current = stat);
			};
			showPairs(res.statistics.length ? res.statistics[0].statistic : '');
			// a point: panel = statistic, series = configuration, data-i = its pair
			fig.querySelectorAll('.figure > svg > svg').forEach((panel, si) => {
				panel.querySelectorAll('g.series[data-s]').forEach((g) => {
					const ci = +g.getAttribute('data-s'); // a configuration with no pairs draws no group
					g.addEventListener('click', (ev) => {
						const c = ev.target.closest('circle[data-i]');
						if (!c) return;
						const st = res.statistics[si], cfg = st.configurations[ci].configuration;
						const mine = rows.filter((r) => r.statistic === st.statistic && r.configuration === cfg);
						const r = mine[+c.getAttribute('data-i')];
						if (!r) return;
						box.replaceChildren(detail(r));
						showPairs(st.statistic);
						const key = r.configuration + '\u0001' + r.hw_app + '\u0001' + r.kernel + '\u0001' + r.launch;
						tableAt.querySelectorAll('tr.picked').forEach((t) => t.classList.remove('picked'));
						const tr = [...tableAt.querySelectorAll('tr[data-key]')].find((t) => t.getAttribute('data-key') === key);
						if (tr) tr.classList.add('picked');
						document.body.setAttribute('data-picked', r.hw_app + ' ' + r.kernel + ' #' + r.launch);
					});
					g.style.cursor = 'pointer';
				});
			});
			document.body.setAttribute('data-plots', '1');
			document.body.setAttribute('data-correlated', String(res.statistics.length));
		} catch (e) {
			out.replaceChildren();
			showError(out, e);
		}
	}
	form.addEventListener('submit', (e) => {
		e.preventDefault();
		run();
	});
	if (params.getAll('hw').length && params.getAll('sim').length)
		await run();
}
