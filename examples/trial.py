#!/usr/bin/env python3
"""An example trial command speaking tunedeck's protocol v1 (DESIGN 5.1).

It reads the schedule object on standard input and, for every iteration, does real work on
this machine for each device in proportion to the inputs the schedule gave it, timing each
part, then prints one iteration line and finally a done line. A GPU device counts as
`GPU_SPEEDUP` times faster than a CPU so the optimizer has something to balance.
Replace the body of `run_device` with a real training step to tune a real job.
"""
import json
import sys
import time

GPU_SPEEDUP = 4.0
WORK_PER_INPUT = 400  # inner-loop steps per input: a few milliseconds per iteration


def run_device(kind, inputs):
    """Runs the device's share of one iteration and returns its time in seconds."""
    start = time.perf_counter()
    steps = int(inputs * WORK_PER_INPUT / (GPU_SPEEDUP if kind == "gpu" else 1.0))
    acc = 0
    for i in range(steps):
        acc += i * i % 7
    return time.perf_counter() - start


def main():
    try:
        sched = json.load(sys.stdin)
        machines = sched["machines"]
        iterations = int(sched.get("iterations", 20))
        warmup = int(sched.get("warmup", 0))
        model_mb = float(sched["job"]["model_mb"])
    except (ValueError, KeyError, TypeError) as e:
        print(json.dumps({"event": "error", "message": "bad schedule on stdin: %s" % e}))
        return 1
    n_ps = sum(1 for m in machines if m.get("ps"))
    n_workers = sum(1 for m in machines if m.get("worker"))
    times = []
    for it in range(1, iterations + 1):
        report = []
        compute = 0.0
        for m in machines:
            if not m.get("worker"):
                continue
            devs = []
            for d in m["devices"]:
                kind = "gpu" if d["id"].startswith("gpu") else "cpu"
                devs.append({"id": d["id"], "inputs": d["inputs"],
                             "time_s": run_device(kind, d["inputs"])})
            m_compute = max(d["time_s"] for d in devs)
            compute = max(compute, m_compute)
            report.append({"name": m["name"], "compute_s": m_compute, "devices": devs})
        # Communication: every worker exchanges the model with the PS shards; more shards
        # spread the traffic (an emulated 1 GB/s link, slept rather than sent).
        comm = model_mb * 2 * n_workers / max(n_ps, 1) / 1000.0
        time.sleep(comm)
        # The machines would run in parallel: the iteration lasts as long as the slowest
        # worker plus the exchange, not the sum of the parts timed one after another here.
        elapsed = compute + comm
        if it > warmup:
            times.append(elapsed)
        print(json.dumps({"event": "iteration", "iter": it, "time_s": elapsed,
                          "comm_s": comm, "machines": report}), flush=True)
    print(json.dumps({"event": "done", "time_s": sum(times) / max(len(times), 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
