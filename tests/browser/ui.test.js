// The UI in headless Chromium (tests/ui.sh starts the daemon): the runs
// list, a run's plots with data, zoom issuing a new bucketed request for
// the zoomed span, the CSV links of the view, ranges in lanes (click to
// zoom), the compare page against the API's own answer, an error shown,
// and no console errors anywhere. One TAP line per check; numbering goes
// on from CS_N. Environment: CS_URL, CS_PW (playwright-core's directory),
// CS_CHROME, CS_ARTIFACTS.
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

(async () => {
	const browser = await chromium.launch({ executablePath: process.env.CS_CHROME, args: ['--no-sandbox'] });
	const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
	const problems = [], series = [];
	page.on('console', (m) => m.type() === 'error' && problems.push('console: ' + m.text()));
	page.on('pageerror', (e) => problems.push('page error: ' + e.message));
	page.on('request', (r) => r.url().includes('/series.csv') && series.push(r.url()));
	page.setDefaultTimeout(15000);
	const expected404 = []; // errors the test provokes on purpose

	// --- the runs list ---
	await page.goto(BASE + '/');
	await page.waitForSelector('body[data-ready="1"]');
	const rows = await page.$$eval('#runs tr[data-run]', (trs) => trs.map((t) => t.textContent));
	check(rows.length === 4 && rows[0].includes('example') && rows[1].includes('sim') && rows[2].includes('simk') && rows[3].includes('phases'),
		'the runs page lists the 4 runs', rows);
	await page.screenshot({ path: ART + '/ui-runs.png', fullPage: true });

	// --- a run: plots with data ---
	series.length = 0;
	await page.click('#runs a:text-is("example")');
	await page.waitForSelector('body[data-page="run"][data-loads="1"]');
	const run = await (await page.request.get(BASE + '/api/v1/runs/example')).json();
	const full = [run.t_min, run.t_max + 1];
	const first = series[0] ? params(series[0]) : {};
	const points = +(await page.getAttribute('body', 'data-points'));
	check(series.length === 1 && first.metric === 'gpc__cycles_elapsed.max,sm__inst_executed.sum' && +first.buckets >= 10 &&
		+first.from === full[0] && +first.to === full[1],
	'the run page asks for the first two metrics, bucketed, over the whole run', series);
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
	check(series.length === 1 && +z.buckets >= 10 && near(+z.from, full[0] + span * 0.25) && near(+z.to, full[0] + span * 0.5),
		'zoom issues one new bucketed request for the zoomed span (' + z.from + '..' + z.to + ', ' + z.buckets + ' buckets)', series);
	const body = await (await page.request.get(series[series.length - 1])).text();
	const lines = body.trim().split('\n');
	check(lines[0].startsWith('t0,t1,lts__t_sectors.sum:min') && lines.length - 1 === +z.buckets &&
		+lines[1].split(',')[0] === +z.from, 'the zoomed request answers ' + z.buckets + ' buckets starting at the zoom', lines.slice(0, 3));
	const link = await page.getAttribute('#csv-buckets', 'href');
	const raw = params(await page.getAttribute('#csv-raw', 'href'));
	check(BASE + link === series[series.length - 1] && raw.from === z.from && raw.to === z.to && raw.buckets === undefined,
		'the CSV links are exactly the view: its buckets, and its raw samples', { link, raw });
	check(page.url().includes('from=' + z.from) && page.url().includes('to=' + z.to), 'the page URL keeps the view (linkable)', page.url());
	await page.screenshot({ path: ART + '/ui-zoomed.png', fullPage: true });

	// double-click: back to the whole run, fetched again
	series.length = 0;
	await page.dblclick('.plot .u-over');
	await page.waitForSelector('body[data-loads="4"]');
	const r = series.length ? params(series[0]) : {};
	check(+r.from === full[0] && +r.to === full[1], 'double-click resets to the whole run with a new request', series);

	// --- ranges under the plot: the simulator run's kernels ---
	series.length = 0;
	await page.goto(BASE + '/#/run/sim?metric=Ltworeadhit,Ltworeadmiss');
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
	check(+k.from === 6000 && +k.to === 14500, 'clicking a kernel in the lane zooms to exactly its span', series);
	await page.screenshot({ path: ART + '/ui-ranges.png', fullPage: true });

	// --- compare ---
	await page.goto(BASE + '/#/compare');
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
	check((await page.$$('#result .plot canvas')).length > 0 && (await page.getAttribute('body', 'data-plots')) === '1',
		'the aligned bins are plotted');
	const rep = await page.request.get(BASE + (await page.getAttribute('#report-link', 'href')));
	check(rep.status() === 200 && (await rep.text()).includes('cs-data'), 'the report link serves the report for the same request');
	await page.screenshot({ path: ART + '/ui-compare.png', fullPage: true });

	// kernel level, reached by URL
	await page.goto(BASE + '/#/compare?hw=simk&sim=sim&kernels=1&hw_metric=' +
		encodeURIComponent('L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]') + '&sim_metric=' + encodeURIComponent('Ltworeadmiss + Ltworeadhit'));
	await page.waitForSelector('body[data-correlated="1"]');
	const kt = await page.$$eval('#result table.list tr', (trs) => trs.slice(1).map((t) => t.children[2].textContent + '/' + t.children[3].textContent));
	check(kt.join(' ') === '10240/10240 20480/20461 5280/5299', 'kernel level by URL: per-kernel totals', kt);

	// a malformed expression: the API's message, shown
	await page.fill('#sim_metric', 'Ltworeadmiss +');
	expected404.push('400');
	await page.click('#correlate');
	await page.waitForSelector('#result .error');
	const err = await page.textContent('#result .error');
	check(/column 15: expected a number/.test(err), 'a malformed expression shows the API\'s error with its column', err);

	// the overlap analysis on the run page: a lane and a table
	await page.goto(BASE + '/#/run/phases?metric=sm__inst_executed.sum,nvlrx__bytes.sum&a=kernel:nccl*&b=*gemm*');
	await page.waitForSelector('body[data-phases]');
	const ph = await page.$$eval('#phase-table tr', (trs) => trs.slice(1).map((t) => t.children[0].textContent.trim() + '=' + t.children[2].textContent));
	check(ph.join(' ') === 'neither=13.9% only A=19.4% A and B=27.8% only B=38.9% tail=16.6% only B outside the tail=22.2%',
		'the run page splits a run into overlap phases (table)', ph);
	const laneH = await page.$eval('#lanes', (c) => c.getBoundingClientRect().height);
	check(laneH >= 3 * 18, 'the phases are drawn as a lane beside the ranges', laneH);
	await page.screenshot({ path: ART + '/ui-phases.png', fullPage: true });

	// Provoked 4xx responses are logged by Chromium as console errors.
	const real = problems.filter((p) => !/status of 400/.test(p));
	check(real.length === 0 && problems.length === expected404.length, 'no console or script errors', problems);
	await browser.close();
	process.exit(fails ? 1 : 0);
})().catch((e) => {
	console.log('not ok ' + (n + 1) + ' - the browser test stopped: ' + String(e.stack || e).split('\n').slice(0, 4).join(' | '));
	process.exit(1);
});
