// What every page shares: the API's address and token, element building,
// fetching, CSV parsing and the number and time formats (docs/ui.md).
export const API = '/api/v1';
export const app = document.getElementById('app');
export const RANGE_KINDS = ['api', 'kernel', 'memcpy', 'memset', 'graph', 'nvtx', 'window', 'trigger', 'sim-kernel', 'phase', 'overlap'];
// The overlap analysis' phases (GET /api/v1/runs/{run}/phases), drawn as the 'overlap' lane.
export const PHASE_COLORS = { 'only A': '#ff7f0e', 'A and B': '#d62728', 'only B': '#1f77b4', tail: '#9467bd', neither: '#dddddd' };
export const RANGE_COLORS = {
	api: '#7f7f7f', kernel: '#1f77b4', memcpy: '#2ca02c', memset: '#98df8a', graph: '#9467bd',
	nvtx: '#c49c94', window: '#bcbd22', trigger: '#e377c2', 'sim-kernel': '#d62728', phase: '#17becf',
};
// A live run's page keeps at most this many of the newest samples
// (each with its t0, t1 and one value per plotted metric; ?keep=N, 100
// to 1000000, changes it) and this many ranges (docs/ui.md).
export const LIVE_KEEP = 50000, LIVE_RANGES = 5000;
// What the page has asked the API for, for people and tests alike.
export const seen = (window.cyclescope = { seriesRequests: [], loads: 0 });

// The daemon's bearer token, when it has one: asked for on a 401 and
// kept for this tab (sessionStorage), sent as the Authorization header,
// and as access_token= on what the browser fetches without headers (the
// follow stream, download links), which the daemon takes on GETs only.
let TOKEN = sessionStorage.getItem('cyclescope_token') || '';
export function setToken(t) {
	TOKEN = t;
	sessionStorage.setItem('cyclescope_token', TOKEN);
}
export const authHeaders = () => (TOKEN ? { Authorization: 'Bearer ' + TOKEN } : {});
export const authed = (url) => (TOKEN && url.startsWith(API) ? url + (url.includes('?') ? '&' : '?') + 'access_token=' + encodeURIComponent(TOKEN) : url);

export function h(tag, attrs, ...kids) {
	const e = document.createElement(tag);
	for (const k in attrs || {}) {
		const v = attrs[k];
		if (v === undefined || v === null || v === false)
			continue;
		if (k.startsWith('on'))
			e.addEventListener(k.slice(2), v);
		else if (k === 'value')
			e.value = v;
		else if (k === 'href')
			e.setAttribute(k, authed(v));
		else
			e.setAttribute(k, v === true ? '' : v);
	}
	for (const kid of kids.flat())
		if (kid !== null && kid !== undefined && kid !== false)
			e.append(kid.nodeType ? kid : String(kid));
	return e;
}

// The page's content, replaced (arrays flattened, empty parts left out).
export function show(...kids) {
	app.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
}

export function qs(p) {
	const u = new URLSearchParams();
	for (const k in p)
		if (p[k] !== undefined && p[k] !== null && p[k] !== '' && p[k] !== false)
			u.set(k, p[k]);
	return u.toString();
}

// A daemon with a token answers 401 until the page has it (docs/ui.md).
export function tokenError(r) {
	const e = new Error('this daemon needs its bearer token (HTTP 401)');
	e.needsToken = true;
	return e;
}

export async function fetchText(url) {
	const r = await fetch(url, { headers: authHeaders() });
	if (r.status === 401)
		throw tokenError(r);
	const t = await r.text();
	if (!r.ok) {
		let msg = t;
		try {
			msg = JSON.parse(t).error || t;
		} catch (e) {
			/* not JSON: the text as it is */
		}
		throw new Error(msg + ' (HTTP ' + r.status + ')');
	}
	return t;
}
export const fetchJSON = async (url) => JSON.parse(await fetchText(url));

// RFC 4180: quoted fields, doubled quotes, CRLF.
export function parseCSV(text) {
	const rows = [];
	let row = [], f = '', q = false;
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (q) {
			if (c !== '"')
				f += c;
			else if (text[i + 1] === '"')
				f += '"', i++;
			else
				q = false;
		} else if (c === '"') {
			q = true;
		} else if (c === ',') {
			row.push(f), (f = '');
		} else if (c === '\n') {
			row.push(f), rows.push(row), (row = []), (f = '');
		} else if (c !== '\r') {
			f += c;
		}
	}
	if (f !== '' || row.length)
		row.push(f), rows.push(row);
	return { header: rows.shift() || [], rows };
}
export const num = (s) => (s === '' || s === undefined || s === null ? null : +s);
// The next time after t that a number holds: t + 1 is t itself past 2^53,
// and a collector's wall-clock ns (about 1.8e18) are well past it.
export function after(t) {
	let d = 1;
	while (t + d === t)
		d *= 2;
	return t + d;
}

// Numbers and times read the same here, in the CLI's SVG figures and in
// the report (web/figure.h, docs/ui.md): an SI prefix chosen by the
// value, and only the decimals the tick step (or 3 digits) needs.
export function decimalsFor(step) {
	for (let d = 0; d < 7; d++) {
		const x = step * 10 ** d;
		if (Math.abs(x - Math.round(x)) <= 1e-6 * Math.max(1, x))
			return d;
	}
	return 6;
}
export function trimZeros(t) {
	return t.includes('.') ? t.replace(/0+$/, '').replace(/\.$/, '') : t;
}
export function fmtNum(v, step) {
	if (v === null || v === undefined || Number.isNaN(v))
		return 'n/a';
	if (v === 0)
		return '0';
	const a = Math.abs(v);
	let [d, p] = [1, ''];
	for (const [q, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1e-3, ''], [1e-6, '\u00b5'], [0, 'n']])
		if (a >= q) {
			[d, p] = q >= 1e3 ? [q, s] : q === 1e-6 ? [1e-6, s] : q === 0 ? [1e-9, s] : [1, s];
			break;
		}
	const x = v / d;
	const t = step > 0 ? trimZeros(x.toFixed(decimalsFor(step / d))) : String(+x.toPrecision(3));
	return (t === '-0' ? '0' : t) + p;
}
export const TIME_UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s'], [1, 'ns']];
export function fmtTime(v, step) {
	if (v === null || v === undefined || Number.isNaN(v))
		return 'n/a';
	const ref = step > 0 ? 100 * step : Math.abs(v);
	const [d, u] = TIME_UNITS.find(([q]) => q <= ref) || [1, 'ns'];
	const x = v / d;
	const t = step > 0 ? trimZeros(x.toFixed(decimalsFor(step / d))) : String(+x.toPrecision(4));
	return (t === '-0' ? '0' : t) + ' ' + u;
}
// A value in a table: exact for integers, 6 significant digits otherwise.
export const fmtExact = (v) => (v === null || v === undefined || Number.isNaN(v) ? 'n/a' : Number.isInteger(v) ? String(v) : String(+v.toPrecision(6)));
// A length or time of a run: ns runs in s/ms/µs/ns, cycle runs in cycles.
export const fmtSpan = (v, unit, step) => (unit === 'ns' ? fmtTime(v, step) : fmtNum(v, step) + ' cycles');
seen.format = { fmtNum, fmtTime }; // docs/ui.md's table is checked against these

export function showError(where, err) {
	where.append(h('div', { class: 'error', role: 'alert' }, String(err.message || err)));
}

// The content box of the page: plots never make it scroll sideways.
export function plotWidth() {
	const cs = getComputedStyle(app);
	return Math.max(480, Math.min(1600, Math.floor(app.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)) - 2));
}

// A time as addresses and options give it (docs/cli.md "Times"): a number
// with an optional unit (ns, us, µs, ms, s, cyc), else the run's unit; from
// the run's origin unless it starts with '@' (an absolute stored time).
// The stored time for run {origin, time_unit, clock_hz}, or an Error.
const TIME_SPEC = /^(@?)((?:\d+\.?\d*|\.\d+)(?:[eE]\+?\d+)?)(ns|us|\u00b5s|ms|s|cyc|cycles?)?$/;
const NS_PER = { ns: 1, us: 1e3, '\u00b5s': 1e3, ms: 1e6, s: 1e9 };
export function parseTime(text, run) {
	const m = TIME_SPEC.exec(String(text).trim());
	if (!m)
		return new Error("'" + text + "': expected a time (a number, optionally with ns, us, ms, s or cyc; @ before it for an absolute stored time)");
	let v = +m[2];
	const u = m[3], cycles = run.time_unit === 'cycle', hz = run.clock_hz || 0;
	if (u && (u.startsWith('cyc') ? !cycles : cycles)) {
		if (!(hz > 0))
			return new Error("'" + text + "': this run counts in " + (cycles ? 'cycles' : 'ns') + ' and records no clock to convert ' + (cycles ? 'time' : 'cycles'));
		v = cycles ? (v * NS_PER[u] * hz) / 1e9 : (v / hz) * 1e9;
	} else if (u && !u.startsWith('cyc'))
		v *= NS_PER[u];
	return Math.round(v) + (m[1] ? 0 : run.origin ?? run.t_min ?? 0);
}
