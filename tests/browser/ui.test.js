// The UI in headless Chromium (tests/ui.sh starts the daemon): the runs
// list, a run's plots with data, zoom issuing a new bucketed request for
// the zoomed span, the CSV links of the view, ranges in lanes (click to
// zoom), the compare page against the API's own answer, an error shown,
// and no console errors anywhere; with CS_INJECT, a growing run followed
// live (badge, updates, lag, bound, pause, zoom, end) and the collectors
// page with its triggers. One TAP line per check; numbering goes on from
// CS_N. Environment: CS_URL, CS_PW (playwright-core's directory),
// CS_CHROME, CS_ARTIFACTS; CS_INJECT, CS_LIB, CS_SOCK (the test source's
// processes: tests/tools/inject, the collector library, the daemon's socket).
'use strict';
const { chromium } = require(process.env.CS_PW);
const BASE = process.env.CS_URL;
const ART = process.env.CS_ARTIFACTS;
let n = +(process.env.CS_N || 0), fails = 0;

function check(cond, what, detail) {
	n++;
	if (cond) {
		console.log('ok ' + n + ' - ' + what);
	} else {
		fails++;
		console.log('not ok ' + n + ' - ' + what);
		if (detail !== undefined)
			console.log('#   ' + String(typeof detail === 'string' ? detail : JSON.stringify(detail)).slice(0, 1500).replace(/\n/g, '\n#   '));
	}
}

const params = (u) => Object.fromEntries(new URL(u, 'http://x').searchParams);
// A process of the collector's test source (tests/live.sh's app): the
// injection library loaded by tests/tools/inject.c, living SECONDS,
// streaming to the daemon's socket; ENV on top.
const apps = [];
function app(seconds, env) {
	const p = require('child_process').spawn(process.env.CS_INJECT, [process.env.CS_LIB, String(seconds)], {
		stdio: 'ignore',
		env: Object.assign({}, process.env, { CYCLESCOPE_SOURCE: 'test', CYCLESCOPE_SOCKET: process.env.CS_SOCK, CYCLESCOPE_TEST_DEVICES: '1',
			CYCLESCOPE_METRICS: 'lts__t_sectors.sum,dram__bytes_read.sum', CYCLESCOPE_INTERVAL_NS: '20000000' }, env),
	});
	apps.push(p);
	return p;
}
process.on('exit', () => apps.forEach((p) => p.exitCode === null && p.kill()));
let page;
// A fresh document for each page visited: a hash change within one
// document would leave the last page's data-* marks to be waited on.
async function nav(url) {
	await page.goto('about:blank');
	await page.goto(url);
}

(async () => {
	const browser = await chromium.launch({ executablePath: process.env.CS_CHROME, args: ['--no-sandbox'] });
	page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
	const problems = [], series = [];
	page.on('console', (m) => m.type() === 'error' && problems.push('console: ' + m.text()));
	page.on('pageerror', (e) => problems.push('page error: ' + e.message));
	page.on('request', (r) => r.url().includes('/series.csv') && series.push(r.url()));
	page.setDefaultTimeout(60000);
	const expected404 = []; // errors the test provokes on purpose

	// --- the runs list ---
	await page.goto(BASE + '/');
	await page.waitForSelector('body[data-ready="1"]');
	const rows = await page.$$eval('#runs tr[data-run]', (trs) => trs.map((t) => t.textContent));
	check(rows.length === 11 && rows[0].includes('example') && rows[1].includes('sim') && rows[2].includes('simk') && rows[3].includes('phases') && rows[4].includes('wide'),
		'the runs page lists the 11 runs', rows);
	await page.screenshot({ path: ART + '/ui-runs.png', fullPage: true });

	// --- a run: plots with data ---
	series.length = 0;
	await page.click('#runs a:text-is("example")');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const run = await (await page.request.get(BASE + '/api/v1/runs/example')).json();
	const full = [run.t_min, run.t_max + 1];
	const first = series[0] ? params(series[0]) : {};
	const points = +(await page.getAttribute('body', 'data-points'));
	const defaults = Object.fromEntries((process.env.CS_DEFAULTS || '').split(';').map((x) => x.split('=')));
	check(series.length === 1 && first.metric === defaults[run.id] && +first.buckets >= 10 &&
		first.from === '@' + full[0] && first.to === '@' + full[1],
	'the run page opens on the two metrics that vary most, SM activity first (' + defaults[run.id] + '), bucketed, over the whole run', series);
	check((await page.getAttribute('body', 'data-plots')) === '2' && points > 1000 &&
		(await page.$$('.plot canvas')).length >= 2, 'two plots drawn, with ' + points + ' buckets of data');

	// pick lts__t_sectors.sum alone through the metric picker
	series.length = 0;
	await page.fill('#metric-filter', 'lts__t_sectors');
	await page.selectOption('#metric-picker', ['lts__t_sectors.sum']);
	await page.click('#plot');
	await page.waitForSelector('body[data-loads="2"][data-plots="1"]');
	check(series.length === 1 && params(series[0]).metric === 'lts__t_sectors.sum',
		'the metric picker re-plots the chosen metric', series);
	await page.screenshot({ path: ART + '/ui-run.png', fullPage: true });

	// --- zoom: drag across the plot from 25% to 50% of its width ---
	series.length = 0;
	const over = await page.$('.plot .u-over');
	const box = await over.boundingBox();
	const y = box.y + box.height / 2;
	await page.mouse.move(box.x + box.width * 0.25, y);
	await page.mouse.down();
	await page.mouse.move(box.x + box.width * 0.4, y, { steps: 5 });
	await page.mouse.move(box.x + box.width * 0.5, y, { steps: 5 });
	await page.mouse.up();
	await page.waitForSelector('body[data-loads="3"]');
	const z = series.length ? params(series[series.length - 1]) : {};
	const span = full[1] - full[0];
	const near = (v, want) => Math.abs(v - want) < span * 0.02;
	const stored = (t) => +String(t).replace(/^@/, '');
	check(series.length === 1 && +z.buckets >= 10 && near(stored(z.from), full[0] + span * 0.25) && near(stored(z.to), full[0] + span * 0.5),
		'zoom issues one new bucketed request for the zoomed span (' + z.from + '..' + z.to + ', ' + z.buckets + ' buckets)', series);
	const body = await (await page.request.get(series[series.length - 1])).text();
	const lines = body.trim().split('\n');
	check(lines[0].startsWith('t0,t1,lts__t_sectors.sum:min') && lines.length - 1 === +z.buckets &&
		+lines[1].split(',')[0] === stored(z.from), 'the zoomed request answers ' + z.buckets + ' buckets starting at the zoom', lines.slice(0, 3));
	const link = await page.getAttribute('#csv-buckets', 'href');
	const raw = params(await page.getAttribute('#csv-raw', 'href'));
	// the page asks for stored times ('@'); what it shows counts from the run start
	const relOf = (t) => String(stored(t) - run.origin);
	const bl = params(link);
	check(bl.from === relOf(z.from) && bl.to === relOf(z.to) && bl.buckets === z.buckets && raw.from === bl.from && raw.to === bl.to && raw.buckets === undefined,
		'the CSV links are exactly the view, from the run start: its buckets, and its raw samples', { link, raw });
	const linkBody = await (await page.request.get(BASE + link)).text();
	check(linkBody === body, 'the CSV link (run-relative times) answers what the page fetched (stored times)', linkBody.slice(0, 200));
	const url = new URL(page.url().replace('#', ''));
	check(url.searchParams.get('from') === relOf(z.from) && url.searchParams.get('to') === relOf(z.to), 'the page URL keeps the view, from the run start (linkable)', page.url());
	// the round trip: that address opened anew asks for the same stored window
	series.length = 0;
	await nav(page.url());
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	check(series.length === 1 && params(series[0]).from === z.from && params(series[0]).to === z.to,
		'the page URL opened again shows the same window', series);
	await page.screenshot({ path: ART + '/ui-zoomed.png', fullPage: true });

	// double-click: back to the whole run, fetched again
	series.length = 0;
	await page.dblclick('.plot .u-over');
	await page.waitForSelector('body[data-loads="2"]');
	const r = series.length ? params(series[0]) : {};
	check(r.from === '@' + full[0] && r.to === '@' + full[1], 'double-click resets to the whole run with a new request', series);
	// Perfetto's keys: W zooms in about the middle, D pans right by a fifth
	series.length = 0;
	await page.keyboard.press('w');
	await page.waitForSelector('body[data-loads="3"]');
	const kw = series.length ? params(series[series.length - 1]) : {};
	const mid = (full[0] + full[1]) / 2, half = 0.8 * (full[1] - full[0]) / 2;
	check(stored(kw.from) === Math.floor(mid - half) && stored(kw.to) === Math.ceil(mid + half), 'W zooms in to 80% of the view about its middle', { kw, mid, half });
	series.length = 0;
	await page.keyboard.press('d');
	await page.waitForSelector('body[data-loads="4"]');
	const kd = series.length ? params(series[series.length - 1]) : {};
	const wv = stored(kw.to) - stored(kw.from);
	// (by a fifth, or up to the run's end)
	const wantTo = Math.min(stored(kw.to) + wv / 5, full[1]);
	check(Math.abs(stored(kd.to) - wantTo) <= 1 && Math.abs(stored(kd.to) - stored(kd.from) - wv) <= 2, 'D pans right by a fifth of the view, up to the run\'s end', { kw, kd, wantTo });
	series.length = 0;
	const ov0 = await (await page.$('.plot .u-over')).boundingBox();
	await page.mouse.move(ov0.x + ov0.width / 2, ov0.y + ov0.height / 2);
	await page.mouse.wheel(0, 200);
	await page.waitForSelector('body[data-loads="5"]');
	const kz = series.length ? params(series[series.length - 1]) : {};
	check(stored(kz.to) - stored(kz.from) > 1.2 * wv, 'the wheel zooms out about the pointer', { kd, kz });

	// --- ranges under the plot: the simulator run's kernels ---
	series.length = 0;
	await nav(BASE + '/#/run/sim?metric=Ltworeadhit,Ltworeadmiss');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const status = await page.textContent('#status');
	const lanes = await page.$eval('#lanes', (c) => ({ h: c.clientHeight, w: c.clientWidth }));
	check(/3 ranges in view/.test(status) && lanes.h > 10 && lanes.w > 300, 'the 3 sim-kernel ranges are drawn in a lane under the plots', { status, lanes });
	// click in the middle of kernel 2 ([6000, 14500) of a 0..20001 run)
	const sim = await (await page.request.get(BASE + '/api/v1/runs/sim')).json();
	await (await page.$('#lanes')).scrollIntoViewIfNeeded();
	const lb = await (await page.$('#lanes')).boundingBox();
	const ov = await (await page.$('.plot .u-over')).boundingBox();
	const at = ov.x + ((10000 - sim.t_min) / (sim.t_max + 1 - sim.t_min)) * ov.width;
	series.length = 0;
	await page.mouse.click(at, lb.y + 10);
	await page.waitForSelector('body[data-loads="2"]');
	const k = series.length ? params(series[0]) : {};
	check(k.from === '@6000' && k.to === '@14500', 'clicking a kernel in the lane zooms to exactly its span', series);
	await page.screenshot({ path: ART + '/ui-ranges.png', fullPage: true });

	// --- compare ---
	await nav(BASE + '/#/compare');
	await page.waitForSelector('body[data-page="compare"][data-ready="1"]');
	await page.selectOption('#hw', { label: '3: simk (sim)' });
	await page.selectOption('#sim', { label: '2: sim (sim)' });
	await page.fill('#hw_metric', 'L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]');
	await page.fill('#sim_metric', 'Ltworeadmiss + Ltworeadhit');
	await page.fill('#bin_cycles', '2000');
	await page.click('#correlate');
	await page.waitForSelector('body[data-correlated="1"]');
	const api = await (await page.request.get(BASE + '/api/v1/correlate?hw=3&sim=2&bin_cycles=2000&hw_metric=' +
		encodeURIComponent('L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]') + '&sim_metric=' + encodeURIComponent('Ltworeadmiss + Ltworeadhit'))).json();
	const shown = await page.$$eval('#result table.stats tr', (trs) => Object.fromEntries(trs.map((t) => [t.children[0].textContent, t.children[1].textContent])));
	check(shown['Pearson r'] === api[0].pearson.toFixed(4) && shown['bins'].startsWith(api[0].bins + ' x 2000'),
		'the compare page shows what /api/v1/correlate answers (r ' + shown['Pearson r'] + ', ' + shown['bins'] + ')', { shown, api });
	check((await page.$$('#result .figure svg')).length === 1 && (await page.getAttribute('body', 'data-plots')) === '1',
		'the aligned bins are plotted (an inline SVG figure)');
	// Both series visible where they overlap: the figure rasterised in the
	// page, and pixels of the hardware colour and of the simulator colour
	// counted inside the first panel's plot area.
	const both = await page.evaluate(async () => {
		const svg = document.querySelector('#result .figure svg');
		const clip = svg.querySelector('clipPath rect');
		const [x, y, w, hh] = ['x', 'y', 'width', 'height'].map((a) => +clip.getAttribute(a));
		const img = new Image();
		img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(new XMLSerializer().serializeToString(svg));
		await img.decode();
		const c = document.createElement('canvas');
		c.width = svg.viewBox.baseVal.width;
		c.height = svg.viewBox.baseVal.height;
		const g = c.getContext('2d');
		g.drawImage(img, 0, 0);
		const d = g.getImageData(x, y, w, hh).data;
		const near = (i, r, gg, b) => Math.abs(d[i] - r) < 40 && Math.abs(d[i + 1] - gg) < 40 && Math.abs(d[i + 2] - b) < 40;
		let hw = 0, sim = 0;
		for (let i = 0; i < d.length; i += 4) {
			hw += near(i, 0x6b, 0xae, 0xd6);
			sim += near(i, 0xd6, 0x27, 0x28);
		}
		return { hw, sim, panels: svg.querySelectorAll('g.panel').length, titles: [...svg.querySelectorAll('.axis-title')].map((t) => t.textContent) };
	});
	check(both.hw > 200 && both.sim > 100 && both.panels === 3 && both.titles.some((t) => t === 'sim - hw') && both.titles.some((t) => t === 'sim vs hw [%]'),
		'the compare figure shows hardware and simulator both (' + both.hw + ' and ' + both.sim + ' pixels of their colours) and the difference in its own panel', both);
	const rep = await page.request.get(BASE + (await page.getAttribute('#report-link', 'href')));
	check(rep.status() === 200 && (await rep.text()).includes('cs-data'), 'the report link serves the report for the same request');
	await page.screenshot({ path: ART + '/ui-compare.png', fullPage: true });

	// kernel level, reached by URL
	await nav(BASE + '/#/compare?hw=simk&sim=sim&kernels=1&hw_metric=' +
		encodeURIComponent('L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]') + '&sim_metric=' + encodeURIComponent('Ltworeadmiss + Ltworeadhit'));
	await page.waitForSelector('body[data-correlated="1"]');
	const kt = await page.$$eval('#result table.list tr', (trs) => trs.slice(1).map((t) => t.children[2].textContent + '/' + t.children[3].textContent));
	check(kt.join(' ') === '10240/10240 20480/20461 5280/5299', 'kernel level by URL: per-kernel totals', kt);

	const kn = await page.$$eval('#result table.list tr', (trs) => trs.slice(1).map((t) => t.children[0].textContent));
	check(kn[0] === 'kernel 1: vecAdd(float*, float*, float*, int)', 'a simulator kernel known only by its number is named by its hardware pair', kn);

	// both runs on one axis: each side's kernels where its ranges put them
	// (cycles from its first sample), every matched pair linked; a table row
	// or a scatter point zooms both to its pair
	await page.waitForFunction(() => window.cyclescope.aligned);
	const al0 = await page.evaluate(() => window.cyclescope.aligned);
	const spansOf = async (name) => {
		const rr = await (await page.request.get(BASE + '/api/v1/runs/' + name)).json();
		const rows = (await (await page.request.get(BASE + '/api/v1/runs/' + name + '/ranges.csv?kind=sim-kernel')).text()).trim().split('\n').slice(1).map((l) => l.split(','));
		return rows.map((f) => [+f[2] - rr.t_min, +f[3] - rr.t_min]);
	};
	const [hwWant, simWant] = [await spansOf('simk'), await spansOf('sim')];
	const same = (a, b) => a.length === b.length && a.every((x, i) => Math.abs(x[0] - b[i][0]) < 1e-6 && Math.abs(x[1] - b[i][1]) < 1e-6);
	check(al0.hw === 3 && al0.sim === 3 && al0.links === 3 && same(al0.hwSpans, hwWant) && same(al0.simSpans, simWant) && al0.drawn === 3 &&
		(await page.$$('#result .figure svg')).length === 2,
	'kernel mode stacks both runs on one cycle axis (3 and 3 kernels where their ranges are, 3 links) and still draws the binned figure', { al0, hwWant, simWant });
	const pairView = (i) => { const a = Math.min(hwWant[i][0], simWant[i][0]), b = Math.max(hwWant[i][1], simWant[i][1]); return [a - (b - a) / 10, b + (b - a) / 10]; };
	await page.click('#result tr[data-pair="1"]');
	await page.waitForFunction((w) => Math.abs(window.cyclescope.aligned.xmin - w[0]) < 1e-6 && Math.abs(window.cyclescope.aligned.xmax - w[1]) < 1e-6, pairView(1), { timeout: 5000 }).catch(() => null);
	const al1 = await page.evaluate(() => window.cyclescope.aligned);
	check(Math.abs(al1.xmin - pairView(1)[0]) < 1e-6 && Math.abs(al1.xmax - pairView(1)[1]) < 1e-6 && (await page.$('#result tr.picked[data-pair="1"]')) !== null,
		'a click on a kernel row zooms both runs to that pair (' + al1.xmin + '..' + al1.xmax + ')', { al1, want: pairView(1) });
	await page.screenshot({ path: ART + '/ui-compare-aligned.png', fullPage: true });
	await page.click('#result .figure circle[data-i="0"]', { force: true });
	const al2 = await page.evaluate(() => window.cyclescope.aligned);
	check(Math.abs(al2.xmin - pairView(0)[0]) < 1e-6 && Math.abs(al2.xmax - pairView(0)[1]) < 1e-6,
		'a click on a scatter point zooms both runs to its pair', { al2, want: pairView(0) });
	await page.focus('#aligned-lanes');
	await page.keyboard.press('w');
	const al3 = await page.evaluate(() => window.cyclescope.aligned);
	await page.keyboard.press('d');
	const al4 = await page.evaluate(() => window.cyclescope.aligned);
	check(Math.abs((al3.xmax - al3.xmin) - 0.8 * (al2.xmax - al2.xmin)) < 1e-6 && Math.abs(al4.xmin - al3.xmin - (al3.xmax - al3.xmin) / 5) < 1e-6,
		'W zooms in and D pans the aligned view', { al2, al3, al4 });

	// a malformed expression: the API's message, shown
	await page.fill('#sim_metric', 'Ltworeadmiss +');
	expected404.push('400');
	await page.click('#correlate');
	await page.waitForSelector('#result .error');
	const err = await page.textContent('#result .error');
	check(/column 15: expected a number/.test(err), 'a malformed expression shows the API\'s error with its column', err);

	// a form error marks the field it names (from a fresh page: the error
	// shown before must not be the one waited for)
	await nav(BASE + '/#/compare?hw=noclock&sim=sim&hw_metric=l2_reads&sim_metric=Ltworeadhit');
	await page.waitForSelector('#result .error');
	expected404.push('400');
	check(await page.$eval('#hw_clock_mhz', (e) => e.classList.contains('bad')) && (await page.textContent('.field-error')).startsWith('hardware clock (MHz)'),
		'a correlation error marks the form field it names (hardware clock)', await page.textContent('#result .error'));

	// the overlap analysis on the run page: a lane and a table
	await nav(BASE + '/#/run/phases?metric=sm__inst_executed.sum,nvlrx__bytes.sum&a=kernel:nccl*&b=*gemm*');
	await page.waitForSelector('body[data-phases]');
	const ph = await page.$$eval('#phase-table tr', (trs) => trs.slice(1).filter((t) => !t.classList.contains('ratio')).map((t) => t.children[0].textContent.trim() + '=' + t.children[2].textContent));
	check(ph.join(' ') === 'neither=13.9% only A=19.4% A and B=27.8% only B=38.9% tail=16.6% only B outside the tail=22.2%',
		'the run page splits a run into overlap phases (table)', ph);
	const laneH = await page.$eval('#lanes', (c) => c.getBoundingClientRect().height);
	check(laneH >= 3 * 18, 'the phases are drawn as a lane beside the ranges', laneH);
	await page.screenshot({ path: ART + '/ui-phases.png', fullPage: true });

	// overlap first: the NCCL/GEMM run opened with no A and B is split into
	// its NCCL kernels and the rest, with the headline and tail/B-alone the
	// API's numbers give
	await nav(BASE + '/#/run/phases?metric=sm__inst_executed.sum');
	await page.waitForSelector('body[data-phases]');
	const prop = { a: await page.inputValue('#phase-a'), b: await page.inputValue('#phase-b'), head: await page.textContent('#phase-headline'),
		ratio: await page.$$eval('#phase-table tr.ratio td', (tds) => tds.map((t) => t.textContent)) };
	const pj = await (await page.request.get(BASE + '/api/v1/runs/phases/phases?a=' + encodeURIComponent('kernel:nccl*') + '&b=' +
		encodeURIComponent('kernel:!nccl*') + '&metric=sm__inst_executed.sum')).json();
	const P = Object.fromEntries(pj.phases.map((p) => [p.phase, p]));
	const pct = (100 * P['A and B'].duration / (P['only A'].duration + P['A and B'].duration)).toFixed(1) + '% of A overlapped';
	const rat = (P['tail'].metrics['sm__inst_executed.sum'].mean_rate / P['only B outside the tail'].metrics['sm__inst_executed.sum'].mean_rate).toFixed(3) + 'x';
	check(prop.a === 'kernel:nccl*' && prop.b === 'kernel:!nccl*' && prop.head.includes(pct) && prop.ratio[1] === rat,
		'a run with NCCL and other kernels opens split into them, headlined (' + prop.head + '; tail / B alone ' + prop.ratio[1] + ')', { prop, pct, rat });
	// per cycle beside per second: each phase's rate over its cycle counter's
	const pc = await (await page.request.get(BASE + '/api/v1/runs/phases/phases?a=' + encodeURIComponent('kernel:nccl*') + '&b=' +
		encodeURIComponent('kernel:!nccl*') + '&metric=sm__inst_executed.sum,gpc__cycles_elapsed.max')).json();
	const ab = pc.phases.find((p) => p.phase === 'A and B');
	const wantPc = await page.evaluate((v) => window.cyclescope.format.fmtNum(v, 0), ab.metrics['sm__inst_executed.sum'].mean_rate / ab.metrics['gpc__cycles_elapsed.max'].mean_rate);
	const pcShown = await page.$$eval('#phase-table tr', (trs) => ({ head: [...trs[0].children].map((c) => c.textContent),
		ab: [...trs.find((t) => t.children[0].textContent.trim() === 'A and B').children].map((c) => c.textContent) }));
	check(pcShown.head.includes('sm__inst_executed.sum (mean /cycle)') && pcShown.ab[pcShown.head.indexOf('sm__inst_executed.sum (mean /cycle)')] === wantPc,
		'the phase table gives each rate per cycle too, by the run\'s cycle counter (A and B: ' + wantPc + ' instructions a cycle)', { pcShown, wantPc });
	await page.screenshot({ path: ART + '/ui-overlap-first.png', fullPage: true });

	// an address no page has: said so, with the pages
	await nav(BASE + '/#/nosuch');
	await page.waitForSelector('body[data-page="unknown"][data-ready="1"]');
	check((await page.textContent('#no-page')).startsWith('There is no page #/nosuch') && (await page.title()) === 'cyclescope: no such page',
		'an unknown page says so and lists the pages (not the run list in its place)');

	// what an address asks and the run cannot give is said
	await nav(BASE + '/#/run/example?metric=nosuch&from=900ms&to=990ms&rate=cycle');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const notes = await page.$$eval('.notice', (ps) => ps.map((p) => p.textContent));
	check(notes.some((t) => t.startsWith("this run has no metric 'nosuch': showing its default metrics")) &&
		notes.some((t) => /lies outside the run .*showing the whole run/.test(t)),
		'an unknown metric and a window outside the run are said, not silently replaced', notes);

	// per cycle on an ns run with no clock: by its own cycle counter; on a
	// run with neither, said
	series.length = 0;
	await nav(BASE + '/#/run/example?metric=lts__t_sectors.sum&rate=cycle');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	check(series.length === 1 && params(series[0]).expr === '"lts__t_sectors.sum" / gpc__cycles_elapsed.max' &&
		(await page.textContent('.plot-head .note')) === '[l2_sector/cycle]' && (await page.$eval('#rate', (e) => e.value)) === 'cycle',
	'per cycle on an ns run without a clock divides each sample by its own gpc__cycles_elapsed.max', series);
	await nav(BASE + '/#/run/noclock?rate=cycle');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const nc = await page.$$eval('.notice', (ps) => ps.map((p) => p.textContent));
	check(nc.some((t) => t.startsWith('counters per cycle need a clock or cycle counter')), 'per cycle on a run with neither clock nor cycle counter is said', nc);

	// a run of 90 s with 10,000 API calls (tests/ui.sh): the 5000 longest
	// drawn one by one, every one of them in the lane's density, to its end
	await nav(BASE + '/#/run/busy');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const busyStatus = await page.textContent('#status');
	const dens = await page.evaluate(() => window.cyclescope.density);
	const apiInk = await page.evaluate(() => {
		const c = document.getElementById('lanes'), L = window.cyclescope.lanes, dpr = window.devicePixelRatio || 1;
		const box = c.getBoundingClientRect(), left = L.left - box.left, row = L.keys.indexOf('api');
		const d = c.getContext('2d').getImageData(0, Math.round((row * 18 + 10) * dpr), c.width, 1).data;
		const inked = (x) => d[Math.round(x * dpr) * 4 + 3] > 0 && !(d[Math.round(x * dpr) * 4] > 250 && d[Math.round(x * dpr) * 4 + 1] > 250 && d[Math.round(x * dpr) * 4 + 2] > 250);
		let last = -1, n = 0;
		for (let x = Math.ceil(left); x < left + L.width; x++)
			if (inked(x))
				last = x, n++;
		return { row, last: (last - left) / L.width, share: n / L.width };
	});
	check(dens && dens.ranges === 10000 && /10000 ranges in view \(the 5000 longest drawn one by one, all of them as the lanes' shading\)/.test(busyStatus),
		'a run with 10,000 ranges shows all of them: the 5000 longest one by one, the rest as density, and says so', { dens, busyStatus });
	check(apiInk.row >= 0 && apiInk.last > 0.95 && apiInk.share > 0.9, 'its API lane is drawn to the run\'s end (' + (100 * apiInk.last).toFixed(1) + '% of the width, ' + (100 * apiInk.share).toFixed(1) + '% of pixels inked)', apiInk);
	await page.screenshot({ path: ART + '/ui-busy-lanes.png', fullPage: true });

	// --- how numbers read: docs/ui.md's table, which web/figure.c's unit
	// test holds the SVG figures to as well ---
	const doc = require('fs').readFileSync(require('path').join(__dirname, '../../docs/ui.md'), 'utf8');
	const table = [...doc.matchAll(/^\| ([-0-9.e]+)(?: ns)?(?: with ticks ([0-9.]+)( ns| ms)? apart|, no tick step) \| `([^`]+)` \|$/gm)];
	const fmtRows = await page.evaluate((rows) => rows.map(([line, v, step, su, want]) => {
		const time = / ns /.test(line);
		const st = step === undefined ? 0 : +step * (su === ' ms' ? 1e6 : 1);
		const got = time ? window.cyclescope.format.fmtTime(+v, st) : window.cyclescope.format.fmtNum(+v, st);
		return [want, got];
	}), table.map((m) => [m[0], m[1], m[2], m[3], m[4]]));
	check(fmtRows.length === 8 && fmtRows.every(([want, got]) => want === got), 'the UI formats numbers and times as docs/ui.md\'s table says', fmtRows);

	// ticks at whole steps from the run's start, not of the stored time:
	// a window that starts off a step (the example starts at 1 ms)
	series.length = 0;
	await nav(BASE + '/#/run/example?metric=lts__t_sectors.sum&from=24.9ms&to=25.1ms');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const axisFrom = await page.textContent('#status');
	check(/from 24900 \u00b5s to 25100 \u00b5s/.test(axisFrom) && params(series[0]).from === '@' + (run.origin + 24900000) && params(series[0]).to === '@' + (run.origin + 25100000) &&
		new URL(page.url().replace('#', '')).searchParams.get('from') === '24900000',
	'an address\'s from=24.9ms&to=25.1ms counts from the run start: the view reads 24.9 to 25.1 ms', { axisFrom, series, url: page.url() });
	const ticks = await page.evaluate(() => window.cyclescope.xTicks);
	const us = ticks.map((t) => { const m = /^([0-9.]+) (ms|\u00b5s|ns|s)$/.exec(t); return m ? +m[1] * { s: 1e6, ms: 1e3, '\u00b5s': 1, ns: 1e-3 }[m[2]] : NaN; });
	const step = us[1] - us[0];
	check(us.length >= 3 && us.every((v, i) => Number.isFinite(v) && Math.abs(v / step - Math.round(v / step)) < 1e-6 && (i === 0 || Math.abs(v - us[i - 1] - step) < 1e-6 * step)),
		'the time axis ticks at whole steps from the run start (' + ticks.join(', ') + ')', ticks);

	// --- units, the time axis, steps ---
	await nav(BASE + '/#/run/example?metric=lts__t_sectors.sum');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const unitShown = await page.textContent('.plot-head .note');
	check(unitShown === '[' + run.metric_list.find((m) => m.name === 'lts__t_sectors.sum').unit + ']' && unitShown === '[l2_sector]',
		'the plot names its unit (l2_sector, from the CSV header at import)', unitShown);
	const st1 = await page.textContent('#status');
	check(/buckets of [0-9.]+ \u00b5s from 0 ms to 40 ms/.test(st1), 'the status line reads times from the run start with the \u00b5 sign', st1);
	// rate per second: the request asks for rate(), the unit says /s
	series.length = 0;
	await page.selectOption('#rate', 'second');
	await page.waitForSelector('body[data-loads="2"]');
	check(series.length === 1 && params(series[0]).expr === 'rate("lts__t_sectors.sum")' && (await page.textContent('.plot-head .note')) === '[l2_sector/s]',
		'counters per second: rate() of the metric, the unit l2_sector/s', series);

	// steps: the simulator's per-kernel samples, each held over its kernel
	await nav(BASE + '/#/run/simk?metric=gpu_sim_insn');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const simkCsv = (await (await page.request.get(BASE + '/api/v1/runs/simk/series.csv?metric=gpu_sim_insn')).text()).trim().split('\n').slice(1).map((l) => l.split(',').map(Number));
	const stepPix = await page.evaluate((rows) => {
		const u = window.cyclescope.plots[0];
		const ctx = u.ctx, dpr = devicePixelRatio || 1;
		// the middle of each sample's interval: the stroke at that sample's
		// own value (a line between points would cross elsewhere)
		return rows.map(([t0, t1, v]) => {
			const x = Math.round(u.valToPos((t0 + t1) / 2, 'x', true)), y = Math.round(u.valToPos(v, 'y', true));
			const d = ctx.getImageData(x, y - 2 * dpr, 1, 4 * dpr + 1).data;
			let blue = 0;
			for (let i = 0; i < d.length; i += 4)
				blue += d[i + 2] > 150 && d[i] < 90 && d[i + 3] > 200;
			return blue;
		});
	}, simkCsv);
	check(simkCsv.length === 3 && (await page.getAttribute('body', 'data-raw')) === '1' && stepPix.every((b) => b > 0),
		'per-kernel samples drawn as steps: the stroke sits at each kernel\'s value across its middle', { simkCsv, stepPix });

	// --- lanes share the plot's x scale: after load, zoom and resize ---
	async function laneAlign(what) {
		const url = new URL(page.url().replace('#/', ''), 'http://x');
		const rr = (await (await page.request.get(BASE + '/api/v1/runs/phases/ranges.csv')).text()).trim().split('\n').slice(1).map((l) => l.split(','));
		const [from, to] = [+url.searchParams.get('from'), +url.searchParams.get('to')];
		// the first kernel on stream 7 in view: where its lane's colour starts
		const t0 = Math.max(from, Math.min(...rr.filter((r) => r[0] === 'kernel' && r[5] === '7' && +r[3] > from && +r[2] < to).map((r) => +r[2])));
		const ob = await (await page.$('.plot .u-over')).boundingBox();
		const want = ob.x + ((t0 - from) / (to - from)) * ob.width;
		// the first coloured pixel of the gemm's lane (kernel s7) in the canvas
		const got = await page.evaluate(() => {
			const c = document.getElementById('lanes'), dpr = devicePixelRatio || 1;
			const keys = window.cyclescope.lanes.keys, row = keys.indexOf('kernel s7');
			const y = Math.round((row * 18 + 2 + 9) * dpr);
			const d = c.getContext('2d').getImageData(0, y, c.width, 1).data;
			const box = c.getBoundingClientRect();
			const left = window.cyclescope.lanes.left - box.left;
			for (let x = Math.ceil(left * dpr); x < c.width; x++)
				if (d[x * 4 + 3] > 100 && !(d[x * 4] > 240 && d[x * 4 + 1] > 240))
					return box.left + x / dpr;
			return null;
		});
		check(got !== null && Math.abs(got - want) <= 1.5, 'the kernel lane lines up with the plot ' + what + ' (range start at x ' +
			(got === null ? 'none' : got.toFixed(1)) + ', plot ' + want.toFixed(1) + ')', { got, want });
	}
	await nav(BASE + '/#/run/phases?metric=dram__bytes_read.sum&from=0.5ms&to=17ms');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	await laneAlign('after the first load');
	const ob2 = await (await page.$('.plot .u-over')).boundingBox();
	await page.mouse.move(ob2.x + ob2.width * 0.3, ob2.y + 50);
	await page.mouse.down();
	await page.mouse.move(ob2.x + ob2.width * 0.9, ob2.y + 50, { steps: 5 });
	await page.mouse.up();
	await page.waitForSelector('body[data-loads="2"]');
	await laneAlign('after a zoom');
	await page.setViewportSize({ width: 1000, height: 1000 });
	await page.waitForTimeout(400);
	await laneAlign('after a resize');
	await page.setViewportSize({ width: 1300, height: 1000 });
	const legendNames = await page.$$eval('#kernel-legend .kl', (e) => e.map((x) => x.textContent.trim()));
	check(legendNames.length === 2 && legendNames.some((n) => n.startsWith('sm90_xmma_gemm')) && legendNames.includes('ncclDevKernel_AllGather_RING_LL'),
		'kernels have a legend of their names (coloured by name, one lane per stream)', legendNames);
	await page.screenshot({ path: ART + '/ui-run-hw.png', fullPage: true });

	// --- the expression box ---
	series.length = 0;
	await nav(BASE + '/#/run/example?metric=lts__t_sectors.sum');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	await page.fill('#expr-input', 'lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum');
	await page.click('#add-expr');
	await page.waitForSelector('body[data-loads="2"][data-plots="2"]');
	const eq = params(series[series.length - 1]);
	check(eq.expr === 'lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum' && page.url().includes('expr=') &&
		(await page.$('.plot[data-metric="lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum"]')) !== null,
	'an expression is added as its own plot, asked for as expr= and kept in the address', eq);
	expected404.push('400');
	await page.fill('#expr-input', 'lts__t_sectors.sum - ');
	await page.click('#add-expr');
	await page.waitForSelector('#expr-error .error');
	const exErr = await page.textContent('#expr-error .error');
	check(/column 21/.test(exErr), 'a malformed expression is refused with its column', exErr);

	// --- figures out: SVG and PNG of a plot ---
	const [dl] = await Promise.all([page.waitForEvent('download'), page.click('.plot-head button[data-format="svg"]')]);
	const svgText = require('fs').readFileSync(await dl.path(), 'utf8');
	const svgOk = await page.evaluate((t) => {
		const d = new DOMParser().parseFromString(t, 'image/svg+xml');
		return { err: !!d.querySelector('parsererror'), titles: [...d.querySelectorAll('.axis-title')].map((e) => e.textContent),
			caption: (d.querySelector('.caption') || {}).textContent || '', w: +d.documentElement.getAttribute('width') };
	}, svgText);
	check(!svgOk.err && svgOk.titles.includes('lts__t_sectors.sum [l2_sector]') && svgOk.titles.includes('time since run start') &&
		/run example/.test(svgOk.caption) && dl.suggestedFilename().endsWith('.svg'),
	'the SVG button saves the figure: it parses, with axis titles and units and a caption', svgOk);
	const [dlp] = await Promise.all([page.waitForEvent('download'), page.click('.plot-head button[data-format="png"]')]);
	const png = require('fs').readFileSync(await dlp.path());
	const pngW = png.readUInt32BE(16);
	check(png.slice(1, 4).toString() === 'PNG' && pngW === 2 * svgOk.w, 'the PNG button saves it at 2x (' + pngW + ' px wide)', pngW);

	// --- the report's scatter: its axes cover the data ---
	const rep2 = await page.request.get(BASE + '/report?hw=simk&sim=sim&hw_metric=' + encodeURIComponent('L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]') +
		'&sim_metric=' + encodeURIComponent('Ltworeadmiss + Ltworeadhit') + '&bin_cycles=2000');
	await page.setContent(await rep2.text());
	await page.waitForSelector('body[data-plots="2"]');
	const sc = await page.evaluate(() => {
		const svg = document.querySelector('#fig-k0 svg');
		const r = svg.querySelector('clipPath rect');
		const [x, y, w, hh] = ['x', 'y', 'width', 'height'].map((a) => +r.getAttribute(a));
		const pts = [...svg.querySelectorAll('g.panel circle')].map((c) => [+c.getAttribute('cx'), +c.getAttribute('cy')]);
		return { inside: pts.filter(([cx, cy]) => cx >= x && cx <= x + w && cy >= y && cy <= y + hh).length, n: pts.length,
			ticks: [...svg.querySelectorAll('text')].length };
	});
	check(sc.n === 3 && sc.inside === 3, 'the report\'s kernel scatter has every point inside its axes', sc);
	await page.screenshot({ path: ART + '/ui-report.png', fullPage: true });
	await page.goto('about:blank');

	// --- page widths, titles, the 4000-metric first load ---
	for (const w of [1280, 1920]) {
		await page.setViewportSize({ width: w, height: 900 });
		await nav(BASE + '/#/run/phases');
		await page.waitForSelector('body[data-page="run"][data-loads="1"]');
		const sw = await page.evaluate(() => document.documentElement.scrollWidth);
		check(sw <= w, 'no horizontal overflow at ' + w + ' px (' + sw + ')', sw);
	}
	check((await page.title()) === 'cyclescope: phases', 'the run page is titled by its run', await page.title());
	await nav(BASE + '/#/run/nosuchrun');
	await page.waitForSelector('body[data-ready="1"]');
	expected404.push('404');
	check((await page.title()) === 'cyclescope: error' && (await page.$('.error')) !== null, 'an error page has its own title', await page.title());
	await nav(BASE + '/#/run/wide');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const firstMs = await page.evaluate(() => window.cyclescope.firstPlotMs);
	await page.waitForSelector('body[data-metric-list="4000"]');
	// shown at all in bounded time here; the 500 ms goal is a speed figure,
	// which a test on a busy machine cannot hold it to
	check(firstMs <= 5000, 'a 4000-metric run shows its plots ' + Math.round(firstMs) + ' ms after navigation (bound 5000; goal 500 on an idle machine)', firstMs);
	await page.screenshot({ path: ART + '/ui-run-sim.png' });

	// --- live: a running run followed, and the collectors page. The
	// collectors are the injection library's clock-driven test source (no
	// GPU) in real processes streaming to this daemon (tests/live.sh) ---
	if (!process.env.CS_INJECT)
		console.log('# skipped: the live and collectors pages (no build/tests/inject or no injection library)');
	if (process.env.CS_INJECT) {
		const follows = [];
		page.on('request', (r) => r.url().includes('/follow') && follows.push(r.url()));
		const api = async (path) => { const r = await page.request.get(BASE + path); return r.status() === 200 ? r.json() : null; };
		const until = async (what, f, ms) => {
			for (const end = Date.now() + (ms || 20000); Date.now() < end; await page.waitForTimeout(100)) {
				const v = await f();
				if (v)
					return v;
			}
			return null;
		};
		// a continuous collector sampling every 20 ms: a run that grows until
		// the test ends it (SIGUSR1: a normal exit), however slow the machine
		const liveApp = app(300, { CYCLESCOPE_MODE: 'continuous', CYCLESCOPE_NAME: 'live' });
		// (the collectors page's, armed meanwhile: they register while the run is followed)
		const procs = [app(30, { CYCLESCOPE_MODE: 'armed', CYCLESCOPE_JOB: 'ui-job', CYCLESCOPE_NAME: 'ui-r0' }),
			app(30, { CYCLESCOPE_MODE: 'armed', CYCLESCOPE_JOB: 'ui-job', CYCLESCOPE_NAME: 'ui-r1' }),
			app(30, { CYCLESCOPE_MODE: 'armed', CYCLESCOPE_NAME: 'ui-solo' })];
		const lr = await until('the run', async () => { const r = await api('/api/v1/runs/live'); return r && r.samples > 0 && r; });
		check(lr && lr.status === 'running' && lr.time_unit === 'ns', 'a test-source collector\'s run is running (the run to follow)', lr);
		// the newest 2 s, and a bound of 150 samples (the default is 50000)
		await nav(BASE + '/#/run/live?last=2&keep=150');
		await page.waitForSelector('body[data-live="following"][data-live-draws]');
		check(await page.isVisible('#live-badge') && (await page.textContent('#live-badge')) === 'live', 'a running run\'s page shows the live badge');
		const live = () => page.evaluate(() => {
			const L = window.cyclescope.live, u = window.cyclescope.plots[0];
			return { at: performance.now(), t1: L.t1, shown: L.shown, xmin: u.scales.x.min, xmax: u.scales.x.max, draws: L.draws,
				received: L.received, kept: L.kept, lagNs: L.lagNs, es: L.es ? L.es.readyState : null, closed: L.closed, follows: L.follows,
				ordered: L.ordered(), lanes: (window.cyclescope.lanes || {}).keys || [], metric: u.csCol.label,
				y: u.data[1].filter((v) => v !== null).slice(-1)[0], state: document.body.getAttribute('data-live') };
		});
		// the view's right end read every 200 ms for 3 s: it must keep
		// moving, and be the newest sample received
		const reads = [];
		for (let i = 0; i < 16; i++, await page.waitForTimeout(200))
			reads.push(await live());
		let gap = 0, prev = reads[0].at, moves = 0;
		for (let i = 1; i < reads.length; i++)
			if (reads[i].xmax > reads[i - 1].xmax)
				moves++, (gap = Math.max(gap, reads[i].at - prev)), (prev = reads[i].at);
		gap = Math.max(gap, reads[reads.length - 1].at - prev);
		// (once a second is the goal on an idle machine; two CPU hogs made a
		// gap of 1223 ms)
		check(moves >= 3 && gap <= 2500, 'the live view follows the newest samples: its end moved ' + moves + ' times in 3 s, never more than ' +
			Math.round(gap) + ' ms apart (bound 2500; goal: at least once a second)', reads.map((r) => [Math.round(r.at), r.xmax, r.draws]));
		const now = await live();
		const row = (await (await page.request.get(BASE + '/api/v1/runs/live/series.csv?metric=' + now.metric + '&from=@' + now.shown.t0 + '&to=@' +
			(BigInt(now.shown.t0) + 1n))).text()).trim().split('\n')[1] || '';
		check(now.xmax === now.shown.t1 && now.t1 - now.shown.t1 < 1e9 && now.xmax - now.xmin === 2e9 && row.split(',')[0] === now.shown.t0 &&
			+row.split(',')[2] === now.y && now.y === now.shown.values[now.metric],
		'the view is the newest 2 s, ending at the newest sample received, whose value is the daemon\'s (' + now.metric + ' = ' + now.y + ')', { now, row });
		const lagText = await page.textContent('#live-lag');
		check(/^lag [0-9.]+ (ns|µs|ms|s)\b/.test(lagText) && now.lagNs >= 0 && now.lagNs < 2e9 && (await page.getAttribute('#live-lag', 'title')).includes('now_ns'),
			'the committed-vs-received lag is shown, explained in its tooltip (' + lagText + ')', { lagText, lagNs: now.lagNs });
		check(now.kept === 150 && now.received > 150 && now.ordered, 'the browser keeps at most the bound of samples (' + now.kept + ' of ' + now.received + ' received), in order', now);
		check(now.lanes.includes('api'), 'ranges arriving live are drawn in the lanes', now.lanes);
		await page.screenshot({ path: ART + '/ui-live.png', fullPage: true });
		// pause: the stream closed, the view still; resume: on from where it stopped
		await page.click('#live-pause');
		await page.waitForSelector('body[data-live="paused"]');
		const p0 = await live();
		await page.waitForTimeout(700);
		const p1 = await live();
		check(p0.es === null && p1.t1 === p0.t1 && p1.xmax === p0.xmax && (await page.textContent('#live-badge')) === 'paused' &&
			(await page.textContent('#live-pause')) === 'Resume', 'pause stops the stream and holds the view', { p0, p1 });
		await page.click('#live-pause');
		// resumed once the second stream is open (the fetch before it may
		// take a while on a busy machine) and the view has moved on
		const r1 = await until('resumed', async () => { const x = await live(); return x.state === 'following' && x.follows === 2 && x.es !== null && x.xmax > p1.xmax && x; });
		check(r1 && r1.ordered && r1.follows === 2 && r1.es !== null, 'resume goes on from where it stopped (a second stream, every sample once and in order)', r1);
		// a zoom: the view stays put while samples still arrive; then back to the newest
		const ob = await (await page.$('.plot .u-over')).boundingBox();
		await page.mouse.move(ob.x + ob.width * 0.2, ob.y + 60);
		await page.mouse.down();
		await page.mouse.move(ob.x + ob.width * 0.6, ob.y + 60, { steps: 5 });
		await page.mouse.up();
		await page.waitForSelector('body[data-live="detached"][data-loads="1"]');
		const d0 = await live();
		await page.waitForTimeout(800);
		const d1 = await live();
		check(d1.xmin === d0.xmin && d1.xmax === d0.xmax && d1.t1 > d0.t1 && (await page.isVisible('#live-follow')),
			'a zoom holds the view while samples still arrive, and offers to follow the newest again', { d0, d1 });
		await page.click('#live-follow');
		const f1 = await until('following again', async () => { const x = await live(); return x.state === 'following' && x.xmax > d1.t1 && x; });
		check(f1 && !(await page.isVisible('#live-follow')) && !page.url().includes('from='), '"Follow the newest" scrolls with the newest samples again', f1);
		// the end: badge gone, the final status, the stream closed for good
		liveApp.kill('SIGUSR1');
		await page.waitForSelector('body[data-live="ended"]', { timeout: 20000 });
		const e0 = await live();
		const nf = follows.length;
		await page.waitForTimeout(500);
		const status = await page.textContent('#run-status');
		check((await page.$('#live-badge')) === null && status.startsWith('complete') && /ended \(complete, \d+ samples\)/.test(await page.textContent('#live-ended')),
			'when the run ends the live badge goes and the page shows its final status (' + status + ')', status);
		check(e0.es === null && e0.closed === 2 && follows.length === nf && nf === 2, 'the stream is closed at the end (no reconnect: ' + follows.length + ' follow requests in all)', { e0, follows });
		await page.screenshot({ path: ART + '/ui-live-ended.png', fullPage: true });

		// --- the collectors page: two ranks of a job and one without ---
		const pids = procs.map((p) => p.pid);
		await nav(BASE + '/#/collectors');
		await page.waitForFunction((ps) => ps.every((p) => document.querySelector('tr[data-pid="' + p + '"]')), pids);
		const groups = await page.$$eval('#collectors tbody.job', (s) => s.map((e) => ({ job: e.dataset.job, pids: [...e.querySelectorAll('tr[data-pid]')].map((t) => +t.dataset.pid),
			head: e.querySelector('tr.job-head').textContent })));
		const g = Object.fromEntries(groups.map((x) => [x.job, x.pids]));
		const sorted = (x) => String([...(x || [])].sort((a, b) => a - b));
		check(groups[0].job === 'ui-job' && sorted(g['ui-job']) === sorted(pids.slice(0, 2)) && sorted(g['']) === String(pids[2]),
			'the collectors page lists the live collectors grouped by job (the job\'s two ranks together, the one without a job apart)', groups);
		// at 1280 px every row's buttons are in sight (a wide table scrolls under them)
		await page.setViewportSize({ width: 1280, height: 800 });
		const inSight = await page.$$eval('#collectors button.trigger', (bs) => bs.map((b) => { const r = b.getBoundingClientRect(); return r.right <= window.innerWidth && r.left >= 0; }));
		const pageW = await page.evaluate(() => document.documentElement.scrollWidth);
		await page.setViewportSize({ width: 1300, height: 1000 });
		check(inSight.length === 3 && inSight.every(Boolean) && pageW <= 1280, 'at 1280 px the collectors\' trigger buttons are in sight and the page does not overflow', { inSight, pageW });
		const coll = async (pid) => ((await api('/api/v1/collectors')) || []).find((c) => c.pid === pid);
		// a row's trigger: a window opens, its run appears
		await page.fill('#trigger-seconds', '1');
		await page.fill('#trigger-name', 'ui-row');
		const solo = 'tr[data-pid="' + pids[2] + '"]';
		await page.click(solo + ' button.trigger');
		await page.waitForSelector(solo + ' td.msg:text-matches("^window open")');
		const c2 = await until('the window', async () => { const c = await coll(pids[2]); return c && (c.windows >= 1 || c.state === 'sampling') && c.run && c; });
		const r2 = c2 ? await api('/api/v1/runs/' + c2.run_id) : null;
		check(c2 && r2 && r2.name === 'ui-solo' && r2.status === 'running', 'a row\'s trigger opens a window in that collector (' + (c2 || {}).state + ', windows ' + (c2 || {}).windows + ') and its run appears', { c2, r2 });
		await page.waitForSelector(solo + ' a[href="#/run/' + (c2 || {}).run_id + '"]');
		check(true, 'the row links to its run\'s live page');
		// an error is shown as the daemon says it
		await page.fill('#trigger-seconds', '0');
		expected404.push('400');
		await page.click('tr[data-pid="' + pids[0] + '"] button.trigger');
		await page.waitForSelector('tr[data-pid="' + pids[0] + '"] td.msg.bad');
		const bad = await page.textContent('tr[data-pid="' + pids[0] + '"] td.msg');
		check(/^seconds: expected a duration/.test(bad) && /HTTP 400/.test(bad), 'a refused trigger shows the daemon\'s error in its row', bad);
		// the job's trigger: both ranks
		await page.fill('#trigger-seconds', '2');
		await page.click('button.trigger-job[data-job="ui-job"]');
		await page.waitForSelector('#trigger-result :text("job ui-job: 2 of 2 windows opened")');
		const both = await until('both windows', async () => { const a = await coll(pids[0]), b = await coll(pids[1]); const on = (c) => c && (c.windows >= 1 || c.state === 'sampling') && c.run; return on(a) && on(b) && [a, b]; });
		check(both && both.every((c) => c.run), 'the job\'s trigger opens a window in each of its collectors', both);
		await page.waitForSelector('tr[data-pid="' + pids[0] + '"] a[href^="#/run/"]');
		// (the page's rows catch up with the next refresh: the picture shows them sampling)
		await page.waitForSelector('tr[data-pid="' + pids[0] + '"][data-state="sampling"]', { timeout: 2000 }).catch(() => null);
		await page.screenshot({ path: ART + '/ui-collectors.png', fullPage: true });
		for (const p of procs)
			p.kill();
	}

	// --- a job: its ranks on one axis, the stragglers ---
	await nav(BASE + '/#/jobs');
	await page.waitForSelector('body[data-ready="1"]');
	const jobs = await page.$$eval('#jobs tr[data-job]', (trs) => trs.map((t) => t.dataset.job + ':' + t.cells[1].textContent));
	check(jobs.includes('dp4:4'), 'the jobs page lists the job with its 4 runs', jobs);
	await page.click('#jobs tr[data-job="dp4"] a');
	await page.waitForSelector('body[data-ready="1"][data-page="job"]');
	const jr = await page.$$eval('#job-ranks tr[data-rank]', (trs) => trs.map((t) => [...t.cells].map((c) => c.textContent)));
	const japi = await (await page.request.get(BASE + '/api/v1/jobs/dp4/phases?a=kernel:nccl*&b=*gemm*&align=collectives')).json();
	check(jr.length === 4 && jr.every((r, i) => +r[0] === japi.ranks[i].rank && r[7] === String(japi.ranks[i].times_last) && r[8] === japi.ranks[i].offset_ns + ' ns'),
		'a job\'s page: one row per rank with how often it was last and its clock offset, as the API says', jr);
	const jlanes = await page.$$eval('#job-figure svg text', (ts) => ts.map((t) => t.textContent).filter((t) => /^rank \d$/.test(t)));
	const late = await page.$$eval('#job-figure svg title', (ts) => ts.filter((t) => /started last/.test(t.textContent)).length);
	check(jlanes.join(',') === 'rank 0,rank 1,rank 2,rank 3' && late > 0, 'its figure stacks the ranks and names each straggler', { jlanes, late });
	const head = await page.textContent('#job-headline');
	check(/most often last: rank 3 \(4 of 8\)/.test(head) && /aligned/.test(head), 'the headline names the rank most often last', head);
	const svgLink = await page.getAttribute('#job-svg', 'href');
	const saved = await page.request.get(new URL(svgLink, BASE).href);
	check(saved.status() === 200 && (await saved.text()).startsWith('<?xml'), 'the figure saves as SVG', svgLink);
	await page.screenshot({ path: ART + '/ui-job.png', fullPage: true });

	// Provoked 4xx responses are logged by Chromium as console errors.
	const real = problems.filter((p) => !/status of 40[04]/.test(p));
	check(real.length === 0 && problems.length === expected404.length, 'no console or script errors', problems);
	await browser.close();
	process.exit(fails ? 1 : 0);
})().catch((e) => {
	console.log('not ok ' + (n + 1) + ' - the browser test stopped: ' + String(e.stack || e).split('\n').slice(0, 4).join(' | '));
	process.exit(1);
});
