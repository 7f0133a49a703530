/*
 * report.h - the side-by-side correlation report (cs_report_html): a
 * self-contained HTML page for a correlation request: per metric pair the
 * two binned series overlaid on one cycle axis with their difference and
 * the simulator's kernels shaded, the statistics table, and the
 * kernel-level scatter (log axes, y = x) with r and MAPE when both runs
 * have kernels. uPlot (installed from npm into the build tree) and its
 * CSS are inlined, so the page opens offline from disk.
 */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stddef.h>

#include "buf.h"
#include "corr_out.h"
#include "store.h"

/* Appends the page to out. uplot_js and uplot_css are the library's text
 * (borrowed). 0 or a negative errno with the reason in err. */
int cs_report_html(cs_store *s, const cs_corr_request *rq, const char *uplot_js,
		   const char *uplot_css, cs_buf *out, char *err, size_t errlen);

/* Reads uPlot's JS and CSS: $CYCLESCOPE_WEB_ASSETS, else web-assets/ next
 * to the executable (the build tree), else ../share/cyclescope/web-assets
 * (an installed copy). On 0 the caller frees *js and *css and err holds
 * the directory they were read from; -ENOENT with what to run (make
 * web-assets) in err. */
int cs_report_assets(char **js, char **css, char *err, size_t errlen);

#endif
