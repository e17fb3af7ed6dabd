"""The experiments on a dask cluster: `balance`, `compare`, `sweep` and `skill` with
--backend dask --scheduler play every run on the cluster's workers, through a run
directory they share, and give what a local run gives; a bad or unreachable scheduler
is one line and exit code 2, with nothing written."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analysis.rundir import scan_run
from helpers import cli
import simcore
from simcore import runner

distributed = pytest.importorskip("distributed")  # the test extra installs it

START_S = 60  # at most, for the scheduler and both workers to be up on a loaded machine


pytestmark = pytest.mark.usefixtures("release_build")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A `dask scheduler` and two `dask worker` processes of one thread each on
    localhost, started as a user starts them (importing this checkout), and ended with
    the module. Yields the scheduler's address and a client of it."""
    where = tmp_path_factory.mktemp("cluster")
    # The workers import the chocosim this process imported: the installed package, or a
    # checkout built in place (the checkout itself may be unbuilt, as in CI).
    home = Path(simcore.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(home), os.environ.get("PYTHONPATH")]))}
    dask = [sys.executable, "-m", "dask"]
    started = []

    def start(*args: str) -> None:
        started.append(subprocess.Popen([*dask, *args], cwd=where, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    try:
        address_file = where / "scheduler.json"
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(address_file))
        deadline = time.monotonic() + START_S
        while not address_file.is_file():
            assert started[0].poll() is None, "dask scheduler exited"
            assert time.monotonic() < deadline, "dask scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written whole, but give it a moment
        address = json.loads(address_file.read_text())["address"]
        for k in range(2):
            start("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", f"w{k}")
        client = distributed.Client(address, timeout=START_S, set_as_default=False)
        try:
            client.wait_for_workers(2, timeout=START_S)
            yield address, client
        finally:
            client.close()
    finally:
        for p in started:
            p.terminate()
        for p in started:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def executed(client) -> dict[str, int]:
    """Tasks each worker has run so far."""
    return client.run(lambda dask_worker: dask_worker.state.executed_count)


def run_dirs(root: Path) -> dict[str, Path]:
    return {str(m.parent.relative_to(root)): m.parent for m in sorted(root.rglob(runner.MANIFEST))}


def assert_same_runs(local: Path, dask: Path) -> int:
    """The same run directories under both roots, with the same run ids and the same
    results table row for row; returns how many."""
    a, b = run_dirs(local), run_dirs(dask)
    assert a and list(a) == list(b)
    for name in a:
        ma, mb = (json.loads((d / runner.MANIFEST).read_text()) for d in (a[name], b[name]))
        assert (ma["run_id"], ma["n_games"]) == (mb["run_id"], mb["n_games"]), name
        assert_frame_equal(scan_run(a[name]).collect().sort("game", "seat"),
                           scan_run(b[name]).collect().sort("game", "seat"))
    return len(a)


# Measured times (how long a run took here or there) and where a run directory lies are not
# results: left out of the comparison of the two verdicts.
TIMING = re.compile(r"second|minute|hour|wall|time|cost|speed|^path$", re.I)


def results_only(value):
    if isinstance(value, dict):
        return {k: results_only(v) for k, v in value.items() if not TIMING.search(k)}
    if isinstance(value, list):
        return [results_only(v) for v in value]
    return value


def on_cluster(capsys, cluster, root: Path, *argv: str) -> str:
    """Run `chocosim argv --backend dask --scheduler ADDRESS` ({root} in argv: `root`);
    check it succeeded and every worker ran some of its chunks. Returns its result (stdout),
    `root` written {root}."""
    address, client = cluster
    before = executed(client)
    code, out, err = cli(capsys, *(a.format(root=root) for a in argv), "--backend", "dask", "--scheduler", address)
    assert code == 0, err
    after = executed(client)
    assert all(after[w] > before[w] for w in after), (before, after)
    return out.replace(str(root), "{root}")


def both(capsys, cluster, tmp_path, *argv: str) -> tuple[Path, Path, str, str]:
    """Run `chocosim argv` locally, then on the cluster, each in a directory of its own
    ({root} in argv); check the local run used no worker and that the same run
    directories hold the same results. Returns both roots and both results (stdout)."""
    local, dask = tmp_path / "local", tmp_path / "dask"
    before = executed(cluster[1])
    code, out, err = cli(capsys, *(a.format(root=local) for a in argv))
    assert code == 0, err
    assert executed(cluster[1]) == before
    out_dask = on_cluster(capsys, cluster, dask, *argv)
    assert_same_runs(local, dask)
    return local, dask, out.replace(str(local), "{root}"), out_dask


@pytest.mark.statistical  # twenty runs (ladder, bonus, knob values) and a report: over 20 s here
def test_balance_on_a_cluster_gives_the_verdict_of_a_local_run(capsys, cluster, tmp_path):
    from analysis import api

    ask = dict(players=[2], ladder=["random", "greedy"], minutes=None, games=120)
    on_cluster(capsys, cluster, tmp_path / "dask", "balance", "fabryka", "--players", "2", "--ladder",
               "random,greedy", "--minutes", "0", "--games", "120", "--no-evidence", "--runs", "{root}/runs",
               "-o", "{root}/balance.html")
    local = api.balance("fabryka", runs=tmp_path / "local" / "runs", **ask)
    assert assert_same_runs(tmp_path / "local", tmp_path / "dask") > 3  # the bonus and knob runs too
    verdict = json.loads((tmp_path / "dask" / "verdict.json").read_text())
    assert results_only(verdict) == results_only(json.loads(json.dumps(local.verdict(), default=str)))
    size = verdict["sizes"][0]
    assert size["games"] == 120 and size["rung"] == "greedy"  # the verdict stands on the games asked for
    assert_frame_equal(local.table, pl.read_parquet(tmp_path / "dask" / "balance.parquet"))


@pytest.mark.slow  # a dask cluster of three processes
def test_compare_on_a_cluster_gives_the_local_comparison(capsys, cluster, tmp_path):
    *_, out_local, out_dask = both(capsys, cluster, tmp_path, "compare", "fabryka", "--seats", "random,greedy",
                                   "--variant", "rounds=3", "--games", "120", "--runs", "{root}/runs",
                                   "-o", "{root}/compare.html")
    assert out_local.splitlines() == out_dask.splitlines()  # the same verdict lines, word for word
    assert "rounds = 3" in out_local


@pytest.mark.slow  # a dask cluster of three processes
def test_sweep_on_a_cluster_gives_the_local_table(capsys, cluster, tmp_path):
    local, dask, *_ = both(capsys, cluster, tmp_path, "sweep", "fabryka", "--vary", "collect_count=4,6",
                           "--seats", "random,greedy", "--games", "120", "--dir", "{root}/sweep",
                           "-o", "{root}/sweep.html")
    tables = [pl.read_parquet(root / "sweep" / "metrics.parquet") for root in (local, dask)]
    kept = [c for c in tables[0].columns if not TIMING.search(c)]
    assert tables[0].height > 0
    assert_frame_equal(tables[0].select(kept), tables[1].select(kept))


@pytest.mark.slow  # a dask cluster of three processes
def test_skill_on_a_cluster_plays_the_local_runs(capsys, cluster, tmp_path):
    local, dask, out_local, out_dask = both(capsys, cluster, tmp_path, "skill", "fabryka", "--ladder",
                                            "random,greedy", "--games", "120", "--runs", "{root}/runs",
                                            "-o", "{root}/skill.html")
    assert out_local == out_dask
    assert len(run_dirs(dask / "runs")) == 3  # two mirrors and their meeting


@pytest.mark.parametrize("command", [
    ("balance", "fabryka", "--players", "2", "--ladder", "random,greedy", "--minutes", "0", "--games", "12",
     "--runs", "{tmp}/runs", "-o", "{tmp}/b.html"),
    ("compare", "fabryka", "--seats", "random,greedy", "--variant", "rounds=3", "--games", "12",
     "--runs", "{tmp}/runs", "-o", "{tmp}/c.html"),
    ("sweep", "fabryka", "--vary", "collect_count=4,6", "--seats", "random,greedy", "--games", "12",
     "--dir", "{tmp}/runs", "-o", "{tmp}/s.html"),
    ("skill", "fabryka", "--ladder", "random,greedy", "--games", "12", "--runs", "{tmp}/runs",
     "-o", "{tmp}/k.html"),
], ids=lambda c: c[0])
@pytest.mark.parametrize("address, message", [
    ("tcp://127.0.0.1:9", "cannot reach the dask scheduler at 'tcp://127.0.0.1:9'"),
    ("foo://bar:1", "scheduler = 'foo://bar:1': not a dask scheduler address (unknown address scheme 'foo'"),
    ("localhost", "scheduler = 'localhost': not a dask scheduler address (missing port number"),
], ids=["unreachable", "scheme", "no-port"])
def test_a_bad_scheduler_is_one_line_and_nothing_written(capsys, monkeypatch, tmp_path, command, address, message):
    monkeypatch.setattr(runner, "DASK_TIMEOUT", 0.5)
    argv = [a.format(tmp=tmp_path) for a in command]
    code, out, err = cli(capsys, *argv, "--backend", "dask", "--scheduler", address)
    assert code == 2 and out == ""
    assert err.startswith(f"chocosim: error: {message}") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_a_scheduler_without_workers_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(runner, "DASK_TIMEOUT", 0.5)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        code, _, err = cli(capsys, "skill", "fabryka", "--ladder", "random,greedy", "--games", "12",
                           "--runs", str(tmp_path / "runs"), "-o", str(tmp_path / "k.html"),
                           "--backend", "dask", "--scheduler", empty.scheduler_address)
    assert code == 2
    assert err == (f"chocosim: error: the dask scheduler at '{empty.scheduler_address}' has no workers (none "
                   f"joined within 0.5 s): start `dask worker {empty.scheduler_address}` where the run "
                   "directory is shared\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (("--backend", "dask"), "a dask scheduler address goes with backend 'dask' and only with it"),
    (("--scheduler", "tcp://127.0.0.1:8786"), "backend = 'auto', scheduler = 'tcp://127.0.0.1:8786'"),
    (("--backend", "gpu"), "'gpu' is not one of 'auto', 'processes', 'threads', 'dask'"),
])
def test_a_scheduler_goes_with_backend_dask_only(capsys, tmp_path, argv, message):
    code, _, err = cli(capsys, "sweep", "fabryka", "--vary", "collect_count=4,6", "--seats", "random,greedy",
                       "--games", "12", "--dir", str(tmp_path / "runs"), "-o", str(tmp_path / "s.html"), *argv)
    assert code == 2 and message in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_compare_of_run_directories_plays_nothing_so_takes_no_backend(capsys, tmp_path):
    code, _, err = cli(capsys, "compare", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "c.html"),
                       "--backend", "threads")
    assert code == 2 and "--backend and --scheduler go with a GAME name" in err


@pytest.mark.slow  # a dask cluster of three processes
def test_one_connection_serves_every_run_of_an_experiment(cluster, tmp_path, monkeypatch):
    """playing_on reaches the cluster once; the runs inside reuse its client."""
    address, _ = cluster
    made = []
    real = runner._connect

    def counting(scheduler):
        made.append(scheduler)
        return real(scheduler)

    monkeypatch.setattr(runner, "_connect", counting)
    from analysis import api
    with runner.playing_on("dask", address):
        for seed in (1, 2):
            api.run("fabryka", ["random", "random"], 24, tmp_path / f"r{seed}", seed=seed)
    assert made == [address]
