/*
 * text.h - small text helpers every floor shares (cs_list_*, cs_parse_*):
 * comma-separated lists of names or globs, and whole-string integers.
 */
#ifndef CS_TEXT_H
#define CS_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The next item of the comma-separated list at *p: its start in *item and
 * its length in *len (an item may be empty: "a,,b"); *p moves past it and
 * its comma. 0 when the list is done (NULL or ""). */
int cs_list_next(const char **p, const char **item, size_t *len);

/* 1 when name is one of the list's items. */
int cs_list_has(const char *list, const char *name);

/* 1 when name is one of the list's items or matches one as a glob
 * (fnmatch): "x[A][B]" names itself as well as being a pattern. */
int cs_list_match(const char *list, const char *name);

/* The items, counted (an empty list has none). */
size_t cs_list_count(const char *list);

/* Control characters but tab (line breaks, ESC, DEL) in s made '?', in place: a
 * name or a message printed on a terminal or into a log stays one line of
 * plain text. */
void cs_text_printable(char *s);

/* The number written at num[0..len) times factor: by a power of ten
 * through the decimal text itself ("352.706667" us is 352706.667 ns, not
 * 352706.66699999996), otherwise multiplied. num must start with the
 * number (strtod reads it). */
double cs_text_scaled(const char *num, size_t len, double factor);

/* A whole string as a non-negative decimal integer: no sign, no space, no
 * trailing text, no overflow. 0, or -EINVAL (*v untouched). */
int cs_parse_u64(const char *s, uint64_t *v);

/* A time as options and addresses give it (docs/cli.md, "Times"): a
 * number with an optional unit, ns, us (or µs), ms, s, or cyc (cycle,
 * cycles); without one, the run's own unit. A leading '@' makes it an
 * absolute stored time instead of one from the run's start. */
typedef enum cs_time_unit { CS_TIME_RUN, CS_TIME_NS, CS_TIME_CYCLE } cs_time_unit;
typedef struct cs_time_spec {
	double value; /* in unit; ns for the time units */
	cs_time_unit unit;
	int absolute;
	int exact;	/* the number was whole, in a unit of 1: whole holds it */
	uint64_t whole;
} cs_time_spec;

/* Parses s into *t. 0, or -EINVAL with what was expected in err. */
int cs_time_parse(const char *s, cs_time_spec *t, char *err, size_t errlen);

/* A time in ns where no run's unit or clock applies (a job's: ns, us, ms,
 * s, or a bare number of ns; no cycles): *ns, and *absolute for '@'. 0, or
 * -EINVAL with the reason in err. */
int cs_time_ns(const char *s, uint64_t *ns, int *absolute, char *err, size_t errlen);

#endif
