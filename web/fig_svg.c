/* fig_svg.c - SVG text for the figures: escaped text, attributes, lines (fig_int.h). */
#include "fig_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- output ---- */


static void put_bytes(svg *s, const void *p, size_t n)
{
	if (!s->err && cs_buf_append(s->b, p, n) < 0)
		s->err = -ENOMEM;
}

/* Every format here is markup and numbers, well under the buffer; text
 * of any length goes through put_esc. */
void fig_put(svg *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		put_bytes(s, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Length of the valid UTF-8 sequence at p, 0 when it is not one (overlong
 * forms and surrogates included): an XML parser rejects the whole file. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* Text or attribute content: escaped, control bytes dropped (XML 1.0 has
 * no place for them, and a newline would break a one-line caption). */
void fig_put_esc(svg *s, const char *t)
{
	static const char special[] = "&<>\"'";
	static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
	for (const unsigned char *p = (const unsigned char *)(t ? t : ""); *p;) {
		size_t n = utf8_len(p);
		const char *e = n != 1 ? NULL : strchr(special, *p);
		if (!n)
			put_bytes(s, "\xef\xbf\xbd", 3);
		else if (e)
			fig_put(s, "%s", ent[e - special]);
		else if (n > 1 || (*p >= 0x20 && *p != 0x7f))
			put_bytes(s, p, n);
		p += n ? n : 1;
	}
}

void fig_put_title(svg *s, const char *t)
{
	if (!t)
		return;
	fig_put(s, "<title>");
	fig_put_esc(s, t);
	fig_put(s, "</title>");
}

/* ` name="value"`, the value escaped. */
void fig_put_kv(svg *s, const char *name, const char *value)
{
	fig_put(s, " %s=\"", name);
	fig_put_esc(s, value);
	fig_put(s, "\"");
}

/* <text> at (x, y) with attributes attr and escaped content t. */
void fig_put_text(svg *s, double x, double y, const char *attr, const char *t)
{
	fig_put(s, "<text x=\"%.2f\" y=\"%.2f\" %s>", x, y, attr);
	fig_put_esc(s, t);
	fig_put(s, "</text>\n");
}

/* ` textLength=...` squeezing t into max px when its estimated width at
 * font size fs is more: a long metric expression or caption stays whole
 * and inside the figure instead of running past its edge or into the
 * next panel. Nothing when it fits. */
void fig_put_fit(svg *s, const char *t, double fs, double max)
{
	double w = 0.6 * fs * (double)strlen(t ? t : "");
	if (max > 20 && w > max)
		fig_put(s, " textLength=\"%.2f\" lengthAdjust=\"spacingAndGlyphs\"", max);
}

void fig_put_line(svg *s, double x1, double y1, double x2, double y2, const char *attr)
{
	fig_put(s, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" %s/>\n", x1, y1, x2, y2, attr);
}

/* Estimated width in px of t at font size fs: 0.6 em per character. */
double fig_text_w(const char *t, double fs)
{
	size_t chars = 0;
	for (const unsigned char *p = (const unsigned char *)(t ? t : ""); *p; p++)
		chars += (*p & 0xc0) != 0x80;
	return 0.6 * fs * (double)chars;
}

int fig_blank(const char *t) { return !t || !*t; }

int fig_clampi(double v, int lo, int hi) { return !(v >= lo) ? lo : v > hi ? hi : (int)v; }
