// What the plots and figures share: kernel colours and short names, the
// figure downloads and the step lines samples are drawn as.
import { app, fetchText, h, showError } from './common.js';

// tab10: kernels coloured by name, the names running longest in view
// first (as the CLI's figures, web/plot.c), past ten grey.
export const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
export function kernelColors(all) {
	const tot = new Map();
	for (const r of all)
		if (r.kind === 'kernel' || r.kind === 'sim-kernel')
			tot.set(r.short, (tot.get(r.short) || 0) + (r.t1 - r.t0));
	const rank = [...tot.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
	return new Map(rank.map(([name], i) => [name, PALETTE[i] || '#999999']));
}
// "void ns::gemm<float, 128>(float const*, int)" -> "ns::gemm"; a name
// that is no signature ("kernel 2") stays as it is
export function shortName(full) {
	let s = String(full || '');
	if (!s.includes('('))
		return s;
	for (let k = 0; k < 8 && /[<(]/.test(s); k++)
		s = s.replace(/<[^<>]*>/g, '').replace(/\([^()]*\)/g, '');
	s = s.trim();
	const sp = s.lastIndexOf(' ');
	return (sp >= 0 ? s.slice(sp + 1) : s) || String(full || '');
}

// Downloads: the view's figure as the daemon draws it (web/figure.h),
// as SVG, or rasterised at 2x into a PNG.
export function download(blob, name) {
	const a = h('a', { href: URL.createObjectURL(blob), download: name });
	document.body.append(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
export async function saveFigure(url, name, png) {
	const svg = await fetchText(url);
	if (!png)
		return download(new Blob([svg], { type: 'image/svg+xml' }), name + '.svg');
	const img = new Image();
	const src = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
	await new Promise((ok, bad) => { img.onload = ok; img.onerror = () => bad(new Error('the SVG did not render')); img.src = src; });
	const c = document.createElement('canvas');
	c.width = img.naturalWidth * 2;
	c.height = img.naturalHeight * 2;
	const g = c.getContext('2d');
	g.fillStyle = '#fff';
	g.fillRect(0, 0, c.width, c.height);
	g.drawImage(img, 0, 0, c.width, c.height);
	URL.revokeObjectURL(src);
	const blob = await new Promise((ok) => c.toBlob(ok, 'image/png'));
	download(blob, name + '.png');
}
export function figureButtons(url, name, where) {
	const b = (label, png) => h('button', { class: 'fig', 'data-format': png ? 'png' : 'svg', title: 'save this figure as ' + label,
		onclick: () => saveFigure(url(), name(), png).catch((e) => showError(where || app, e)) }, label);
	return h('span', { class: 'figbtns' }, b('SVG', false), ' ', b('PNG', true));
}

// Rows [t0, t1, values...] -> x and y arrays drawn as steps: each
// value held over its own interval, a break where intervals do not touch.
export function steps(rows, ys) {
	const x = [], out = ys.map(() => []);
	rows.forEach((r, i) => {
		x.push(r.t0);
		ys.forEach((y, k) => out[k].push(y[i]));
		const next = rows[i + 1];
		if (!next || next.t0 !== r.t1) {
			x.push(r.t1);
			ys.forEach((y, k) => out[k].push(next ? null : y[i]));
		}
	});
	return [x, out];
}
