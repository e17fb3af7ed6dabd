#!/usr/bin/env python3
"""Speed of the engine: games/s and ns/decision on one core for every game, bot and
table size, Fabryka against the same rules written by hand in C (fabryka_ref.c), then
the whole `chocosim run` command end to end (results on disk, summary printed) with
--jobs 1 on one core against that C version, with --jobs 2, `chocosim summary` and
`chocosim report` of the run, a short run with --jobs 1 and with the default, and peak
memory. The rows of the speed issue's table, each as a median and range over --repeat
rounds: --jobs 2 against --jobs 1 (and the CPU seconds of each, split into user, system
and the kernel threads' writeback), two C processes against one, --jobs 1 against the C
version timed beside it, disk bytes per game, and ns a decision of the heuristics that
a skill ladder spends its time in (DECISION_ROWS). With --cluster, the top rung of the
game's balance ladder (the default search bot's mirror) played by `run --backend dask`
on one dask worker process against two.

    python scripts/bench.py                      # everything, ~1 s per configuration
    python scripts/bench.py --game fabryka --seconds 3
    python scripts/bench.py --parallel-games 10000000 --memory-games 20000000
    python scripts/bench.py --parallel-games 0 --small-games 0    # one core only
    python scripts/bench.py --search --parallel-games 0 --small-games 0   # + the search bot (minutes)
    python scripts/bench.py --cluster --parallel-games 0 --small-games 0  # + a dask cluster (a minute)

Run it on an idle machine; quote medians of several runs. Figures are for the build
installed (the checked build is several times slower: see `simcore.state.CHECKED_BUILD`).
"""
from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import simcore
import strategies
from simcore.batch import play_batch, result_arrays
from simcore.registry import games
from simcore.state import CHECKED_BUILD

from search_bench import search  # (scripts/: the directory Python starts bench.py from)


def table_sizes(lo: int, hi: int) -> list[int]:
    """The smallest and largest table a game allows, and 2 and 4 players where allowed."""
    return sorted({lo, hi} | {n for n in (2, 4) if lo <= n <= hi})


def bench_one(spec, players: int, bot: str, seconds: float, clock=time.perf_counter) -> dict:
    """Play batches of growing size until one lasts `seconds` of `clock`; the last
    batch's figures."""
    params = spec.params(players=players)
    state = spec.new_state(params)
    lineup = strategies.build_lineup(spec.name, [bot] * players)
    perms = np.array([list(range(players))], np.int32)
    n, i0 = 1000, 0
    while True:
        out = result_arrays(state, n)
        # Fault the pages in before timing: on a fresh VM a first touch costs several
        # microseconds a page, which would be charged to the engine.
        for a in out.values():
            a.fill(0)
        t = clock()
        play_batch(state, lineup, perms, 1, 12345, i0, i0 + n, **out)
        dt = clock() - t
        i0 += n
        if dt >= seconds or n >= 50_000_000:
            break
        n = int(n * min(10.0, max(2.0, 1.1 * seconds / max(dt, 1e-6))))
    turns = out["turns"]
    reasons = np.bincount(out["end_reason"], minlength=len(state.END_REASONS)) / n
    return {
        "games/s": n / dt,
        "ns/decision": dt / turns.sum() * 1e9,
        "decisions/game": turns.mean(),
        "end reasons": ", ".join(f"{r} {s:.1%}" for r, s in zip(state.END_REASONS, reasons) if s),
    }


def single_core(game_filter: str | None, seconds: float) -> dict:
    """Print every configuration's figures; return them by (game, players, bot)."""
    print(f"one core ({'CHECKED' if CHECKED_BUILD else 'release'} build), each bot against itself")
    print(f"{'game':<18}{'players':>7}  {'bot':<12}{'games/s':>12}{'ns/decision':>13}{'decisions':>11}  end reasons")
    results = {}
    for name, spec in games().items():
        if game_filter and name != game_filter:
            continue
        for players in table_sizes(*spec.players):
            for bot in strategies.available(name):
                if bot in SEARCH_BOTS:
                    continue  # timed by search() against the heuristic
                r = results[name, players, bot] = bench_one(spec, players, bot, seconds)
                print(f"{name:<18}{players:>7}  {bot:<12}{r['games/s']:>12,.0f}{r['ns/decision']:>13.1f}"
                      f"{r['decisions/game']:>11.1f}  {r['end reasons']}", flush=True)
    return results


# The per-decision rows of the speed issue's table: (game, players, bot, target ns a
# decision), each bot against itself. Manfredini at 2 players (its smallest table).
DECISION_ROWS = (("alleycat", 2, "heuristic", 600), ("alleycat", 4, "heuristic", 600),
                 ("enemy_chocolatier", 6, "greedy", 1500), ("manfredini", 2, "greedy", 700))


def decision_rows(game_filter: str | None, seconds: float, repeat: int) -> None:
    """ns a decision of each DECISION_ROWS configuration, `repeat` rounds in turn (the
    machine drifts between rounds): the median and range against its target. CPU time
    (the batch plays in this thread alone), so that other users' load on the machine
    is not charged to the bot."""
    rows = [r for r in DECISION_ROWS if not game_filter or r[0] == game_filter]
    if not rows:
        return
    found: dict[tuple, list[float]] = {r: [] for r in rows}
    for _ in range(repeat):
        for r in rows:
            name, players, bot, _target = r
            found[r].append(bench_one(games()[name], players, bot, seconds, time.process_time)["ns/decision"])
    print(f"\nns a decision (CPU time), the issue's rows (each bot against itself, one core, {repeat} rounds)")
    for (name, players, bot, target), ns in found.items():
        print(f"  {name:<18}{players:>2}p  {bot:<10} {spread(ns, ' ns', 0)}  target <= {target:,} ns")


SEARCH_BOTS = ("mcts", "mcts_openloop")
def dask_cluster(game: str, n_games: int, repeat: int) -> None:
    """Games/s of the top rung of `game`'s balance ladder at its smallest table (the
    default search bot at its largest budget, in every seat) played by the runner on a
    local dask cluster of one worker process (one thread), then two, `repeat` rounds:
    each round times the same games, seats fixed, into a fresh run directory, once the
    workers have played a warm-up run (imports, the bot's setup). Wall time of the run
    as its caller sees it: chunks sent, played, parts written to the shared directory."""
    from analysis.experiments.balance import default_ladder  # noqa: PLC0415  (the analysis stack, only here)
    from simcore.runner import run  # noqa: PLC0415

    spec = games()[game]
    players = max(2, spec.players[0])
    top = default_ladder(game, players)[0][-1]
    specs = [top] * players
    params = spec.params(players=players)
    lineup = functools.partial(strategies.build_lineup, game, specs)
    root = Path(simcore.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\ndask cluster on localhost, {game} {players}p mirror of {top} (the balance ladder's top rung), "
          f"{n_games:,} games, seats fixed (load average {load:.1f} on {os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        started: list[subprocess.Popen] = []

        def start(*args: str) -> subprocess.Popen:
            p = subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=tmp, env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            started.append(p)
            return p

        try:
            from distributed import Client  # noqa: PLC0415  (the dask extra, only here)

            address_file = Path(tmp, "scheduler.json")
            start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                  "--scheduler-file", str(address_file))
            deadline = time.monotonic() + 60
            while not address_file.is_file() and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(0.2)
            address = json.loads(address_file.read_text())["address"]
            client = Client(address, timeout=60, set_as_default=False)
            start("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard")
            rates: dict[int, list[float]] = {1: [], 2: []}
            for r in range(repeat):
                for n in (1, 2):
                    if n == 2:
                        second = start("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard")
                    client.wait_for_workers(n, timeout=60)
                    warm = Path(tmp, f"warm-{r}-{n}")
                    run(spec, params, specs, lineup, warm, n_games=2 * n, seed=1, seating="fixed",
                        backend="dask", scheduler=address, quiet=True)
                    out = Path(tmp, f"run-{r}-{n}")
                    t = time.perf_counter()
                    run(spec, params, specs, lineup, out, n_games=n_games, seed=2026, seating="fixed",
                        backend="dask", scheduler=address, quiet=True)
                    rates[n].append(n_games / (time.perf_counter() - t))
                    shutil.rmtree(out)
                    print(f"  {r + 1}/{repeat}: {n} worker(s) {rates[n][-1]:,.2f} games/s", flush=True)
                second.terminate()
                second.wait(timeout=30)
                started.remove(second)
                client.wait_for_workers(1, timeout=60)
            client.close()
            ratios = [b / a for a, b in zip(rates[1], rates[2])]
            print(f"  one worker {spread(rates[1], ' games/s')}; two workers {spread(rates[2], ' games/s')}; "
                  f"two against one (round by round): {spread(ratios)}")
        finally:
            for p in started:
                p.terminate()
            for p in started:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


C_GAMES = 5_000_000  # games of the C reference's run


def children_cpu() -> float:
    """CPU seconds of this script's finished child processes (theirs included)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def c_reference_exe(tmp: str) -> str | None:
    """scripts/fabryka_ref.c, the Fabryka rules written straight in C, compiled with
    gcc -O3 into `tmp`; None without gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    exe = os.path.join(tmp, "fabryka_ref")
    subprocess.run([gcc, "-O3", "-o", exe, str(Path(__file__).with_name("fabryka_ref.c"))], check=True)
    return exe


def c_reference(exe: str, cpus: str | None = "0") -> tuple[float, str]:
    """The yardstick of the Fabryka target, run on one core: its games per second and
    what it printed of its games."""
    cmd = [exe, str(C_GAMES)]
    if cpus is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", cpus, *cmd]
    line = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(line.split()[0]), line.split(",", 1)[1].strip()


def c_reference_pair(exe: str) -> float | None:
    """Games/s of two C reference processes at once, one pinned to each of cores 0 and
    1, summed: what this machine allows two workers of identical compute (None without
    taskset or a second core)."""
    if not shutil.which("taskset") or (os.cpu_count() or 1) < 2:
        return None
    procs = [subprocess.Popen(["taskset", "-c", cpu, exe, str(C_GAMES)], stdout=subprocess.PIPE, text=True)
             for cpu in ("0", "1")]
    return sum(float(p.communicate()[0].split()[0]) for p in procs)


def spread(values: list[float], unit: str = "x", digits: int = 2) -> str:
    """Median and range of a measurement's rounds."""
    rounds = f"median of {len(values)}" if len(values) > 1 else "1 round"
    return (f"{statistics.median(values):,.{digits}f}{unit} ({rounds}, range {min(values):,.{digits}f}"
            f"-{max(values):,.{digits}f}{unit})")


def run_bytes(path: str) -> int:
    """Bytes of a run directory's files (parts, tallies, manifest)."""
    return sum(p.stat().st_size for p in Path(path).iterdir() if p.is_file())


def tree_rss(root: int) -> int:
    """Resident bytes of `root` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            status = (entry / "status").read_text()
        except OSError:  # the process ended while we looked
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
        rss[int(entry.name)] = next((int(line.split()[1]) * 1024 for line in status.splitlines()
                                     if line.startswith("VmRSS:")), 0)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def children_cpu_split() -> tuple[float, float]:
    """User and system CPU seconds of this script's finished child processes."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def kernel_threads_cpu() -> float:
    """CPU seconds of the kernel's own threads so far (writeback among them), machine-wide
    (Linux /proc; other users' writes count too)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == "2":  # a child of kthreadd
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def chocosim(*argv: str, cpus: str | None = None, cwd: str, polars_threads: int | None = None
             ) -> tuple[float, float, int]:
    """Seconds and peak memory (the whole process tree) of one `chocosim` command, run
    as a user runs it. It imports the engine this script imported (an installed copy or
    an in-place build), not the uncompiled source tree of the current directory;
    `polars_threads` caps polars' thread pool (one for --jobs 1 on one core, so that
    its idle threads do not share that core). Returns wall seconds, CPU seconds and
    peak bytes."""
    root = Path(simcore.__file__).resolve().parents[1]
    cmd = [sys.executable, "-c", "from analysis.cli import main; main()", *argv]
    if cpus is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", cpus, *cmd]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    if polars_threads is not None:
        env["POLARS_MAX_THREADS"] = str(polars_threads)
    # The gigabytes the previous command wrote or deleted are otherwise written back or
    # discarded by the kernel while this one runs, and charged to it: each command is
    # timed from a quiet disk, as a user who runs one finds it.
    os.sync()
    global last_split
    split, kernel = children_cpu_split(), kernel_threads_cpu()
    t, cpu = time.perf_counter(), children_cpu()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    peak = tree_rss(proc.pid)
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        # A poll reads /proc for every process (about 5 ms): four a second, or the poller
        # takes a quarter of the core that a --jobs 2 run needs.
        while not done.wait(0.25):
            peak = max(peak, tree_rss(proc.pid))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    proc.wait()
    seconds, cpu = time.perf_counter() - t, children_cpu() - cpu
    after = children_cpu_split()
    # The kernel threads' share is taken after a sync: the writeback the command caused.
    os.sync()
    last_split = (after[0] - split[0], after[1] - split[1], kernel_threads_cpu() - kernel)
    done.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"chocosim {' '.join(argv)} failed ({proc.returncode}): {proc.stderr.read().strip()}")
    return seconds, cpu, peak


# (user, system, kernel threads) CPU seconds of the last chocosim() command.
last_split = (0.0, 0.0, 0.0)


def compile_package() -> None:
    """Compile the timed package's modules to bytecode, as `pip install` does, so that a
    command imports what an installed copy would (an in-place build run with
    PYTHONDONTWRITEBYTECODE set compiles every module of ours at each start, about 65
    ms). Quietly nothing where the package is not writable."""
    root = Path(simcore.__file__).resolve().parents[1]
    for package in ("simcore", "strategies", "analysis"):
        compileall.compile_dir(root / package, quiet=2)


def end_to_end(game: str, seats: str, n_games: int, memory_games: int, small_games: int,
               exe: str | None, repeat: int) -> None:
    """The whole `chocosim run` command (chunks played, parts written, the summary
    printed), `repeat` times each: the C reference, --jobs 1 on one core, --jobs 2, in
    turn, so that each ratio compares runs made a few seconds apart (the machine's
    speed drifts); the median of the ratios. Then `chocosim summary` and `report` of
    the last run; a short run with --jobs 1 and with the default."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nend to end, `chocosim run {game} --seats {seats}` (results on disk, summary printed; "
          f"load average {load:.1f} on {os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        def run(n: int, name: str, *jobs: str, cpus: str | None = None) -> tuple[float, float, int]:
            threads = int(jobs[1]) if jobs else None  # polars: a thread per job
            shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
            return chocosim("run", game, "--seats", seats, "--games", str(n), "--out", name,
                            "--quiet", *jobs, cpus=cpus, cwd=tmp, polars_threads=threads)

        if n_games:
            of_c, scaling, c_pair, disk, cpu1, cpu2 = [], [], [], [], [], []
            for i in range(repeat):
                ref = c_reference(exe) if exe else None
                pair = c_reference_pair(exe) if exe else None
                t1, c1, m1 = run(n_games, "one", "--jobs", "1", cpus="0")
                split1 = last_split
                disk.append(run_bytes(os.path.join(tmp, "one")) / n_games)
                t2, c2, m2 = run(n_games, "two", "--jobs", "2")
                split2 = last_split
                scaling.append(t1 / t2)
                cpu1.append(c1)
                cpu2.append(c2)
                share = ""
                if ref:
                    of_c.append(n_games / t1 / ref[0])
                    share = f" = {of_c[-1]:.2f}x the C version's {ref[0]:,.0f} games/s just before"
                if ref and pair:
                    c_pair.append(pair / ref[0])
                    share += f" (two C processes {c_pair[-1]:.2f}x one)"
                print(f"  {i + 1}/{repeat}: {n_games:,} games, --jobs 1 on one core {t1:.2f} s (CPU {c1:.2f} s: "
                      f"user {split1[0]:.2f}, system {split1[1]:.2f}, kernel threads {split1[2]:.2f}; "
                      f"{m1 / 2**20:,.0f} MB){share}; --jobs 2 {t2:.2f} s (CPU {c2:.2f} s: user {split2[0]:.2f}, "
                      f"system {split2[1]:.2f}, kernel threads {split2[2]:.2f}; {m2 / 2**20:,.0f} MB) "
                      f"= {scaling[-1]:.2f}x --jobs 1", flush=True)
            print("  the issue's table (medians and ranges over the rounds):")
            print(f"    --jobs 2 against --jobs 1, whole command: {spread(scaling)}; CPU {spread(cpu2, ' s')} "
                  f"against {spread(cpu1, ' s')}")
            if c_pair:
                print(f"    the C reference, two processes on two cores against one: {spread(c_pair)}")
            if of_c:
                print(f"    --jobs 1 end to end against the C reference timed beside it: {spread(of_c)}")
            print(f"    disk per {game} game ({seats}): {spread(disk, ' bytes', 1)}")
            ts, cs, ms = chocosim("summary", "two", cwd=tmp)
            print(f"  `chocosim summary` of that run: {ts:.2f} s, CPU {cs:.2f} s, peak memory {ms / 2**20:,.0f} MB")
            for when in ("first", "again (part tallies cached)"):
                tr, cr, mr = chocosim("report", "two", "-o", "report.html", cwd=tmp)
                print(f"  `chocosim report` of that run, {when}: {tr:.2f} s, CPU {cr:.2f} s, "
                      f"peak memory {mr / 2**20:,.0f} MB")
            shutil.rmtree(os.path.join(tmp, "one"))
            shutil.rmtree(os.path.join(tmp, "two"))
        if small_games:
            ta, ca, _ = run(small_games, "small1", "--jobs", "1")
            tb, cb, _ = run(small_games, "small")
            print(f"  {small_games:,} games: --jobs 1 {ta:.2f} s (CPU {ca:.2f} s), "
                  f"the default (every core) {tb:.2f} s (CPU {cb:.2f} s)")
        if memory_games:
            t, _, m = run(memory_games, "memory", "--jobs", "2")
            print(f"  {memory_games:,} games, --jobs 2: {t:.1f} s, peak memory {m / 2**20:,.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", help="only this game")
    ap.add_argument("--seconds", type=float, default=1.0, help="length of each single-core measurement")
    ap.add_argument("--parallel-game", default="fabryka", help="game of the end-to-end measurement")
    ap.add_argument("--parallel-seats", default="random,random", help="seats of the end-to-end measurement")
    ap.add_argument("--parallel-games", type=int, default=10_000_000,
                    help="games of the end-to-end --jobs 1 / --jobs 2 comparison (0: skip it)")
    ap.add_argument("--repeat", type=int, default=5,
                    help="rounds of C reference, --jobs 1 and --jobs 2 in turn, and of the per-decision "
                         "rows (medians and ranges reported)")
    ap.add_argument("--small-games", type=int, default=100_000,
                    help="games of the short end-to-end run, --jobs 1 and the default (0: skip it)")
    ap.add_argument("--search", nargs="?", const="mcts", default=None, metavar="SPEC",
                    help="also measure the search bot (default spec: mcts) against each heuristic")
    ap.add_argument("--search-scale", type=float, default=1.0,
                    help="multiply the search measurement's games by this")
    ap.add_argument("--cluster", nargs="?", const="fabryka", default=None, metavar="GAME",
                    help="also time the top rung of GAME's balance ladder (default: fabryka) on a local "
                         "dask cluster of one worker process and of two")
    ap.add_argument("--cluster-games", type=int, default=400, help="games of each --cluster measurement")
    ap.add_argument("--search-baseline", default=None, metavar="SPEC",
                    help="the bot the search bot meets at equal CPU time (default: the search bot of 1b60c88)")
    ap.add_argument("--search-baseline-tree", type=Path, default=None, metavar="DIR",
                    help="a built checkout of the baseline's commit (git worktree add DIR 1b60c88, then "
                         "python setup.py build_ext --inplace there): the baseline's CPU is timed there")
    ap.add_argument("--search-rounds", type=int, default=3,
                    help="rounds of the search bot's timing and games against the heuristic")
    ap.add_argument("--search-deals", type=float, default=0.5,
                    help="deals against the baseline, as a share of one round's games against the heuristic "
                         "(0: skip them)")
    ap.add_argument("--memory-games", type=int, default=0,
                    help="also measure the peak memory of a run this long with --jobs 2")
    args = ap.parse_args()
    results = single_core(args.game, args.seconds)
    decision_rows(args.game, args.seconds, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        exe = c_reference_exe(tmp)
        if exe is None:
            print("\nno gcc: the hand-written C reference is not measured")
        elif ("fabryka", 2, "random") in results:
            ref, played = c_reference(exe)
            engine = results["fabryka", 2, "random"]["games/s"]
            print(f"\nhand-written C Fabryka, random vs random: {ref:,.0f} games/s ({played})")
            print(f"  the engine's random vs random: {engine:,.0f} games/s, {engine / ref:.0%} of the C version")
        if args.search:
            search(args.game, args.search, args.search_baseline, args.search_scale, args.search_rounds,
                   args.search_deals, args.search_baseline_tree)
        if args.cluster:
            dask_cluster(args.cluster, args.cluster_games, args.repeat)
        if args.parallel_games or args.small_games or args.memory_games:
            compile_package()
            yardstick = args.parallel_game == "fabryka" and args.parallel_seats == "random,random"
            end_to_end(args.parallel_game, args.parallel_seats, args.parallel_games, args.memory_games,
                       args.small_games, exe if yardstick else None, args.repeat)


if __name__ == "__main__":
    main()
