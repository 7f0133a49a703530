#!/usr/bin/env python3
"""Edits the chunks of a cyclescope database the way damage or an older
version would, from the blob layouts in docs/schema.md (not from our code).

  chunkfmt.py flip DB      flips one bit in the payload of one uncompressed
                           value chunk (format 2 to 8); prints
                           'run R metric ID (NAME)' and 'seq S'
  chunkfmt.py format1 DB   rewrites every format 2 blob as format 1 (no
                           checksums), as files written before checksums
                           hold them
  chunkfmt.py random DB K SEED
                           flips K random bits anywhere in the file
"""
import random
import sqlite3
import sys


def nblocks(blob):
    n = int.from_bytes(blob[4:8], "little")
    return (n + 127) // 128


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "random":
        k, seed = int(sys.argv[3]), int(sys.argv[4])
        rng = random.Random(seed)
        data = bytearray(open(path, "rb").read())
        for _ in range(k):
            pos = rng.randrange(len(data))
            data[pos] ^= 1 << rng.randrange(8)
        open(path, "wb").write(data)
        return
    db = sqlite3.connect(path)
    if what == "flip":
        for cid, run, mid, name, seq0, blob in db.execute(
                "SELECT c.id, c.run, c.metric, m.name, c.seq0, c.data FROM chunks c"
                " JOIN metrics m ON m.run = c.run AND m.id = c.metric ORDER BY c.id"):
            if blob[0] not in (2, 3, 4, 5, 6, 7, 8) or blob[1] != 0:
                continue
            if blob[0] == 2:
                payload = 16 + 32 * nblocks(blob) + 4
            else:  # the directory's length is in bytes 2-3
                payload = 16 + int.from_bytes(blob[2:4], "little") + 4
            if len(blob) <= payload + 40:
                continue
            b = bytearray(blob)
            b[payload + 37] ^= 0x08
            db.execute("UPDATE chunks SET data = ? WHERE id = ?", (bytes(b), cid))
            db.commit()
            print(f"run {run} metric {mid} ({name})")
            print(f"seq {seq0}")
            return
        sys.exit("no uncompressed value chunk of format 2 to 8 to flip")
    if what == "format1":
        for cid, blob in db.execute("SELECT id, data FROM chunks").fetchall():
            if blob[0] != 2:
                sys.exit("format1: a format %d chunk (only format 2 converts)" % blob[0])
            nb = nblocks(blob)
            dirs = b"".join(blob[16 + 32 * i:16 + 32 * i + 28] for i in range(nb))
            v1 = bytes([1]) + blob[1:16] + dirs + blob[16 + 32 * nb + 4:]
            db.execute("UPDATE chunks SET data = ? WHERE id = ?", (v1, cid))
        for run, dev, seq0, blob in db.execute(
                "SELECT run, device, seq0, data FROM timelines").fetchall():
            if blob[0] != 2:
                sys.exit("format1: a format %d timeline (only format 2 converts)" % blob[0])
            v1 = bytes([1]) + blob[1:-4]
            db.execute("UPDATE timelines SET data = ? WHERE run = ? AND device = ? AND seq0 = ?",
                       (v1, run, dev, seq0))
        db.commit()
        return
    sys.exit("unknown action " + what)


if __name__ == "__main__":
    main()
