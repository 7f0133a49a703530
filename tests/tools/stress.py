#!/usr/bin/env python3
"""The daemon under attack, as a standing test (tests/stress.sh).

N producers stream deterministic runs (tests/tools/produce, which also
writes the CSV each run must export as) into one daemon while it is
SIGKILLed K times at random moments and restarted; slow clients hold
connections and query bombs run meanwhile; health is timed throughout and
the daemon's RSS sampled. After each kill the file is checked
(PRAGMA integrity_check and `cyclescope check`); at the end every run is
exported and held against what was sent:

  complete      the producer was told it is stored: must be identical
  incomplete    cut by a kill: must be a prefix of what was sent
  not stored    the producer was told it failed: no row is allowed
  vanished      the producer was told it is stored, and there is no row,
                or it is not identical: must be 0

Prints a summary line per figure, then "RESULT key=value ..." for the
shell wrapper. Everything is judged here, with Python's csv and sqlite3
modules, never with the daemon's own counts.

  stress.py BUILD_DIR WORKDIR [--producers N] [--runs R] [--kills K]
            [--max-samples S] [--queue-mb Q] [--seed SEED]
"""
import argparse
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request

TOKEN = "stress-token"


class Daemon:
    """One `cyclescope serve` at a time; restarted after each kill."""

    def __init__(self, cs, work, queue_mb):
        self.cs, self.work = cs, work
        self.db = os.path.join(work, "stress.db")
        self.sock = os.path.join(work, "ingest.sock")
        self.conf = os.path.join(work, "stress.conf")
        with open(self.conf, "w") as f:
            f.write("queue_mb = %d\ncommit_ms = 50\nhttp_header_timeout_s = 3\n"
                    "query_timeout_ms = 2000\n" % queue_mb)
        self.proc, self.port, self.lock = None, None, threading.Lock()
        self.alive, self.gen = False, 0

    def start(self):
        err = open(os.path.join(self.work, "serve.err"), "w")
        self.proc = subprocess.Popen(
            [self.cs, "serve", "--db", self.db, "--socket", self.sock, "--listen",
             "127.0.0.1:0", "--config", self.conf, "--token", TOKEN, "--log",
             os.path.join(self.work, "serve.log")],
            stdout=subprocess.DEVNULL, stderr=err)
        for _ in range(400):
            text = open(os.path.join(self.work, "serve.err")).read()
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", text)
            if m and os.path.exists(self.sock):
                with self.lock:
                    self.port, self.alive = int(m.group(1)), True
                    self.gen += 1
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        sys.exit("stress: the daemon did not start: " + text)

    def kill(self):
        with self.lock:
            self.alive = False
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        with self.lock:
            self.alive = False
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait()

    def url(self, path):
        with self.lock:
            return ("http://127.0.0.1:%d%s" % (self.port, path)) if self.alive else None

    def same(self, gen):
        """Whether the daemon that was up at generation gen still is."""
        with self.lock:
            return self.alive and self.gen == gen


def request(url, timeout=5.0):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("work")
    ap.add_argument("--producers", type=int, default=4)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--max-samples", type=int, default=200000)
    ap.add_argument("--queue-mb", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    cs = os.path.join(a.build, "cyclescope")
    produce = os.path.join(a.build, "tests", "produce")
    rng = random.Random(a.seed)
    d = Daemon(cs, a.work, a.queue_mb)
    d.start()
    done = threading.Event()
    results = []          # (name, expect path, producer exit status)
    rlock = threading.Lock()
    integrity = []        # one line per post-kill check that failed
    rss_max = [0]
    health = {"max": 0.0, "failed": 0, "asked": 0}

    kills_done = threading.Event()

    def producer(k):
        # at least --runs runs each, and on until every kill has happened
        prng = random.Random(a.seed * 1000 + k)
        r = -1
        while r + 1 < a.runs or (not kills_done.is_set() and r + 1 < 20 * a.runs):
            r += 1
            name = "p%d-r%d" % (k, r)
            exp = os.path.join(a.work, name + ".csv")
            n = prng.randint(a.max_samples // 4, a.max_samples)
            rc = subprocess.run([produce, "--socket", d.sock, "--name", name, "--samples", str(n),
                                 "--metrics", "4", "--batch", "2048", "--expect", exp],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            with rlock:
                results.append((name, exp, rc))
            time.sleep(prng.uniform(0, 0.2))

    def sampler():
        while not done.is_set():
            with d.lock:
                pid = d.proc.pid if d.alive else None
            if pid:
                try:
                    for line in open("/proc/%d/status" % pid):
                        if line.startswith("VmRSS:"):
                            rss_max[0] = max(rss_max[0], int(line.split()[1]))
                except OSError:
                    pass
            time.sleep(0.1)

    def health_checker():
        # Only answers from a daemon that stayed up through the request
        # count: one killed meanwhile is the test's doing.
        while not done.is_set():
            with d.lock:
                gen = d.gen
            u = d.url("/api/v1/health")
            if u:
                t = time.time()
                try:
                    st, _ = request(u, timeout=5)
                    ok = st == 200
                except OSError as e:
                    ok = False
                    why = str(e)
                dt = time.time() - t
                if d.same(gen):
                    health["asked"] += 1
                    health["max"] = max(health["max"], dt)
                    health["failed"] += 0 if ok else 1
                    if not ok:
                        health.setdefault("why", why)
            time.sleep(0.2)

    def slow_client():
        while not done.is_set():
            with d.lock:
                port = d.port if d.alive else None
            if not port:
                time.sleep(0.2)
                continue
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                for b in b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n":
                    if done.is_set():
                        break
                    s.send(bytes([b]))
                    time.sleep(1.0)
                s.close()
            except OSError:
                time.sleep(0.2)

    def bomber():
        bombs = ["SELECT zeroblob(1000000000), zeroblob(1000000000)",
                 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c",
                 "SELECT * FROM series"]
        i = 0
        while not done.is_set():
            u = d.url("/api/v1/query?sql=" + urllib.request.quote(bombs[i % len(bombs)]))
            i += 1
            if u:
                try:
                    request(u, timeout=10)
                except OSError:
                    pass  # 4xx/5xx answers raise too: refusing is the point
            time.sleep(0.3)

    threads = [threading.Thread(target=producer, args=(k,)) for k in range(a.producers)]
    aux = [threading.Thread(target=f) for f in (sampler, health_checker, bomber)]
    aux += [threading.Thread(target=slow_client) for _ in range(70)]
    for t in threads + aux:
        t.start()
    kills = 0
    while any(t.is_alive() for t in threads):
        time.sleep(rng.uniform(0.2, 0.8))
        if kills >= a.kills:
            kills_done.set()
            continue
        if not any(t.is_alive() for t in threads):
            continue
        d.kill()
        kills += 1
        with sqlite3.connect(d.db) as c:
            ok = c.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            integrity.append("after kill %d: integrity_check: %s" % (kills, ok))
        d.start()
    for t in threads:
        t.join()
    done.set()
    for t in aux:
        t.join()
    code = d.stop()
    chk = subprocess.run([cs, "check", "--db", d.db], capture_output=True, text=True)
    if chk.returncode != 0:
        integrity.append("check: " + chk.stdout.strip()[-500:])
    if code != 0:
        integrity.append("the daemon's SIGTERM exit status was %d" % code)

    db = sqlite3.connect(d.db)
    rows = {name: (status, samples) for name, status, samples in
            db.execute("SELECT name, status, samples FROM runs")}
    counts = dict(sent=0, complete=0, incomplete=0, not_stored=0, vanished=0, mismatch=0)
    problems = []
    for name, exp, rc in sorted(results):
        counts["sent"] += 1
        row = rows.get(name)
        want = open(exp, "rb").read().split(b"\n") if os.path.exists(exp) else []
        if row is None:
            if rc == 0:
                counts["vanished"] += 1
                problems.append("%s: acknowledged, but no row" % name)
            else:
                counts["not_stored"] += 1
            continue
        got = subprocess.run([cs, "export", name, "--db", d.db], capture_output=True).stdout
        got = got.split(b"\n")
        if got and got[-1] == b"":
            got = got[:-1]
        if want and want[-1] == b"":
            want = want[:-1]
        status = row[0]
        # an incomplete run cut before its metrics arrived exports a bare
        # "t0,t1" header: an empty prefix
        prefix = got == want[:len(got)] or (len(got) == 1 and row[1] == 0)
        if status == "complete" and got == want:
            counts["complete"] += 1
        elif status == "incomplete" and rc != 0 and prefix:
            counts["incomplete"] += 1
        else:
            counts["mismatch"] += 1
            if rc == 0:
                counts["vanished"] += 1
            problems.append("%s: status %s, producer exit %d, %d of %d lines%s" % (
                name, status, rc, len(got), len(want),
                "" if prefix else ", not a prefix"))
    print("stress: %d producers, %d runs, %d daemon SIGKILLs, 70 slow clients and query bombs"
          % (a.producers, len(results), kills))
    print("runs sent %(sent)d: complete and identical %(complete)d; incomplete %(incomplete)d "
          "(each a prefix of what was sent); not stored, the producer told so %(not_stored)d; "
          "vanished after acknowledgement %(vanished)d; mismatches %(mismatch)d" % counts)
    print("max daemon RSS %.1f MiB (queue_mb %d); max health latency %.3f s over %d checks, %d failed"
          % (rss_max[0] / 1024, a.queue_mb, health["max"], health["asked"], health["failed"]))
    if health.get("why"):
        problems.append("health: " + health["why"])
    for p in problems + integrity:
        print("problem: " + p)
    print("RESULT sent=%d complete=%d incomplete=%d not_stored=%d vanished=%d mismatch=%d "
          "integrity_problems=%d rss_kb=%d health_ms=%d health_failed=%d health_asked=%d" % (
              counts["sent"], counts["complete"], counts["incomplete"], counts["not_stored"],
              counts["vanished"], counts["mismatch"], len(integrity), rss_max[0],
              int(health["max"] * 1000), health["failed"], health["asked"]))


if __name__ == "__main__":
    main()
