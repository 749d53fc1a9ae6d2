#!/usr/bin/env python3
"""File pruning from Delta add.stats (docs/table-formats.md, "Pruning from
log statistics"): pqtool cat --where P gives the same rows with the rung and
without it (--no-log-stats, the row filter's answer), the plan counts the
files the log's statistics pruned, and those files are never opened.

    tests/delta/stats.py PQTOOL DELTA_DIR

Part 1, the shared tables (../shared/testdata/delta): for every snapshot
that reads, predicates on each column (=, <, >, IS [NOT] NULL around values
it holds) must give the same rows either way; some files must be pruned
over all of them.
Part 2, a table written here (Parquet by pqtool write, a hand-made log):
accurate statistics prune (counted in the plan, fewer bytes read), and
statistics a reader could misread keep their file: a timestamp max cut to
the millisecond, strings cut to a prefix (bare, or with delta-spark's old
U+FFFD tie-breaker), a NaN the writer left out, a column missing from the
stats, null min/max, wide bounds (tightBounds false) with a null count that
would say "all null", no stats, stats that are not JSON.
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

PASSES = 0
FAILS = 0


def check(ok, what):
    global PASSES, FAILS
    if ok:
        PASSES += 1
    else:
        FAILS += 1
        print("FAIL: " + what)


def run(pqtool, args):
    p = subprocess.run([pqtool] + args, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def rows_of(out):
    lines = out.splitlines()
    return lines[:1] + sorted(lines[1:])


def quote(v):
    return "'" + v.replace("'", "''") + "'"


def predicates(header, rows):
    """Predicates over each column, from values the snapshot holds."""
    out = []
    for i, name in enumerate(header):
        col = '"' + name.replace('"', '""') + '"'
        vals = sorted({r[i] for r in rows if i < len(r) and r[i] != "" and not r[i].startswith(("{", "["))})
        out += [col + " IS NULL", col + " IS NOT NULL"]
        if not vals:
            continue
        picks = sorted({vals[0], vals[len(vals) // 2], vals[-1]})
        for v in picks:
            for op in ("=", "<", ">"):
                out.append((col + " " + op + " " + quote(v), col + " " + op + " " + v))
    return out


def part1(pqtool, delta_dir):
    pruned_total = 0
    compared = 0
    for table in sorted(os.listdir(delta_dir)):
        path = os.path.join(delta_dir, table)
        if not os.path.isdir(os.path.join(path, "_delta_log")):
            continue
        versions = [[]]
        exp = os.path.join(delta_dir, "expected")
        if os.path.isdir(exp):
            for f in sorted(os.listdir(exp)):
                m = re.match(re.escape(table) + r"@v(\d+)\.csv$", f)
                if m:
                    versions.append(["--version", m.group(1)])
        for ver in versions:
            rc, out, _ = run(pqtool, ["cat", path] + ver)
            if rc != 0:
                continue
            recs = list(csv.reader(io.StringIO(out)))
            if not recs:
                continue
            for pred in predicates(recs[0], recs[1:]):
                forms = pred if isinstance(pred, tuple) else (pred,)
                for form in forms:
                    rc0, want, _ = run(pqtool, ["cat", path, "--where", form, "--no-log-stats"] + ver)
                    if rc0 != 0:
                        continue
                    rc1, got, err = run(pqtool, ["cat", path, "--where", form] + ver)
                    compared += 1
                    check(rc1 == 0 and rows_of(got) == rows_of(want),
                          "%s %s --where %s: rows differ with log statistics (%s)" % (table, " ".join(ver), form, err[:200]))
                    rc2, plan, _ = run(pqtool, ["plan", path, "--where", form] + ver)
                    if "no live files" in plan:
                        break
                    m = re.search(r"(\d+) pruned by log statistics", plan)
                    check(rc2 == 0 and m is not None, "%s --where %s: plan names no log-statistics count" % (table, form))
                    if m:
                        pruned_total += int(m.group(1))
                    break
    check(compared > 100, "only %d predicates compared on the shared tables" % compared)
    check(pruned_total > 50, "the shared tables' stats pruned only %d files" % pruned_total)
    print("part 1: %d predicates compared, %d files pruned by log statistics" % (compared, pruned_total))


# ---------------------------------------------------------------- part 2

SCHEMA = {"type": "struct", "fields": [
    {"name": n, "type": t, "nullable": True, "metadata": {}}
    for n, t in (("id", "long"), ("ts", "timestamp"), ("s", "string"), ("d", "double"), ("n", "long"))]}

A32 = "a" * 32
# file: (rows as id,ts,s,d,n CSV cells, stats object or raw text or None)
TS0 = "2024-01-01T12:00:00.000Z"


def acc(ids, ts_min=TS0, ts_max=TS0, s_min="a", s_max="a", d=1.0, n=1, nulls_n=0):
    return {"numRecords": len(ids), "minValues": {"id": min(ids), "ts": ts_min, "s": s_min, "d": d, "n": n},
            "maxValues": {"id": max(ids), "ts": ts_max, "s": s_max, "d": d, "n": n},
            "nullCount": {"id": 0, "ts": 0, "s": 0, "d": 0, "n": nulls_n}}


def std(i, s="a"):
    return [str(i), "2024-01-01 12:00:00", s, "1.0", "1"]


def files():
    f = {}
    f["f01"] = ([std(1), std(2), std(3)], acc([1, 2, 3]))
    f["f02"] = ([std(10), std(11), std(12)], acc([10, 11, 12]))
    # a row 999 us past the millisecond its max was cut to
    f["f03"] = ([[ "20", "2024-01-01 12:00:00.000999", "a", "1.0", "1"]], acc([20]))
    # a string max cut to 32 characters, bare (no tie-breaker)
    f["f04"] = ([std(30, A32 + "zzz")], acc([30], s_min=A32, s_max=A32))
    # delta-spark's old tie-breaker U+FFFD, below a 4-byte character
    f["f05"] = ([std(40, "abc\U0001F600")], acc([40], s_min="abc", s_max="abc\uFFFD"))
    # a NaN the writer's min/max left out
    f["f06"] = ([std(50), ["51", "2024-01-01 12:00:00", "a", "NaN", "1"]], acc([50, 51], d=1.0))
    # column s missing from the stats
    st = acc([60])
    for k in ("minValues", "maxValues", "nullCount"):
        del st[k]["s"]
    f["f07"] = ([std(60, "only60")], st)
    # null min/max
    st = acc([70])
    st["minValues"]["s"] = None
    st["maxValues"]["s"] = None
    f["f08"] = ([std(70, "only70")], st)
    # wide bounds: a null count that would say every n is null
    st = acc([80, 81], n=5, nulls_n=2)
    st["tightBounds"] = False
    f["f09"] = ([["80", "2024-01-01 12:00:00", "a", "1.0", "5"], ["81", "2024-01-01 12:00:00", "a", "1.0", ""]], st)
    # every n null (tight): IS NOT NULL and n = ... prune it
    st = acc([90, 91], nulls_n=2)
    del st["minValues"]["n"]
    del st["maxValues"]["n"]
    f["f10"] = ([["90", "2024-01-01 12:00:00", "a", "1.0", ""], ["91", "2024-01-01 12:00:00", "a", "1.0", ""]], st)
    f["f11"] = ([std(100)], None)
    f["f12"] = ([std(110)], "{not json")
    # numRecords missing
    st = acc([120])
    del st["numRecords"]
    f["f13"] = ([std(120)], st)
    # a NaN max written as a string, and a timestamp without an offset
    st = acc([130])
    st["maxValues"]["d"] = "NaN"
    st["maxValues"]["ts"] = "2024-01-01T12:00:00.000"
    f["f14"] = ([["130", "2024-01-01 12:30:00", "a", "9.0", "1"]], st)
    return f


ALL_IDS = sorted(int(r[0]) for rows, _ in files().values() for r in rows)


def write_table(pqtool, root):
    os.makedirs(os.path.join(root, "_delta_log"))
    # one schema for every file (a column all NULL in one file is not inferred)
    tmpl = os.path.join(root, "..", "template.csv")
    with open(tmpl, "w", newline="") as fh:
        fh.write("id,ts,s,d,n\n1,2024-01-01 12:00:00.000001,x,1.5,1\n")
    subprocess.run([pqtool, "write", tmpl, os.path.join(root, "..", "template.parquet")], check=True)
    log = [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
           {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}},
                         "schemaString": json.dumps(SCHEMA), "partitionColumns": [], "configuration": {},
                         "createdTime": 0}}]
    for name, (rows, stats) in sorted(files().items()):
        c = os.path.join(root, "..", name + ".csv")
        with open(c, "w", newline="", encoding="utf-8") as fh:
            fh.write("id,ts,s,d,n\n")
            for r in rows:
                fh.write(",".join(r) + "\n")
        pq = os.path.join(root, name + ".parquet")
        subprocess.run([pqtool, "write", c, pq, "--schema", os.path.join(root, "..", "template.parquet")], check=True)
        add = {"path": name + ".parquet", "partitionValues": {}, "size": os.path.getsize(pq),
               "modificationTime": 0, "dataChange": True}
        if stats is not None:
            add["stats"] = stats if isinstance(stats, str) else json.dumps(stats, ensure_ascii=False)
        log.append({"add": add})
    with open(os.path.join(root, "_delta_log", "00000000000000000000.json"), "w", encoding="utf-8") as fh:
        for a in log:
            fh.write(json.dumps(a, ensure_ascii=False) + "\n")


def ids_of(out):
    return sorted(int(l.split(",")[0]) for l in out.splitlines()[1:] if l)


def pruned_files(plan):
    return sorted(re.findall(r"file \S*/(f\d\d)\.parquet: pruned by log statistics", plan))


def part2(pqtool, work):
    root = os.path.join(work, "t")
    write_table(pqtool, root)
    # (predicate, ids it must give, files the log statistics must prune)
    cases = [
        ("id > 5", None, ["f01"]),
        ("id = 11", [11], ["f01", "f03", "f04", "f05", "f06", "f07", "f08", "f09", "f10", "f14"]),
        ("ts > '2024-01-01 12:00:00.0005+00'", [20, 130], None),
        ("s > '%s' AND s < 'ab'" % A32, [30], None),
        ("s > 'abc\uFFFD' AND s < 'abd'", [40], None),
        ("s = 'abc\U0001F600'", [40], None),
        ("d > 2", [51, 130], None),
        ("s = 'only60'", [60], None),
        ("s = 'only70'", [70], None),
        ("n = 5", [80], None),
        ("n IS NOT NULL", [i for i in ALL_IDS if i not in (81, 90, 91)], ["f10"]),
        ("n IS NULL", [81, 90, 91], ["f01", "f02", "f03", "f04", "f05", "f06", "f07", "f08", "f14"]),
        ("id = 100 OR id = 110 OR id = 120", [100, 110, 120], None),
    ]
    for pred, want, want_pruned in cases:
        if want is not None:
            want = sorted(want)
        rc0, ref, e0 = run(pqtool, ["cat", root, "--where", pred, "--no-log-stats"])
        rc1, got, e1 = run(pqtool, ["cat", root, "--where", pred])
        check(rc0 == 0 and rc1 == 0 and rows_of(got) == rows_of(ref),
              "--where %s: rows differ with log statistics (%s%s)" % (pred, e0[:200], e1[:200]))
        if want is not None:
            check(ids_of(got) == want, "--where %s: ids %s, want %s" % (pred, ids_of(got), want))
        rc2, plan, e2 = run(pqtool, ["plan", root, "--where", pred])
        got_pruned = pruned_files(plan)
        if want_pruned is not None:
            check(got_pruned == want_pruned, "--where %s: pruned %s, want %s" % (pred, got_pruned, want_pruned))
        m = re.search(r"^files: (\d+) total, 0 pruned by partition, (\d+) pruned by log statistics$", plan, re.M)
        check(rc2 == 0 and m and int(m.group(2)) == len(got_pruned),
              "--where %s: the plan's count (%s) is not its files (%d)" % (pred, m and m.group(0), len(got_pruned)))
        # Files never to be pruned by this predicate whatever it is: those
        # holding one of its rows.
        for f in got_pruned:
            rows = files()[f][0]
            hit = {int(r[0]) for r in rows} & set(ids_of(ref))
            check(not hit, "--where %s: %s pruned but holds rows %s" % (pred, f, sorted(hit)))
    # The plan names the version; the rung off: no count, nothing pruned.
    rc, plan, _ = run(pqtool, ["plan", root, "--where", "id = 11"])
    check(plan.splitlines()[0] == "table: Delta Lake, version 0, 14 live files", "plan's first line: " + plan[:100])
    rc, plan, _ = run(pqtool, ["plan", root, "--where", "id = 11", "--no-log-stats"])
    check("log statistics" not in plan, "--no-log-stats still prunes by log statistics")
    # Bytes read: the pruned files' footers are never read.
    def storage(args):
        rc, _, err = run(pqtool, ["cat", root, "--where", "id = 11", "--stats"] + args)
        m = re.search(r"storage: (\d+) bytes in (\d+) reads", err)
        return (int(m.group(1)), int(m.group(2))) if rc == 0 and m else (None, None)
    with_b, with_r = storage([])
    without_b, without_r = storage(["--no-log-stats"])
    check(with_b is not None and without_b is not None and with_b < without_b and with_r < without_r,
          "bytes read with log statistics %s (%s reads), without %s (%s reads)" % (with_b, with_r, without_b, without_r))
    print("part 2: id = 11 reads %s bytes in %s reads with log statistics, %s bytes in %s reads without"
          % (with_b, with_r, without_b, without_r))


def main():
    if len(sys.argv) != 3:
        print("usage: stats.py PQTOOL DELTA_DIR", file=sys.stderr)
        return 2
    pqtool, delta_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="pqfs-delta-stats.") as work:
        part2(pqtool, work)
        if os.path.isdir(os.path.join(delta_dir, "simple_table", "_delta_log")):
            part1(pqtool, delta_dir)
        else:
            print("part 1 skipped: no " + delta_dir)
    print("%d passed, %d failed" % (PASSES, FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
