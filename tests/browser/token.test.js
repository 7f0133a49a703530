/*
 * token.test.js - the UI against a daemon started with --token: the page
 * loads without it, asks for it, and once given (kept for the tab) shows
 * the runs and other pages without asking again; no cookie carries it.
 * Run by tests/ui.sh; TAP lines numbered from CS_N.
 */
const { chromium } = require(process.env.CS_PW);
const BASE = process.env.CS_URL;
const TOKEN = process.env.CS_TOKEN;
let n = +(process.env.CS_N || 0), fails = 0;
const ok = (c, d) => { n++; if (!c) fails++; console.log((c ? 'ok ' : 'not ok ') + n + ' - ' + d); };

(async () => {
	const browser = await chromium.launch({ executablePath: process.env.CS_CHROME, args: ['--no-sandbox'] });
	const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
	/* a bound for a page that never comes, not a pace: a busy machine
	 * has taken more than 10 s to show the runs */
	page.setDefaultTimeout(60000);
	try {
		await page.goto(BASE + '/#/');
		await page.waitForSelector('#token');
		ok(await page.isVisible('#token'), 'with a token set, the page loads and asks for it');
		await page.fill('#token', 'wrong');
		await page.click('#token-use');
		await page.waitForSelector('#token');
		ok(await page.isVisible('#token'), 'a wrong token: asked again');
		await page.fill('#token', TOKEN);
		await page.click('#token-use');
		await page.waitForSelector('body[data-page="runs"][data-ready="1"] table');
		const names = await page.$$eval('table a', (as) => as.map((a) => a.textContent));
		ok(names.includes('example'), 'with the token the runs list shows (' + names.length + ' links)');
		const cookies = await page.context().cookies();
		const kept = await page.evaluate(() => sessionStorage.getItem('cyclescope_token'));
		ok(cookies.length === 0 && kept === TOKEN, 'the token is kept for the tab, in no cookie');
		await page.goto(BASE + '/#/collectors');
		await page.waitForSelector('body[data-page="collectors"][data-ready="1"]');
		ok(!(await page.isVisible('#token')), 'other pages use it without asking again');
		await page.goto(BASE + '/#/run/example');
		await page.waitForSelector('body[data-page="run"][data-ready="1"]');
		const href = await page.$eval('a[href*="/api/v1/runs/"][href$="access_token=' + encodeURIComponent(TOKEN) + '"]', (a) => a.getAttribute('href')).catch(() => '');
		const r = href ? await page.evaluate(async (u) => (await fetch(u)).status, href) : 0;
		ok(r === 200, 'a run page\'s download links carry the token for a GET (' + href + ': ' + r + ')');
	} catch (e) {
		ok(false, 'token test: ' + e.message);
	}
	await browser.close();
	process.exit(fails ? 1 : 0);
})();
