/*
 * importers.h - the import formats in one table (cs_importer_*): each
 * format's name, its reader, whether it takes gzip input, and how its
 * content is recognised. A new format is its own file in sim-bridge/
 * and one line in importers.c's table; `cyclescope import` only parses
 * options and calls these.
 */
#ifndef CS_IMPORTERS_H
#define CS_IMPORTERS_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

/* Reads buf[0..len) (borrowed for the call) as one new run through p. */
typedef int (*cs_import_fn)(cs_producer *p, const char *buf, size_t len,
			    const cs_import_opts *o, char *err, size_t errlen);
/* Reads the file at path itself (a foreign SQLite database). */
typedef int (*cs_import_file_fn)(cs_producer *p, const char *path, const cs_import_opts *o,
				 char *err, size_t errlen);

typedef struct cs_importer {
	const char *name;
	cs_import_fn read;           /* NULL for a format read from its file */
	cs_import_file_fn read_file; /* set for those */
	int plain_only;              /* gzip input is refused with a hint */
	/* Whether a file's head (its first 64 KiB, decompressed) is this
	 * format; NULL = never guessed from the content. The table's order
	 * is the order of the guesses. */
	int (*sniff)(const char *head);
	/* The same for a file read by path; NULL = none. */
	int (*sniff_file)(const char *path);
	/* What its content starts with, for the message that says a file is
	 * none of the formats. */
	const char *looks;
} cs_importer;

/* The format called name, or NULL. */
const cs_importer *cs_importer_find(const char *name);

/* The formats' names, ", "-separated, into buf (always terminated). */
void cs_importer_names(char *buf, size_t len);

/* The message for content no format takes: its first line, then what
 * each format starts with, one per line, into buf (always terminated). */
void cs_importer_hints(const char *buf, size_t len, char *out, size_t outlen);

/* What content is: the first format whose sniffer takes its head, or
 * NULL. *config is set to 1 when it is a GPGPU-Sim config file rather
 * than statistics (a mistake worth naming), else 0. */
const cs_importer *cs_importer_detect(const char *buf, size_t len, int *config);

/* The format of the SQLite file at path (the formats read by path), or
 * NULL. */
const cs_importer *cs_importer_detect_file(const char *path);

/* Imports through im: buf/len for a format that reads bytes (a gzip file
 * refused for plain_only formats), path for one that reads its file.
 * 0 or a negative errno with the reason in err. */
int cs_importer_run(const cs_importer *im, cs_producer *p, const char *buf, size_t len,
		    const char *path, const cs_import_opts *o, char *err, size_t errlen);

#endif
