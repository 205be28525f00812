"""Blocks of duplicate deals: the unit of a tournament's randomness, and its shards on Ray.

A tournament's figures must not depend on how its deals are grouped into processes. So the
``K`` duplicate deals of :func:`agents.evaluate.make_deals` are cut into fixed blocks of
:data:`BLOCK_DEALS` deals (block ``b`` holds deals ``b * BLOCK_DEALS`` up to the next block;
the last block may be shorter), each deal played under every rotation of the lineup. At the
start of block ``b`` every agent ``a`` (its index among the lineup's distinct agents, in
order of first seat) is reseeded from

    ``np.random.SeedSequence([seed, a, b])``   (see :func:`block_seed`)

and while the block's games are played that agent draws only from the block's own stream
(its ``rng`` is swapped per block; an agent whose class overrides ``reseed``, and may keep
random state elsewhere, is played one block at a time instead). Agents whose class says
``batch_invariant = True`` (the rule-based ones: no random draws) decide the rows of many
blocks in one call. An object that is not an :class:`~agents.base.Agent` and has no
``reseed`` is used as it is, and then only its own seeding decides the figures.
A block's outcome is then a pure function of ``(seed, block)``: the same whether it is
played alone, beside other blocks on one core batch, in one process or in a Ray task on
another machine. (Exactness across machines also needs the same NumPy/torch arithmetic:
the same software and CPU kind on every node.)

:func:`run_on_ray` spreads contiguous runs of blocks ("shards") over a Ray cluster as tasks
(one CPU each); every task rebuilds the agents from their specs (names, ``name:key=value``
specs, checkpoint paths; agent objects travel pickled), plays its blocks with
:func:`agents.evaluate.play_tournament` and returns its per-game outcome arrays; the driver
concatenates them in deal order and summarises them exactly as a single-process run does.

``ray`` is imported only here, and only when a Ray path is taken.
"""

from __future__ import annotations

import math
import socket

import numpy as np
from tqdm.auto import tqdm

from spoilfive_env.cli import exit_interrupted, install_hint
from spoilfive_env.rules import is_integer

BLOCK_DEALS = 256
"""Deals per block (each played under every rotation): the grain of seeding and of sharding."""

CONNECT_TIMEOUT_S = 3.0
"""How long to wait for a Ray head's port to answer before calling the address unreachable."""

LOCAL = ""
"""The ``ray=`` value (and ``--ray`` without an address) that starts a local Ray cluster."""


def block_seed(seed: int, agent_index: int, block: int) -> int:
    """The seed agent ``agent_index`` is reseeded with at the start of ``block``."""
    words = np.random.SeedSequence([int(seed), int(agent_index), int(block)]).generate_state(2, np.uint32)
    return int(words[0]) << 32 | int(words[1])


def num_blocks(deals: int) -> int:
    """How many blocks ``deals`` deals make."""
    return math.ceil(deals / BLOCK_DEALS)


def shard_ranges(blocks: int, shards: int) -> list[tuple[int, int]]:
    """``shards`` contiguous, near-equal ``(first, stop)`` ranges of blocks (empty ones dropped)."""
    cuts = np.linspace(0, blocks, min(shards, blocks) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def reachable(address: str) -> str | None:
    """``None`` if a Ray head answers at ``HOST:PORT``, else why not.

    First a TCP connection; then the question ``ray.init`` asks first, the cluster's id (Ray's own gRPC
    stub, one short deadline), since a proxy or another server may accept the connection and
    ``ray.init`` then logs a screen of gRPC errors for twenty seconds before it gives up.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        return "it is not HOST:PORT"
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        return error.strerror or str(error) or type(error).__name__
    try:
        import grpc
        from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc
    except ImportError:  # another Ray layout: ray.init finds out itself
        return None
    with grpc.insecure_channel(address) as channel:
        try:
            gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel).GetClusterId(
                gcs_service_pb2.GetClusterIdRequest(), timeout=CONNECT_TIMEOUT_S)
        except grpc.RpcError as error:
            # Only answers no Ray head of this version gives: the method unknown, or no gRPC at all.
            # Anything else (a Ray head that wants its token, a deadline) is left to ray.init.
            if error.code() in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNAVAILABLE):
                return f"a server answers, but it is not a Ray head: gRPC says {error.code().name.lower()}"
    return None


def connect(address: str | bool | None = LOCAL, *, option: str = "--ray"):
    """Join or start a Ray cluster and return the ``ray`` module (reuses a running session).

    Args:
        address: ``""`` or ``True`` (``--ray`` without an address): start a local cluster on
            this machine; ``"auto"``: join the cluster ``ray start`` made on this machine (or
            ``RAY_ADDRESS``); ``"HOST:PORT"``: join that head node (port 6379 by default).
        option: how the refusals name where the address came from: a command's ``"--ray"``, or a
            function's keyword with its ``=`` (``"ray="``).

    Raises:
        ValueError: Ray is not installed, or no Ray cluster answers at ``address`` (checked
            with a :data:`CONNECT_TIMEOUT_S` TCP connection first, because ``ray.init`` itself
            waits minutes for an unreachable head).
    """
    try:
        import ray
    except ImportError:
        raise ValueError(f"{option.rstrip('=')} needs Ray: {install_hint('ray')}") from None
    if ray.is_initialized():
        return ray
    if address is True or address is None:
        address = LOCAL
    address = str(address).strip()
    given = f"{option}{address!r}" if option.endswith("=") else f"{option} {address}"
    if address not in (LOCAL, "auto", "local"):
        why = reachable(address)
        if why is not None:
            raise ValueError(f"{given}: no Ray cluster answers there ({why}); give the head node's "
                             "HOST:PORT (start one with `ray start --head`), 'auto' for the cluster started on "
                             "this machine, or no address for a local cluster")
    try:
        ray.init(address="local" if address in (LOCAL, "local") else address, include_dashboard=False,
                 logging_level="WARNING", log_to_driver=False, configure_logging=True)
    except ConnectionError as error:
        raise ValueError(f"{given}: cannot join a Ray cluster ({str(error).splitlines()[0]}); "
                         "start one with `ray start --head`, or give no address for a local cluster") from None
    return ray


def connect_for_command(parser, address) -> None:
    """A command's ``--ray ADDRESS`` joined before any play: an address nobody answers at ends the command in
    one line through ``parser`` (exit 2), a Ctrl-C while a local cluster starts in one line and exit 130."""
    try:
        connect(address)
    except ValueError as error:
        parser.error(str(error))
    except KeyboardInterrupt:  # starting a local cluster takes seconds
        exit_interrupted("Ctrl-C: stopped while joining the Ray cluster, nothing was run")


def cluster_cpus(ray) -> int:
    """Whole CPUs the connected cluster offers."""
    return int(ray.cluster_resources().get("CPU", 0))


def _play_shard(specs, lineup, rules, hands, turnups, dealers, seed, first_block, batch_size):
    """A Ray task: build the agents in this worker and play one shard's blocks."""
    from .evaluate import build_agents, play_tournament

    agents = build_agents(specs, seed)
    return play_tournament(agents, lineup, rules, hands, turnups, dealers, batch_size,
                           seed=seed, first_block=first_block)


def plays_on_ray(ray) -> bool:
    """Whether a ``ray=`` value of :func:`agents.evaluate.evaluate` asks for a Ray cluster (``None`` and ``False``:
    play here, in this process)."""
    return ray is not None and ray is not False


def check_shards(shards) -> None:
    """``shards`` of :func:`run_on_ray` (and of :func:`agents.evaluate.evaluate`): ``None`` or a positive integer."""
    if shards is not None and not (is_integer(shards) and shards >= 1):
        raise ValueError(f"shards={shards!r} is not allowed: it must be a positive integer (or None: one per CPU)")


def run_on_ray(specs, lineup, rules, hands, turnups, dealers, seed, batch_size, *,
               address: str | bool | None = LOCAL, shards: int | None = None, progress: str | None = None) -> dict:
    """Play a whole tournament as Ray tasks and return the merged per-game outcome arrays.

    Args:
        specs: the lineup's distinct agents (specs or picklable agent objects), in index order.
        lineup: the lineup as indices into ``specs`` (length ``num_players``).
        rules: the table's :class:`~spoilfive_env.rules.Rules`.
        hands, turnups, dealers: every deal of the tournament (:func:`~agents.evaluate.make_deals`).
        seed: the tournament's seed (of the deals and of every block's agent streams).
        batch_size: games per core batch inside a task (rounded to whole blocks).
        address: see :func:`connect`.
        shards: tasks to cut the blocks into (default: one per CPU of the cluster).
        progress: a label to show a tqdm bar of the deals whose shard is done; ``None``: no bar.

    Returns:
        What :func:`agents.evaluate.play_tournament` returns for all the deals, identical
        to a single-process run whatever ``shards`` is.
    """
    check_shards(shards)
    ray = connect(address, option="ray=")  # a command joined already, with its --ray
    blocks = num_blocks(len(turnups))
    if shards is None:
        shards = max(1, cluster_cpus(ray))
    task = ray.remote(num_cpus=1, max_retries=2)(_play_shard)
    specs_ref = ray.put(list(specs))
    pending, deals_of = [], {}
    for first, stop in shard_ranges(blocks, int(shards)):
        deals = slice(first * BLOCK_DEALS, stop * BLOCK_DEALS)
        pending.append(task.remote(specs_ref, np.asarray(lineup), rules, hands[deals], turnups[deals],
                                   dealers[deals], int(seed), first, int(batch_size)))
        deals_of[pending[-1]] = len(turnups[deals])
    with tqdm(total=len(turnups), desc=progress, unit="deal", leave=False, disable=progress is None) as bar:
        waiting = list(pending)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            bar.update(deals_of[done[0]])
    parts = ray.get(pending)
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
