/*
 * wire.h - the framed binary form of store records (cs_wire_*), which
 * collectors and importers send to the daemon. docs/protocol.md is the
 * contract; this is its one implementation.
 *
 * A frame is a 12-byte little-endian header {magic "CSCP", version 1, type,
 * flags 0, payload length} and a payload of at most CS_WIRE_MAX_PAYLOAD
 * bytes. cs_wire_encode() appends one frame to a buffer; cs_wire_decode()
 * parses one frame from the front of a byte stream and says how many bytes
 * it used, asks for more bytes, or rejects the frame with the reason and
 * the offset of the offending field. It validates every length and count
 * before use and does no I/O.
 *
 * Threads: stateless; any thread.
 */
#ifndef CS_WIRE_H
#define CS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define CS_WIRE_MAGIC 0x50435343u /* "CSCP" */
#define CS_WIRE_VERSION 1
#define CS_WIRE_HEADER_LEN 12
#define CS_WIRE_MAX_PAYLOAD (64u << 20)
#define CS_WIRE_MAX_STRING (1u << 20)
#define CS_WIRE_MAX_SAMPLES (1u << 20) /* per SAMPLES frame */
#define CS_WIRE_MAX_METRICS 4096u      /* per SAMPLES frame and per run */

enum cs_wire_type {
	CS_WIRE_HELLO = 1,
	CS_WIRE_RUN_BEGIN = 2,
	CS_WIRE_DEVICE = 3,
	CS_WIRE_METRICS = 4,
	CS_WIRE_SAMPLES = 5,
	CS_WIRE_RANGES = 6,
	CS_WIRE_RUN_END = 7,
	CS_WIRE_REGISTER = 8, /* collector -> daemon: it takes commands */
	CS_WIRE_STATUS = 9,   /* collector -> daemon: its state and counters */
	CS_WIRE_REPLY = 10,   /* collector -> daemon: a COMMAND's outcome */
	CS_WIRE_COMMAND = 17, /* daemon -> collector */
	CS_WIRE_ACK = 18,     /* daemon -> producer: a RUN_END committed */
};

#define CS_WIRE_CONTROL_VERSION 1 /* REGISTER's control field */

enum cs_wire_kind { CS_WIRE_KIND_HW = 1, CS_WIRE_KIND_SIM = 2 };
enum cs_wire_unit { CS_WIRE_UNIT_NS = 1, CS_WIRE_UNIT_CYCLE = 2 };
enum cs_wire_status { CS_WIRE_COMPLETE = 1, CS_WIRE_INCOMPLETE = 2, CS_WIRE_DISCARD = 3 };
enum cs_wire_ack_status {
	CS_WIRE_ACK_COMPLETE = 1,   /* stored and committed, complete */
	CS_WIRE_ACK_INCOMPLETE = 2, /* stored and committed, incomplete */
	CS_WIRE_ACK_DISCARDED = 3,  /* deleted, as the producer asked */
	CS_WIRE_ACK_FAILED = 4,     /* not stored: message says why */
};
enum cs_wire_mode { CS_WIRE_MODE_CONTINUOUS = 1, CS_WIRE_MODE_WINDOW = 2, CS_WIRE_MODE_ARMED = 3 };
enum cs_wire_state { CS_WIRE_STATE_IDLE = 1, CS_WIRE_STATE_SAMPLING = 2, CS_WIRE_STATE_OFF = 3 };
enum cs_wire_op {
	CS_WIRE_OP_OPEN = 1,     /* open a window: value = duration ns, 0 = until closed */
	CS_WIRE_OP_CLOSE = 2,    /* close the open window */
	CS_WIRE_OP_INTERVAL = 3, /* value = the new sampling interval, ns */
	CS_WIRE_OP_FLUSH = 4,    /* send what is held now */
	CS_WIRE_OP_MAX = CS_WIRE_OP_FLUSH
};
enum cs_wire_reply_status { CS_WIRE_REPLY_DONE = 1, CS_WIRE_REPLY_REFUSED = 2 };

/* Strings are NUL-terminated copies owned by the message (decode) or
 * borrowed from the caller (encode); NULL encodes as "". */
typedef struct cs_wire_hello {
	uint32_t pid;
	char *host;
	char *cmdline;
	char *version;
} cs_wire_hello;

typedef struct cs_wire_run_begin {
	uint8_t kind;      /* cs_wire_kind */
	uint8_t time_unit; /* cs_wire_unit */
	uint64_t start_ns;
	double clock_hz;
	char *uuid;
	char *source;
	char *name;
	char *meta; /* JSON object text */
} cs_wire_run_begin;

typedef struct cs_wire_device {
	uint32_t index;
	uint32_t sm_count;
	double clock_hz;
	double mem_clock_hz;
	char *name;
	char *chip;
	char *uuid;
} cs_wire_device;

typedef struct cs_wire_metric {
	uint32_t id;        /* producer-chosen, unique within the run */
	uint8_t kind;       /* 0 counter, 1 ratio, 2 throughput, 3 gauge */
	uint8_t cumulative; /* 0 or 1 */
	char *name;
	char *unit;
} cs_wire_metric;

typedef struct cs_wire_metrics {
	uint32_t count;
	cs_wire_metric *v;
} cs_wire_metrics;

typedef struct cs_wire_samples {
	uint32_t device;
	uint32_t m;
	uint32_t n;
	uint64_t seq0;
	uint32_t *metrics; /* m producer metric ids */
	uint64_t *t0;      /* n */
	uint64_t *t1;      /* n */
	double *values;    /* n * m, sample-major, NaN = absent */
} cs_wire_samples;

enum cs_wire_range_kind {
	CS_RANGE_API = 1,
	CS_RANGE_KERNEL,
	CS_RANGE_MEMCPY,
	CS_RANGE_MEMSET,
	CS_RANGE_GRAPH,
	CS_RANGE_NVTX,
	CS_RANGE_WINDOW,
	CS_RANGE_SIM_KERNEL,
	CS_RANGE_PHASE,
	CS_RANGE_TRIGGER, /* a window the daemon asked for */
	CS_RANGE_KIND_MAX = CS_RANGE_TRIGGER
};

typedef struct cs_wire_range {
	uint8_t kind; /* cs_wire_range_kind */
	uint64_t t0, t1;
	int64_t device, stream, correlation_id, pid, tid, bytes; /* -1 = none */
	char *name;
} cs_wire_range;

typedef struct cs_wire_ranges {
	uint32_t count;
	cs_wire_range *v;
} cs_wire_ranges;

typedef struct cs_wire_run_end {
	uint8_t status; /* cs_wire_status */
	uint64_t end_ns;
	uint64_t samples;
	uint64_t dropped;
	uint64_t overflows;
	uint64_t bad_records;   /* optional trailer: 0 when absent */
	uint64_t empty_samples;
} cs_wire_run_end;

typedef struct cs_wire_register {
	uint8_t control; /* control-protocol version, CS_WIRE_CONTROL_VERSION */
	uint8_t mode;    /* cs_wire_mode */
	uint8_t state;   /* cs_wire_state */
	uint64_t interval_ns;
	uint64_t min_interval_ns, max_interval_ns; /* what OP_INTERVAL may set */
	char *job;     /* job id ("" = none): SLURM_JOB_ID, ... */
	char *devices; /* "0,1" */
	char *metrics; /* comma-separated */
} cs_wire_register;

typedef struct cs_wire_report {
	uint8_t state; /* cs_wire_state */
	uint64_t interval_ns;
	uint64_t samples, dropped, windows;
} cs_wire_report;

typedef struct cs_wire_reply {
	uint32_t id;    /* the COMMAND's */
	uint8_t status; /* cs_wire_reply_status */
	char *message;  /* "" or why it was refused */
} cs_wire_reply;

typedef struct cs_wire_command {
	uint32_t id;    /* echoed in the REPLY */
	uint8_t op;     /* cs_wire_op */
	uint64_t value; /* per op */
	char *name;     /* the window's label, "" = none */
} cs_wire_command;

typedef struct cs_wire_ack {
	uint8_t status;   /* cs_wire_ack_status */
	uint64_t samples; /* samples the run holds in the store */
	char *uuid;       /* the run's uuid */
	char *message;    /* "" or why */
} cs_wire_ack;

typedef struct cs_wire_msg {
	uint8_t type; /* cs_wire_type */
	union {
		cs_wire_hello hello;
		cs_wire_run_begin run_begin;
		cs_wire_device device;
		cs_wire_metrics metrics;
		cs_wire_samples samples;
		cs_wire_ranges ranges;
		cs_wire_run_end run_end;
		cs_wire_register reg;
		cs_wire_report report;
		cs_wire_reply reply;
		cs_wire_command command;
		cs_wire_ack ack;
	} u;
} cs_wire_msg;

/* Appends one frame for msg to out. Returns 0, -EINVAL (a count over the
 * limits, a string too long or holding NUL, an unknown type) or -ENOMEM.
 * On error out is left as it was. */
int cs_wire_encode(cs_buf *out, const cs_wire_msg *msg);

/* Decodes the frame at the front of buf[0..len).
 *   0        *msg filled (free with cs_wire_msg_free), *used = frame bytes
 *   -EAGAIN  the frame is not complete yet; *used = bytes still needed
 *            in total (header length or whole frame), 0 if unknown
 *   -EBADMSG malformed; err names the field and its byte offset
 *   -ENOMEM  out of memory
 * Nothing is allocated unless 0 is returned. */
int cs_wire_decode(const uint8_t *buf, size_t len, cs_wire_msg *msg,
		   size_t *used, char *err, size_t errlen);

/* Frees what cs_wire_decode allocated in msg; accepts a zeroed msg. */
void cs_wire_msg_free(cs_wire_msg *msg);

/* "HELLO", "SAMPLES", ...; "?" for an unknown type. */
const char *cs_wire_type_name(unsigned type);

/* "counter", "ratio", "throughput", "gauge" for metric kinds 0..3 (NULL
 * otherwise), and back (-1 when unknown). */
const char *cs_wire_metric_kind_name(unsigned kind);
int cs_wire_metric_kind_from_name(const char *name);

/* "api", "kernel", ... as stored in ranges.kind; NULL when unknown. */
const char *cs_wire_range_kind_name(unsigned kind);

/* The range kind for a name, or 0 when unknown. */
unsigned cs_wire_range_kind_from_name(const char *name);

#endif
