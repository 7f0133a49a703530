/*
 * suite.test.js - the suite page (#/suite) against a daemon over a suite
 * made by tests/tools/mksuite.py (tests/ui.sh): reached by URL, it shows
 * the statistics GET /api/v1/correlate?suite=1 answers, the scatter figure
 * (a point per kernel, configuration and statistic), and a click on a
 * point shows that kernel's two sides, the values the pair CSV holds, with
 * its row marked in the pair table; no console errors. A screenshot goes
 * to CS_ARTIFACTS/ui-suite.png. TAP lines numbered from CS_N.
 */
const { chromium } = require(process.env.CS_PW);
const BASE = process.env.CS_URL;
const ART = process.env.CS_ARTIFACTS;
let n = +(process.env.CS_N || 0), fails = 0;
const ok = (c, d, detail) => {
	n++;
	if (!c) fails++;
	console.log((c ? 'ok ' : 'not ok ') + n + ' - ' + d);
	if (!c && detail !== undefined)
		console.log('#   ' + JSON.stringify(detail).slice(0, 1500));
};

(async () => {
	const browser = await chromium.launch({ executablePath: process.env.CS_CHROME, args: ['--no-sandbox'] });
	const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
	const problems = [];
	page.on('console', (m) => m.type() === 'error' && problems.push('console: ' + m.text()));
	page.on('pageerror', (e) => problems.push('page error: ' + e.message));
	page.setDefaultTimeout(60000);
	try {
		const q = new URLSearchParams();
		q.append('hw', 'job:hw0');
		q.append('hw', 'job:hw1');
		q.append('sim', 'suite-sim');
		q.append('sim_config', 'CFG-A');
		q.append('sim_config', 'CFG-B');
		q.append('hw_metric', 'gpc__cycles_elapsed.avg');
		q.append('sim_metric', 'gpu_tot_sim_cycle');
		q.append('hw_metric', 'lts__t_sectors_srcunit_tex_op_read.sum');
		q.append('sim_metric', 'L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]');
		q.set('app_map', process.env.CS_APP_MAP);
		await page.goto(BASE + '/#/suite?' + q.toString());
		await page.waitForSelector('body[data-page="suite"][data-correlated="2"]');
		const api = await (await page.request.get(BASE + '/api/v1/correlate?suite=1&' + q.toString())).json();
		const shown = await page.$$eval('table.suite-stats', (ts) => ts.map((t) => [...t.querySelectorAll('tr')].slice(1).map((r) => [r.children[0].textContent, r.children[2].textContent, r.children[4].textContent])));
		const want = api.statistics.map((s) => s.configurations.map((c) => [c.configuration, c.pearson.toFixed(4), c.mape_pct.toFixed(2) + '%']));
		ok(JSON.stringify(shown) === JSON.stringify(want), 'the suite page shows the statistics /api/v1/correlate?suite=1 answers (r and MAPE of 2 statistics x 2 configurations)', { shown, want });
		const pts = await page.$$eval('.suite-figure .figure circle[data-i]', (cs) => cs.length);
		ok(pts === 80, 'the figure has a point per kernel, configuration and statistic (' + pts + ')');
		// the 4th point of configuration B in the first panel
		const circle = await page.$('.suite-figure .figure > svg > svg:nth-of-type(1) g.series:nth-of-type(2) circle[data-i="3"]');
		const title = await circle.evaluate((c) => c.querySelector('title').textContent);
		await circle.click({ force: true });
		await page.waitForSelector('#pair-detail');
		const detail = await page.$eval('#pair-detail', (d) => ({ head: d.querySelector('h2').textContent, big: [...d.querySelectorAll('.big')].map((b) => b.textContent) }));
		const csv = await (await page.request.get(BASE + '/api/v1/correlate?suite=1&format=csv&' + q.toString())).text();
		const rows = csv.trim().split('\r\n').slice(1).map((l) => l.split(','));
		const mine = rows.filter((r) => r[0].startsWith('gpc__cycles_elapsed.avg') && r[1] === 'CFG-B');
		const r = mine[3];
		ok(detail.head === r[4] + ' #' + r[5] + ' (CFG-B)' && detail.big[0] === r[6] && detail.big[1] === r[7] && title.includes(r[4] + ' #' + r[5]),
			'a click on a point shows that kernel\'s hardware and simulator values, those of the pair CSV (' + detail.head + ')', { detail, r, title });
		const picked = await page.$$eval('#pair-table tr.picked', (t) => t.map((x) => x.textContent));
		ok(picked.length === 1 && picked[0].includes(r[4]), 'its row in the pair table is marked', picked);
		await page.screenshot({ path: ART + '/ui-suite.png', fullPage: true });
		ok(problems.length === 0, 'no console or script errors on the suite page', problems);
	} catch (e) {
		ok(false, 'the suite page test ran to its end: ' + e.message);
	}
	await browser.close();
	process.exit(fails ? 1 : 0);
})();
