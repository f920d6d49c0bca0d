"""tunedeck's trial helper: hooks a training script into tunedeck in a few lines (stdlib only).

A trial command gets its schedule (protocol v1, docs/formats.md) on standard input. This
module reads it, tells the script who it is -- rank, world size, local batch, role -- and
writes the protocol-v1 lines tunedeck reads back: `iteration` with this rank's timings,
`progress` with the loss, `done` and `error`.

    import tunedeck_trial
    trial = tunedeck_trial.Trial.load()          # the schedule from stdin (or a path)
    with trial.guard():                          # an exception becomes an `error` line
        for it in range(1, trial.iterations + 1):
            t0 = time.perf_counter()
            loss = train_step(batch_size=trial.local_batch)
            trial.iteration(it, time.perf_counter() - t0)
            trial.progress(step=it, loss=loss)
        trial.done()

Who a process is comes from its environment. With `"ranks": "per-device"` in the
inventory's trial block, tunedeck starts one process per device that has inputs and sets
RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TUNEDECK_MACHINE
and TUNEDECK_DEVICE (torch.distributed's env:// rendezvous reads the first six). Without
RANK the process is the only one of its machine (TUNEDECK_MACHINE) or of the whole trial,
and its local batch is that machine's inputs or the global batch.

Ranks are numbered as core/model/ranks.c numbers them: machine by machine in the
schedule's order, on worker machines, one per device with inputs > 0.
"""
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback
import zlib

__all__ = ["Trial", "ranks", "progress", "ScheduleError", "Timer", "LiveStop", "host_ranks",
           "run_ranks", "save_checkpoint", "load_checkpoint", "CheckpointError"]


class ScheduleError(ValueError):
    """The schedule (or the environment) does not say what this process should do."""


def _field(path, key):
    return "%s.%s" % (path, key) if path else key


def _shown(value):
    """A refused value as its error line shows it: its JSON, or what it is when it nests too
    deep for json.dumps (a value json.loads just managed to read can still be one level too
    deep to write back from inside the checks: a RecursionError escaped as a traceback)."""
    try:
        return json.dumps(value)
    except RecursionError:
        return "%s nested too deep to show" % ("an object" if isinstance(value, dict)
                                              else "a list")


def _nesting(text):
    """How deep the arrays and objects of a JSON text nest, strings skipped (a "[" inside
    one is no level). Only for a refusal: json.loads's RecursionError says no depth."""
    depth = deepest = 0
    for c in re.sub(r'"(?:[^"\\]|\\.)*"?', "", text):
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}" and depth > 0:
            depth -= 1
    return deepest


def _int(obj, path, key, low, default=None):
    """obj[key] as an int >= low: a JSON integer (1.0 too, as JSON does not tell them apart),
    never a bool, a string or a fraction, which int() would turn into a number silently."""
    value = obj.get(key, default)
    name = _field(path, key)
    if value is None:
        raise ScheduleError("schedule: field '%s': expected an integer >= %d, found nothing"
                            % (name, low))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ScheduleError("schedule: field '%s': expected an integer >= %d, found %s"
                            % (name, low, _shown(value)))
    return value


def _typed(obj, path, key, kind, what):
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or (kind is str and not value):
        found = "nothing" if key not in obj else _shown(obj[key])
        raise ScheduleError("schedule: field '%s': expected %s, found %s"
                            % (_field(path, key), what, found))
    return value


def _check_machines(schedule):
    """The machines of a schedule, each checked for what ranks() and Trial read: a bad field
    is named by its path (machines[1].devices[0].inputs) rather than surfacing as a KeyError
    or an AttributeError from deep inside."""
    machines = _typed(schedule, "", "machines", list, "a list of machines")
    for i, m in enumerate(machines):
        path = "machines[%d]" % i
        if not isinstance(m, dict):
            raise ScheduleError("schedule: field '%s': expected an object, found %s"
                                % (path, _shown(m)))
        _typed(m, path, "name", str, "a machine name")
        for role in ("worker", "ps"):
            if role in m and not isinstance(m[role], bool):
                raise ScheduleError("schedule: field '%s': expected true or false, found %s"
                                    % (_field(path, role), _shown(m[role])))
        devices = _typed(m, path, "devices", list, "a list of devices")
        for j, d in enumerate(devices):
            dpath = "%s.devices[%d]" % (path, j)
            if not isinstance(d, dict):
                raise ScheduleError("schedule: field '%s': expected an object, found %s"
                                    % (dpath, _shown(d)))
            _typed(d, dpath, "id", str, "a device id")
            _int(d, dpath, "inputs", 0)
    return machines


class _KeyTwice(Exception):
    """Raised by _no_key_twice: some object holds a key twice; _key_twice_path finds which."""


def _no_key_twice(pairs):
    """A JSON object whose key appears twice is refused, as tunedeck refuses it in every
    file it reads (docs/formats.md): json.loads would keep the last copy without a word."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise _KeyTwice()
        seen[key] = value
    return seen


class _Pairs(list):
    """An object's members as the text gave them, copies of a key kept."""


def _key_twice_path(text):
    """(path, key) of the first object, in document order, that holds a key twice: the path
    as tunedeck writes it (machines[0].devices[1], "" for the top object). json.loads's hook
    sees an object without knowing where it is, so the text is read again keeping every
    member, and walked from the top -- only for a refusal. A loop, not recursion: the text
    may be nested as deep as json.loads allows."""
    stack = [(json.loads(text, object_pairs_hook=_Pairs), "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Pairs):
            keys = [k for k, _ in value]
            for i, key in enumerate(keys):
                if key in keys[:i]:
                    return path, key
            steps = [(v, "%s.%s" % (path, k) if path else k) for k, v in value]
        elif isinstance(value, list):
            steps = [(v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(steps))
    return "", ""  # not reached: the hook found one


def ranks(schedule):
    """Every rank of a schedule: dicts with rank, machine, device, local_rank, local_world
    and local_batch, in tunedeck's order. A malformed schedule is a ScheduleError naming the
    field."""
    out = []
    for m in _check_machines(schedule):
        if not m.get("worker"):
            continue
        mine = [d for d in m["devices"] if int(d["inputs"]) > 0]
        for i, d in enumerate(mine):
            out.append({"rank": len(out), "machine": m["name"], "device": d["id"],
                        "local_rank": i, "local_world": len(mine),
                        "local_batch": int(d["inputs"])})
    return out


def write_line(obj, out=None):
    """Writes one protocol line to `out` (default: standard output)."""
    line = json.dumps(obj) + "\n"
    if out is not None:
        out.write(line)
        out.flush()
        return
    # One write per line: the ranks of a host share one pipe, and a write of at most
    # PIPE_BUF bytes is never interleaved with another.
    sys.stdout.flush()
    os.write(1, line.encode())


def _whole(value):
    """A step or iteration number as JSON should carry it: a whole number (numpy's too, and
    2.0) as an int, anything else as it is, so that tunedeck refuses the field by name
    rather than read 1.5 as 1 (int() truncated it here) -- and the training goes on, as
    with a diverged loss."""
    if isinstance(value, (bool, str)):
        return value
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    return int(value) if f.is_integer() else f


def _progress_event(step, loss, epoch, examples_per_s):
    ev = {"event": "progress", "step": _whole(step)}
    if loss is not None:
        # Any finite loss is a loss, negative ones too (a negative log-likelihood, an ELBO).
        # A diverged one (NaN, inf) is written as json.dumps writes it, a bare NaN/Infinity:
        # tunedeck reads that word as a protocol line and refuses the field by name ("loss
        # ... found NaN (training diverged?)"), so the divergence is told, and the training
        # script is not stopped by a logging call.
        ev["loss"] = float(loss)
    if epoch is not None:
        ev["epoch"] = float(epoch)
    if examples_per_s is not None:
        ev["examples_per_s"] = float(examples_per_s)
    return ev


def progress(step, loss=None, epoch=None, examples_per_s=None, out=None):
    """A progress line without a schedule (a live job: the scheduler starts it with no
    schedule on stdin). The loss feeds the scheduler's convergence model."""
    write_line(_progress_event(step, loss, epoch, examples_per_s), out)


def _env_int(env, name):
    text = env.get(name)
    if text is None or text == "":
        return None
    # Decimal digits only, as tunedeck reads its own numbers: int() would also take " 2",
    # "+2", "1_0" and other scripts' digits.
    if not re.fullmatch(r"-?[0-9]+", text):
        raise ScheduleError("environment variable %s: expected a decimal integer, found %r"
                            % (name, text))
    return int(text)


class Trial:
    """One process's view of a tunedeck trial (or a live job's schedule).

    Its share of each global batch is `local_batch` inputs starting at `batch_offset`: the
    ranks' shares, in rank order, tile the global batch without overlap."""

    def __init__(self, schedule, env=None, out=None):
        env = os.environ if env is None else env
        self.schedule = schedule
        self._out = out
        if not isinstance(schedule, dict):
            raise ScheduleError("schedule: expected a JSON object, found %s"
                                % type(schedule).__name__)
        self.job = _typed(schedule, "", "job", dict, "an object with the job's fields")
        self.global_batch = _int(self.job, "job", "batch", 1)
        machines = _check_machines(schedule)
        self.trial = _int(schedule, "", "trial", 0, 0)
        # the schedule's own, else the job file's (a schedule tunedeck wrote has both)
        where = schedule if "iterations" in schedule else self.job
        self.iterations = _int(where, "" if where is schedule else "job", "iterations", 1, 20)
        where = schedule if "warmup" in schedule else self.job
        self.warmup = _int(where, "" if where is schedule else "job", "warmup", 0, 0)
        # As tunedeck's own reader: with no iteration after the warm-up, done() would have no
        # mean to give, and the trial no objective.
        if self.warmup >= self.iterations:
            raise ScheduleError("schedule: field '%s': expected fewer warm-up iterations than "
                                "the %d iterations, found %d"
                                % (_field("" if where is schedule else "job", "warmup"),
                                   self.iterations, self.warmup))
        self.ranks = ranks(schedule)
        # The ranks' shares tile the global batch (batch_offset): inputs that do not add up
        # to it would leave samples out or index past the batch.
        given = sum(r["local_batch"] for r in self.ranks)
        if given != self.global_batch:
            raise ScheduleError("schedule: the workers' inputs sum to %d, but job.batch is %d "
                                "(a schedule's worker inputs add up to its batch)"
                                % (given, self.global_batch))
        self.machine = env.get("TUNEDECK_MACHINE", "")
        self.device = env.get("TUNEDECK_DEVICE", "")
        self.master_addr = env.get("MASTER_ADDR", "")
        self.master_port = _env_int(env, "MASTER_PORT")
        rank = _env_int(env, "RANK")
        by_name = {m.get("name"): m for m in machines}
        if self.machine and self.machine not in by_name:
            raise ScheduleError("TUNEDECK_MACHINE=%r: no such machine in the schedule"
                                % self.machine)
        world = _env_int(env, "WORLD_SIZE")
        if rank is not None:
            self._as_rank(rank, world, env)
        elif world is not None:
            # A rank whose RANK got lost (a launcher of the script's own that sets only
            # WORLD_SIZE) would otherwise train on the whole batch as rank 0, beside the others.
            raise ScheduleError("environment variable WORLD_SIZE=%d without RANK: expected both "
                                "(a rank of a per-device trial) or neither (one process)"
                                % world)
        else:
            # One process for a machine (per-host) or for the whole trial (local, single).
            self.rank, self.world_size = 0, 1
            self.local_rank, self.local_world_size = 0, 1
            self.batch_offset = 0
            if self.machine:
                m = by_name[self.machine]
                self.local_batch = sum(int(d["inputs"]) for d in m["devices"])
                # ranks come machine by machine: this machine's inputs follow the earlier ones'
                for r in self.ranks:
                    if r["machine"] == self.machine:
                        break
                    self.batch_offset += r["local_batch"]
            else:
                self.local_batch = self.global_batch
        if self.machine:
            m = by_name[self.machine]
            self.role = "worker" if m.get("worker") else ("ps" if m.get("ps") else "idle")
        else:
            self.role = "worker"
        # The devices this process computes on, with the schedule's inputs: a rank's own, or
        # (one process per machine, which starts its own ranks) its machine's loaded ones.
        if rank is not None:
            self.devices = [(self.device, self.local_batch)]
        elif self.machine:
            self.devices = [(d["id"], int(d["inputs"])) for d in by_name[self.machine]["devices"]
                            if int(d["inputs"]) > 0]
        else:
            self.devices = []
        self._times = []

    def _as_rank(self, rank, world, env):
        if world is not None and world != len(self.ranks):
            raise ScheduleError("WORLD_SIZE=%d but the schedule has %d ranks"
                                % (world, len(self.ranks)))
        if not 0 <= rank < len(self.ranks):
            raise ScheduleError("RANK=%d: expected 0..%d" % (rank, len(self.ranks) - 1))
        me = self.ranks[rank]
        if self.machine and me["machine"] != self.machine:
            raise ScheduleError("RANK=%d is on machine %r by the schedule, not %r"
                                % (rank, me["machine"], self.machine))
        if self.device and me["device"] != self.device:
            raise ScheduleError("RANK=%d is device %r by the schedule, not %r"
                                % (rank, me["device"], self.device))
        self.rank, self.world_size = rank, len(self.ranks)
        self.machine, self.device = me["machine"], me["device"]
        # A LOCAL_RANK that disagrees with the schedule's would pick another rank's GPU.
        local_rank = _env_int(env, "LOCAL_RANK")
        if local_rank is not None and local_rank != me["local_rank"]:
            raise ScheduleError("environment variable LOCAL_RANK=%d: expected %d (RANK=%d is local "
                                "rank %d of machine %r by the schedule)"
                                % (local_rank, me["local_rank"], rank, me["local_rank"],
                                   me["machine"]))
        self.local_rank = me["local_rank"]
        self.local_world_size = me["local_world"]
        self.local_batch = me["local_batch"]
        self.batch_offset = sum(r["local_batch"] for r in self.ranks[:rank])

    @classmethod
    def load(cls, source=None, env=None, out=None):
        """Reads the schedule from a path, an open file or (None) standard input.

        A terminal on standard input is refused at once: the script was started by hand,
        and reading would wait, silently, for a schedule nobody types."""
        if source is None:
            where = "standard input"
            if sys.stdin is None or sys.stdin.isatty():
                raise ScheduleError(
                    "schedule: expected on standard input (tunedeck's trial protocol v1, "
                    "docs/formats.md), found a terminal; by hand: python3 %s < schedule.json "
                    "(a trial's schedule from tune --json)" % (sys.argv[0] or "SCRIPT"))
        else:
            where = getattr(source, "name", None) if hasattr(source, "read") else source
            where = where if isinstance(where, str) else "the file"
        try:
            if source is None:
                text = sys.stdin.read()
            elif hasattr(source, "read"):
                text = source.read()
            else:
                with open(source) as f:
                    text = f.read()
            if not text.strip():
                raise ScheduleError("schedule (%s): expected a JSON object (trial protocol v1, "
                                    "docs/formats.md), found nothing" % where)
            try:
                schedule = json.loads(text, object_pairs_hook=_no_key_twice)
            except _KeyTwice:
                path, key = _key_twice_path(text)
                raise ScheduleError("schedule (%s): %skey %s appears twice; expected each key "
                                    "once per object"
                                    % (where, path + ": " if path else "", json.dumps(key)))
        except ScheduleError:
            raise
        except OSError as e:  # a missing file, a directory, no permission: one line, named
            raise ScheduleError("schedule (%s): cannot read: %s" % (where, e.strerror or e))
        except RecursionError:
            # json.loads recurses once a level: 100000 "[" ran out of Python's stack, and the
            # RecursionError (not a ValueError) escaped as a traceback, no `error` line.
            raise ScheduleError("schedule (%s): expected a JSON object (trial protocol v1, "
                                "docs/formats.md) nested no deeper than Python's json module "
                                "reads (about %d levels), found JSON nested %d levels deep"
                                % (where, sys.getrecursionlimit(), _nesting(text)))
        except ValueError as e:
            raise ScheduleError("schedule (%s): expected a JSON object (trial protocol v1, "
                                "docs/formats.md), found text that is not JSON: %s" % (where, e))
        if not isinstance(schedule, dict):
            raise ScheduleError("schedule (%s): expected a JSON object, found %s"
                                % (where, type(schedule).__name__))
        return cls(schedule, env=env, out=out)

    # ---- protocol v1 lines ----

    def _emit(self, obj):
        write_line(obj, self._out)

    def _device_times(self, compute_s, devices_s):
        """This process's devices as the schedule gives them, each with its time: from
        devices_s ({id: seconds}), else compute_s when there is one device. Several devices
        without devices_s are left out: the machine's compute_s is their slowest, and given
        as each one's time it would tell the structured optimizer that the fast ones are as
        slow, and that the machine adds nothing to its slowest device."""
        if devices_s is None:
            if len(self.devices) != 1:
                return None
            devices_s = {self.devices[0][0]: compute_s}
        ids = [d for d, _ in self.devices]
        for d in devices_s:
            if d not in ids:
                raise ValueError("iteration: devices_s: device %r is not one of %s's devices "
                                 "with inputs (%s)" % (d, self.machine or "this process",
                                                       ", ".join(ids) or "none"))
        return [{"id": d, "inputs": n, "time_s": float(devices_s[d])}
                for d, n in self.devices if d in devices_s]

    def iteration(self, it, time_s, comm_s=None, compute_s=None, devices_s=None):
        """Reports iteration `it` (from 1): its wall time, and optionally the part spent
        communicating and computing (compute_s defaults to time_s - comm_s). One process for a
        machine with several loaded devices gives their times as devices_s, {id: seconds}."""
        if compute_s is None:
            compute_s = max(time_s - (comm_s or 0.0), 0.0)
        ev = {"event": "iteration", "iter": _whole(it), "time_s": float(time_s)}
        if comm_s is not None:
            ev["comm_s"] = float(comm_s)
        devices = self._device_times(compute_s, devices_s)
        if self.machine:
            m = {"name": self.machine, "compute_s": compute_s}
            if devices is not None:
                m["devices"] = devices
            ev["machines"] = [m]
        if it > self.warmup:
            self._times.append(float(time_s))
        self._emit(ev)

    def progress(self, step, loss=None, epoch=None, examples_per_s=None):
        write_line(_progress_event(step, loss, epoch, examples_per_s), self._out)

    def done(self, time_s=None):
        """The trial's objective: time_s, or the mean iteration time after warm-up."""
        if time_s is None and self._times:
            time_s = sum(self._times) / len(self._times)
        ev = {"event": "done"}
        if time_s is not None:
            ev["time_s"] = float(time_s)
        self._emit(ev)

    def error(self, message):
        """An `error` line: the trial's reason. One line, whitespace collapsed: a multi-line
        message (torch's load_state_dict errors, for one) reached the trial table with its
        newlines and tabs, and the reason's bounded length ran out on the indentation."""
        where = "rank %d" % self.rank if self.world_size > 1 else "trial"
        if self.machine:
            where += " on %s" % self.machine
        text = " ".join(str(message).split())
        self._emit({"event": "error", "message": "%s: %s" % (where, text)})

    @contextlib.contextmanager
    def guard(self):
        """Turns an exception into an `error` line (and the traceback on stderr), then
        exits with status 1 so the launcher sees the failure too."""
        try:
            yield self
        except SystemExit:
            raise
        except BaseException as e:  # noqa: B902 -- KeyboardInterrupt is a failure too
            traceback.print_exc()
            self.error(_exception_text(e))
            sys.exit(1)


DEBIAN_PYTHON = "/usr/bin/python3"


def missing_module(e, module, debian_package, executable=None):
    """The text for an ImportError of a script's framework (torch): which interpreter ran it
    and what to do. The trial ran `python3` from the PATH tunedeck was started with; a pyenv
    or venv python3 ahead of Debian's lacks the modules of Debian's packages, which belong to
    /usr/bin/python3, and "No module named 'torch'" alone did not say so. Short: the trial
    table's reason is bounded (256 bytes) and a rank's prefix comes before it."""
    exe = executable if executable is not None else (sys.executable or "python3")
    text = "No module named '%s' in %s" % (module, exe)
    if getattr(e, "name", module) not in (None, module):
        text = "%s (%s)" % (text, str(e).strip())  # torch itself found, one of its own missing
    if exe != DEBIAN_PYTHON:
        return "%s; Debian's %s is for %s: put /usr/bin first on PATH" % (
            text, debian_package, DEBIAN_PYTHON)
    return "%s: apt install %s" % (text, debian_package)


def _exception_text(e):
    """`ValueError: message`; an exception without a message (a bare `assert`, a
    `raise RuntimeError()`) says where it was raised instead of ending in ': '."""
    text = str(e).strip()
    if text:
        return "%s: %s" % (type(e).__name__, text)
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return type(e).__name__
    f = frames[-1]
    where = "%s line %d" % (os.path.basename(f.filename), f.lineno)
    return "%s at %s%s" % (type(e).__name__, where, ": " + f.line if f.line else "")


class Timer:
    """`with Timer() as t: ...` then t.s: seconds spent inside."""

    def __enter__(self):
        self._start = time.perf_counter()
        self.s = 0.0
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self._start
        return False


# ---- live jobs (`tunedeck schedule --live`): stop on SIGTERM, this host's ranks ----

class LiveStop:
    """SIGTERM as a flag a rank looks at between steps.

    The live scheduler sends SIGTERM to the job's whole process group: to rank 0 and every
    other rank at once, and to the process that started them. A rank blocks it: it never
    interrupts a collective, never kills the rank (also not while Python exits, when a
    handler is gone), and `asked()` sees it pending. Create it first thing, before torch
    starts any thread: a thread made earlier has SIGTERM unblocked, and the signal could land
    there. Every rank must stop at the same step: reduce `asked()` with the gradients (any
    rank asked: all stop), as examples/pytorch_ddp.py does."""

    def __init__(self):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})

    def asked(self):
        return signal.SIGTERM in signal.sigpending()


def host_ranks(node_rank, hostfile="tunedeck-hostfile"):
    """(world size, first global rank on this host, ranks on this host) from the hostfile the
    live scheduler writes in the job's folder: one `address:slots` line per host, in the
    placement's order ({node_rank} is this host's index), an IPv6 address in brackets
    (`[::1]:2`). A bare IPv6 address (`::1:2`: ::1 with 2 slots, or ::1:2 with none?) is
    refused as ambiguous, and so is a host with no slots (0 or fewer), naming its line: it
    would give a rank range that is empty or backwards."""
    try:
        with open(hostfile) as f:
            lines = [(n, line.strip()) for n, line in enumerate(f, 1) if line.strip()]
    except OSError as e:
        raise ScheduleError("%s: expected one address:slots line per host (%s)" % (hostfile, e))
    slots = []
    for n, line in lines:
        if line.startswith("["):  # [IPv6]:slots
            close = line.find("]")
            if close < 0 or line[close + 1:close + 2] != ":":
                raise ScheduleError("%s: line %d '%s': expected [address]:slots for an IPv6 "
                                    "address, found no ']:' after it" % (hostfile, n, line))
            text = line[close + 2:]
        elif line.count(":") > 1:
            raise ScheduleError("%s: line %d '%s': expected an IPv6 address in brackets, "
                                "[address]:slots (which ':' ends the address?)"
                                % (hostfile, n, line))
        else:
            text = line.split(":", 1)[1] if ":" in line else None
        # Decimal digits only, as the scheduler writes them: int() would also take " 2", "+2"
        if text is None or not re.fullmatch(r"-?[0-9]+", text):
            raise ScheduleError("%s: line %d '%s': expected address:slots with slots a decimal "
                                "integer, found %r" % (hostfile, n, line, text))
        slots.append(int(text))
    for (n, line), s in zip(lines, slots):
        if s <= 0:
            raise ScheduleError("%s: line %d '%s': expected address:slots with at least 1 slot, "
                                "found %d" % (hostfile, n, line, s))
    if not 0 <= node_rank < len(slots):
        raise ScheduleError("node rank %d: the hostfile %s has %d hosts"
                            % (node_rank, hostfile, len(slots)))
    return sum(slots), sum(slots[:node_rank]), slots[node_rank]


# ---- checkpoints: written whole or not at all, the step kept beside the payload ----

class CheckpointError(ValueError):
    """A checkpoint that is there but cannot be used: one line naming the file and why."""


_CKPT_MAGIC = "tunedeck-checkpoint 1"


def _fsync_dir(folder):
    # The rename lives in the folder: without this a crash can lose it after exit 0.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the rename itself is still atomic
    finally:
        os.close(fd)


def save_checkpoint(path, step, data):
    """Writes `data` with `step` to `path` so that `path` is always a whole checkpoint.

    `data` is bytes, or a callable given a binary file to write into (`lambda f:
    torch.save(state, f)`). It goes to `path + ".tmp"` in the same folder, is flushed and
    fsync'ed, then os.replace()s `path`, and the folder is fsync'ed: a SIGKILL or a crash
    at any moment leaves the old checkpoint or the new one, never half of one. A `.tmp`
    that a killed save left behind is overwritten (the next save) and never read."""
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise CheckpointError("checkpoint %s: step: expected an integer >= 0, found %r"
                              % (path, step))
    if callable(data):
        buf = io.BytesIO()
        data(buf)
        data = buf.getvalue()
    if not isinstance(data, (bytes, bytearray)):
        raise CheckpointError("checkpoint %s: expected bytes or a callable that writes a binary "
                              "file, found %s" % (path, type(data).__name__))
    header = "%s step=%d bytes=%d crc32=%08x\n" % (_CKPT_MAGIC, step, len(data),
                                                    zlib.crc32(data) & 0xffffffff)
    tmp = path + ".tmp"
    folder = os.path.dirname(os.path.abspath(path))
    try:
        with open(tmp, "wb") as f:  # truncates a stale .tmp of a killed save
            f.write(header.encode("ascii"))
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(folder)
    except OSError as e:
        # The bare error named only the .tmp; say which checkpoint, and why in the
        # operator's words. The old checkpoint, if any, is untouched.
        if not os.path.isdir(folder):
            why = "its folder %s does not exist" % folder
        elif os.path.isdir(path):
            why = "it names a folder, expected a file"
        else:
            why = e.strerror or str(e)
        if os.path.isfile(tmp):
            os.remove(tmp)
        raise CheckpointError("checkpoint %s: cannot be written: %s" % (path, why)) from e


def load_checkpoint(path, load=None):
    """None when there is no checkpoint (`path` empty or no such file: a first start),
    else (step, payload): the bytes saved, or what `load` returns given them as a binary
    file (`lambda f: torch.load(f, map_location=device)`). A file that is cut short, damaged,
    not written by save_checkpoint, or that `load` refuses raises CheckpointError, one line
    naming the file."""
    if not path or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            head = f.readline(256)
            data = f.read()
    except OSError as e:
        raise CheckpointError("checkpoint %s: cannot be read: %s" % (path, e.strerror or e))
    m = re.fullmatch(r"%s step=([0-9]+) bytes=([0-9]+) crc32=([0-9a-f]{8})\n"
                     % re.escape(_CKPT_MAGIC), head.decode("ascii", "replace"))
    if not m:
        raise CheckpointError("checkpoint %s: expected a first line '%s step=N bytes=N "
                              "crc32=X' (written by save_checkpoint), found %r"
                              % (path, _CKPT_MAGIC, head[:60]))
    step, size, crc = int(m.group(1)), int(m.group(2)), int(m.group(3), 16)
    if len(data) != size:
        raise CheckpointError("checkpoint %s: expected %d bytes after its first line, found %d "
                              "(cut short or appended to)" % (path, size, len(data)))
    if zlib.crc32(data) & 0xffffffff != crc:
        raise CheckpointError("checkpoint %s: its bytes do not match their crc32 (damaged)"
                              % path)
    if load is None:
        return step, data
    try:
        return step, load(io.BytesIO(data))
    except Exception as e:  # noqa: BLE001 -- whatever the loader raises, said in one line
        raise CheckpointError("checkpoint %s: cannot be loaded: %s"
                              % (path, " ".join(_exception_text(e).split())))


def _exit_status(rc):
    return rc if rc >= 0 else 128 - rc


def run_ranks(argv, here, first, world, master_addr, master_port, env=None):
    """Starts `here` ranks of a live job on this host (`argv` each, with RANK from `first`,
    WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and waits for them.

    They start with SIGTERM blocked (see LiveStop). A SIGTERM that reached only this process,
    before they existed, is passed on (this process may block it too, from its start, as a
    LiveStop does; else it is caught here); later ones reach them with the group. The first
    rank that fails stops the others (SIGKILL: a rank whose peer died is stuck in a
    collective). Returns the exit status for this process: 0, the first failure's, or 128 +
    its signal."""
    # A template without {master_addr} or {master_port} (argparse's default None): the ranks
    # got MASTER_ADDR=None and looked up a host named "None", or failed on int("None") deep
    # in torch. Said here, before any rank starts.
    if master_addr is None or str(master_addr).strip() == "":
        raise ScheduleError("run_ranks: master_addr: expected rank 0's host ({master_addr} in "
                            "job_command), found %r" % (master_addr,))
    if not re.fullmatch(r"[0-9]+", str(master_port)) or not 0 < int(master_port) < 65536:
        raise ScheduleError("run_ranks: master_port: expected a port 1-65535 ({master_port} in "
                            "job_command), found %r" % (master_port,))
    asked = [False]
    blocked = signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    old = None if blocked else signal.signal(signal.SIGTERM,
                                             lambda signo, frame: asked.__setitem__(0, True))

    def stop_asked():
        return asked[0] or (blocked and signal.SIGTERM in signal.sigpending())
    base = dict(os.environ if env is None else env, WORLD_SIZE=str(world),
                LOCAL_WORLD_SIZE=str(here), MASTER_ADDR=str(master_addr),
                MASTER_PORT=str(master_port))
    kids = []
    try:
        # The ranks inherit the signal mask: SIGTERM is blocked here while they are started
        # (not in a preexec_fn, which is unsafe with threads), then the mask is restored; a
        # SIGTERM that came meanwhile stays pending and reaches the handler then.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            for i in range(here):
                kids.append(subprocess.Popen(
                    argv, env=dict(base, RANK=str(first + i), LOCAL_RANK=str(i))))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        status, passed_on = 0, False
        while [k.poll() for k in kids].count(None):  # every kid polled: no any() shortcut
            if not passed_on and stop_asked():
                passed_on = True  # pending in a rank that blocks it: a second is harmless
                for k in kids:
                    if k.poll() is None:
                        k.send_signal(signal.SIGTERM)
            for k in kids:
                if k.returncode not in (None, 0) and status == 0:
                    status = _exit_status(k.returncode)
                    for other in kids:
                        if other.poll() is None:
                            other.kill()
            time.sleep(0.1)
        for k in kids:
            if k.returncode != 0 and status == 0:
                status = _exit_status(k.returncode)
        return status
    finally:
        for k in kids:
            if k.poll() is None:
                k.kill()
                k.wait()
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def main(argv):
    """`python3 tunedeck_trial.py [schedule.json]`: prints who this process is (a check)."""
    try:
        t = Trial.load(argv[1] if len(argv) > 1 else None)
    except ScheduleError as e:
        sys.stdout.write(json.dumps({"event": "error", "message": str(e)}) + "\n")
        return 1
    sys.stderr.write("rank %d/%d machine %r device %r local batch %d of %d, role %s\n"
                     % (t.rank, t.world_size, t.machine, t.device, t.local_batch,
                        t.global_batch, t.role))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
