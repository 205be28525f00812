"""Rollout workers on a Ray cluster for ``python train.py --ray [ADDRESS] --workers N``.

Each worker is a Ray actor (one CPU) holding a :class:`~spoilfive_integrations.selfplay.SelfPlayRollout`:
its own core batch (its share of ``--num-games`` at every table size) and its share of the
league's tables, acting on the CPU. The learner stays on the driver (on its GPU when it has
one). Once per iteration the driver puts the new weights in Ray's object store
(``ray.put``, once, whatever the number of workers) and so too the league snapshot that
this iteration's snapshot seats play: as a state dict, not a file path, so that a worker on
another machine needs no shared disk (a snapshot is a few hundred kB, the same size as the
weights). Every worker fetches both from the object store, plays its rollout and returns
its :class:`~spoilfive_integrations.selfplay.RolloutBatch`; the driver concatenates them in
worker order.

Faults: an actor that dies is restarted by Ray (``max_restarts``) and the rollout it was
playing is run again on the new one (``max_task_retries``); the rollout is seeded from
``(seed, iteration, worker)`` at its start, so the redone rollout is the one that was lost.
The driver notices the new process and logs it. A worker that cannot be brought back loses
its share of that iteration (logged); the others' rollouts are trained on, and a worker dead
for good (its restarts spent, or killed for good) is dropped from the run with its games. Ctrl-C on the
driver stops waiting for the rollouts at once (they are dropped) and lets ``train.py`` save
its resumable checkpoint. A resumed run may use another number of workers: the games are
split afresh, and nothing of a worker's state outlives its rollout.

Only ``train.py --ray`` imports this module (it needs the ``ray`` extra beside ``train``:
``pip install -c .ci/constraints.txt -e ".[train,ray]"`` in the checkout).
"""

from __future__ import annotations

import ipaddress
import os
import socket

import numpy as np
import ray
import torch

from agents.sharding import LOCAL, cluster_cpus, connect
from spoilfive_env.rules import is_integer

from .selfplay import (
    PRECISIONS,
    RolloutBatch,
    SelfPlayRollout,
    check_rollout,
    cpu_bf16,
    merge_batches,
)

MAX_RESTARTS = 4
"""How many times Ray restarts a dead rollout worker over a run."""
POLL_S = 0.25
"""How often the driver, waiting for rollouts, looks at whether Ctrl-C asked it to stop."""
READY_TIMEOUT_S = 300.0
"""How long the workers may take to start (their CPUs may be held by another job on the cluster)."""
SESSION_ADDRESSES = (LOCAL, "local", "auto")
"""Addresses that take the Ray session this process already runs as it is (no HOST:PORT to compare)."""


def check_workers(workers: int, available_cpus: int) -> None:
    """Refuse more workers than the cluster has CPUs (``ValueError``). (A worker with no games is refused
    before Ray is joined, by :func:`~spoilfive_integrations.selfplay.check_rollout`.)"""
    if workers > available_cpus:
        raise ValueError(f"workers={workers} is not allowed: the Ray cluster has {available_cpus} CPU(s), "
                         f"one per worker; give 1 to {max(available_cpus, 1)} (or add nodes to the cluster)")


def head_of(address: str) -> tuple[str, int] | None:
    """``(IP, port)`` of a ``HOST:PORT`` address, or None where it names none (no port, a host that no name
    server knows)."""
    host, _, port = address.rpartition(":")
    try:
        return socket.gethostbyname(host), int(port)
    except (OSError, ValueError, UnicodeError):
        return None


def check_session_address(address) -> None:
    """Refuse a ``HOST:PORT`` that is not the head of the Ray session this process already runs, which is the one
    :func:`~agents.sharding.connect` uses (``ValueError``)."""
    if address is None or address is True or str(address).strip() in SESSION_ADDRESSES:
        return
    running = ray.get_runtime_context().gcs_address
    given, head = head_of(str(address).strip()), head_of(running)
    same = given is not None and given == head
    here = (given is not None and head is not None and given[1] == head[1]  # localhost:PORT, a head on this machine
            and ipaddress.ip_address(given[0]).is_loopback and head[0] == ray.util.get_node_ip_address())
    if not (same or here):
        raise ValueError(f"address {address!r} is not the Ray session this process already runs (its head is "
                         f"{running}): give no address to roll out on that session, or call ray.shutdown() first "
                         f"to join {address}")


@ray.remote(num_cpus=1, max_restarts=MAX_RESTARTS, max_task_retries=1)
class RolloutWorker:
    """One Ray actor: a :class:`SelfPlayRollout` holding worker ``worker``'s share of the games."""

    def __init__(self, settings: dict, league_weights, worker: int, workers: int, bf16_obs: bool):
        torch.set_num_threads(1)
        self.rollout = SelfPlayRollout(settings, np.asarray(league_weights), worker=worker, workers=workers,
                                       device="cpu", bf16=cpu_bf16(settings.get("precision", "auto")),
                                       bf16_obs=bf16_obs)

    def ready(self) -> tuple[int, int]:
        """The worker's process id and its number of games (once it is built)."""
        return os.getpid(), self.rollout.num_games

    def collect(self, iteration: int, weights: dict, snapshot: dict) -> tuple[int, RolloutBatch]:
        return os.getpid(), self.rollout.collect(iteration, weights, snapshot)


class RolloutWorkers:
    """The driver's handle on ``workers`` rollout actors (see the module docstring).

    Args:
        settings: ``dataclasses.asdict(args)`` of ``train.py``.
        league_weights: the ``--league`` probabilities.
        workers: how many actors (a whole number of at least 1).
        address: ``--ray``'s value (see :func:`agents.sharding.connect`): ``None``, ``""`` or ``True``
            start a local cluster, ``"auto"`` joins the one ``ray start`` made on this machine,
            ``"HOST:PORT"`` joins that head node. When this process already runs a Ray session, that
            session is used: as it is for those first ones, and a ``HOST:PORT`` must be its head's.
        say: where to log (restarts, lost rollouts).
        bf16_obs: the learner keeps observations in bf16: the workers send them so (half the bytes).

    Raises:
        ValueError: before Ray is started or joined, ``workers``, the settings or the league weights
            that a rollout cannot take (:func:`~spoilfive_integrations.selfplay.check_rollout`), or an
            address that is not the running session's; before any actor is made, an address where no
            cluster answers, or a cluster with fewer CPUs than ``workers``.
    """

    def __init__(self, settings: dict, league_weights, workers: int, address, say=print, bf16_obs: bool = False):
        if not (is_integer(workers) and workers >= 1):
            raise ValueError(f"workers={workers!r} is not allowed: give a whole number of at least 1 "
                             "(rollout workers, one CPU each)")
        check_rollout(settings, league_weights, workers - 1, workers)  # the last worker holds the fewest games
        if settings.get("precision", "auto") not in PRECISIONS:
            raise ValueError(f"settings['precision']={settings['precision']!r} is not allowed: choose one of "
                             f"{', '.join(PRECISIONS)}")
        if not isinstance(bf16_obs, (bool, np.bool_)):
            raise ValueError(f"bf16_obs={bf16_obs!r} is not allowed: give True or False")
        if not (address is None or address is True or isinstance(address, str)):
            raise ValueError(f"address={address!r} is not allowed: give None or '' (a local cluster), 'auto' (the one "
                             "`ray start` made on this machine) or 'HOST:PORT'")
        if ray.is_initialized():
            check_session_address(address)
        self.ray = connect(address)
        check_workers(workers, cluster_cpus(self.ray))
        self.say = say
        self.actors = [RolloutWorker.remote(settings, np.asarray(league_weights), w, workers, bf16_obs)
                       for w in range(workers)]
        try:
            started = ray.get([actor.ready.remote() for actor in self.actors], timeout=READY_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise ValueError(f"workers={workers}: the Ray cluster did not start {workers} worker(s) within "
                             f"{READY_TIMEOUT_S:.0f} s (are its CPUs held by another job? see `ray status`)") from None
        self.pids = [pid for pid, _ in started]
        self.games = [games for _, games in started]
        self.numbers = list(range(workers))  # each worker's number in the logs
        self.lost = 0  # rollouts lost for good over the run
        self.restarts = 0

    def describe(self) -> str:
        resources = self.ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        return (f"{len(self.actors)} Ray rollout worker(s) of {', '.join(map(str, self.games))} games on a cluster of "
                f"{int(resources.get('CPU', 0))} CPU(s){f' and {gpus} GPU(s)' if gpus else ''}; weights and the league "
                "snapshot go through the object store")

    def collect(self, net: torch.nn.Module, iteration: int, snapshot: dict, stop=None) -> RolloutBatch | None:
        """Every worker's rollout with the weights of ``net``, merged; ``None`` if stopped."""
        weights = ray.put({k: v.detach().to("cpu") for k, v in net.state_dict().items()})
        snapshot_ref = ray.put({k: v.to("cpu") for k, v in snapshot.items()})
        refs = [actor.collect.remote(iteration, weights, snapshot_ref) for actor in self.actors]
        pending = list(refs)
        while pending:
            if stop is not None and stop.requested:
                for ref in pending:
                    ray.cancel(ref, force=False)
                return None
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=POLL_S)
        batches, gone = [], []
        for index, ref in enumerate(refs):
            worker = self.numbers[index]
            try:
                pid, batch = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as error:
                self.lost += 1
                self.say(f"rollout worker {worker} lost its rollout of iteration {iteration} "
                         f"({type(error).__name__}): skipped; training on the other workers' rollouts")
                if not self._alive(index):
                    gone.append(index)
                continue
            if pid != self.pids[index]:
                self.restarts += 1
                self.say(f"rollout worker {worker} died and was restarted by Ray (process {self.pids[index]} -> "
                         f"{pid}); its rollout of iteration {iteration} ran (again) on the new process")
                self.pids[index] = pid
            batches.append(batch)
        for index in reversed(gone):  # dead for good (no restarts left): the run goes on without it
            self.say(f"rollout worker {self.numbers[index]} cannot be restarted: the run goes on with "
                     f"{len(self.actors) - 1} worker(s) and without its {self.games[index]} games")
            for held in (self.actors, self.pids, self.games, self.numbers):
                del held[index]
        if not batches:
            raise RuntimeError(f"every rollout worker failed in iteration {iteration}; the last checkpoint is kept")
        return merge_batches(batches)

    def _alive(self, index: int) -> bool:
        """Whether worker ``index`` answers (waiting while Ray restarts it)."""
        try:
            ray.get(self.actors[index].ready.remote(), timeout=READY_TIMEOUT_S)
            return True
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            return False

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
