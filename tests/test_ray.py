"""Ray: sharded tournaments equal the single-process run exactly; training with rollout workers.

One local Ray cluster of 2 CPUs is started by the module's fixture (``address="local"``, so a
cluster someone else runs on this machine is never joined) and shut down after the module.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import interrupt_training, load_script

from agents.evaluate import build_agents, distinct_specs, evaluate, make_deals, play_tournament
from agents.sharding import BLOCK_DEALS, block_seed
from spoilfive_env.rules import Rules

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[1]
CLUSTER_CPUS = 2


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():  # a session another test module left behind would not be ours
        ray.shutdown()
    ray.init(address="local", num_cpus=CLUSTER_CPUS, include_dashboard=False, logging_level="WARNING",
             log_to_driver=False)
    yield ray
    ray.shutdown()


def without_time(report: dict) -> dict:
    report = dict(report)
    report.pop("seconds")
    return report


# ---------------------------------------------------------------- tournaments
def test_a_block_is_a_function_of_seed_and_block_alone():
    """The first block's games come out the same whether the run has one block or three, and
    whatever the batch size; a different seed reseeds the agents differently."""
    rules = Rules(num_players=3)
    hands, turnups, dealers = make_deals(3, 3 * BLOCK_DEALS, seed=2)
    specs, lineup = distinct_specs(["random", "greedy"], 3)
    games = BLOCK_DEALS * 3

    def first_block(deals, batch_size, seed=2):
        out = play_tournament(build_agents(specs, seed), lineup, rules, hands[:deals], turnups[:deals],
                              dealers[:deals], batch_size, seed=seed)
        return {key: value[:games] for key, value in out.items()}

    alone = first_block(BLOCK_DEALS, 8192)
    for deals, batch_size in ((3 * BLOCK_DEALS, 8192), (3 * BLOCK_DEALS, 1), (BLOCK_DEALS + 1, 100)):
        again = first_block(deals, batch_size)
        assert all(np.array_equal(alone[key], again[key]) for key in alone), (deals, batch_size)
    other = first_block(BLOCK_DEALS, 8192, seed=3)
    assert not np.array_equal(alone["equity"], other["equity"])  # the random agent drew differently
    assert block_seed(2, 0, 0) != block_seed(2, 0, 1) != block_seed(2, 1, 1)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_figures_do_not_depend_on_the_batch_size(seed):
    """Finished games wait in the batch until it is compacted, at moments that depend on the
    batch; no agent may spend its stream on them (seed 1 caught exactly that once)."""
    reports = [without_time(evaluate(["greedy", "random"], 3, 300, seed, batch_size=size)) for size in (1, 8192)]
    assert json.dumps(reports[0], sort_keys=True) == json.dumps(reports[1], sort_keys=True)


def test_bad_shards_and_address_raise_before_any_play():
    with pytest.raises(ValueError, match="shards=0 is not allowed"):
        evaluate(["greedy"], 3, deals=10, ray=True, shards=0)
    if not ray.is_initialized():  # (a session already joined is reused; the CLI test covers the address too)
        with pytest.raises(ValueError, match=r"^ray='127.0.0.1:1': no Ray cluster answers there"):
            evaluate(["greedy"], 3, deals=10, ray="127.0.0.1:1")  # the function's keyword, not the command's flag


def test_an_agent_objects_generator_is_put_back():
    agent = build_agents(["random"], 0)[0]
    before = agent.rng.bit_generator.state
    evaluate([agent, "greedy"], 3, deals=20, seed=1)
    assert agent.rng.bit_generator.state == before


@pytest.mark.parametrize("lineup, num_players, deals", [
    (["spoiler", "greedy"], 4, 3 * BLOCK_DEALS + 17),
    (["random", "greedy", "pimc:samples=2:rollout=random"], 3, 2 * BLOCK_DEALS + 60),
])
def test_sharded_tournament_equals_the_single_process_one(cluster, lineup, num_players, deals):
    single = without_time(evaluate(lineup, num_players, deals, seed=7))
    for shards in (1, 3):
        sharded = without_time(evaluate(lineup, num_players, deals, seed=7, ray=True, shards=shards))
        assert json.dumps(sharded, sort_keys=True) == json.dumps(single, sort_keys=True), shards


def test_a_sharded_pairing_equals_the_single_process_one(cluster):
    lineup, deals = ["random", "greedy"], BLOCK_DEALS + 40
    single = without_time(evaluate(lineup, 3, deals, seed=9, paired_with="spoiler"))
    sharded = without_time(evaluate(lineup, 3, deals, seed=9, paired_with="spoiler", ray=True, shards=2))
    assert sharded["paired"]["equity_difference"] != 0
    assert json.dumps(sharded, sort_keys=True) == json.dumps(single, sort_keys=True)


def test_the_sharded_progress_bar_counts_each_deal_once(cluster, monkeypatch):
    import agents.sharding

    bars = []

    class Recording:
        def __init__(self, total=None, desc=None, disable=False, **_):
            self.total, self.desc, self.disable, self.done = total, desc, disable, 0
            bars.append(self)

        def update(self, amount):
            self.done += amount

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

    monkeypatch.setattr(agents.sharding, "tqdm", Recording)
    lineup, deals = ["random", "greedy"], 2 * BLOCK_DEALS + 40
    quiet = without_time(evaluate(lineup, 3, deals, seed=9, ray=True, shards=3))
    bars.clear()
    shown = without_time(evaluate(lineup, 3, deals, seed=9, ray=True, shards=3, progress=True))
    assert json.dumps(shown, sort_keys=True) == json.dumps(quiet, sort_keys=True)
    (bar,) = bars
    assert bar.desc == "random, 3 players" and not bar.disable and bar.total == bar.done == deals


def run(*args, timeout=120):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, says", [
    (["--ray", "127.0.0.1:1"], "no Ray cluster answers there"),
    (["--shards", "2"], "--shards is for --ray"),
    (["--ray", "--shards", "0"], "--shards: '0' is not allowed: give a whole number of at least 1"),
])
def test_evaluate_refuses_bad_ray_input_in_one_line(args, says):
    result = run("-m", "agents.evaluate", "--agents", "greedy", "--deals", "10", *args)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1 and not result.stdout


@pytest.fixture(params=["grpc", "http"])
def not_a_ray_head(request):
    """The port of a server that accepts the connection but is not a Ray head: a gRPC server with no
    services (as a proxy that answers every address is), or a plain HTTP server."""
    if request.param == "grpc":
        from concurrent.futures import ThreadPoolExecutor

        import grpc

        server = grpc.server(ThreadPoolExecutor(max_workers=1))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        yield port
        server.stop(None)
    else:
        import http.server

        class Quiet(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield server.server_port
        server.shutdown()


def test_a_server_that_is_not_a_ray_head_is_refused_in_one_line_at_once(not_a_ray_head):
    # ray.init logged a gRPC error a second for twenty seconds before it gave up
    result = run("-m", "agents.evaluate", "--agents", "greedy", "--deals", "10", "--ray", f"127.0.0.1:{not_a_ray_head}")
    assert result.returncode == 2, result.stderr
    assert "it is not a Ray head" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_what_is_not_host_port_is_refused_and_a_closed_port_is_named_as_closed():
    """reachable() answers in words: an address without a host or a numeric port is not HOST:PORT, and a port
    nobody listens on says the connection was refused (not that a server answered there).
    Mutants killed: ':PORT' taken (S08), a port that is not a number taken (S09), a refused connection left to
    the gRPC question, which then calls it a server that is no Ray head (S10)."""
    import socket

    from agents.sharding import reachable

    for address in (":6379", "localhost", "localhost:", "localhost:port", "localhost:-1"):
        assert reachable(address) == "it is not HOST:PORT", address
    with socket.socket() as probe:  # a port that was free a moment ago, and is closed now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    why = reachable(f"127.0.0.1:{port}")
    assert why is not None and "refused" in why.lower() and "Ray head" not in why, why


class StandInRayModule:
    """``ray`` as :func:`agents.sharding.connect` uses it: whether a session runs, and the ``init`` calls made."""

    def __init__(self, running: bool = False):
        self.running, self.inits = running, []

    def is_initialized(self):
        return self.running

    def init(self, **options):
        self.inits.append(options)


def test_connect_starts_joins_or_reuses_a_cluster_as_its_address_says(monkeypatch):
    """None, True, '' and 'local' start a local cluster, 'auto' joins the one `ray start` made, HOST:PORT that
    head; spaces around an address do not count; a session already running is reused, not started again.
    No cluster: the ray module is stood in for.
    Mutants killed: None not a local cluster (S12), spaces kept (S13), 'auto' refused (S14), HOST:PORT joined
    as 'auto' (S15), a running session started again (S16)."""
    import agents.sharding
    from agents.sharding import connect

    for address, joined in ((None, "local"), (True, "local"), ("", "local"), (" local ", "local"), ("auto", "auto"),
                            (" auto\n", "auto"), ("10.1.2.3:6379", "10.1.2.3:6379")):
        if isinstance(address, str) and ":" in address:
            monkeypatch.setattr(agents.sharding, "reachable", lambda address: None)  # as if a head answered there
        module = StandInRayModule()
        monkeypatch.setitem(sys.modules, "ray", module)
        assert connect(address) is module
        assert [init["address"] for init in module.inits] == [joined], address
    running = StandInRayModule(running=True)
    monkeypatch.setitem(sys.modules, "ray", running)
    assert connect("10.1.2.3:6379") is running and running.inits == []


def test_an_address_nobody_answers_at_is_refused_in_the_words_of_its_caller(monkeypatch):
    """A function's keyword shows the value as Python wrote it (``ray='x'``), a command's flag as typed (``--ray x``).
    Mutant killed: the two wordings swapped (S17)."""
    from agents.sharding import connect

    monkeypatch.setitem(sys.modules, "ray", StandInRayModule())
    with pytest.raises(ValueError, match=r"^ray='nohost': no Ray cluster answers there \(it is not HOST:PORT\)"):
        connect("nohost", option="ray=")
    with pytest.raises(ValueError, match=r"^--ray nohost: no Ray cluster answers there \(it is not HOST:PORT\)"):
        connect("nohost")


# ---------------------------------------------------------------- training with rollout workers
torch = pytest.importorskip("torch")

TINY = ("--num-games", "96", "--min-players", "3", "--max-players", "4", "--hidden", "16", "--minibatch-size", "512",
        "--eval-every", "0", "--final-eval-deals", "0", "--torch-threads", "1", "--no-progress-bar")


def load_train():
    return load_script("train.py", "train_for_ray_tests")


def weights(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)["state_dict"]


def test_two_workers_train_and_one_worker_is_the_in_process_run(cluster, tmp_path):
    train = load_train()
    common = ("--runs-dir", str(tmp_path), *TINY, "--total-decisions", "6000")
    summary = train.main([*common, "--run-name", "two", "--ray", "--workers", "2"])
    assert summary["ray_workers"] == 2 and summary["progress"]["decisions"] >= 6000
    for name in ("checkpoint.pt", "agent.pt", "summary.json", "progress.csv"):
        assert (tmp_path / "two" / name).is_file(), name
    train.main([*common, "--run-name", "one", "--ray", "--workers", "1"])
    train.main([*common, "--run-name", "here"])
    one, here = weights(tmp_path / "one" / "agent.pt"), weights(tmp_path / "here" / "agent.pt")
    assert all(torch.equal(one[k], here[k]) for k in here)  # the same rollout, on a worker or here
    two = weights(tmp_path / "two" / "agent.pt")
    assert not all(torch.equal(two[k], here[k]) for k in here)  # two workers: other games, other seeds


def test_a_killed_worker_is_restarted_one_dead_for_good_is_dropped_and_the_run_finishes(cluster, tmp_path,
                                                                                         monkeypatch, capsys):
    from spoilfive_integrations import ray_training

    collect = ray_training.RolloutWorkers.collect
    killed = []

    def collect_then_kill(self, net, iteration, snapshot, stop=None):
        if iteration in (2, 4):  # kill worker 0 while its rollout is under way (or, if it is quick, just after)
            last = iteration == 4  # ... the second time for good
            timer = threading.Timer(0.05, lambda: (killed.append(self.pids[0]),
                                                    ray.kill(self.actors[0], no_restart=last)))
            timer.start()
        return collect(self, net, iteration, snapshot, stop)

    monkeypatch.setattr(ray_training.RolloutWorkers, "collect", collect_then_kill)
    train = load_train()
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "kill", *TINY, "--num-games", "1024",
                          "--total-decisions", "120000", "--ray", "--workers", "2"])
    log = capsys.readouterr().err
    assert len(killed) == 2 and "rollout worker 0 died and was restarted by Ray" in log, log[-2000:]
    assert re.search(r"rollout worker 0 lost its rollout of iteration [45] ", log)  # 5: killed just after its 4th
    assert "rollout worker 0 cannot be restarted: the run goes on with 1 worker(s)" in log
    assert summary["progress"]["iteration"] >= 5 and (tmp_path / "kill" / "checkpoint.pt").is_file()


@pytest.mark.parametrize("breaks", ["the first rollout", "the tensorboard writer"])
def test_an_error_that_ends_a_ray_run_stops_its_rollout_workers(cluster, tmp_path, monkeypatch, breaks):
    """A run that raises, in its loop or in the set-up after the workers started, leaves no actor
    holding the cluster's CPUs: the next run (or the caller's own work) has them."""
    from torch.utils import tensorboard

    from spoilfive_integrations import ray_training

    made = []
    start = ray_training.RolloutWorkers.__init__

    def start_and_keep(self, *args, **kwargs):
        start(self, *args, **kwargs)
        made.extend(self.actors)

    def broken(*args, **kwargs):
        raise RuntimeError(f"{breaks} broke")

    monkeypatch.setattr(ray_training.RolloutWorkers, "__init__", start_and_keep)
    if breaks == "the first rollout":
        monkeypatch.setattr(ray_training.RolloutWorkers, "collect", broken)
    else:
        monkeypatch.setattr(tensorboard, "SummaryWriter", broken)
    train = load_train()
    with pytest.raises(RuntimeError, match=f"{breaks} broke"):
        train.main(["--runs-dir", str(tmp_path), "--run-name", "broken", *TINY, "--ray", "--workers", "2"])
    assert len(made) == 2
    deadline = time.monotonic() + 60  # ray.kill is asynchronous: an actor may answer once more, its CPU come back later

    def answers(actor) -> bool:
        try:
            ray.get(actor.ready.remote(), timeout=30)
            return True
        except ray.exceptions.RayActorError:
            return False

    while (any(map(answers, made)) or ray.available_resources().get("CPU", 0) < CLUSTER_CPUS) \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(answers, made))
    assert ray.available_resources().get("CPU", 0) == CLUSTER_CPUS


def test_ctrl_c_on_a_ray_run_saves_and_it_resumes_with_another_number_of_workers(cluster, tmp_path):
    run = tmp_path / "stop"
    returncode, stdout, stderr = interrupt_training(
        ["--runs-dir", tmp_path, "--run-name", "stop", *TINY, "--total-decisions", "100000000", "--ray", "--workers",
         "2"], run, iterations=2)
    assert returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "Stopped by Ctrl-C" in stdout
    saved = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)["progress"]
    assert saved["iteration"] >= 2
    train = load_train()
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "stop", "--resume", "--no-progress-bar",
                          "--total-decisions", str(saved["decisions"] + 3000), "--ray", "--workers", "1"])
    assert summary["ray_workers"] == 1 and summary["progress"]["iteration"] > saved["iteration"]


def test_train_refuses_bad_ray_input_before_any_work(cluster, tmp_path, capsys):
    train = load_train()
    with pytest.raises(SystemExit) as stopped:
        train.main(["--runs-dir", str(tmp_path), "--run-name", "many", *TINY, "--ray", "--workers",
                    str(CLUSTER_CPUS + 1)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"workers={CLUSTER_CPUS + 1} is not allowed: the Ray cluster has {CLUSTER_CPUS} CPU(s)" in err
    assert not (tmp_path / "many").exists()  # nothing was made
    for args, says in ((["--ray", "127.0.0.1:1"], "no Ray cluster answers there"),
                       (["--ray", "--workers", "0"], "--workers 0 is not allowed"),
                       (["--workers", "2"], "--workers is for --ray")):
        result = run(str(ROOT / "train.py"), "--runs-dir", str(tmp_path), "--run-name", "bad", *TINY, *args)
        assert result.returncode == 2 and says in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()


ROLLOUT_SETTINGS = dict(seed=0, min_players=3, max_players=4, num_games=8, hands_per_game=1, current_seats=0.5,
                        hidden="16", critic="local", encoding="canonical", opponent="")
LEAGUE = [0.5, 0.2, 0.2, 0.05, 0.05, 0.0]


@pytest.mark.parametrize("settings, workers, options, says", [
    ({}, 0, {}, "workers=0 is not allowed: give a whole number of at least 1"),
    ({}, -1, {}, "workers=-1 is not allowed"),
    ({}, True, {}, "workers=True is not allowed"),
    ({}, "1", {}, "workers='1' is not allowed"),
    ({}, None, {}, "workers=None is not allowed"),
    ({}, 5, {}, "worker 4 of workers=5 would hold no games: settings\\['num_games'\\]=8 gives 4 game"),
    ({"opponent": "nope"}, 1, {}, "settings\\['opponent'\\]: unknown agent 'nope'"),
    ({"precision": "x"}, 1, {}, "settings\\['precision'\\]='x' is not allowed: choose one of auto, bf16, fp32"),
    ({}, 1, {"bf16_obs": "no"}, "bf16_obs='no' is not allowed: give True or False"),
    ({}, 1, {"address": 5}, "address=5 is not allowed: give None or '' \\(a local cluster\\), 'auto'"),
], ids=repr)
def test_rollout_workers_refuse_bad_arguments_before_ray_is_joined(settings, workers, options, says, monkeypatch):
    from spoilfive_integrations import ray_training

    monkeypatch.setattr(ray_training, "connect", lambda address: pytest.fail("Ray was joined"))
    with pytest.raises(ValueError, match=says):
        ray_training.RolloutWorkers({**ROLLOUT_SETTINGS, **settings}, LEAGUE, workers, options.pop("address", None),
                                    **options)


def test_rollout_workers_on_a_running_session_refuse_another_head_s_address(cluster, monkeypatch):
    from spoilfive_integrations import ray_training

    monkeypatch.setattr(ray_training, "connect", lambda address: pytest.fail("Ray was joined"))
    head = ray.get_runtime_context().gcs_address
    with pytest.raises(ValueError, match=f"address '127.0.0.1:1' is not the Ray session this process already runs "
                                         f"\\(its head is {re.escape(head)}\\): give no address to roll out on that "
                                         "session, or call ray.shutdown\\(\\) first"):
        ray_training.RolloutWorkers(ROLLOUT_SETTINGS, LEAGUE, 1, "127.0.0.1:1")
    for same in (None, True, "", "auto", head, f"localhost:{head.rpartition(':')[2]}"):
        ray_training.check_session_address(same)  # the running session's: taken


def test_the_single_machine_path_never_imports_ray():
    code = ("import sys, importlib.util; from agents.evaluate import evaluate; evaluate(['random', 'greedy'], 3, 30); "
            "import spoilfive_integrations.selfplay; "
            "spec = importlib.util.spec_from_file_location('train', 'train.py'); "
            "spec.loader.exec_module(importlib.util.module_from_spec(spec)); "
            "print('ray' in sys.modules)")
    result = run("-c", code)
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr


class StandInActor:
    """A rollout actor without Ray: ``collect`` answers with what ``plays`` says for that iteration
    (``"ok"``, ``"restarted"``, ``"lost"``, ``"gone"``), ``ready`` whether it came back."""

    def __init__(self, number: int, plays: dict):
        self.number, self.plays, self.pid, self.dead = number, plays, 100 + number, False
        self.collect = SimpleNamespace(remote=self._collect)
        self.ready = SimpleNamespace(remote=lambda: ("ready", self))

    def _collect(self, iteration, weights, snapshot):
        play = self.plays.get(iteration, "ok")
        if play == "restarted":
            self.pid += 100
        self.dead = play == "gone"
        return ("collect", self, play, f"batch of worker {self.number}, iteration {iteration}")


def stand_in_ray():
    """The parts of Ray that :meth:`RolloutWorkers.collect` calls, answering for :class:`StandInActor`."""
    def get(ref, timeout=None):
        kind, actor, *rest = ref
        if kind == "ready":
            if actor.dead:
                raise ray.exceptions.RayActorError()
            return actor.pid, 8
        play, batch = rest
        if play in ("lost", "gone"):
            raise ray.exceptions.RayActorError()
        return actor.pid, batch

    return SimpleNamespace(put=lambda value: value, wait=lambda refs, **kwargs: (refs, []), get=get,
                           cancel=lambda ref, force=False: None, exceptions=ray.exceptions)


def test_collect_drops_every_dead_worker_and_keeps_each_survivor_s_number_and_process(monkeypatch):
    """Four workers; in iteration 1 worker 1 was restarted and workers 0 and 2 are dead for good, in iteration 2
    worker 3 loses its rollout but comes back. Each lost or restarted worker is named by its own number, both dead
    ones are dropped (not a live one in their place: the list shrinks as they go), and a restart is logged once,
    not again at every later iteration. No Ray cluster: Ray's calls are stood in for."""
    from spoilfive_integrations import ray_training

    monkeypatch.setattr(ray_training, "ray", stand_in_ray())
    monkeypatch.setattr(ray_training, "merge_batches", list)
    plays = [{1: "gone"}, {1: "restarted"}, {1: "gone"}, {2: "lost"}]
    actors = [StandInActor(number, play) for number, play in enumerate(plays)]
    workers = object.__new__(ray_training.RolloutWorkers)
    log = []
    workers.say, workers.actors, workers.lost, workers.restarts = log.append, list(actors), 0, 0
    workers.pids, workers.games, workers.numbers = [actor.pid for actor in actors], [8, 8, 8, 8], [0, 1, 2, 3]
    net = torch.nn.Linear(1, 1)

    assert workers.collect(net, 1, {}) == ["batch of worker 1, iteration 1", "batch of worker 3, iteration 1"]
    assert workers.actors == [actors[1], actors[3]] and workers.numbers == [1, 3] and workers.pids == [201, 103]
    assert [line.split(" ")[2] for line in log] == ["0", "1", "2", "2", "0"]
    assert "rollout worker 1 died and was restarted by Ray (process 101 -> 201)" in log[1]
    assert log[3:] == [f"rollout worker {number} cannot be restarted: the run goes on with {left} worker(s) and "
                       "without its 8 games" for number, left in ((2, 3), (0, 2))]
    log.clear()
    assert workers.collect(net, 2, {}) == ["batch of worker 1, iteration 2"]
    assert log == ["rollout worker 3 lost its rollout of iteration 2 (RayActorError): skipped; training on the "
                   "other workers' rollouts"]  # worker 1 was not restarted again
    assert (workers.lost, workers.restarts, workers.numbers) == (3, 1, [1, 3])
