/*
 * series_ext.c - entry point of the loadable extension cyclescope_series.so:
 *
 *   sqlite3 cyclescope.db
 *   sqlite> .load ./build/cyclescope_series
 *   sqlite> SELECT count(*) FROM series WHERE run = 1;
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <stddef.h>

#include "series.h"

int sqlite3_cyclescopeseries_init(sqlite3 *db, char **errmsg,
				  const sqlite3_api_routines *api);
int sqlite3_cyclescopeseries_init(sqlite3 *db, char **errmsg,
				  const sqlite3_api_routines *api)
{
	(void)errmsg;
	SQLITE_EXTENSION_INIT2(api);
	return cs_series_register(db, NULL);
}
