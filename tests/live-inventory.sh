# Shared by tests/integration/schedlive.sh and console_live.sh (sourced after
# tests/sshd-harness.sh): turns a harness inventory into one for the live scheduler.
#
#   live_inventory FILE WORKER MARK [PAUSE]
#       2 GPUs per machine; job_command runs WORKER in job mode with checkpoint file
#       ckpt-MARK (pgrep -f finds the jobs), pausing PAUSE s after each step (default 0.01:
#       ~100 steps/s, plenty for checks of steps, checkpoints and resumes, where flat out
#       each job took a core of the 2 that suites side by side share; 0: flat out, for a
#       job that must train real epochs fast)
live_inventory() {
    python3 - "$1" "$2" "$3" "${4:-0.01}" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["machine_types"]["g"]["devices"].append({"id": "gpu1", "kind": "gpu", "model": "A100"})
inv["job_command"] = ("%s --job --gpus {gpus} --hosts {hosts} --checkpoint ckpt-%s "
                      "--resume {resume} --model-mb 0.02 --batch 64 --progress-every 0.25 "
                      "--step-sleep %s" % (sys.argv[2], sys.argv[3], sys.argv[4]))
json.dump(inv, open(sys.argv[1], "w"))
PY
}
