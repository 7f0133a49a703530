/*
 * suite_out.h - a suite correlation (suite.h) answered as text, JSON, a
 * CSV of the pairs, the scatter figure (SVG) or a report page (HTML):
 * `cyclescope correlate --suite`, `report --suite` and GET
 * /api/v1/correlate?suite=1 all say it through cs_suite_out.
 */
#ifndef CS_SUITE_OUT_H
#define CS_SUITE_OUT_H

#include <stddef.h>

#include "buf.h"
#include "store.h"
#include "suite.h"

enum cs_suite_format { CS_SUITE_TEXT = 0, CS_SUITE_JSON, CS_SUITE_CSV, CS_SUITE_SVG, CS_SUITE_HTML };

/* Appends the answer to out; notes (NULL = none) gets the warnings, a
 * line each, for the formats that have no place for them (CSV, SVG);
 * json (NULL = none) the JSON answer besides (what --save keeps). 0, or a
 * negative errno with the reason in err (cs_suite_run's). */
int cs_suite_out(cs_store *s, const cs_suite_spec *spec, int format, cs_buf *out, cs_buf *notes,
		 cs_buf *json, char *err, size_t errlen);

/* The trend of saved correlations (corrs.h) as one SVG figure: a panel
 * per statistic, the saved correlations along x in the order saved
 * (labelled underneath), a line per configuration through its MAPE in
 * each. 0, or a negative errno with the reason in err. */
int cs_suite_trend_svg(cs_store *s, cs_buf *out, char *err, size_t errlen);

/* The statistic's name in tables and figures: "HW_EXPR / SIM_EXPR", or the
 * one expression when both are the same. Into out; returns out. */
const char *cs_suite_stat_name(const cs_suite_stat *st, char *out, size_t outlen);

#endif
