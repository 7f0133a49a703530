"""What importing a get_stats.py CSV must store, from the file alone:
  python3 get_stats_expect.py FILE names CONFIG        the readable metric names of CONFIG, sorted
  python3 get_stats_expect.py FILE values CONFIG:STAT  STAT's values per kernel row, in row order
A statistic's name is its stats-YAML regex read as a person would: what
comes before the '=' with the regex escapes and whitespace classes
dropped, plus a literal in parentheses after the value's group
("... (inst/sec)"). Rows are "APPS,<config>..." (a row per kernel) or, from
get_stats.py -R, "CFG,<kernel>..." (a row per config); NA is absent."""
import re
import sys

path, what, arg = sys.argv[1], sys.argv[2], sys.argv[3]
blocks, cur, state = [], None, 0
for line in open(path).read().splitlines():
    cells = line.split(",")
    if line.startswith("-----"):
        cur, state = {"rows": []}, 1
        blocks.append(cur)
    elif state == 1:
        cur["stat"], state = cells[0], 2
    elif state == 2:
        cur["head"], state = cells, 3
    elif state == 3 and line and not line.startswith(("WARNING", "Script exec time")):
        cur["rows"].append(cells)


def readable(stat):
    body = re.sub(r"^(\\s[+*]?)+", "", stat)
    name = re.split(r"\\s|=|(?<!\\)\(", body)[0]
    name = re.sub(r"\\(.)", r"\1", name).strip()
    unit = re.search(r"\(\.\*\)\\s[+*]\\\((.*)\\\)", body)
    return name + (" (%s)" % re.sub(r"\\(.)", r"\1", unit.group(1)) if unit else "")


table = {}
for b in blocks:
    if b["stat"].endswith("-build"):
        continue
    name = readable(b["stat"])
    if b["head"][0] == "CFG":
        for r in b["rows"]:
            for k, v in zip(b["head"][1:], r[1:]):
                table.setdefault(r[0] + ":" + name, {})[k] = v
    else:
        for r in b["rows"]:
            for c, v in zip(b["head"][1:], r[1:]):
                table.setdefault(c + ":" + name, {})[r[0]] = v
order = []
for b in blocks:
    for r in (b["rows"] if b["head"][0] != "CFG" else [[k] for k in b["head"][1:]]):
        if r[0] not in order and not r[0].endswith("--all_kernels"):
            order.append(r[0])
if what == "names":
    print(" ".join(sorted(n[len(arg) + 1:] for n in table if n.startswith(arg + ":"))))
else:
    col = table[arg]
    print(" ".join("" if col.get(k, "NA") in ("NA", "") else "%g" % float(col[k]) for k in order))
