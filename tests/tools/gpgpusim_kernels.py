"""The kernels a plain GPGPU-Sim stdout log describes, worked out from the
log alone: python3 gpgpusim_kernels.py LOG prints NAME@T0-T1/STREAM/UID,
one per kernel that completed, ';'-separated, in launch order.

Blocks (kernel_name = ... to the next) end at gpu_tot_sim_cycle; a kernel
is launched at its "pushing kernel" line (stream from it), gets its uid
from its first "bind to kernel U" line (the oldest push of that name), and
completes at "Destroy streams for kernel U" (4.x), i.e. at the end of the
next block; it starts at the end of the last block before its push. A log
with no Destroy lines (3.x) has one kernel per block."""
import re
import sys

pushes, uid_of, blocks, done = [], {}, [], {}
lines = open(sys.argv[1]).read().split("\n")
for line in lines:
    s = line.strip()
    m = re.match(r"GPGPU-Sim PTX: pushing kernel '(.*)' to stream (\d+),", s)
    if m:
        pushes.append({"name": m.group(1), "stream": int(m.group(2)), "after": len(blocks), "uid": None})
    m = re.match(r"GPGPU-Sim uArch: Shader \d+ bind to kernel (\d+) '(.*)'", s)
    if m and int(m.group(1)) not in uid_of:
        p = next(p for p in pushes if p["uid"] is None and p["name"] == m.group(2))
        p["uid"] = int(m.group(1))
        uid_of[p["uid"]] = p
    m = re.match(r"Destroy streams for kernel (\d+):", s)
    if m:
        done[int(m.group(1))] = len(blocks)
    if s.startswith("kernel_name = "):
        blocks.append({"names": s[14:].split()})
    m = re.match(r"gpu_tot_sim_cycle = (\d+)$", s)
    if m:
        blocks[-1]["end"] = int(m.group(1))
    m = re.match(r"kernel_launch_uid = (.*)$", s)
    if m:
        blocks[-1]["uids"] = [int(u) for u in m.group(1).split()]
out = []
if done:
    for p in pushes:
        if p["uid"] in done and done[p["uid"]] < len(blocks):
            t0 = blocks[p["after"] - 1]["end"] if p["after"] else 0
            out.append("%s@%d-%d/%d/%d" % (p["name"], t0, blocks[done[p["uid"]]]["end"], p["stream"], p["uid"]))
else:
    for i, b in enumerate(blocks):
        p = uid_of[b["uids"][0]]
        out.append("%s@%d-%d/%d/%d" % (p["name"], blocks[i - 1]["end"] if i else 0, b["end"], p["stream"], p["uid"]))
print(";".join(out))
