"""Unit tests of tools/python/tunedeck_trial.py (stdlib only, no torch): who a process is,
its share of an uneven global batch, and the protocol lines it writes.

    python3 tests/tools/python/test_tunedeck_trial.py     (tests/integration/pytorch.sh runs it)
"""
import io
import json
import os
import sys
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


if __name__ == "__main__":
    unittest.main()
