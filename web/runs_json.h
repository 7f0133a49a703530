/*
 * runs_json.h - the JSON object of a run, as SQL over the runs table aliased
 * r: shared by `cyclescope runs --json` and GET /api/v1/runs, so both give
 * the same fields (docs/http-api.md).
 */
#ifndef CS_RUNS_JSON_H
#define CS_RUNS_JSON_H

#define CS_RUN_JSON_FIELDS                                                                     \
	"'id', r.id, 'uuid', r.uuid, 'kind', r.kind, 'source', r.source, 'name', r.name,"       \
	" 'status', r.status, 'time_unit', r.time_unit, 'clock_hz', r.clock_hz,"                \
	" 'host', r.host, 'pid', r.pid, 'cmdline', r.cmdline, 'start_ns', r.start_ns,"          \
	" 'end_ns', r.end_ns, 't_min', r.t_min, 't_max', r.t_max, 'samples', r.samples,"        \
	" 'dropped', r.dropped, 'overflows', r.overflows,"                                      \
	" 'devices', (SELECT count(*) FROM devices d WHERE d.run = r.id),"                      \
	" 'metrics', (SELECT count(*) FROM metrics m WHERE m.run = r.id),"                      \
	" 'ranges', (SELECT count(*) FROM ranges g WHERE g.run = r.id), 'meta', json(r.meta)"

#endif
