"""The quickstart's process manager starts again a process that dies, and says so."""

import importlib.machinery
import importlib.util
import os
import signal
import sys

import pytest

from tests.helpers.processes import ROOT
from tests.helpers.waiting import wait_until


@pytest.fixture
def supervisor(tmp_path):
    loader = importlib.machinery.SourceFileLoader("quickstart", str(ROOT / "bin" / "quickstart"))
    quickstart = importlib.util.module_from_spec(importlib.util.spec_from_loader("quickstart", loader))
    loader.exec_module(quickstart)
    running = quickstart.Supervisor(dict(os.environ), tmp_path / "log")
    yield running
    running.stop()


def test_a_worker_killed_is_started_again_with_a_line_in_its_log(supervisor, capsys):
    supervisor.start("worker", [sys.executable, "-c", "import time; print('working', flush=True); time.sleep(60)"])
    first = supervisor.processes["worker"]
    wait_until(lambda: "working" in (supervisor.log_dir / "worker.log").read_text())

    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    restarted = wait_until(lambda: supervisor.restart_exited() or supervisor.processes["worker"] is not first)

    restarted = supervisor.processes["worker"]
    assert restarted.pid != first.pid and restarted.poll() is None
    wait_until(lambda: (supervisor.log_dir / "worker.log").read_text().count("working") == 2)
    log = (supervisor.log_dir / "worker.log").read_text()
    assert "quickstart: worker exited with status -9; starting it again in 1 s" in log
    assert f"quickstart: worker started again (pid {restarted.pid})" in log
    assert log.index("started again") < log.rindex("working")  # the first run's output is kept, the second's follows
    assert "worker started again" in capsys.readouterr().out


def test_a_process_that_keeps_dying_is_started_again_later_each_time(supervisor):
    supervisor.start("web", [sys.executable, "-c", "raise SystemExit(3)"])
    delays = []
    for _ in range(3):
        wait_until(lambda: supervisor.processes["web"].poll() is not None)
        supervisor.restart_exited()
        delays.append(round(supervisor.restart_at["web"] - supervisor.started_at["web"]))
        supervisor.restart_at["web"] = 0  # no need to wait it out here
        supervisor.restart_exited()

    assert delays == [1, 3, 7]
