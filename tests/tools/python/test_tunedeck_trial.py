"""Unit tests of tools/python/tunedeck_trial.py (stdlib only, no torch): who a process is,
its share of an uneven global batch, the protocol lines it writes, and a live job's pieces
(the hostfile, starting this host's ranks, SIGTERM to the group or to the starter alone).

    python3 tests/tools/python/test_tunedeck_trial.py     (tests/integration/pytorch.sh runs it)
"""
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tools", "python"))
import tunedeck_trial  # noqa: E402

SCHEDULE = {
    "protocol": 1, "trial": 3, "iterations": 4, "warmup": 1,
    "job": {"name": "cnn", "model_mb": 0.1, "batch": 32, "lr": 0.01},
    "machines": [
        {"name": "h1", "worker": True, "ps": True,
         "devices": [{"id": "cpu", "inputs": 5}, {"id": "gpu0", "inputs": 17}]},
        {"name": "h0", "worker": False, "ps": True, "devices": [{"id": "cpu", "inputs": 0}]},
        {"name": "h2", "worker": True, "ps": False,
         "devices": [{"id": "cpu", "inputs": 0}, {"id": "gpu0", "inputs": 10}]}]}


def lines(buf):
    return [json.loads(line) for line in buf.getvalue().splitlines()]


class Ranks(unittest.TestCase):
    def rank(self, r, **env):
        env = dict({"RANK": str(r), "WORLD_SIZE": "3"}, **env)
        return tunedeck_trial.Trial(SCHEDULE, env=env, out=io.StringIO())

    def test_uneven_shares_tile_the_global_batch(self):
        shares = [(t.batch_offset, t.local_batch) for t in map(self.rank, range(3))]
        self.assertEqual(shares, [(0, 5), (5, 17), (22, 10)])

    def test_a_rank_knows_its_machine_and_device(self):
        t = self.rank(2, TUNEDECK_MACHINE="h2", TUNEDECK_DEVICE="gpu0")
        self.assertEqual((t.machine, t.device, t.local_rank, t.local_world_size, t.role),
                         ("h2", "gpu0", 0, 1, "worker"))
        self.assertEqual(t.job["lr"], 0.01)

    def test_a_wrong_world_or_device_is_refused_by_name(self):
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError, "WORLD_SIZE=4"):
            self.rank(1, WORLD_SIZE="4")
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError, "device 'gpu0'.*not 'cpu'"):
            self.rank(1, TUNEDECK_MACHINE="h1", TUNEDECK_DEVICE="cpu")

    def test_a_rank_from_the_environment_is_a_decimal_integer(self):
        for bad in (" 1", "+1", "1_0", "0x1", "1.0", "\u0661"):
            with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                        "environment variable RANK: expected a decimal integer"):
                self.rank(bad)
        self.assertEqual(self.rank("1").rank, 1)

    def test_world_size_without_rank_is_refused(self):
        # it used to be ignored: the process trained on the whole batch as rank 0
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                    "^environment variable WORLD_SIZE=3 without RANK: expected "
                                    "both"):
            tunedeck_trial.Trial(SCHEDULE, env={"WORLD_SIZE": "3"}, out=io.StringIO())

    def test_a_local_rank_against_the_schedule_is_refused(self):
        self.assertEqual(self.rank(1, LOCAL_RANK="1").local_rank, 1)
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                    r"^environment variable LOCAL_RANK=0: expected 1 \(RANK=1 is "
                                    r"local rank 1 of machine 'h1'"):
            self.rank(1, LOCAL_RANK="0")

    def test_one_process_per_machine_gets_its_machines_share(self):
        t = tunedeck_trial.Trial(SCHEDULE, env={"TUNEDECK_MACHINE": "h2"}, out=io.StringIO())
        self.assertEqual((t.batch_offset, t.local_batch, t.world_size), (22, 10, 1))
        alone = tunedeck_trial.Trial(SCHEDULE, env={}, out=io.StringIO())
        self.assertEqual((alone.batch_offset, alone.local_batch), (0, 32))


class Lines(unittest.TestCase):
    def test_iteration_names_this_ranks_device_and_inputs(self):
        out = io.StringIO()
        t = tunedeck_trial.Trial(SCHEDULE, env={"RANK": "1", "WORLD_SIZE": "3"}, out=out)
        t.iteration(1, 0.5, comm_s=0.1)
        t.iteration(2, 0.3, comm_s=0.1)
        t.iteration(3, 0.1)
        t.done()
        ev = lines(out)
        self.assertEqual(ev[0]["machines"], [{"name": "h1", "compute_s": 0.4, "devices": [
            {"id": "gpu0", "inputs": 17, "time_s": 0.4}]}])
        self.assertEqual(ev[-1], {"event": "done", "time_s": 0.2})  # warm-up 1 left out

    def test_one_process_per_machine_reports_its_machines_devices(self):
        # Regression: the process of a machine (per-host, starting its own ranks) wrote
        # "devices": [] whatever the schedule gave its machine.
        out = io.StringIO()
        one = tunedeck_trial.Trial(SCHEDULE, env={"TUNEDECK_MACHINE": "h2"}, out=out)
        one.iteration(1, 0.5, comm_s=0.1)
        self.assertEqual(lines(out)[0]["machines"], [{"name": "h2", "compute_s": 0.4,
                                                      "devices": [{"id": "gpu0", "inputs": 10,
                                                                   "time_s": 0.4}]}])
        out = io.StringIO()
        two = tunedeck_trial.Trial(SCHEDULE, env={"TUNEDECK_MACHINE": "h1"}, out=out)
        two.iteration(1, 0.5, comm_s=0.1, devices_s={"gpu0": 0.4, "cpu": 0.25})
        # the machine's compute is not each device's time: without their own, none is given
        two.iteration(2, 0.5, comm_s=0.1)
        ev = lines(out)
        self.assertEqual(ev[0]["machines"], [{"name": "h1", "compute_s": 0.4, "devices": [
            {"id": "cpu", "inputs": 5, "time_s": 0.25}, {"id": "gpu0", "inputs": 17,
                                                         "time_s": 0.4}]}])
        self.assertEqual(ev[1]["machines"], [{"name": "h1", "compute_s": 0.4}])
        with self.assertRaisesRegex(ValueError, r"^iteration: devices_s: device 'gpu1' is not "
                                                r"one of h1's devices with inputs \(cpu, gpu0\)"):
            two.iteration(3, 0.5, devices_s={"gpu1": 0.4})

    def test_a_step_or_iteration_that_is_not_whole_is_written_as_given(self):
        # Regression: int() made step 1.5 a progress line of step 1, and iteration 2.5 one of
        # iteration 2, which tunedeck took; written as given, tunedeck refuses the field by
        # name (docs/formats.md: "1.5 is refused, not read as 1"). A whole 2.0 is 2.
        out = io.StringIO()
        tunedeck_trial.progress(step=1.5, out=out)
        tunedeck_trial.progress(step=2.0, out=out)
        t = tunedeck_trial.Trial(SCHEDULE, env={}, out=out)
        t.iteration(2.5, 0.5)
        t.iteration(3.0, 0.5)
        ev = lines(out)
        self.assertEqual([e.get("step", e.get("iter")) for e in ev], [1.5, 2, 2.5, 3])
        self.assertEqual([type(e.get("step", e.get("iter"))) for e in ev],
                         [float, int, float, int])

    def test_a_negative_loss_is_written_and_a_diverged_one_as_python_writes_it(self):
        out = io.StringIO()
        tunedeck_trial.progress(step=3, loss=-3.2, out=out)
        tunedeck_trial.progress(step=4, out=out)
        self.assertEqual(lines(out), [{"event": "progress", "step": 3, "loss": -3.2},
                                      {"event": "progress", "step": 4}])
        # Not an exception in the training loop: the line tunedeck reads as a protocol line
        # and refuses by field (tests/core/model/test_protocol.c reads these very lines).
        for bad, word in ((float("nan"), "NaN"), (float("inf"), "Infinity"),
                          (float("-inf"), "-Infinity")):
            out = io.StringIO()
            tunedeck_trial.progress(step=7, loss=bad, out=out)
            self.assertEqual(out.getvalue(),
                             '{"event": "progress", "step": 7, "loss": %s}\n' % word)

    def test_an_exception_becomes_an_error_line_and_exit_1(self):
        out = io.StringIO()
        t = tunedeck_trial.Trial(SCHEDULE, env={"RANK": "2", "WORLD_SIZE": "3"}, out=out)
        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            with self.assertRaises(SystemExit) as e:
                with t.guard():
                    raise ValueError("my script broke")
        finally:
            sys.stderr = stderr
        self.assertEqual(e.exception.code, 1)
        self.assertEqual(lines(out), [{"event": "error",
                                       "message": "rank 2 on h2: ValueError: my script broke"}])


    def guarded(self, raiser):
        out = io.StringIO()
        t = tunedeck_trial.Trial(SCHEDULE, env={"RANK": "2", "WORLD_SIZE": "3"}, out=out)
        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            with self.assertRaises(SystemExit):
                with t.guard():
                    raiser()
        finally:
            sys.stderr = stderr
        return lines(out)[0]["message"]

    def test_a_multi_line_exception_is_one_line_of_error(self):
        # Regression: torch's load_state_dict error (a checkpoint of another model) reached
        # the trial's reason with its newline and tab, shown as ^J^I, and the reason's bounded
        # length was spent before the shapes.
        def raiser():
            raise RuntimeError("Error(s) in loading state_dict for Net:\n\tsize mismatch for "
                               "fc.weight: copying a param with shape [3, 64]")
        self.assertEqual(self.guarded(raiser),
                         "rank 2 on h2: RuntimeError: Error(s) in loading state_dict for Net: "
                         "size mismatch for fc.weight: copying a param with shape [3, 64]")

    def test_an_exception_without_a_message_says_where_it_was_raised(self):
        # Regression: a bare assert became "AssertionError: ", with nothing after the colon.
        def raiser():
            assert SCHEDULE["trial"] < 0
        self.assertRegex(self.guarded(raiser),
                         r"^rank 2 on h2: AssertionError at test_tunedeck_trial.py line \d+: "
                         r'assert SCHEDULE\["trial"\] < 0$')

class Load(unittest.TestCase):
    def test_a_schedule_that_is_empty_or_not_json_is_refused_naming_its_source(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sched.json")
            for text, found in (("", "found nothing"), ("  \n", "found nothing"),
                                ("{oops", "found text that is not JSON"),
                                ("[1]", "expected a JSON object, found list")):
                with open(path, "w") as f:
                    f.write(text)
                with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                            r"schedule \(%s\): .*%s" % (path, found)):
                    tunedeck_trial.Trial.load(path)
        t = tunedeck_trial.Trial.load(io.StringIO(json.dumps(SCHEDULE)), env={})
        self.assertEqual((t.global_batch, t.iterations), (32, 4))

    def test_a_malformed_schedule_is_refused_naming_the_field(self):
        # Regression: wrong types and missing fields surfaced as AttributeError, KeyError,
        # TypeError or int()'s ValueError from inside the helper, naming no field, and a
        # batch of 32.7 or true, or inputs of "5", became a number silently.
        def broken(change):
            s = json.loads(json.dumps(SCHEDULE))
            change(s)
            return s
        cases = (
            (lambda s: s.update(machines="h1"), r"field 'machines': expected a list of "
             r"machines, found \"h1\""),
            (lambda s: s.pop("machines"), r"field 'machines': expected a list.*found nothing"),
            (lambda s: s["machines"].__setitem__(1, 5), r"field 'machines\[1\]': expected an "
             r"object, found 5"),
            (lambda s: s["machines"][2].pop("name"), r"field 'machines\[2\].name': expected a "
             r"machine name, found nothing"),
            (lambda s: s["machines"][0].update(devices=7), r"field 'machines\[0\].devices': "
             r"expected a list of devices, found 7"),
            (lambda s: s["machines"][0]["devices"][1].pop("id"),
             r"field 'machines\[0\].devices\[1\].id': expected a device id, found nothing"),
            (lambda s: s["machines"][0]["devices"][1].update(inputs="17"),
             r"field 'machines\[0\].devices\[1\].inputs': expected an integer >= 0, found "
             r"\"17\""),
            (lambda s: s["machines"][2]["devices"][1].update(inputs=-10),
             r"field 'machines\[2\].devices\[1\].inputs': expected an integer >= 0, found -10"),
            (lambda s: s["machines"][2].update(worker="yes"), r"field 'machines\[2\].worker': "
             r"expected true or false"),
            (lambda s: s["job"].update(batch=32.7), r"field 'job.batch': expected an integer "
             r">= 1, found 32.7"),
            (lambda s: s["job"].update(batch=True), r"field 'job.batch': .* found true"),
            (lambda s: s.update(job=[]), r"field 'job': expected an object"),
            (lambda s: s.update(iterations="x"), r"field 'iterations': expected an integer >= "
             r"1, found \"x\""),
            (lambda s: s.update(warmup=-1), r"field 'warmup': expected an integer >= 0"),
            (lambda s: s["job"].update(batch=40), r"the workers' inputs sum to 32, but "
             r"job.batch is 40"),
        )
        for change, message in cases:
            for env in ({}, {"RANK": "1", "WORLD_SIZE": "3"}):
                with self.assertRaisesRegex(tunedeck_trial.ScheduleError, message):
                    tunedeck_trial.Trial(broken(change), env=env, out=io.StringIO())
        # what is not broken: an integral 32.0 is 32, iterations from the job file
        t = tunedeck_trial.Trial(broken(lambda s: (s["job"].update(batch=32.0, iterations=9),
                                                   s.pop("iterations"))), env={})
        self.assertEqual((t.global_batch, t.iterations), (32, 9))

    def test_a_schedule_path_that_cannot_be_read_is_refused_naming_it(self):
        # Regression: a directory or a missing file raised IsADirectoryError or
        # FileNotFoundError, a traceback from `python3 tunedeck_trial.py PATH` too.
        with tempfile.TemporaryDirectory() as d:
            for path, why in ((d, "Is a directory"),
                              (os.path.join(d, "none.json"), "No such file or directory")):
                with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                            r"schedule \(%s\): cannot read: %s" % (path, why)):
                    tunedeck_trial.Trial.load(path)

    def test_a_warmup_not_below_the_iterations_is_refused(self):
        # Regression: warmup 4 of 4 iterations was taken, and done() then wrote no time
        # (tunedeck's own reader refuses such a schedule).
        s = json.loads(json.dumps(SCHEDULE))
        s["warmup"] = 4
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                    r"field 'warmup': expected fewer warm-up iterations than the "
                                    r"4 iterations, found 4"):
            tunedeck_trial.Trial(s, env={}, out=io.StringIO())
        s.pop("warmup")
        s.pop("iterations")
        s["job"].update(iterations=3, warmup=3)
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError, r"field 'job.warmup'"):
            tunedeck_trial.Trial(s, env={}, out=io.StringIO())

    def test_a_key_twice_in_the_schedule_is_refused_naming_the_source_and_path(self):
        # Regression: "schedule: key "inputs" appears twice in one object" named neither the
        # file nor the object, unlike tunedeck's own readers (docs/formats.md).
        text = json.dumps(SCHEDULE).replace('"batch": 32', '"batch": 32, "batch": 64')
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                    r'^schedule \(the file\): job: key "batch" appears twice; '
                                    r'expected each key once per object$'):
            tunedeck_trial.Trial.load(io.StringIO(text), env={})
        text = json.dumps(SCHEDULE).replace('{"id": "gpu0", "inputs": 10}',
                                            '{"id": "gpu0", "inputs": 10, "inputs": 9}')
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                f.write(text)
            with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                        r'^schedule \(%s\): machines\[2\]\.devices\[1\]: key '
                                        r'"inputs" appears twice' % re.escape(path)):
                tunedeck_trial.Trial.load(path, env={})
        text = '{"trial": 1, "trial": 2}'
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                    r'^schedule \(the file\): key "trial" appears twice'):
            tunedeck_trial.Trial.load(io.StringIO(text), env={})

    def test_a_schedule_nested_too_deep_is_refused_in_one_line(self):
        # Regression: json.loads's RecursionError (not a ValueError) escaped Trial.load, and
        # `python3 tunedeck_trial.py deep.json` printed a traceback and no `error` line.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "deep.json")
            for text in ("[" * 100000, '{"a": ' * 100000, '{"s": "[[[", "a": ' + "[" * 100000):
                with open(path, "w") as f:
                    f.write(text + "\n")
                p = subprocess.run([sys.executable, os.path.join(HELPER, "tunedeck_trial.py"),
                                    path], capture_output=True, text=True, timeout=60)
                self.assertEqual((p.returncode, p.stderr), (1, ""))
                self.assertEqual(p.stdout.count("\n"), 1, p.stdout)
                self.assertRegex(json.loads(p.stdout)["message"],
                                 r"^schedule \(%s\): expected a JSON object \(trial protocol v1, "
                                 r"docs/formats.md\) nested no deeper than Python's json module "
                                 r"reads \(about \d+ levels\), found JSON nested 10000[01] levels "
                                 r"deep$" % re.escape(path))
        # A value json.loads just read can be too deep for json.dumps in the refusal (called
        # a few frames deeper): the field is named, its value said too deep, no traceback.
        deep = []
        for _ in range(100000):
            deep = [deep]
        for schedule, field in (({"job": deep, "machines": []}, "job"),
                                ({"job": {"batch": 1}, "machines": [deep]}, r"machines\[0\]"),
                                ({"job": {"batch": 1}, "machines": [{"name": "h1", "ps": deep}]},
                                 r"machines\[0\]\.ps")):
            with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                        r"^schedule: field '%s': expected .*, found a list "
                                        r"nested too deep to show$" % field):
                tunedeck_trial.Trial(schedule, env={}, out=io.StringIO())

    def test_a_terminal_on_stdin_is_refused_at_once(self):
        # Regression: a script hooked in by hand (python3 train.py at a prompt) waited,
        # silently, for a schedule on the terminal.
        master, slave = os.openpty()
        try:
            p = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
                                "import tunedeck_trial; tunedeck_trial.Trial.load()" % HELPER],
                               stdin=slave, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            self.fail("Trial.load() waited for a schedule typed on the terminal")
        finally:
            os.close(master)
            os.close(slave)
        self.assertEqual(p.returncode, 1)
        self.assertIn("schedule: expected on standard input (tunedeck's trial protocol v1, "
                      "docs/formats.md), found a terminal; by hand: python3 -c < schedule.json",
                      p.stderr)


HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools",
                      "python")

# A live job in miniature: without RANK it starts 2 ranks with run_ranks; a rank writes who it
# is, then waits for SIGTERM (LiveStop) and writes "stopped", or fails when told to.
LIVE_JOB = r"""
import os, sys, time
sys.path.insert(0, %r)
import tunedeck_trial
stop = tunedeck_trial.LiveStop()
out = sys.argv[1]
if "RANK" not in os.environ:
    sys.exit(tunedeck_trial.run_ranks([sys.executable] + sys.argv, 2, 4, 6, "10.0.0.1", 29555))
r = os.environ["RANK"]
with open(os.path.join(out, r), "w") as f:
    f.write("%%s %%s %%s %%s:%%s\n" %% (r, os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"],
                                  os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]))
    f.flush()
    if len(sys.argv) > 2 and sys.argv[2] == r:
        # fail only once both ranks run, else the other may be killed before it writes its file
        while sum(n.isdigit() for n in os.listdir(out)) < 2:
            time.sleep(0.02)
        sys.exit(3)
    while not stop.asked():
        time.sleep(0.02)
    f.write("stopped\n")
""" % HELPER


# A rank that writes its blocked-signal mask (/proc/self/status) to a file named by its RANK.
RANK_MASK = r"""
import os, sys
mask = [l for l in open("/proc/self/status") if l.startswith("SigBlk:")][0]
with open(os.path.join(sys.argv[1], os.environ["RANK"]), "w") as f:
    f.write(mask)
"""


class Live(unittest.TestCase):
    def test_host_ranks_from_the_hostfile(self):
        with tempfile.NamedTemporaryFile("w", suffix="hostfile") as f:
            f.write("10.0.0.1:2\n10.0.0.2:3\n10.0.0.3:1\n")
            f.flush()
            self.assertEqual(tunedeck_trial.host_ranks(1, f.name), (6, 2, 3))
            with self.assertRaisesRegex(tunedeck_trial.ScheduleError, "node rank 3.* 3 hosts"):
                tunedeck_trial.host_ranks(3, f.name)
        with self.assertRaisesRegex(tunedeck_trial.ScheduleError, "address:slots"):
            tunedeck_trial.host_ranks(0, "/nonexistent/tunedeck-hostfile")

    def test_an_ipv6_host_is_read_in_brackets_and_refused_bare(self):
        # The scheduler wrote "::1:2" for an IPv6 host: ::1 with 2 slots, or ::1:2 with none
        # said. It writes "[::1]:2" now; a bare one is refused as ambiguous, naming its line.
        with tempfile.NamedTemporaryFile("w", suffix="hostfile") as f:
            f.write("[::1]:2\n[fd00::2]:3\n10.0.0.3:1\n")
            f.flush()
            self.assertEqual(tunedeck_trial.host_ranks(1, f.name), (6, 2, 3))
        for bad, why in (("::1:2", r"expected an IPv6 address in brackets"),
                         ("[::1:2", r"expected \[address\]:slots .* no '\]:'"),
                         ("[::1]2", r"expected \[address\]:slots .* no '\]:'")):
            with tempfile.NamedTemporaryFile("w", suffix="hostfile") as f:
                f.write("10.0.0.1:2\n%s\n" % bad)
                f.flush()
                with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                            r"line 2 '%s': %s" % (re.escape(bad), why)):
                    tunedeck_trial.host_ranks(0, f.name)

    def test_a_host_without_slots_is_refused_naming_its_line(self):
        for bad in ("0", "-2"):
            with tempfile.NamedTemporaryFile("w", suffix="hostfile") as f:
                f.write("10.0.0.1:2\n\n10.0.0.2:%s\n" % bad)
                f.flush()
                with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                            r"line 3 '10\.0\.0\.2:%s'.*at least 1 slot" % bad):
                    tunedeck_trial.host_ranks(0, f.name)

    def test_slots_are_decimal_digits_only(self):
        # int() took " 2" and "+2"
        for bad in (" 2", "+2", "2.0", "", "x"):
            with tempfile.NamedTemporaryFile("w", suffix="hostfile") as f:
                f.write("10.0.0.1:2\n10.0.0.2:%s\n" % bad)
                f.flush()
                with self.assertRaisesRegex(tunedeck_trial.ScheduleError,
                                            r"line 2 '10\.0\.0\.2:%s': expected address:slots "
                                            r"with slots a decimal integer" % re.escape(bad)):
                    tunedeck_trial.host_ranks(0, f.name)

    def test_ranks_start_with_sigterm_blocked_without_a_preexec_fn(self):
        """The ranks inherit a mask that blocks SIGTERM, set around Popen in the starter and
        then restored there; preexec_fn (not thread-safe) is not used."""
        calls = []
        real = subprocess.Popen

        def popen(*args, **kw):
            calls.append(kw)
            return real(*args, **kw)
        sigterm_bit = 1 << (signal.SIGTERM - 1)
        before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self.assertNotIn(signal.SIGTERM, before)
        with tempfile.TemporaryDirectory() as d:
            tunedeck_trial.subprocess.Popen = popen
            try:
                rc = tunedeck_trial.run_ranks(
                    # not through sh: dash clears the mask it inherits
                    [sys.executable, "-c", RANK_MASK, d],
                    2, 0, 2, "127.0.0.1", 29555)
            finally:
                tunedeck_trial.subprocess.Popen = real
            self.assertEqual(rc, 0)
            for r in ("0", "1"):
                with open(os.path.join(d, r)) as f:
                    blk = int(f.read().split()[1], 16)
                self.assertTrue(blk & sigterm_bit, "rank %s: SigBlk %x" % (r, blk))
        self.assertEqual(signal.pthread_sigmask(signal.SIG_BLOCK, []), before)
        self.assertEqual(len(calls), 2)
        self.assertTrue(all("preexec_fn" not in kw for kw in calls), [sorted(kw) for kw in calls])

    def start(self, d, *extra):
        # a file, not -c: run_ranks starts the ranks with the starter's own sys.argv
        job = os.path.join(d, "job.py")
        with open(job, "w") as f:
            f.write(LIVE_JOB)
        p = subprocess.Popen([sys.executable, job, d] + list(extra), start_new_session=True)
        self.addCleanup(self.reap, p)
        return p

    @staticmethod
    def reap(p):
        """A failed check leaves no rank behind: the starter's whole session goes."""
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()

    def wait_for_ranks(self, d):
        for _ in range(500):
            if all(os.path.exists(os.path.join(d, r)) for r in ("4", "5")):
                return
            time.sleep(0.02)
        self.fail("the ranks did not start")

    def read(self, d):
        texts = {}
        for r in ("4", "5"):
            with open(os.path.join(d, r)) as f:
                texts[r] = f.read()
        return texts

    def test_sigterm_to_the_group_stops_every_rank_cleanly(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.start(d)
            self.wait_for_ranks(d)
            os.killpg(p.pid, signal.SIGTERM)
            self.assertEqual(p.wait(20), 0)
            self.assertEqual(self.read(d), {"4": "4 6 0 10.0.0.1:29555\nstopped\n",
                                            "5": "5 6 1 10.0.0.1:29555\nstopped\n"})

    def test_sigterm_to_the_starter_alone_is_passed_on(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.start(d)
            self.wait_for_ranks(d)
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(20), 0)
            self.assertTrue(all(t.endswith("stopped\n") for t in self.read(d).values()))

    def test_a_missing_master_address_or_port_is_refused_before_any_rank(self):
        # Regression: a job_command without {master_addr} left argparse's None, and the ranks
        # started with MASTER_ADDR=None (a host named "None") or MASTER_PORT=None.
        argv = [sys.executable, "-c", "raise SystemExit('a rank started')"]
        for addr, port, field in ((None, 29555, "master_addr"), ("", 29555, "master_addr"),
                                  ("10.0.0.1", None, "master_port"),
                                  ("10.0.0.1", "29x", "master_port"),
                                  ("10.0.0.1", 0, "master_port")):
            with self.assertRaisesRegex(tunedeck_trial.ScheduleError, "run_ranks: " + field):
                tunedeck_trial.run_ranks(argv, 1, 0, 1, addr, port)

    def test_a_failing_rank_stops_the_other_and_gives_its_status(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.start(d, "5")
            self.assertEqual(p.wait(20), 3)  # (a hang here is a rank not stopped)
            self.assertNotIn("stopped", self.read(d)["4"])  # killed, not stopped


class Checkpoint(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "job.ckpt")

    def tearDown(self):
        self.dir.cleanup()

    def test_no_checkpoint_is_none(self):
        self.assertIsNone(tunedeck_trial.load_checkpoint(""))
        self.assertIsNone(tunedeck_trial.load_checkpoint(None))
        self.assertIsNone(tunedeck_trial.load_checkpoint(self.path))

    def test_bytes_or_a_writer_round_trip_with_the_step(self):
        tunedeck_trial.save_checkpoint(self.path, 420, b"state\x00\xff")
        self.assertEqual(tunedeck_trial.load_checkpoint(self.path), (420, b"state\x00\xff"))
        tunedeck_trial.save_checkpoint(self.path, 421, lambda f: f.write(b"by a writer"))
        self.assertEqual(tunedeck_trial.load_checkpoint(self.path, lambda f: f.read().upper()),
                         (421, b"BY A WRITER"))
        self.assertEqual(os.listdir(self.dir.name), ["job.ckpt"])

    def test_a_save_killed_before_its_rename_leaves_the_old_one_and_its_tmp_is_replaced(self):
        tunedeck_trial.save_checkpoint(self.path, 1, b"old")
        real = os.replace

        def killed(*a):
            raise KeyboardInterrupt  # as if SIGKILL came between the write and the rename
        os.replace = killed
        try:
            with self.assertRaises(KeyboardInterrupt):
                tunedeck_trial.save_checkpoint(self.path, 2, b"new, never renamed")
        finally:
            os.replace = real
        self.assertTrue(os.path.exists(self.path + ".tmp"))
        self.assertEqual(tunedeck_trial.load_checkpoint(self.path), (1, b"old"))
        with open(self.path + ".tmp", "ab") as f:
            f.write(b"x" * 1000)  # a stale tmp longer than the next save's
        tunedeck_trial.save_checkpoint(self.path, 3, b"next")
        self.assertEqual(tunedeck_trial.load_checkpoint(self.path), (3, b"next"))
        self.assertEqual(os.listdir(self.dir.name), ["job.ckpt"])

    def test_a_damaged_checkpoint_is_one_line_naming_the_file(self):
        tunedeck_trial.save_checkpoint(self.path, 7, b"0123456789")
        with open(self.path, "rb") as f:
            whole = f.read()
        cases = [(whole[:-3], "expected 10 bytes after its first line, found 7"),
                 (whole[:-1] + b"X", "do not match their crc32"),
                 (b"PK\x03\x04 a torch.save file", "expected a first line 'tunedeck-checkpoint 1"),
                 (b"", "expected a first line")]
        for data, why in cases:
            with open(self.path, "wb") as f:
                f.write(data)
            with self.assertRaisesRegex(tunedeck_trial.CheckpointError,
                                        "^checkpoint %s: .*%s" % (self.path, why)) as cm:
                tunedeck_trial.load_checkpoint(self.path)
            self.assertNotIn("\n", str(cm.exception))

    def test_a_save_that_cannot_be_written_names_the_checkpoint_and_why(self):
        # Regression: a save into a folder that does not exist raised a bare FileNotFoundError
        # naming only the temporary file "….ckpt.tmp".
        missing = os.path.join(self.dir.name, "no-such-folder", "job.ckpt")
        with self.assertRaisesRegex(tunedeck_trial.CheckpointError,
                                    "^checkpoint %s: cannot be written: its folder %s does not "
                                    "exist$" % (missing, os.path.dirname(missing))):
            tunedeck_trial.save_checkpoint(missing, 1, b"state")
        os.mkdir(self.path)  # the checkpoint's path names a folder
        with self.assertRaisesRegex(tunedeck_trial.CheckpointError,
                                    "^checkpoint %s: cannot be written: it names a folder, "
                                    "expected a file$" % self.path):
            tunedeck_trial.save_checkpoint(self.path, 1, b"state")
        self.assertEqual(os.listdir(self.dir.name), ["job.ckpt"], "no .tmp left behind")

    def test_a_loader_that_refuses_is_one_line_naming_the_file(self):
        tunedeck_trial.save_checkpoint(self.path, 7, b"other model")

        def refuse(f):
            raise RuntimeError("Error(s) in loading state_dict:\n\tsize mismatch for w")
        with self.assertRaisesRegex(tunedeck_trial.CheckpointError,
                                    "^checkpoint %s: cannot be loaded: RuntimeError: Error\\(s\\) "
                                    "in loading state_dict: size mismatch for w$" % self.path):
            tunedeck_trial.load_checkpoint(self.path, refuse)

    def test_a_missing_framework_names_the_interpreter_and_debians_python(self):
        # Regression: a pyenv python3 ahead of Debian's on PATH failed the trial with
        # "No module named 'torch'" alone.
        e = ModuleNotFoundError("No module named 'torch'")
        text = tunedeck_trial.missing_module(e, "torch", "python3-torch",
                                             executable="/home/u/.pyenv/versions/3.11/bin/python3")
        self.assertEqual(text, "No module named 'torch' in /home/u/.pyenv/versions/3.11/bin/"
                               "python3; Debian's python3-torch is for /usr/bin/python3: put "
                               "/usr/bin first on PATH")
        own = tunedeck_trial.missing_module(e, "torch", "python3-torch",
                                            executable="/usr/bin/python3")
        self.assertEqual(own, "No module named 'torch' in /usr/bin/python3: apt install "
                              "python3-torch")

    def test_the_module_imports_without_torch(self):
        out = subprocess.run([sys.executable, "-c", "import sys, tunedeck_trial; "
                              "print('torch' in sys.modules)"], capture_output=True, text=True,
                             cwd=os.path.dirname(tunedeck_trial.__file__))
        self.assertEqual(out.stdout.strip(), "False", out.stderr)


if __name__ == "__main__":
    unittest.main()
