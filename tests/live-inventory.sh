# Shared by tests/integration/schedlive.sh and console_live.sh (sourced after
# tests/sshd-harness.sh): turns a harness inventory into one for the live scheduler.
#
#   live_inventory FILE WORKER MARK   2 GPUs per machine; job_command runs WORKER in job mode
#                                     with checkpoint file ckpt-MARK (pgrep -f finds the jobs)
live_inventory() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
inv["machine_types"]["g"]["devices"].append({"id": "gpu1", "kind": "gpu", "model": "A100"})
inv["job_command"] = ("%s --job --gpus {gpus} --hosts {hosts} --checkpoint ckpt-%s "
                      "--resume {resume} --model-mb 0.02 --batch 64 --progress-every 0.25"
                      % (sys.argv[2], sys.argv[3]))
json.dump(inv, open(sys.argv[1], "w"))
PY
}
