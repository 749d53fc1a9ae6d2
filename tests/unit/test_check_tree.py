#!/usr/bin/env python3
"""tools/check_tree.py on made-up trees: a clean one passes, and each kind of
finding it promises (tools/check_tree.py's docstring) fails it with its own
message.  Exits 1 on the first check that does not hold."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", "check_tree.py")

CLEAN = {
    "engine/include/pqfs/status.h": "#ifndef S_H\n#define S_H\nint pq_ok(void);\n#endif\n",
    "engine/common/status.c": '#include "status.h"\n\nint pq_ok(void)\n{\n    return 0;\n}\n',
    "engine/io/io_internal.h": "int io_private(void);\n",
    "engine/io/io.c": '#include "status.h"\n#include "io_internal.h"\n\nint io_private(void)\n{\n    return pq_ok();\n}\n',
    "fs/main.c": '#include "status.h"\n\nint main(void)\n{\n    return pq_ok();\n}\n',
}


# A public header reached only through another public header is used.
THROUGH = {
    "engine/include/pqfs/status.h": '#include "extra.h"\nint pq_ok(void);\n',
    "engine/include/pqfs/extra.h": "int extra(void);\n",
    "engine/common/extra.c": '#include "extra.h"\n',
}


def function_of(lines):
    body = "".join("    (void)0;\n" for _ in range(lines - 2))
    return "int long_one(void)\n{\n" + body + "}\n"


# (what is changed, the text the finding must hold)
CASES = [
    ({"engine/stray.c": "int x;\n"}, "a file directly in engine/"),
    ({"fs/main.c": '#include "io_internal.h"\n'}, "which is not in engine/include/"),
    ({"engine/common/status.c": '#include "io_internal.h"\n'}, "a layer above it"),
    ({"engine/common/status.c": '#include "io_internal.h"\n'}, "include cycle between engine folders"),
    ({"engine/io/long.c": function_of(151)}, "long_one is 151 lines"),
    ({"engine/io/big.c": "int x;\n" * 1501}, "1501 lines (at most 1500"),
    ({"engine/io/x_internal.h": "int x;\n", "engine/common/status.c": '#include "x_internal.h"\n'},
     "internal to io/"),
    ({"engine/include/pqfs/unused.h": "int unused(void);\n", "engine/io/unused.c": '#include "unused.h"\n'},
     "public, but nothing in fs/, tools/ or config/ includes it"),
]


def make_tree(top, extra):
    files = dict(CLEAN)
    files.update(extra)
    for rel, text in files.items():
        p = os.path.join(top, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)


def run(top):
    r = subprocess.run([sys.executable, CHECK, "--root", top], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    failures = 0
    with tempfile.TemporaryDirectory(prefix="check_tree.") as tmp:
        clean = os.path.join(tmp, "clean")
        make_tree(clean, {})
        rc, out = run(clean)
        if rc != 0:
            print(f"FAIL: the clean tree was refused (rc {rc}):\n{out}")
            failures += 1
        through = os.path.join(tmp, "through")
        make_tree(through, THROUGH)
        rc, out = run(through)
        if rc != 0:
            print(f"FAIL: a public header included by a used public header was refused:\n{out}")
            failures += 1
        # A function of exactly 150 lines and a file of exactly 1500 are allowed.
        edge = os.path.join(tmp, "edge")
        make_tree(edge, {"engine/io/long.c": function_of(150), "engine/io/big.c": "int x;\n" * 1500})
        rc, out = run(edge)
        if rc != 0:
            print(f"FAIL: a 150-line function or a 1500-line file was refused:\n{out}")
            failures += 1
        for i, (extra, want) in enumerate(CASES):
            top = os.path.join(tmp, f"case{i}")
            make_tree(top, extra)
            rc, out = run(top)
            if rc != 1 or want not in out:
                print(f"FAIL: case {i} ({want!r}): rc {rc}, output:\n{out}")
                failures += 1
            shutil.rmtree(top)
    if failures:
        print(f"{failures} check(s) failed")
        return 1
    print(f"check_tree self-test: {len(CASES) + 3} trees checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
