/*
 * metric_map.c - parsing and evaluating metric maps (metric_map.h).
 * Expressions compile to a small stack program per entry.
 */
#include "metric_map.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPS 256
/* Nesting (parentheses, unary minus, rate( and delta( inside one another)
 * and the length of one expression: a request's expression cannot run
 * the parser's recursion past its thread's stack. */
#define MAX_DEPTH 256
#define MAX_EXPR_LEN 16384
#define MAX_STACK 64

/* OP_RATE divides by the sample's length in cycles; OP_DELTA subtracts
 * the argument's value at the previous sample (slot = its state index). */
enum op_kind { OP_NUM, OP_NAME, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG, OP_RATE, OP_DELTA };

typedef struct op {
	int kind;
	double num;
	size_t name;
} op;

typedef struct entry {
	char *target;
	unsigned line;
	op *ops;
	size_t nops;
} entry;

typedef struct mname {
	char *text;
	int glob;
} mname;

struct cs_mmap {
	entry *e;
	size_t n;
	mname *names;
	size_t nnames;
	size_t nstate; /* delta() slots over all entries */
};

typedef struct parser {
	const char *s, *end, *line_start;
	const char *label;
	unsigned line;
	char *err;
	size_t errlen;
	cs_mmap *m;
	op ops[MAX_OPS];
	size_t nops;
	int depth;
	int failed;
} parser;

static void perr(parser *p, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void perr(parser *p, const char *at, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = 1;
	int n = snprintf(p->err, p->errlen, "%s:%u:%d: ", p->label, p->line,
			 (int)(at - p->line_start) + 1);
	if (n > 0 && (size_t)n < p->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
}

static void skip_ws(parser *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t'))
		p->s++;
}

static void emit(parser *p, int kind, double num, size_t name)
{
	if (p->nops >= MAX_OPS) {
		perr(p, p->s, "expression too long (more than %d terms)", MAX_OPS);
		return;
	}
	p->ops[p->nops++] = (op){kind, num, name};
}

static size_t intern(parser *p, const char *text, size_t len, int glob)
{
	cs_mmap *m = p->m;
	for (size_t k = 0; k < m->nnames; k++)
		if (m->names[k].glob == glob && strlen(m->names[k].text) == len &&
		    !memcmp(m->names[k].text, text, len))
			return k;
	mname *g = realloc(m->names, (m->nnames + 1) * sizeof *g);
	char *copy = malloc(len + 1);
	if (!g || !copy) {
		free(copy);
		if (g)
			m->names = g;
		perr(p, p->s, "out of memory");
		return 0;
	}
	m->names = g;
	memcpy(copy, text, len);
	copy[len] = '\0';
	m->names[m->nnames] = (mname){copy, glob};
	return m->nnames++;
}

static int name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '[' || c == ']';
}

static void parse_expr(parser *p);

/* A quoted string: returns its start and sets *len; p->s after it. */
static const char *quoted(parser *p, size_t *len)
{
	const char *start = ++p->s;
	while (p->s < p->end && *p->s != '"')
		p->s++;
	if (p->s >= p->end) {
		perr(p, start - 1, "unclosed '\"'");
		return NULL;
	}
	*len = (size_t)(p->s - start);
	p->s++;
	return start;
}

static void parse_primary_(parser *p);

/* One level deeper: refused past MAX_DEPTH. */
static void parse_primary(parser *p)
{
	if (++p->depth > MAX_DEPTH)
		perr(p, p->s, "expression nested too deeply (more than %d levels of '(' and '-')",
		     MAX_DEPTH);
	else
		parse_primary_(p);
	p->depth--;
}

static void parse_primary_(parser *p)
{
	skip_ws(p);
	if (p->s >= p->end) {
		perr(p, p->s, "expected a number, a stat name, a function (sum, sum_sm, rate, delta) or '(' at the end of the line");
		return;
	}
	char c = *p->s;
	if (c == '(') {
		p->s++;
		parse_expr(p);
		skip_ws(p);
		if (p->s >= p->end || *p->s != ')')
			perr(p, p->s, "expected ')'");
		else
			p->s++;
		return;
	}
	if (c == '-') {
		p->s++;
		parse_primary(p);
		emit(p, OP_NEG, 0, 0);
		return;
	}
	if (isdigit((unsigned char)c) || (c == '.' && p->s + 1 < p->end && isdigit((unsigned char)p->s[1]))) {
		char *endp;
		double v = strtod(p->s, &endp);
		p->s = endp;
		emit(p, OP_NUM, v, 0);
		return;
	}
	if (c == '"') {
		size_t len;
		const char *q = quoted(p, &len);
		if (q)
			emit(p, OP_NAME, 0, intern(p, q, len, 0));
		return;
	}
	if (name_char(c)) {
		const char *start = p->s;
		while (p->s < p->end && name_char(*p->s))
			p->s++;
		size_t len = (size_t)(p->s - start);
		skip_ws(p);
		int is_sum = len == 3 && !memcmp(start, "sum", 3);
		int is_sm = len == 6 && !memcmp(start, "sum_sm", 6);
		int is_rate = len == 4 && !memcmp(start, "rate", 4);
		int is_delta = len == 5 && !memcmp(start, "delta", 5);
		if ((is_rate || is_delta) && p->s < p->end && *p->s == '(') {
			p->s++;
			parse_expr(p);
			skip_ws(p);
			if (p->failed)
				return;
			if (p->s >= p->end || *p->s != ')') {
				perr(p, p->s, "expected ')' to close %s(", is_rate ? "rate" : "delta");
				return;
			}
			p->s++;
			emit(p, is_rate ? OP_RATE : OP_DELTA, 0, is_delta ? p->m->nstate++ : 0);
			return;
		}
		if ((is_sum || is_sm) && p->s < p->end && *p->s == '(') {
			p->s++;
			skip_ws(p);
			if (p->s >= p->end || *p->s != '"') {
				perr(p, p->s, is_sum ? "sum() takes a quoted glob, e.g. sum(\"m_num_sim_winsn_*\")"
						   : "sum_sm() takes a quoted name, e.g. sum_sm(\"shaderinsncount\")");
				return;
			}
			size_t glen;
			const char *g = quoted(p, &glen);
			skip_ws(p);
			if (!g)
				return;
			if (p->s >= p->end || *p->s != ')') {
				perr(p, p->s, "expected ')' after the %s() argument", is_sum ? "sum" : "sum_sm");
				return;
			}
			p->s++;
			if (is_sm) {
				/* NAME.sm[i] for every SM: '[' is literal in a glob as "[[]" */
				char pat[600];
				snprintf(pat, sizeof pat, "%.*s.sm[[]*]", (int)glen, g);
				emit(p, OP_NAME, 0, intern(p, pat, strlen(pat), 1));
			} else {
				emit(p, OP_NAME, 0, intern(p, g, glen, 1));
			}
			return;
		}
		emit(p, OP_NAME, 0, intern(p, start, len, 0));
		return;
	}
	perr(p, p->s, "unexpected '%c': expected a number, a stat name, a function (sum, sum_sm, rate, delta) or '('", c);
}

static void parse_term(parser *p)
{
	parse_primary(p);
	for (;;) {
		skip_ws(p);
		if (p->failed || p->s >= p->end || (*p->s != '*' && *p->s != '/'))
			return;
		int kind = *p->s == '*' ? OP_MUL : OP_DIV;
		p->s++;
		parse_primary(p);
		emit(p, kind, 0, 0);
	}
}

static void parse_expr(parser *p)
{
	parse_term(p);
	for (;;) {
		skip_ws(p);
		if (p->failed || p->s >= p->end || (*p->s != '+' && *p->s != '-'))
			return;
		int kind = *p->s == '+' ? OP_ADD : OP_SUB;
		p->s++;
		parse_term(p);
		emit(p, kind, 0, 0);
	}
}

void cs_mmap_free(cs_mmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].target);
		free(m->e[i].ops);
	}
	for (size_t k = 0; k < m->nnames; k++)
		free(m->names[k].text);
	free(m->names);
	free(m->e);
	free(m);
}

cs_mmap *cs_mmap_parse(const char *buf, size_t len, const char *label, char *err,
		       size_t errlen)
{
	cs_mmap *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, errlen, "%s: out of memory", label);
		return NULL;
	}
	parser p = {.label = label, .err = err, .errlen = errlen, .m = m};
	const char *s = buf, *end = buf + len;
	while (s < end && !p.failed) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		if (!eol)
			eol = end;
		p.line++;
		p.line_start = s;
		p.s = s;
		p.end = eol;
		const char *hash = memchr(s, '#', (size_t)(eol - s));
		if (hash)
			p.end = hash;
		while (p.end > s && isspace((unsigned char)p.end[-1]))
			p.end--;
		skip_ws(&p);
		if (p.s < p.end) {
			const char *t0 = p.s;
			while (p.s < p.end && !isspace((unsigned char)*p.s) && *p.s != '=')
				p.s++;
			size_t tlen = (size_t)(p.s - t0);
			skip_ws(&p);
			if (!tlen || p.s >= p.end || *p.s != '=') {
				perr(&p, p.s, "expected 'NCU_METRIC = EXPRESSION'");
				break;
			}
			p.s++;
			p.nops = 0;
			p.depth = 0;
			if (p.end - p.s > MAX_EXPR_LEN) {
				perr(&p, p.s, "expression longer than %d characters", MAX_EXPR_LEN);
				break;
			}
			parse_expr(&p);
			skip_ws(&p);
			if (!p.failed && p.s < p.end)
				perr(&p, p.s, "unexpected '%c' after the expression", *p.s);
			if (p.failed)
				break;
			for (size_t i = 0; i < m->n; i++)
				if (strlen(m->e[i].target) == tlen && !memcmp(m->e[i].target, t0, tlen)) {
					perr(&p, t0, "'%.*s' is already mapped on line %u", (int)tlen, t0,
					     m->e[i].line);
					break;
				}
			if (p.failed)
				break;
			entry *g = realloc(m->e, (m->n + 1) * sizeof *g);
			if (!g) {
				perr(&p, p.s, "out of memory");
				break;
			}
			m->e = g;
			entry *e = &m->e[m->n++];
			e->line = p.line;
			e->target = malloc(tlen + 1);
			e->ops = malloc(p.nops * sizeof *e->ops);
			e->nops = p.nops;
			if (!e->target || !e->ops) {
				perr(&p, p.s, "out of memory");
				break;
			}
			memcpy(e->target, t0, tlen);
			e->target[tlen] = '\0';
			memcpy(e->ops, p.ops, p.nops * sizeof *e->ops);
		}
		s = eol < end ? eol + 1 : end;
	}
	if (p.failed) {
		cs_mmap_free(m);
		return NULL;
	}
	return m;
}

size_t cs_mmap_count(const cs_mmap *m) { return m ? m->n : 0; }
const char *cs_mmap_target(const cs_mmap *m, size_t i) { return m->e[i].target; }
unsigned cs_mmap_line(const cs_mmap *m, size_t i) { return m->e[i].line; }
size_t cs_mmap_names(const cs_mmap *m) { return m ? m->nnames : 0; }

const char *cs_mmap_name(const cs_mmap *m, size_t k, int *is_glob)
{
	if (is_glob)
		*is_glob = m->names[k].glob;
	return m->names[k].text;
}

int cs_mmap_uses(const cs_mmap *m, size_t i, size_t k)
{
	for (size_t j = 0; j < m->e[i].nops; j++)
		if (m->e[i].ops[j].kind == OP_NAME && m->e[i].ops[j].name == k)
			return 1;
	return 0;
}

size_t cs_mmap_state_len(const cs_mmap *m) { return m ? m->nstate : 0; }

void cs_mmap_state_init(const cs_mmap *m, double *state)
{
	for (size_t k = 0; m && k < m->nstate; k++)
		state[k] = NAN;
}

int cs_mmap_is_rate(const cs_mmap *m, size_t i)
{
	for (size_t j = 0; j < m->e[i].nops; j++)
		if (m->e[i].ops[j].kind == OP_RATE)
			return 1;
	return 0;
}

double cs_mmap_eval(const cs_mmap *m, size_t i, const double *values)
{
	return cs_mmap_eval_sample(m, i, values, NAN, NULL);
}

double cs_mmap_eval_sample(const cs_mmap *m, size_t i, const double *values, double cycles,
			   double *state)
{
	double st[MAX_STACK];
	size_t sp = 0;
	const entry *e = &m->e[i];
	for (size_t j = 0; j < e->nops; j++) {
		const op *o = &e->ops[j];
		if (o->kind == OP_NUM || o->kind == OP_NAME) {
			if (sp >= MAX_STACK)
				return NAN;
			st[sp++] = o->kind == OP_NUM ? o->num : values[o->name];
			continue;
		}
		if (sp < 1)
			return NAN;
		double *top = &st[sp - 1];
		if (o->kind == OP_NEG) {
			*top = -*top;
			continue;
		}
		if (o->kind == OP_RATE) {
			*top = cycles > 0 ? *top / cycles : (double)NAN;
			continue;
		}
		if (o->kind == OP_DELTA) {
			/* An absent value leaves the previous one in place, so
			 * the next present value is differenced against it. */
			double x = *top, prev = state ? state[o->name] : (double)NAN;
			*top = x - prev;
			if (state && !isnan(x))
				state[o->name] = x;
			continue;
		}
		if (sp < 2)
			return NAN;
		double b = st[--sp], a = st[sp - 1];
		st[sp - 1] = o->kind == OP_ADD ? a + b : o->kind == OP_SUB ? a - b
			   : o->kind == OP_MUL ? a * b : (b != 0 ? a / b : (double)NAN);
	}
	return sp == 1 ? st[0] : (double)NAN;
}
