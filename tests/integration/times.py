#!/usr/bin/env python3
"""tests/integration/times.py TRACE [N]: where an integration test's time went, from the trace a
run with T_TRACE=TRACE wrote (tests/integration/lib.sh): each line of the test script the time
from a traced line's start to the next's, summed over the times it ran, a function's lines
counted to the test's line that called it; the N longest (20) with their share of the whole."""
import collections
import re
import sys

LINE = re.compile(r"^\++(\d+\.\d+) ([^:\s]+):(\d*):(\d+) (.*)$")


def main():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rows = []
    with open(sys.argv[1], errors="replace") as f:
        for text in f:
            m = LINE.match(text)
            if m:
                at = "%s:%s" % (m.group(2), m.group(3) or m.group(4))
                rows.append((float(m.group(1)), at, m.group(5)[:90]))
    if len(rows) < 2:
        sys.exit("times.py: fewer than two traced lines in %s" % sys.argv[1])
    spent, what = collections.Counter(), {}
    for (t0, at, cmd), (t1, _, _) in zip(rows, rows[1:]):
        spent[at] += t1 - t0
        what.setdefault(at, cmd)
    whole = rows[-1][0] - rows[0][0]
    print("%.1f s traced, %d lines" % (whole, len(rows)))
    for at, s in spent.most_common(n):
        print("%8.1f s %5.1f%%  %-24s %s" % (s, 100 * s / whole, at, what[at]))


main()
