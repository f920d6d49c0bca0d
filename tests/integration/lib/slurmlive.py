"""What the Python checks of the live Slurm suites (slurm_live*.sh) share besides outcheck:
resumed(), the proof that a resubmitted run continued from its checkpoint."""
import glob
import json
import re

from outcheck import out, need


def resumed(m, saved, jobs, name):
    """m: the match of NAME's 'resumed at step S (checkpoint at step C)' line, S its group(1)
    and C its group(2); saved: the step of the checkpoint NAME's stop wrote; jobs: the run's
    --job-dir. The resubmission was given that checkpoint (C == saved) and continued from it:
    the first progress line in its Slurm job's own output (JOBS/NAME/slurm-ID.NONCE-N.out) is step
    saved + 1, and so is S: tunedeck names the run's first line even when its first read of
    the output brings several (sbatch's answer, which names the output, came late)."""
    assert int(m.group(2)) == saved, ("resumed from another checkpoint", m.group(0), saved)
    assert int(m.group(1)) == saved + 1, (m.group(0), saved)
    sub = out.rfind("%s: started on " % name, 0, m.start())
    end = out.find("\n", sub)
    said = out.find("resuming from its checkpoint", sub, end if end >= 0 else len(out))
    assert sub >= 0 and said >= 0, ("no resubmission from the checkpoint before", m.group(0))
    j = need(r"%s: Slurm job (\d+) (?:running|waits)" % re.escape(name), name + "'s resubmitted job",
             sub)
    found = glob.glob("%s/%s/slurm-%s.*.out" % (jobs, name, j.group(1)))
    assert len(found) == 1, ("one output file for the job", found)
    path = found[0]
    steps = [json.loads(l)["step"] for l in open(path) if l.startswith('{"event":"progress"')]
    assert steps and steps[0] == saved + 1, ("the job did not start at its checkpoint's step",
                                             path, saved, steps[:3])
    return steps[0]
