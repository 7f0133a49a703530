/*
 * ui.h - the browser UI's files (web/ui/: index.html, app.js, app.css),
 * compiled into the binary by web/ui/embed.sh, and uPlot, read from the
 * build tree (report.h's cs_report_assets). GET / serves index.html;
 * GET /ui/NAME serves the rest (docs/http-api.md, "The UI").
 */
#ifndef CS_UI_H
#define CS_UI_H

#include <stddef.h>

typedef struct cs_ui_file {
	const char *name;          /* "app.js" */
	const char *type;          /* Content-Type */
	const unsigned char *data; /* static */
	size_t len;
} cs_ui_file;

/* The embedded files, ended by an entry whose name is NULL. */
extern const cs_ui_file cs_ui_files[];

/* The embedded file called name, or NULL. */
const cs_ui_file *cs_ui_find(const char *name);

#endif
