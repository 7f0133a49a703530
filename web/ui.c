/*
 * ui.c - looking up the embedded UI files (ui.h).
 */
#include "ui.h"

#include <string.h>

const cs_ui_file *cs_ui_find(const char *name)
{
	for (const cs_ui_file *f = cs_ui_files; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}
