/* fuzz_expr.c - libFuzzer target: the metric expression parser, binder and
 * evaluator on any text. Every parse either fails with a reason or gives an
 * expression that binds to a small run's metrics (or fails naming one) and
 * evaluates over a few samples without fault; nesting and length past the
 * limits are refused, never a stack overflow. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

static char names[4][256] = {"lts__t_sectors.sum", "sm__cycles_active.avg",
			     "dram__bytes_read.sum", "sm__inst_executed.sum"};
static const uint32_t ids[4] = {1, 2, 3, 4};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	char err[512];
	err[0] = 0;
	cs_expr *e = cs_expr_parse(text, err, sizeof err);
	if (!e) {
		if (!err[0])
			abort(); /* a refusal always says why */
		free(text);
		return 0;
	}
	uint32_t used[4];
	size_t nused = 0;
	if (cs_expr_bind(e, "fuzz", 1, names, ids, 4, used, &nused, err, sizeof err) == 0) {
		if (nused > 4)
			abort();
		static const double rows[3][4] = {{1, 2, 3, 4}, {NAN, 0, -1, 1e300}, {5, 6, 7, 8}};
		for (int i = 0; i < 3; i++) {
			double v[4];
			for (size_t k = 0; k < nused; k++)
				v[k] = rows[i][used[k] - 1];
			(void)cs_expr_eval(e, v, i ? 10.0 : 0.0);
		}
	}
	cs_expr_free(e);
	free(text);
	return 0;
}
