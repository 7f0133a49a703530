/* prom.c - Prometheus text format; see prom.h. */
#include "prom.h"

#include <stdio.h>

void cs_prom_metric(cs_buf *out, const char *name, const char *type, const char *help,
		    uint64_t value)
{
	char line[768];
	int n = snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help,
			 name, type, name, (unsigned long long)value);
	if (n > 0)
		cs_buf_append(out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
