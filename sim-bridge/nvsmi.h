/*
 * nvsmi.h - nvidia-smi query logs (cs_import_nvsmi):
 *
 *   nvidia-smi --query-gpu=timestamp,index,power.draw,clocks.sm,... \
 *              --format=csv [-l S | -lms MS] [-f FILE]
 *
 * A header naming the queried fields as nvidia-smi prints them
 * ("power.draw [W]", "clocks.current.sm [MHz]", ", " between fields), then
 * one row per GPU per query. Every numeric field becomes a series in its
 * unit (the header's bracket, or the unit word after the value; degrees C
 * for temperatures); "[N/A]" and "[Not Supported]" are absent values;
 * text fields (name, uuid, driver_version, ...) are named and not stored.
 * The timestamp ("YYYY/MM/DD HH:MM:SS.mmm", local time) becomes epoch ns
 * in opts->tz, else this machine's zone. GPUs come from the index column,
 * else pci.bus_id or uuid (numbered in order of appearance), else from the
 * order of the rows that share a timestamp. Each row lasts until that
 * GPU's next row. Repeated header lines (one nvidia-smi per sample,
 * appended) and nvidia-smi's own messages are skipped; NUL bytes and a cut
 * last line (a killed job's log) are tolerated with a warning.
 */
#ifndef CS_NVSMI_H
#define CS_NVSMI_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_nvsmi(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		    char *err, size_t errlen);

/* 1 when a file's head is an nvidia-smi query log with its header. */
int cs_nvsmi_sniff(const char *head);

#endif
