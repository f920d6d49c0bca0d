"""A shared file system's lag, stood in for slurm_live.sh: the batch jobs write their output
under LAG/node (a stand-in sbatch moves --output there and records "ID DIR NAME" in LAG/jobs,
NAME the output file's name with %j for the id), and this copies each job's complete lines to
DIR/NAME, where tunedeck reads them, except
the batch script's exit line, held back until LAG/release-ID exists (the stand-in scontrol
makes it once tunedeck has read Slurm's word that the job ended). Append-only, as a file
system delivers a growing file. Runs until LAG/stop exists (or 300 s).

Usage: python3 lagmirror.py LAG"""
import os
import sys
import time

lag = sys.argv[1]
copied = {}
deadline = time.monotonic() + 300
while not os.path.exists(os.path.join(lag, "stop")) and time.monotonic() < deadline:
    try:
        jobs = [line.split() for line in open(os.path.join(lag, "jobs")) if line.strip()]
    except FileNotFoundError:
        jobs = []
    for job, folder, name in jobs:
        job = job.split(";")[0]
        name = name.replace("%j", job)
        try:
            text = open(os.path.join(lag, "node", name)).read()
        except FileNotFoundError:
            continue
        text = text[: text.rfind("\n") + 1]  # complete lines only
        if not os.path.exists(os.path.join(lag, "release-" + job)):
            text = "".join(l for l in text.splitlines(True)
                           if not l.startswith("tunedeck-batch-exit "))
        done = copied.get(job, 0)
        if len(text) > done:
            with open(os.path.join(folder, name), "a") as f:
                f.write(text[done:])
            copied[job] = len(text)
    time.sleep(0.05)  # a polling copier, as a file system's lag: nothing waits on its pace
