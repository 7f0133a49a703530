/* text.c - lists and integers in text; see text.h. */
#include "text.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_list_next(const char **p, const char **item, size_t *len)
{
	if (!*p || !**p)
		return 0;
	size_t l = strcspn(*p, ",");
	*item = *p;
	*len = l;
	*p += l + ((*p)[l] == ',');
	return 1;
}

int cs_list_has(const char *list, const char *name)
{
	size_t n = strlen(name), l;
	const char *it;
	while (cs_list_next(&list, &it, &l))
		if (l == n && !memcmp(it, name, n))
			return 1;
	return 0;
}

int cs_list_match(const char *list, const char *name)
{
	size_t l;
	const char *it;
	while (cs_list_next(&list, &it, &l)) {
		char one[512];
		if (l >= sizeof one)
			continue; /* no pattern that long: it cannot be a name either */
		memcpy(one, it, l);
		one[l] = 0;
		if (!strcmp(one, name) || !fnmatch(one, name, 0))
			return 1;
	}
	return 0;
}

size_t cs_list_count(const char *list)
{
	size_t n = 0, l;
	const char *it;
	while (cs_list_next(&list, &it, &l))
		n++;
	return n;
}

void cs_text_printable(char *s)
{
	for (unsigned char *c = (unsigned char *)s; c && *c; c++)
		if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
			*c = '?';
}

int cs_parse_u64(const char *s, uint64_t *v)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

double cs_text_scaled(const char *num, size_t len, double factor)
{
	int e = 0;
	double g = factor;
	while (g >= 10 && fmod(g, 10) == 0)
		g /= 10, e++;
	while (g < 1 && g > 0 && e > -18)
		g *= 10, e--;
	if (g != 1 || len > 64 || memchr(num, 'e', len) || memchr(num, 'E', len) ||
	    memchr(num, 'x', len) || memchr(num, 'X', len))
		return strtod(num, NULL) * factor;
	char t[96];
	snprintf(t, sizeof t, "%.*se%d", (int)len, num, e);
	return strtod(t, NULL);
}

int cs_time_parse(const char *s, cs_time_spec *t, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		cs_time_unit unit;
		double ns;
	} units[] = {{"ns", CS_TIME_NS, 1},	   {"us", CS_TIME_NS, 1e3},
		     {"\xc2\xb5s", CS_TIME_NS, 1e3}, {"ms", CS_TIME_NS, 1e6},
		     {"s", CS_TIME_NS, 1e9},	   {"cyc", CS_TIME_CYCLE, 1},
		     {"cycle", CS_TIME_CYCLE, 1},  {"cycles", CS_TIME_CYCLE, 1}};
	const char *p = s;
	memset(t, 0, sizeof *t);
	if (*p == '@')
		t->absolute = 1, p++;
	const char *num = p;
	while (*p == '.' || (*p >= '0' && *p <= '9'))
		p++;
	if ((*p == 'e' || *p == 'E') && p > num) {
		const char *q = p + 1 + (p[1] == '+');
		if (*q >= '0' && *q <= '9') {
			while (*q >= '0' && *q <= '9')
				q++;
			p = q;
		}
	}
	char *end = NULL;
	double v = p > num && strspn(num, ".") < (size_t)(p - num) ? strtod(num, &end) : -1;
	if (v < 0 || end != p || !isfinite(v)) {
		snprintf(err, errlen,
			 "'%s': expected a time (a number, optionally with ns, us, ms, s or cyc; "
			 "@ before it for an absolute stored time)",
			 s);
		return -EINVAL;
	}
	char digits[32];
	size_t nd = (size_t)(p - num);
	if (nd < sizeof digits && strspn(num, "0123456789") == nd) {
		memcpy(digits, num, nd);
		digits[nd] = 0;
		t->exact = cs_parse_u64(digits, &t->whole) == 0;
	}
	if (!*p) {
		t->value = v;
		return 0;
	}
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (!strcmp(p, units[i].name)) {
			t->unit = units[i].unit;
			t->exact &= units[i].ns == 1;
			t->value = cs_text_scaled(num, (size_t)(p - num), units[i].ns);
			return 0;
		}
	snprintf(err, errlen, "'%s': unknown unit '%s' (expected ns, us, ms, s or cyc)", s, p);
	return -EINVAL;
}

int cs_time_ns(const char *s, uint64_t *ns, int *absolute, char *err, size_t errlen)
{
	cs_time_spec t;
	if (cs_time_parse(s, &t, err, errlen))
		return -EINVAL;
	if (t.unit == CS_TIME_CYCLE) {
		snprintf(err, errlen, "'%s': this time is in ns (no clock turns cycles into it)", s);
		return -EINVAL;
	}
	if (!(t.value < 9223372036854775807.0)) {
		snprintf(err, errlen, "'%s': past the end of time", s);
		return -EINVAL;
	}
	*ns = t.exact ? t.whole : (uint64_t)nearbyint(t.value);
	*absolute = t.absolute;
	return 0;
}
