/*
 * report.h - the side-by-side correlation report (cs_report_html): a
 * self-contained HTML page for a correlation request: per metric pair the
 * two binned series overlaid on one cycle axis with their difference and
 * the simulator's kernels shaded, the statistics table, and the
 * kernel-level scatter (log axes, y = x) with r and MAPE when both runs
 * have kernels. The figures are inline SVG drawn by figure.h (the compare
 * page's figures, byte for byte), so the page opens offline from disk,
 * prints as vectors, and each figure saves as an SVG file.
 */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stddef.h>

#include "buf.h"
#include "corr_out.h"
#include "store.h"

/* Appends the page to out. 0 or a negative errno with the reason in err. */
int cs_report_html(cs_store *s, const cs_corr_request *rq, cs_buf *out, char *err,
		   size_t errlen);

/* Text into HTML: what HTML would read as markup (< & >) escaped. */
void cs_report_html_text(cs_buf *out, const char *s);

/* Reads uPlot's JS and CSS (the UI's plots): $CYCLESCOPE_WEB_ASSETS, else web-assets/ next
 * to the executable (the build tree), else ../share/cyclescope/web-assets
 * (an installed copy). On 0 the caller frees *js and *css and err holds
 * the directory they were read from; -ENOENT with what to run (make
 * web-assets) in err. */
int cs_report_assets(char **js, char **css, char *err, size_t errlen);

#endif
