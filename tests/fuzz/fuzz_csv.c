/* fuzz_csv.c - libFuzzer target: the generic CSV parser on any bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "import_csv.h"

static int on_row(void *ctx, uint32_t device, uint64_t t0, uint64_t t1, const double *v)
{
	(void)ctx, (void)device, (void)v;
	if (t1 < t0)
		abort(); /* the parser promised to refuse this */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	cs_csv_sink sink = {NULL, NULL, on_row};
	cs_csv_parse((const char *)data, size, "fuzz.csv", &sink, err, sizeof err);
	return 0;
}
