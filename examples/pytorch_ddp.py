#!/usr/bin/env python3
"""A real data-parallel PyTorch job for tunedeck: tuning trials and live scheduling.

A small MLP learns a classification task whose data set it makes itself (inputs drawn from
a fixed seed, labels from a fixed random "teacher" network), so it needs no download and
every rank sees the same data. Each step takes the next `global batch` samples; rank r
trains on its own slice of them, as large as the schedule's local batch for its device.

Uneven local batches give exactly the gradient of the global batch: each rank's mean loss
is weighted by local_batch / global_batch and the gradients are summed over the ranks with
all_reduce(SUM) -- one flat buffer, as DistributedDataParallel's buckets do. (DDP itself
averages by world size, which is right only for equal local batches.) tests/integration/
pytorch.sh checks this against a single process to a tight tolerance.

Tuning (the default): the schedule arrives on stdin (tools/python/tunedeck_trial.py reads
it); tunedeck's per-device ranks give RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT. Each
iteration reports this rank's compute and communication time, then `done`.

    python3 examples/pytorch_ddp.py [--steps N]

Live (`--live`): started by the live scheduler's job_command; this process starts one
rank per GPU of the job on this host, rank 0 reports the loss in progress lines, and on
SIGTERM every rank agrees on the step to stop at, rank 0 writes the checkpoint and all exit
0. `--resume` continues from a checkpoint at any world size (every rank reads it: the job's
folder must be shared between its hosts). On one host (job_launch first-host):

    python3 examples/pytorch_ddp.py --live --world {gpus} --resume {resume} \\
        --checkpoint job.ckpt --batch 64

On every host of the placement (job_launch per-host), meeting at rank 0's host; the ranks
of each host and their global numbers come from the hostfile the scheduler writes:

    python3 examples/pytorch_ddp.py --live --master-addr {master_addr} \\
        --master-port {master_port} --node-rank {node_rank} --resume {resume} \\
        --checkpoint job.ckpt --batch 64

Backend: gloo on CPU; NCCL when every rank's device is a GPU and CUDA is present.
Threads per rank: OMP_NUM_THREADS, else the host's CPUs over its ranks.
"""
import argparse
import datetime
import os
import socket
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "python"))
import tunedeck_trial  # noqa: E402

# A live job may be asked to stop (SIGTERM) at any moment, also while it still imports torch
# or meets its peers. Every process of it -- the one that starts the ranks and each rank --
# keeps SIGTERM blocked from its start (tunedeck_trial.LiveStop, before torch makes any
# thread) and looks for it between steps: a signal never interrupts the rendezvous or a
# collective, and none is lost. run_ranks passes on one that came before the ranks existed.
STOP = tunedeck_trial.LiveStop() if "--live" in sys.argv else None


def term_pending():
    return STOP is not None and STOP.asked()


# The process that only starts a live job's ranks never trains: it skips importing torch,
# which takes seconds, so its ranks start sooner.
# A python3 without torch (a pyenv one ahead of Debian's on PATH) is told apart from a bug:
# need_torch() raises with the interpreter's name and what to do, and tune() reports it as
# the trial's error line.
TORCH_MISSING = None
if "--live" in sys.argv and "RANK" not in os.environ:
    torch = dist = None
else:
    try:
        import torch  # noqa: E402
        import torch.distributed as dist  # noqa: E402
    except ImportError as e:
        torch = dist = None
        TORCH_MISSING = e


def need_torch():
    if TORCH_MISSING is not None:
        raise ImportError(tunedeck_trial.missing_module(TORCH_MISSING, "torch", "python3-torch"))

IN_FEATURES, HIDDEN, CLASSES, SAMPLES = 32, 64, 4, 4096
RENDEZVOUS_TIMEOUT_S = 60


def make_data(seed=1234):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(SAMPLES, IN_FEATURES, generator=g, dtype=torch.float64)
    teacher = torch.randn(IN_FEATURES, CLASSES, generator=g, dtype=torch.float64)
    y = torch.argmax(torch.tanh(x @ teacher) + 0.3 * torch.randn(SAMPLES, CLASSES, generator=g,
                                                                   dtype=torch.float64), dim=1)
    return x, y


def make_model(seed=7):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(IN_FEATURES, HIDDEN), torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, CLASSES)).double()


def batch_indices(step, global_batch):
    """The samples of global step `step` (from 0): the next global_batch, wrapping."""
    start = (step * global_batch) % SAMPLES
    return [(start + i) % SAMPLES for i in range(global_batch)]


class Trainer:
    """One rank's training state; `world` ranks with `local_batches` (one per rank)."""

    def __init__(self, rank, local_batches, device, lr, distributed):
        self.rank, self.local_batches = rank, local_batches
        self.global_batch = sum(local_batches)
        self.offset = sum(local_batches[:rank])
        self.device, self.distributed = device, distributed
        self.x, self.y = make_data()
        self.model = make_model().to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        self.step = 0
        self.stop_asked = False

    def state(self):
        return {"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                "step": self.step, "global_batch": self.global_batch}

    def load(self, ck):
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["opt"])
        self.step = int(ck["step"])

    def train_step(self):
        """One step; returns (global loss, compute_s, comm_s, stop agreed)."""
        t0 = time.perf_counter()
        idx = batch_indices(self.step, self.global_batch)
        mine = idx[self.offset:self.offset + self.local_batches[self.rank]]
        weight = len(mine) / self.global_batch
        self.opt.zero_grad()
        if mine:
            xb, yb = self.x[mine].to(self.device), self.y[mine].to(self.device)
            loss = torch.nn.functional.cross_entropy(self.model(xb), yb) * weight
            loss.backward()
            loss_part = loss.detach()
        else:
            loss_part = torch.zeros((), dtype=torch.float64, device=self.device)
        params = list(self.model.parameters())
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        t1 = time.perf_counter()
        if self.distributed:
            # One buffer: the gradients, the weighted loss and the stop flag, so every rank
            # agrees on the loss and on the step at which a SIGTERM stops the job.
            flag = torch.tensor([1.0 if self.stop_asked else 0.0], dtype=torch.float64,
                                device=self.device)
            flat = torch.cat([g.reshape(-1) for g in grads] + [loss_part.reshape(1), flag])
            dist.all_reduce(flat, op=dist.ReduceOp.SUM)
            at = 0
            for p in params:
                n = p.numel()
                p.grad = flat[at:at + n].view_as(p).clone()
                at += n
            loss_value, stop = float(flat[at]), float(flat[at + 1]) > 0
        else:
            loss_value, stop = float(loss_part), self.stop_asked
        t2 = time.perf_counter()
        self.opt.step()
        self.step += 1
        return loss_value, (t1 - t0) + (time.perf_counter() - t2), t2 - t1, stop

    def param_norm(self):
        return float(torch.sqrt(sum((p.detach().double() ** 2).sum()
                                    for p in self.model.parameters())))


def device_for(name, all_gpus):
    if all_gpus and name.startswith("gpu") and torch.cuda.is_available():
        return torch.device("cuda", int(name[3:] or 0) % torch.cuda.device_count())
    return torch.device("cpu")


def set_threads(local_world):
    n = os.environ.get("OMP_NUM_THREADS")
    torch.set_num_threads(int(n) if n else max(1, (os.cpu_count() or 1) // max(local_world, 1)))


def init_group(backend):
    dist.init_process_group(backend, init_method="env://",
                            timeout=datetime.timedelta(seconds=RENDEZVOUS_TIMEOUT_S))


def tune(args):
    """One trial: the schedule on stdin, this process one of its ranks."""
    trial = tunedeck_trial.Trial.load(args.schedule)
    with trial.guard():
        need_torch()
        crash = args.crash_rank is not None and trial.rank == args.crash_rank
        if crash and not args.crash_step:
            raise RuntimeError("crashing on purpose (--crash-rank %d)" % args.crash_rank)
        all_gpus = all(r["device"].startswith("gpu") for r in trial.ranks)
        device = device_for(trial.device or "cpu", all_gpus)
        set_threads(trial.local_world_size)
        distributed = trial.world_size > 1
        if distributed:
            init_group("nccl" if device.type == "cuda" else "gloo")
        local = [r["local_batch"] for r in trial.ranks] if distributed else [trial.local_batch]
        t = Trainer(trial.rank if distributed else 0, local, device, args.lr, distributed)
        steps = args.steps or trial.iterations
        for it in range(1, steps + 1):
            if crash and it == args.crash_step:
                # after the rendezvous: its peers fail in the step's all_reduce, each with
                # gloo's "Connection closed by peer", as when a rank runs out of memory
                raise RuntimeError("crashing on purpose (--crash-rank %d at step %d)"
                                   % (args.crash_rank, it))
            if it == 2 and args.kill_rank is not None and trial.rank == args.kill_rank:
                os.kill(os.getpid(), signal.SIGKILL)  # dies without a word, as if OOM-killed
            start = time.perf_counter()
            loss, compute_s, comm_s, _ = t.train_step()
            trial.iteration(it, time.perf_counter() - start, comm_s=comm_s, compute_s=compute_s)
            if trial.rank == 0:
                trial.progress(step=t.step, loss=loss,
                               epoch=t.step * t.global_batch / SAMPLES)
        if args.report and trial.rank == 0:
            with open(args.report, "w") as f:
                f.write("loss %.17g norm %.17g\n" % (loss, t.param_norm()))
        trial.done()
        if distributed:
            dist.destroy_process_group()


def live_rank(args):
    """One rank of a live job (started by live_main with the env:// variables)."""
    need_torch()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = [args.batch // world + (1 if r < args.batch % world else 0) for r in range(world)]
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    set_threads(int(os.environ.get("LOCAL_WORLD_SIZE", world)))
    # the live scheduler exports CUDA_VISIBLE_DEVICES with this host's GPUs of the job
    cuda = torch.cuda.is_available() and not args.cpu
    device = torch.device("cuda", local_rank % torch.cuda.device_count()) if cuda else \
        torch.device("cpu")
    distributed = world > 1
    if distributed:
        init_group("nccl" if cuda else "gloo")
    t = Trainer(rank, local, device, args.lr, distributed)
    resumed = 0
    # None on a first start; a checkpoint cut short or of another model (load_state_dict's
    # size mismatch, inside the loader) stops here, one line naming the file
    # (tunedeck_trial.CheckpointError)
    ck = tunedeck_trial.load_checkpoint(args.resume,
                                        lambda f: t.load(torch.load(f, map_location=device)))
    if ck is not None:
        resumed = t.step = ck[0]
    if rank == 0:
        sys.stderr.write("rank 0 of %d, local batches %s, from step %d\n" % (world, local, resumed))
    last, last_step = time.perf_counter(), t.step
    loss_sum, losses = 0.0, 0
    while args.total_steps <= 0 or t.step < args.total_steps:
        t.stop_asked = term_pending()
        loss, _, _, stop = t.train_step()
        loss_sum, losses = loss_sum + loss, losses + 1
        now = time.perf_counter()
        # the first step of a run, then every --progress-every seconds (the mean loss of the
        # steps since: one batch's loss is noisy), and the last: the one a SIGTERM stops at or
        # --total-steps (the scheduler reads the run's end from it)
        last_step_of_run = stop or t.step == args.total_steps
        if rank == 0 and (t.step == resumed + 1 or last_step_of_run or
                          now - last >= args.progress_every):
            tunedeck_trial.progress(step=t.step, loss=loss_sum / losses,
                                    epoch=t.step * t.global_batch / SAMPLES,
                                    examples_per_s=(t.step - last_step) * t.global_batch
                                    / max(now - last, 1e-9))
            last, last_step = now, t.step
            loss_sum, losses = 0.0, 0
        if stop:
            break
        if args.step_sleep > 0:
            time.sleep(args.step_sleep)
    if rank == 0 and args.checkpoint:
        # atomic: a SIGKILL while saving leaves the previous checkpoint whole
        tunedeck_trial.save_checkpoint(args.checkpoint, t.step,
                                       lambda f: torch.save(t.state(), f))
        sys.stderr.write("checkpoint at step %d written to %s\n" % (t.step, args.checkpoint))
    if distributed:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def placement(args):
    """(world, first global rank here, ranks here, master addr, master port) of this host's
    part of a live job: one host with --world ranks, or with --master-addr the host
    --node-rank of the hostfile the live scheduler writes (address:slots per host)."""
    if not args.master_addr:
        return args.world, 0, args.world, "127.0.0.1", free_port()
    try:
        world, first, here = tunedeck_trial.host_ranks(args.node_rank, args.hostfile)
    except tunedeck_trial.ScheduleError as e:
        raise SystemExit(str(e))
    return world, first, here, args.master_addr, args.master_port


def live_main(args):
    """Starts this host's ranks of the job and waits; SIGTERM reaches them all (one group),
    and they stop together at one step."""
    if "RANK" in os.environ:
        return live_rank(args)
    world, first, here, addr, port = placement(args)
    return tunedeck_trial.run_ranks([sys.executable] + sys.argv, here, first, world, addr, port)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=0, help="tuning: iterations (default: schedule's)")
    p.add_argument("--schedule", help="tuning: schedule file (default: stdin)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--report", help="tuning: rank 0 writes its final loss and weight norm here")
    p.add_argument("--crash-rank", type=int, help="tuning: this rank fails (tests)")
    p.add_argument("--crash-step", type=int, default=0,
                   help="tuning: --crash-rank fails at this step, after the rendezvous "
                        "(default: before it)")
    p.add_argument("--kill-rank", type=int,
                   help="tuning: this rank is killed (SIGKILL) after its first step (tests)")
    p.add_argument("--live", action="store_true", help="run as a live scheduler job")
    p.add_argument("--world", type=int, default=1, help="live: ranks ({gpus})")
    p.add_argument("--hosts", default="", help="live: the allocation ({hosts}; informative)")
    p.add_argument("--master-addr", default="",
                   help="live, job_launch per-host: {master_addr}; ranks from --hostfile")
    p.add_argument("--master-port", type=int, default=0, help="live: {master_port}")
    p.add_argument("--node-rank", type=int, default=0, help="live: {node_rank}")
    p.add_argument("--hostfile", default="tunedeck-hostfile",
                   help="live: address:slots per host (the live scheduler writes it)")
    p.add_argument("--cpu", action="store_true", help="live: train on CPU even with CUDA")
    p.add_argument("--batch", type=int, default=64, help="live: global batch")
    p.add_argument("--resume", default="", help="live: checkpoint to continue from ({resume})")
    p.add_argument("--checkpoint", default="", help="live: where SIGTERM writes the checkpoint")
    p.add_argument("--total-steps", type=int, default=0, help="live: stop after (0: never)")
    p.add_argument("--progress-every", type=float, default=0.2,
                   help="live: seconds between progress lines")
    p.add_argument("--step-sleep", type=float, default=0.0,
                   help="live: pause per step (a slow job on a fast machine)")
    p.add_argument("--tag", default="", help="ignored; lets a test find its processes")
    args = p.parse_args()
    if args.live:
        return live_main(args) or 0
    tune(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
