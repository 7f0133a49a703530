/*
 * cyclescope's browser UI, served by the daemon (docs/http-api.md, "The
 * UI"). Six pages, chosen by the URL's hash:
 *   #/                 the runs list
 *   #/run/ID?metric=a,b&from=&to=&device=
 *                      a run: bucketed plots that re-query at every zoom,
 *                      its ranges in lanes under them, CSV links for the view
 *                      (a running run followed live: &last=S&keep=N)
 *   #/compare?hw=&sim=&hw_metric=&sim_metric=...
 *                      a correlation request built from two runs
 *   #/suite?hw=&hw=&sim=&sim_config=&hw_metric=&sim_metric=...
 *                      a suite's correlation: every kernel of every application
 *   #/collectors       the live collectors, grouped by job, with triggers
 *   #/jobs, #/job/NAME?a=&b=&align=&instances=
 *                      the jobs; one job's ranks on one time axis, stragglers
 * Everything comes from the HTTP API; plots are uPlot's. One ES module a
 * page (runs.js, run.js with live.js and lanes.js, compare.js, suite.js,
 * collectors.js), what they share in common.js and plots.js; this one
 * routes.
 */
import { app, h, seen, setToken, show, showError } from './common.js';
import { runsPage } from './runs.js';
import { collectorsPage } from './collectors.js';
import { comparePage } from './compare.js';
import { suitePage } from './suite.js';
import { jobPage, jobsPage } from './jobs.js';
import { runPage } from './run.js';

// The daemon's token, asked for on a 401 and kept for this tab.
function tokenPage() {
	document.title = 'cyclescope: token';
	const input = h('input', { type: 'password', id: 'token', autocomplete: 'current-password', size: 40 });
	const use = () => {
		setToken(input.value);
		route();
	};
	input.addEventListener('keydown', (ev) => ev.key === 'Enter' && use());
	show(h('h1', {}, 'This daemon needs its token'),
		h('p', {}, 'It was started with --token (or token = in its config). Give the token to read its runs; this tab keeps it until it closes.'),
		h('p', {}, h('label', { for: 'token' }, 'token '), input, ' ', h('button', { type: 'button', id: 'token-use', onclick: use }, 'Use it')));
	input.focus();
}

async function route() {
	const hash = location.hash.replace(/^#/, '') || '/';
	const [path, query] = hash.split('?');
	const params = new URLSearchParams(query || '');
	for (const a of ['data-plots', 'data-points', 'data-loads', 'data-correlated', 'data-picked', 'data-ready', 'data-live', 'data-live-draws', 'data-collectors'])
		document.body.removeAttribute(a);
	if (seen.cleanup)
		seen.cleanup(), (seen.cleanup = null);
	try {
		const m = path.match(/^\/run\/([^/]+)$/);
		if (m) {
			document.body.setAttribute('data-page', 'run');
			await runPage(decodeURIComponent(m[1]), params);
		} else if (path === '/jobs') {
			document.body.setAttribute('data-page', 'jobs');
			await jobsPage();
		} else if (path.startsWith('/job/')) {
			document.body.setAttribute('data-page', 'job');
			await jobPage(decodeURIComponent(path.slice(5)), params);
		} else if (path === '/collectors') {
			document.body.setAttribute('data-page', 'collectors');
			await collectorsPage();
		} else if (path === '/compare') {
			document.body.setAttribute('data-page', 'compare');
			await comparePage(params);
		} else if (path === '/suite') {
			document.body.setAttribute('data-page', 'suite');
			await suitePage(params);
		} else if (path === '/' || path === '') {
			document.body.setAttribute('data-page', 'runs');
			await runsPage();
		} else {
			// an address no page has: said, not the run list in its place
			document.body.setAttribute('data-page', 'unknown');
			document.title = 'cyclescope: no such page';
			show(h('h1', {}, 'No such page'), h('p', { class: 'error', id: 'no-page' }, 'There is no page #' + path +
				'. The pages: ', h('a', { href: '#/' }, 'runs'), ', ', h('a', { href: '#/jobs' }, 'jobs'), ', ',
				h('a', { href: '#/collectors' }, 'collectors'), ', ', h('a', { href: '#/compare' }, 'compare'), ', ',
				h('a', { href: '#/suite' }, 'suite'), '.'));
		}
	} catch (e) {
		if (e.needsToken) {
			tokenPage();
		} else {
			document.title = 'cyclescope: error';
			show(h('h1', {}, 'Something went wrong'));
			showError(app, e);
		}
	}
	document.body.setAttribute('data-ready', '1');
}

if (typeof uPlot === 'undefined') {
	showError(app, new Error('uPlot did not load (/ui/uPlot.iife.min.js): run "make web-assets" where the daemon was built'));
} else {
	window.addEventListener('hashchange', route);
	route();
}
