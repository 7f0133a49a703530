/*
 * krows.h - kernel-level rows (cs_krows_*): reports that give values per
 * kernel or per name but no times of their own (nvprof's metrics and
 * summaries, nsys stats summaries) become one sample and one range per
 * item, end to end on the run's axis, each lasting its duration (1 us
 * unless told). Items are kept in order of first sight; their values are
 * kept until cs_krows_write.
 */
#ifndef CS_KROWS_H
#define CS_KROWS_H

#include <stddef.h>
#include <stdint.h>

#include "simrun.h"

typedef struct cs_krows cs_krows;

cs_krows *cs_krows_new(void);
void cs_krows_free(cs_krows *k);

/* The item named name under group (a device, a report: items of one name
 * in two groups are two items), made on first sight with its range kind
 * (borrowed: a literal) and device (-1: none). 0 or -ENOMEM. */
int cs_krows_item(cs_krows *k, const char *name, const char *group, const char *kind,
		  int64_t device, size_t *out);

/* The item's duration in the run's unit (default 1000). */
void cs_krows_duration(cs_krows *k, size_t item, double d);

/* A metric's index, declared on first sight (unit may be "" and is set
 * by the first that gives one). Negative errno on failure. */
int cs_krows_metric(cs_krows *k, const char *name, const char *unit);

/* Metric m of item: its value, and a minimum and maximum (NaN: none).
 * Metrics whose minimum and maximum differ anywhere get NAME.min and
 * NAME.max beside NAME when written with spread. */
int cs_krows_set(cs_krows *k, size_t item, int m, double v, double min, double max);

size_t cs_krows_count(const cs_krows *k);

/* Writes every item as a sample and a range through run (spread: the
 * .min/.max metrics too). 0, or a negative errno with the message in im. */
int cs_krows_write(cs_krows *k, cs_simrun *run, int spread, cs_imp *im);

#endif
