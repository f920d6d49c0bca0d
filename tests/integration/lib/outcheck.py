"""What the live suites' Python checks share (slurm_live*.sh, multihost.sh, schedlive.sh, on
PYTHONPATH through lib/suite.sh; pytorch.sh, which puts it there itself): `out`, the text of
the file the check's first argument names, and need(), the first match of a line pattern in
it from `start` on, or a failure that says what was missing."""
import re
import sys

out = open(sys.argv[1]).read()


def need(pat, what, start=0):
    m = re.compile(pat, re.M).search(out, start)
    assert m, "missing: %s (%s)" % (what, pat)
    return m
