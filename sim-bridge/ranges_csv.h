/*
 * ranges_csv.h - ranges given beside an imported file (`import --ranges
 * F`): an RFC 4180 CSV with a header naming kind, name, t0, t1 (required,
 * times in the run's unit) and device, stream, correlation_id (optional,
 * integers; empty = none), one range per row (cs_ranges_csv_*).
 */
#ifndef CS_RANGES_CSV_H
#define CS_RANGES_CSV_H

#include <stddef.h>

#include "store.h"

/* Parses buf[0..len) into *out (n ranges, kind and name malloc'd; free
 * with cs_ranges_csv_free). 0, or -EINVAL with "LABEL:LINE: what was
 * expected" in err, -ENOMEM. */
int cs_ranges_csv_parse(const char *buf, size_t len, const char *label, cs_range **out,
			size_t *n, char *err, size_t errlen);
void cs_ranges_csv_free(cs_range *r, size_t n);

#endif
