/*
 * log.h - the process-wide log sink (cs_log_*).
 *
 * One of the few mutable globals allowed (STYLE.md rule 6): the level and the
 * stream. Messages go to stderr by default, never stdout, so CLI output and an
 * injected application's output stay clean. Thread-safe: messages and stream
 * changes are serialised, so after cs_log_set_stream() returns no thread
 * writes to the old stream any more (the caller may close it).
 */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stdio.h>

enum cs_log_level { CS_LOG_ERROR = 0, CS_LOG_WARN, CS_LOG_INFO, CS_LOG_DEBUG };

/* Sets the threshold; messages above it are discarded before formatting. */
void cs_log_set_level(enum cs_log_level level);
enum cs_log_level cs_log_get_level(void);

/* Redirects messages; NULL restores stderr. The stream is borrowed until
 * the next call. */
void cs_log_set_stream(FILE *f);

void cs_log_(enum cs_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define cs_log(level, ...)                                                     \
	do {                                                                   \
		if ((level) <= cs_log_get_level())                             \
			cs_log_(level, __VA_ARGS__);                           \
	} while (0)

#endif
