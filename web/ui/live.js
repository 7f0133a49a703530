// A running run, followed (GET /api/v1/runs/{run}/follow).
import { API, LIVE_KEEP, LIVE_RANGES, authed, fetchJSON, fetchText, fmtSpan, fmtTime, h, num, parseCSV, plotWidth, qs, seen, showError } from './common.js';
import { shortName, steps } from './plots.js';

// The plotted metrics' newest samples (of one device) stream into a
// buffer of at most `keep` samples and the run's ranges into one of
// LIVE_RANGES, the oldest dropped first, so the page's memory is
// bounded whatever the run's length. Following, the view is the
// newest `last` seconds (cycles on a cycle run), redrawn from the
// buffer up to 4 times a second; a view the user chose stays put
// (goto) until "Follow the newest". Pause closes the stream (the
// daemon does no work for it); resume reopens it from where it
// stopped, at most a window back. At the run's end: the stream
// closed, the final status, the view loaded as any run's.
export function liveFollow(pg, following) {
	const keep = Math.round(Math.max(100, Math.min(1e6, num(pg.params.get('keep')) ?? LIVE_KEEP)));
	const perUnit = pg.unit === 'ns' ? 1e9 : 1; // the window is in s on ns runs, in cycles on cycle runs
	let span = Math.max(pg.unit === 'ns' ? 1e6 : 1, (num(pg.params.get('last')) || (pg.unit === 'ns' ? 10 : 1e7)) * perUnit);
	const L = (seen.live = { following, paused: false, ended: false, es: null, keep, received: 0, kept: 0, draws: 0, t1: null, lagNs: null, follows: 0 });
	let buf = null, lastT0 = null, streamed = null, header = null, nowNs = null, lastData = 0, dirty = false;
	let rangeBuf = [], exprData = null, exprAsked = 0, exprBusy = false, retry = null;
	const rangeCounts = new Map(); // by kind, of all the run's ranges (a stream sends them all)
	const winIn = h('input', { type: 'number', id: 'live-window', min: pg.unit === 'ns' ? 0.001 : 1, step: 'any', value: span / perUnit,
		title: 'how much of the run\'s newest end the view shows while following' });
	const followBtn = h('button', { id: 'live-follow', title: 'the view scrolls with the newest samples again' }, 'Follow the newest');
	const pauseBtn = h('button', { id: 'live-pause', title: 'stop streaming (the view stays as it is); Resume goes on from where it stopped' }, 'Pause');
	const lagEl = h('span', { id: 'live-lag', class: 'live-lag', title: pg.unit === 'ns'
		? 'How far behind the run the newest sample shown is: the daemon\'s clock when it last sent samples (now_ns of the follow stream\'s status event) minus the end (t1) of the newest sample received. It includes the collector\'s buffering, the daemon\'s commit (commit_ms, 50 ms; partial chunks every live_flush_ms, 100 ms, while followed) and its look at the store (100 ms). Meaningful when the run\'s times are wall-clock ns, as a collector\'s are.'
		: 'A cycle run\'s times are not wall-clock: no lag can be worked out.' });
	const countEl = h('span', { id: 'live-count', class: 'note', title: 'the browser keeps at most ' + keep + ' samples (the newest) and ' + LIVE_RANGES + ' ranges; older ones are dropped (zoom to fetch any span from the daemon)' });
	followBtn.hidden = following;
	pg.liveBar.replaceChildren(h('label', { for: 'live-window' }, 'follow the newest '), winIn, pg.unit === 'ns' ? ' s ' : ' cycles ', followBtn, ' ', pauseBtn, ' ', lagEl, ' ', countEl);

	const wanted = () => ({ metric: (pg.chosen.length ? pg.chosen : pg.metrics.slice(0, 1).map((m) => m.name)).join(','), device: pg.devices.length > 1 ? pg.device : undefined });
	const same = (a, b) => a && b && a.metric === b.metric && a.device === b.device;
	// the address of the followed view: no from/to, so that it opens following
	function address() {
		history.replaceState(null, '', '#/run/' + pg.run.id + '?' + qs({
			metric: pg.chosen.join(','), expr: pg.exprs.join(';') || undefined, rate: pg.rate !== 'sample' ? pg.rate : undefined,
			device: pg.devices.length > 1 ? pg.device : undefined, last: span / perUnit, keep: pg.params.get('keep') || undefined,
		}));
	}
	function state() {
		const s = L.ended ? 'ended' : L.paused ? 'paused' : L.following ? 'following' : 'detached';
		document.body.setAttribute('data-live', s);
		if (pg.liveBadge) {
			pg.liveBadge.textContent = L.paused ? 'paused' : 'live';
			pg.liveBadge.classList.toggle('paused', L.paused);
		}
		followBtn.hidden = L.following;
		pauseBtn.textContent = L.paused ? 'Resume' : 'Pause';
	}
	function close() {
		if (L.es)
			L.es.close(), (L.closed = L.es.readyState);
		L.es = null;
		clearTimeout(retry);
	}
	// The stream from `from` (a t0 as a decimal string: the run's
	// times are past 2^53, so exact only as text or BigInt).
	function open(from) {
		const w = wanted();
		if (!same(w, streamed))
			buf = null, lastT0 = null, header = null, exprData = null; // other columns: a new buffer
		streamed = w;
		// every stream sends the run's ranges from its first: the ones held go
		rangeBuf = [];
		rangeCounts.clear();
		const es = new EventSource(authed(API + '/runs/' + pg.run.id + '/follow?' + qs({ metric: w.metric || undefined, device: w.device, from })));
		L.es = es;
		L.follows++;
		const mine = (f) => (e) => es === L.es && f(e.data);
		es.addEventListener('header', mine((d) => (header = parseCSV(d + '\n').header)));
		es.addEventListener('samples', mine(addSamples));
		es.addEventListener('ranges', mine(addRanges));
		es.addEventListener('status', mine((d) => onStatus(JSON.parse(d))));
		es.addEventListener('end', mine((d) => finish(JSON.parse(d))));
		// a broken stream is not left to the browser's own reconnect,
		// which would ask for the same from= again
		es.onerror = () => {
			if (es !== L.es)
				return;
			close();
			lagEl.textContent = 'connection lost: reconnecting…';
			retry = setTimeout(reopen, 2000);
		};
	}
	// Open again after a pause or a lost connection: where it stopped
	// (its next t0), but at most one window (or `keep` samples) back.
	async function reopen() {
		let r;
		try {
			r = await fetchJSON(API + '/runs/' + pg.run.id);
		} catch (e) {
			retry = setTimeout(reopen, 2000);
			return;
		}
		if (L.paused || L.ended || L.es)
			return;
		if (r.status !== 'running')
			return finish({ status: r.status, samples: r.samples });
		let back = span;
		if (buf && buf.t0.length > 1)
			back = Math.min(back, (keep * (buf.t1[buf.t1.length - 1] - buf.t0[0])) / buf.t0.length);
		let from = r.t_max === null ? 0n : BigInt(Math.max(0, Math.floor(r.t_max - back)));
		if (lastT0 !== null && same(wanted(), streamed) && BigInt(lastT0) + 1n > from)
			from = BigInt(lastT0) + 1n;
		open('@' + from);
		state();
	}
	// Rows of series.csv (the header's columns) into the buffer.
	function addSamples(text) {
		if (!header)
			return;
		if (!buf) {
			buf = { t0: [], t1: [], cols: new Map() };
			header.forEach((name, i) => name !== 't0' && name !== 't1' && name !== 'device' && name !== 'seq' && buf.cols.set(name, { i, v: [] }));
		}
		const i0 = header.indexOf('t0'), i1 = header.indexOf('t1');
		let n = 0, last = null;
		for (const line of text.split('\n')) {
			if (!line)
				continue;
			const f = line.split(',');
			buf.t0.push(+f[i0]);
			buf.t1.push(+f[i1]);
			for (const c of buf.cols.values())
				c.v.push(f[c.i] === '' || f[c.i] === undefined ? null : +f[c.i]);
			last = f[i0];
			n++;
		}
		if (!n)
			return;
		lastT0 = last;
		L.received += n;
		const extra = buf.t0.length - keep;
		if (extra > 0) {
			buf.t0.splice(0, extra);
			buf.t1.splice(0, extra);
			for (const c of buf.cols.values())
				c.v.splice(0, extra);
		}
		L.kept = buf.t0.length;
		L.t1 = buf.t1[buf.t1.length - 1];
		if (pg.run.t_min === null && pg.full[1] <= 1)
			pg.full[0] = pg.origin = buf.t0[0], (pg.run.t_min = buf.t0[0]);
		pg.full[1] = Math.max(pg.full[1], L.t1 + 1);
		lastData = performance.now();
		dirty = true;
	}
	function addRanges(text) {
		const t = parseCSV((text.startsWith('kind,name,') ? '' : 'kind,name,t0,t1,device,stream,correlation_id,pid,tid,bytes\n') + text + '\n');
		for (const r of t.rows)
			rangeCounts.set(r[0], (rangeCounts.get(r[0]) || 0) + 1), rangeBuf.push({ kind: r[0], name: r[1], short: shortName(r[1]), stored: r[1], t0: num(r[2]), t1: num(r[3]), stream: r[5] });
		if (rangeBuf.length > LIVE_RANGES)
			rangeBuf.splice(0, rangeBuf.length - LIVE_RANGES);
		dirty = true;
	}
	function onStatus(s) {
		nowNs = s.now_ns;
		pg.run.samples = s.samples;
		pg.samplesDd.textContent = s.samples + ' / ' + pg.metrics.length;
		L.lagNs = pg.unit === 'ns' && L.t1 !== null ? nowNs - L.t1 : null;
		showLag();
	}
	function showLag() {
		const idle = lastData ? (performance.now() - lastData) / 1000 : 0;
		let t;
		if (L.lagNs === null)
			t = pg.unit === 'ns' ? '' : 'lag: n/a (cycles)';
		else if (L.lagNs < -1e9 || L.lagNs > 864e11)
			t = 'lag: n/a (the times are not wall-clock)';
		else
			t = 'lag ' + fmtTime(Math.max(0, L.lagNs), 0);
		if (idle > 2 && !L.paused)
			t += (t ? ', ' : '') + 'no new samples for ' + Math.floor(idle) + ' s';
		lagEl.textContent = t;
		countEl.textContent = L.received + ' samples received, ' + L.kept + ' kept (at most ' + keep + ')';
		if (rangeCounts.size)
			pg.rangesDd.textContent = pg.rangesText([...rangeCounts].map(([kind, count]) => ({ kind, count })));
		pg.timeDd.textContent = pg.timeText();
	}

	// The view: the newest `span` of the buffer, bucketed in the
	// browser (min, max, mean a pixel) when it holds more samples than
	// half the plot's pixels, as the daemon buckets a fixed view.
	function redraw() {
		dirty = false;
		if (!buf || !buf.t0.length) {
			pg.statusLine.textContent = 'following: waiting for samples…';
			return;
		}
		const to = L.t1, from = Math.max(pg.full[0], to - span);
		pg.view = [from, to];
		const n = buf.t0.length;
		let i = 0, hi = n;
		while (i < hi) {
			const mid = (i + hi) >> 1;
			if (buf.t0[mid] < from)
				i = mid + 1;
			else
				hi = mid;
		}
		const count = n - i, raw = count <= plotWidth() / 2;
		const nb = pg.buckets(), per = (to - from) / nb;
		// sample k's bucket, and the buckets' [t0, t1)
		let rows, slot;
		if (raw) {
			rows = [];
			for (let k = i; k < n; k++)
				rows.push({ t0: buf.t0[k], t1: buf.t1[k] });
		} else {
			const used = new Map();
			slot = [];
			for (let k = i; k < n; k++) {
				const b = Math.min(nb - 1, Math.floor((buf.t0[k] - from) / per));
				if (!used.has(b))
					used.set(b, used.size);
				slot.push(used.get(b));
			}
			rows = [...used.keys()].map((b) => ({ t0: from + b * per, t1: from + (b + 1) * per }));
		}
		pg.ranges = rangeBuf.filter((r) => r.t1 >= from && r.t0 <= to);
		let points = 0;
		pg.applying = true;
		for (const u of pg.plots) {
			const c = u.csCol;
			let ys, x;
			if (c.isMetric) {
				const col = buf.cols.get(c.label);
				const k = c.scale || 1;
				const val = (j) => {
					const v = col ? col.v[j] : null;
					return v === null ? null : c.rated ? ((v * perUnit) / (buf.t1[j] - buf.t0[j])) * k : v * k;
				};
				if (raw) {
					const m = [];
					for (let j = i; j < n; j++)
						m.push(val(j));
					ys = [m, m.map(() => null), m.map(() => null)];
				} else {
					const lo = rows.map(() => null), top = rows.map(() => null), sum = rows.map(() => 0), cnt = rows.map(() => 0);
					for (let j = i; j < n; j++) {
						const v = val(j), s = slot[j - i];
						if (v === null)
							continue;
						lo[s] = lo[s] === null ? v : Math.min(lo[s], v);
						top[s] = top[s] === null ? v : Math.max(top[s], v);
						sum[s] += v;
						cnt[s]++;
					}
					ys = [sum.map((s, b) => (cnt[b] ? s / cnt[b] : null)), lo, top];
				}
				points += ys[0].filter((v) => v !== null).length;
				[x, ys] = steps(rows, ys);
			} else {
				// an expression: the daemon evaluates it, asked for
				// the view at most once a second (fetchExprs)
				[x, ys] = exprData ? exprSteps(exprData, c) : [[], [[], [], []]];
			}
			u.batch(() => {
				u.setData([x, ys[0], ys[1], ys[2]]);
				u.setScale('x', { min: from, max: to });
			});
		}
		pg.applying = false;
		fetchExprs(raw);
		L.draws++;
		// what the view ends on: the newest sample (its t0 exactly, as text)
		L.shown = { t1: to, t0: lastT0, values: Object.fromEntries([...buf.cols].map(([name, c]) => [name, c.v[c.v.length - 1]])) };
		const st = 10 ** Math.floor(Math.log10(Math.max(1, to - from)) - 2);
		pg.statusLine.textContent = 'following the newest ' + fmtSpan(to - from, pg.unit, 0) + ': ' +
			(raw ? count + ' samples' : count + ' samples in ' + rows.length + ' buckets of ' + fmtSpan(per, pg.unit, 0)) + ' up to ' +
			fmtSpan(to - pg.origin, pg.unit, st) + '; ' + pg.ranges.length + (pg.ranges.length === 1 ? ' range' : ' ranges') + ' in view' +
			(buf.t0[0] > from && L.received > n ? '; samples before ' + fmtSpan(buf.t0[0] - pg.origin, pg.unit, st) + ' are past the browser\'s bound (' + keep + ')' : '');
		pg.updateLinks();
		document.body.setAttribute('data-plots', pg.plots.length);
		document.body.setAttribute('data-points', points);
		document.body.setAttribute('data-live-draws', L.draws);
	}
	function fetchExprs(raw) {
		const cols = pg.plots.map((u) => u.csCol).filter((c) => !c.isMetric);
		// once a second, or 4 times a window when that is shorter
		const every = Math.max(200, Math.min(1000, (1000 * (pg.view[1] - pg.view[0])) / perUnit / 4 / (pg.unit === 'ns' ? 1 : pg.run.clock_hz || 1e9)));
		if (!cols.length || exprBusy || performance.now() - exprAsked < every)
			return;
		exprBusy = true;
		exprAsked = performance.now();
		const [from, to] = pg.view;
		const url = API + '/runs/' + pg.run.id + '/series.csv?' + qs({ expr: cols.map((c) => c.expr).join(';'), device: pg.devices.length > 1 ? pg.device : undefined,
			from: '@' + Math.floor(from), to: '@' + (Math.ceil(to) + 1), buckets: raw ? undefined : pg.buckets() });
		fetchText(url).then((t) => ((exprData = { t: parseCSV(t), raw }), (dirty = true)))
			.catch((e) => { pg.errors.replaceChildren(); showError(pg.errors, e); })
			.finally(() => (exprBusy = false));
	}
	function exprSteps(d, c) {
		const t = d.t, col = (name) => t.header.indexOf(name);
		const rows = t.rows.map((r) => ({ t0: num(r[col('t0')]), t1: num(r[col('t1')]) }));
		const k = c.scale || 1;
		const pick = (j) => t.rows.map((r) => (j < 0 || num(r[j]) === null ? null : num(r[j]) * k));
		const ys = d.raw ? [pick(col(c.col)), t.rows.map(() => null), t.rows.map(() => null)]
			: [pick(col(c.col + ':mean')), pick(col(c.col + ':min')), pick(col(c.col + ':max'))];
		return steps(rows, ys);
	}

	async function finish(end) {
		if (L.ended)
			return;
		L.ended = true;
		close();
		clearInterval(tick);
		if (pg.liveBadge)
			pg.liveBadge.remove();
		pg.liveBar.replaceChildren(h('span', { class: 'note', id: 'live-ended' }, 'The run ended (' + end.status + ', ' + end.samples + ' samples) and is no longer followed.'));
		pg.statusDd.textContent = end.status;
		pg.live = null;
		try {
			const r = await fetchJSON(API + '/runs/' + pg.run.id);
			Object.assign(pg.run, r);
			pg.statusDd.textContent = r.status + (r.dropped ? ', ' + r.dropped + ' samples dropped' : '');
			pg.samplesDd.textContent = r.samples + ' / ' + pg.metrics.length;
			pg.rangesDd.textContent = pg.rangesText(r.range_summary || []);
			if (r.t_min !== null)
				pg.full[0] = r.t_min, (pg.full[1] = r.t_max + 1);
			pg.timeDd.textContent = pg.timeText();
		} catch (e) {
			/* the status from the stream stays */
		}
		// the view as it was, now from the daemon, as for any run
		await pg.load(Math.max(pg.full[0], Math.floor(pg.view[0])), Math.min(pg.full[1], Math.ceil(pg.view[1]) + 1));
		state();
	}

	winIn.addEventListener('change', () => {
		const v = +winIn.value;
		if (!(v > 0))
			return;
		span = Math.max(pg.unit === 'ns' ? 1e6 : 1, v * perUnit);
		if (L.following)
			address(), redraw();
	});
	followBtn.addEventListener('click', () => L.follow());
	pauseBtn.addEventListener('click', () => {
		if (L.ended)
			return;
		L.paused = !L.paused;
		if (L.paused)
			close(), showLag();
		else
			reopen();
		state();
	});
	const tick = setInterval(() => {
		if (dirty && L.following && !L.paused)
			redraw();
		showLag();
	}, 250);

	Object.assign(L, {
		// the user chose a view: it stays (the stream goes on)
		detach() {
			if (!L.following)
				return;
			L.following = false;
			state();
		},
		follow() {
			L.following = true;
			address();
			state();
			redraw();
		},
		// the plotted columns changed: stream the new ones
		sync() {
			if (L.following)
				address();
			exprData = null;
			exprAsked = 0;
			if (!L.paused && !L.ended && !same(wanted(), streamed)) {
				close();
				reopen();
			}
		},
		redraw,
		stop() {
			close();
			clearInterval(tick);
		},
		// for the tests: every sample kept once, in order
		ordered: () => !buf || buf.t0.every((t, k) => k === 0 || t > buf.t0[k - 1]),
	});
	state();
	open(pg.run.t_max === null ? undefined : '@' + Math.max(0, Math.floor(pg.run.t_max - span)));
	if (following)
		redraw();
	return L;
}
