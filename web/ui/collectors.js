// The live collectors (#/collectors).
import { API, authHeaders, fetchJSON, fmtNum, fmtTime, h, seen, show, showError, tokenError } from './common.js';

// GET /api/v1/collectors every second, grouped by job; triggers through
// POST /api/v1/collectors/{id}/window and .../collectors/window (job=,
// all=1). Rows are updated in place, so a button stays under the mouse.
export async function collectorsPage() {
	document.title = 'cyclescope: collectors';
	const secs = h('input', { type: 'number', id: 'trigger-seconds', min: 0, step: 'any', value: 5, title: 'how long each window samples' });
	const label = h('input', { id: 'trigger-name', placeholder: 'label (optional)', maxlength: 120,
		title: 'the trigger range\'s name in the run, so that what was asked for shows' });
	const allBtn = h('button', { id: 'trigger-all', title: 'open a window in every live collector' }, 'Trigger all');
	const result = h('div', { id: 'trigger-result', class: 'trigger-result' });
	const groups = h('div', { id: 'collector-groups' });
	const stamp = h('span', { class: 'note', id: 'collectors-stamp' });
	show(h('h1', {}, 'Live collectors'),
		h('p', { class: 'note' }, 'The collectors streaming to this daemon now, refreshed every second. A trigger opens a sampling window ',
			'(armed collectors sample only then); each one is stored as a trigger range in the run.'),
		h('p', { class: 'trigger-form' }, h('label', { for: 'trigger-seconds' }, 'window '), secs, ' s',
			h('label', { for: 'trigger-name' }, 'label '), label, allBtn, stamp),
		result, groups);

	const COLS = ['id', 'host', 'pid', 'command', 'mode', 'state', 'devices', 'metrics', 'interval', 'samples', 'samples/s', 'dropped', 'windows', 'refused', 'run', '', ''];
	const rows = new Map(), sections = new Map();
	let timer = null, gone = false, latest = [];
	const form = (extra) => {
		const f = new URLSearchParams(extra);
		f.set('seconds', secs.value);
		if (label.value.trim())
			f.set('name', label.value.trim());
		return f;
	};
	// a POST's answer: the JSON (an object, or one per collector), or its error
	async function post(url, body) {
		const r = await fetch(url, { method: 'POST', body, headers: authHeaders() });
		if (r.status === 401)
			throw tokenError(r);
		const t = await r.text();
		let j = null;
		try {
			j = JSON.parse(t);
		} catch (e) {
			/* not JSON */
		}
		if (!r.ok && !Array.isArray(j))
			throw new Error(((j && j.error) || t || r.statusText) + ' (HTTP ' + r.status + ')');
		return j;
	}
	function note(id, text, bad) {
		const row = rows.get(String(id));
		if (!row)
			return;
		row.msg.textContent = text + ' (' + new Date().toLocaleTimeString() + ')';
		row.msg.classList.toggle('bad', !!bad);
	}
	function report(what, results) {
		const ok = results.filter((x) => x.status === 200 || x.done).length;
		result.replaceChildren(h('div', { class: ok === results.length ? 'ok' : 'warn' }, what + ': ' + ok + ' of ' + results.length + ' windows opened'),
			...results.filter((x) => x.error).map((x) => h('div', { class: 'warn' }, 'collector ' + x.collector + ': ' + x.error + ' (' + x.status + ')')));
		for (const x of results)
			note(x.collector, x.error ? x.error : x.done, !!x.error);
	}
	async function trigger(what, url, body, one) {
		result.replaceChildren();
		try {
			const j = await post(url, body);
			if (one)
				note(one, j.done || 'done');
			else
				report(what, Array.isArray(j) ? j : [j]);
		} catch (e) {
			if (one)
				note(one, String(e.message || e), true);
			else
				showError(result, e);
		}
		refresh();
	}
	allBtn.addEventListener('click', () => trigger('all', API + '/collectors/window', form({ all: '1' })));

	function cells(c) {
		const age = c.status_age_ms > 5000 ? ' (no status for ' + Math.round(c.status_age_ms / 1000) + ' s)' : '';
		return [c.id, c.host, c.pid, c.cmdline, c.mode, c.state + age, c.devices, c.metrics,
			c.interval_ns ? fmtTime(c.interval_ns, 0) : '', c.samples, fmtNum(c.samples_per_s, 0), c.dropped, c.windows,
			c.refused + c.rate_limited ? c.refused + ' / ' + c.rate_limited + ' limited' : '0'];
	}
	function rowFor(c) {
		let row = rows.get(String(c.id));
		if (!row) {
			const td = COLS.slice(0, 14).map((k, i) => h('td', { class: [0, 2, 9, 10, 11, 12].includes(i) ? 'num' : i === 3 ? 'cmd' : undefined }));
			const run = h('td', { class: 'run' });
			const btn = h('button', { class: 'trigger', title: 'open a window in this collector now',
				onclick: () => trigger(null, API + '/collectors/' + c.id + '/window', form({}), c.id) }, 'trigger');
			const close = h('button', { class: 'close', title: 'close its window now',
				onclick: () => trigger(null, API + '/collectors/' + c.id + '/window/close', new URLSearchParams(), c.id) }, 'close');
			const msg = h('td', { class: 'msg' });
			// (the buttons last and held in sight: a wide table scrolls under them)
			row = { tr: h('tr', { 'data-collector': c.id, 'data-pid': c.pid }, td, run, msg, h('td', { class: 'act' }, btn, ' ', close)), td, run, btn, close, msg, runId: undefined };
			rows.set(String(c.id), row);
		}
		cells(c).forEach((v, i) => {
			const s = v === null || v === undefined ? '' : String(v);
			if (row.td[i].textContent !== s)
				row.td[i].textContent = s;
		});
		row.td[3].title = c.cmdline;
		row.td[0].title = 'registered ' + new Date(c.since_ns / 1e6).toLocaleString() + '; last status ' + c.status_age_ms + ' ms ago';
		row.tr.setAttribute('data-state', c.state);
		row.close.disabled = c.state !== 'sampling';
		const rid = c.run ? c.run_id ?? c.run : null;
		if (rid !== row.runId) {
			row.runId = rid;
			row.run.replaceChildren(rid === null ? '' : h('a', { href: '#/run/' + encodeURIComponent(rid), title: 'its run, followed live: ' + c.run }, 'run ' + rid));
		}
		return row;
	}
	// one table (its columns line up across jobs), a tbody per job
	// headed by the job's name and its trigger
	const table = h('table', { class: 'list collectors', id: 'collectors' }, h('thead', {}, h('tr', {}, COLS.map((k) => h('th', {}, k)))));
	const wrap = h('div', { class: 'collectors-wrap' }, table);
	function sectionFor(job) {
		let s = sections.get(job);
		if (!s) {
			const count = h('span', { class: 'note' });
			const cell = h('th', { colspan: COLS.length }, h('span', { class: 'job-name' }, job ? 'job ' + job : 'no job'), ' ', count);
			if (job)
				cell.append(' ', h('button', { class: 'trigger-job', 'data-job': job, title: 'open a window in every collector of job ' + job,
					onclick: () => trigger('job ' + job, API + '/collectors/window', form({ job })) }, 'trigger job'));
			const head = h('tr', { class: 'job-head' }, cell);
			s = { el: h('tbody', { class: 'job', 'data-job': job }, head), count, head };
			sections.set(job, s);
		}
		return s;
	}
	function render(list) {
		latest = list;
		// jobs by name, the collectors without one last; in a job, by id
		const jobs = [...new Set(list.map((c) => c.job || ''))].sort((a, b) => (a === '') - (b === '') || (a < b ? -1 : a > b ? 1 : 0));
		const want = [];
		for (const job of jobs) {
			const s = sectionFor(job), mine = list.filter((c) => (c.job || '') === job).sort((a, b) => a.id - b.id);
			s.count.textContent = '(' + mine.length + (mine.length === 1 ? ' collector)' : ' collectors)');
			const trs = [s.head, ...mine.map((c) => rowFor(c).tr)];
			// moved only when the order changed: a click in progress survives a refresh
			if (trs.length !== s.el.children.length || trs.some((tr, i) => s.el.children[i] !== tr))
				s.el.replaceChildren(...trs);
			want.push(s.el);
		}
		for (const [id, row] of rows)
			if (!list.some((c) => String(c.id) === id))
				rows.delete(id), row.tr.remove();
		for (const [job, s] of sections)
			if (!jobs.includes(job))
				sections.delete(job);
		if (want.length + 1 !== table.children.length || want.some((e, i) => table.children[i + 1] !== e))
			table.replaceChildren(table.firstChild, ...want);
		if (!list.length)
			groups.replaceChildren(h('p', { class: 'note', id: 'no-collectors' }, 'No live collectors. One appears here when an application runs under ',
				h('code', {}, 'cyclescope run [--armed] -- CMD'), ' (or with the collector injected) streaming to this daemon\'s socket.'));
		else if (groups.firstChild !== wrap)
			groups.replaceChildren(wrap);
		allBtn.disabled = !list.length;
		stamp.textContent = list.length + (list.length === 1 ? ' collector' : ' collectors') + ', as of ' + new Date().toLocaleTimeString();
		document.body.setAttribute('data-collectors', list.length);
	}
	async function refresh() {
		clearTimeout(timer);
		try {
			const list = await fetchJSON(API + '/collectors');
			if (gone)
				return;
			render(list);
		} catch (e) {
			if (gone)
				return;
			stamp.textContent = 'refresh failed: ' + (e.message || e);
		}
		if (!gone)
			timer = setTimeout(refresh, 1000);
	}
	seen.cleanup = () => {
		gone = true;
		clearTimeout(timer);
	};
	seen.collectors = () => latest;
	await refresh();
}
