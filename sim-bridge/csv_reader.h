/*
 * csv_reader.h - an RFC 4180 CSV tokenizer over a byte buffer (cs_csvr_*).
 *
 * Fields may be quoted ("a,b", "say ""hi"""), records end with LF or CRLF,
 * a final record may lack its line end. The reader does no I/O and never
 * reads outside [buf, buf + len). Positions are reported as 1-based line
 * and column (field index) numbers for error messages.
 */
#ifndef CS_CSV_READER_H
#define CS_CSV_READER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct cs_csvr {
	const char *p;   /* next unread byte */
	const char *end;
	uint64_t line;   /* line of the record being read, 1-based */
	uint32_t column; /* 1-based index of the last field returned */
	int at_record_start;
	int lenient;    /* as tools write: spaces around a quoted field, a quote
			   inside an unquoted one kept as it is */
	cs_buf scratch; /* unescaped quoted fields */
} cs_csvr;

/* Starts reading buf[0..len), borrowed for the reader's life. A leading
 * UTF-8 byte order mark is skipped. */
void cs_csvr_init(cs_csvr *r, const char *buf, size_t len);

/* Releases the scratch memory. */
void cs_csvr_free(cs_csvr *r);

/* Results of cs_csvr_field(). */
enum cs_csvr_result {
	CS_CSVR_FIELD = 0,    /* a field; more follow in this record */
	CS_CSVR_LAST = 1,     /* the record's last field */
	CS_CSVR_EOF = 2,      /* no more records (only at a record start) */
	CS_CSVR_ERROR = -1,   /* malformed quoting; message in err */
};

/* Reads the next field into *f and *flen (borrowed until the next call).
 * Blank lines between records are skipped. */
int cs_csvr_field(cs_csvr *r, const char **f, size_t *flen, char *err,
		  size_t errlen);

/* One line's fields, read leniently (as tools write them: ", " between
 * fields, stray quotes), each trimmed of spaces and tabs and copied,
 * NUL-terminated, into fields (emptied first); f[0..max) point at the
 * first of them. The number of fields (more than max when the line has
 * more), or -1 with the reason in why. */
long cs_csvr_split(const char *line, size_t len, cs_buf *fields, char **f, size_t max,
		   char *why, size_t whylen);

#endif
