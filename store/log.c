/* log.c - the log sink; see log.h. */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "text.h"

static atomic_int level_g = CS_LOG_WARN;
/* The stream is swapped (SIGHUP) while other threads log: both under mu. */
static pthread_mutex_t mu_g = PTHREAD_MUTEX_INITIALIZER;
static FILE *stream_g;

void cs_log_set_level(enum cs_log_level level) { atomic_store(&level_g, (int)level); }
enum cs_log_level cs_log_get_level(void) { return (enum cs_log_level)atomic_load(&level_g); }

void cs_log_set_stream(FILE *f)
{
	pthread_mutex_lock(&mu_g);
	stream_g = f;
	pthread_mutex_unlock(&mu_g);
}

void cs_log_(enum cs_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	cs_text_printable(line); /* one record, one line: no forged ones */
	pthread_mutex_lock(&mu_g);
	fprintf(stream_g ? stream_g : stderr, "cyclescope: %s: %s\n", names[level], line);
	pthread_mutex_unlock(&mu_g);
}
