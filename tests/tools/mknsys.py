#!/usr/bin/env python3
"""Writes an SQLite file shaped like `nsys export --type sqlite`, with the
tables and columns of NVIDIA's SQLite schema reference (the columns
cyclescope reads, plus a few it does not, in the documented order), small
and deterministic.

usage: mknsys.py OUT.sqlite [--metric-rows N] [--gpus G] [--no-metrics]
                            [--schema 2023|2025] [--no-kernels] [--bad-metric]
  --metric-rows N  GPU_METRICS rows per GPU and metric group (default 40)
  --schema 2023    GPU_METRICS without rawTimestamp, NVTX without textId
  --bad-metric     one GPU_METRICS row with a metricId TARGET_INFO_GPU_METRICS lacks
"""
import argparse
import sqlite3

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--metric-rows", type=int, default=40)
ap.add_argument("--gpus", type=int, default=2)
ap.add_argument("--no-metrics", action="store_true")
ap.add_argument("--no-kernels", action="store_true")
ap.add_argument("--bad-metric", action="store_true")
ap.add_argument("--schema", default="2025")
a = ap.parse_args()

db = sqlite3.connect(a.out)
x = db.executescript
x("""
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER,
  clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, graphNodeId INTEGER, graphId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,
  bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
""")
if a.schema == "2023":
    x("""CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
      endGlobalTid INTEGER, domainId INTEGER);""")
else:
    x("""CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
      endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
      int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
      floatValue REAL, jsonTextId INTEGER, jsonText TEXT);""")
ins = db.execute
ins("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', ?)",
    ("3.28.1" if a.schema == "2025" else "3.11.0",))
ins("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1764758400123456789, '2025-12-03T10:40:00Z', '')")
for g in range(a.gpus):
    ins("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, clockRate, smCount, uuid, chipName) "
        "VALUES (0, ?, 'NVIDIA H100 80GB HBM3', ?, 1, 1980000000, 132, ?, 'GH100')",
        (g, "0000:%02x:00.0" % (0x18 + g), "GPU-%08d" % g))
for i, (n, l) in enumerate([("CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"), ("CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
                            ("CUDA_MEMCPY_KIND_DTOH", "Device-to-Host")]):
    ins("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", (i, n, l))
strings = {}


def sid(s):
    if s not in strings:
        strings[s] = len(strings) + 1
        ins("INSERT INTO StringIds VALUES (?, ?)", (strings[s], s))
    return strings[s]


gpid = (4182 << 24)
tid = gpid + 4182
kernels = [
    ("void gemm_kernel<float, 128>(const float*, const float*, float*, int)", "gemm_kernel", "_Z11gemm_kernelIfLi128EEvPKfS1_Pfi"),
    ("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "ncclDevKernel_AllGather_RING_LL", "_Z31ncclDevKernel_AllGather_RING_LLP11ncclDevCommmP8ncclWork"),
    ("void gemm_kernel<float, 128>(const float*, const float*, float*, int)", "gemm_kernel", "_Z11gemm_kernelIfLi128EEvPKfS1_Pfi"),
]
t = 1_000_000
corr = 100
for i, (dn, sn, mn) in enumerate(kernels if not a.no_kernels else []):
    for g in range(a.gpus):
        s, e = t + i * 3_000_000 + g * 500, t + i * 3_000_000 + 2_500_000 + g * 500
        ins("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
            (s - 9000, s - 4000, tid, corr, sid("cudaLaunchKernel_v7000")))
        ins("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
            "globalPid, demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, "
            "blockY, blockZ) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, 64, 132, 1, 1, 256, 1, 1)",
            (s, e, g, 7 if sn == "gemm_kernel" else 13, corr, gpid, sid(dn), sid(sn), sid(mn)))
        corr += 1
ins("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (200000, 210000, 1, ?, 90, ?, 0, NULL)",
    (tid, sid("cudaMemcpy_v3020")))
ins("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, "
    "bytes, copyKind, srcKind, dstKind) VALUES (205000, 305000, 0, 1, 7, 90, ?, 67108864, 1, 1, 2)", (gpid,))
ins("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, "
    "bytes, copyKind, srcKind, dstKind) VALUES (9600000, 9700000, 0, 1, 7, 91, ?, 4096, 2, 2, 1)", (gpid,))
ins("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, "
    "value, bytes) VALUES (400000, 420000, 0, 1, 7, 92, ?, 0, 1048576)", (gpid,))
# NVTX: a push/pop range (text), a start/end range (registered string), a mark
if a.schema == "2023":
    ins("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (900000, 9500000, 59, 'step 1', ?)", (tid,))
    ins("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (3900000, 6600000, 60, 'allgather', ?)", (tid,))
else:
    ins("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (900000, 9500000, 59, 'step 1', ?)", (tid,))
    ins("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (3900000, 6600000, 60, ?, ?)",
        (sid("allgather"), tid))
ins("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (5000000, NULL, 34, 'checkpoint', ?)", (tid,))
ins("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (100, NULL, 75, 'my domain', ?)", (tid,))

if not a.no_metrics:
    if a.schema == "2023":
        x("""CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL,
          typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
          CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL,
          value INTEGER NOT NULL);""")
    else:
        x("""CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL,
          typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
          CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp INTEGER NOT NULL,
          typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value INTEGER NOT NULL);""")
    names = ["GPC Clock Frequency [MHz]", "SMs Active [Throughput %]", "DRAM Read Bandwidth [Throughput %]",
             "NVLink RX Bandwidth [Throughput %]"]
    for g in range(a.gpus):
        type_id = (0x1 << 8) | g   # the GPU in the low byte
        for m, n in enumerate(names):
            ins("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, 1, 'GH100 General Metrics for NVIDIA Hopper', ?, ?)",
                (type_id, m, n))
    rows = []
    period = 100_000  # 10 kHz
    for g in range(a.gpus):
        type_id = (0x1 << 8) | g
        for i in range(a.metric_rows):
            ts = 50_000 + i * period + g * 7
            for m in range(len(names)):
                v = [1980, (i * 37 + m * 11 + g) % 101, (i * 13 + g * 5) % 97, (i * 7) % 50][m]
                rows.append((ts + 3, ts, type_id, m, v))
    if a.bad_metric:
        rows.append((9_999_999, 9_999_996, (0x1 << 8), 17, 5))
    if a.schema == "2023":
        db.executemany("INSERT INTO GPU_METRICS VALUES (?, ?, ?, ?)", [r[1:] for r in rows])
    else:
        db.executemany("INSERT INTO GPU_METRICS VALUES (?, ?, ?, ?, ?)", rows)
db.commit()
db.close()
