/* log.c - the log sink; see log.h. */
#include "log.h"

#include <stdarg.h>

static enum cs_log_level level_g = CS_LOG_WARN;
static FILE *stream_g;

void cs_log_set_level(enum cs_log_level level) { level_g = level; }
enum cs_log_level cs_log_get_level(void) { return level_g; }
void cs_log_set_stream(FILE *f) { stream_g = f; }

void cs_log_(enum cs_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	FILE *f = stream_g ? stream_g : stderr;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(f, "cyclescope: %s: %s\n", names[level], line);
}
