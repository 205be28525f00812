"""Masked PPO with TorchRL, with no adapter: self-play on the AEC environment, or one seat on the vector env.

    python examples/torchrl_ppo.py                     # self-play on the AEC env, a few minutes on 2 CPU cores
    python examples/torchrl_ppo.py --route vector      # one seat against random, 256 games of one core batch
    python examples/torchrl_ppo.py --iterations 2 --frames-per-batch 256 --eval-deals 20   # smoke test

``--route pettingzoo`` (default): TorchRL's own ``PettingZooWrapper`` takes the environment as it
is. With ``use_mask=True`` (an AEC environment: one seat acts per step) it reports which seat acted in
``("agents", "mask")`` and moves each seat's legal actions into ``("agents", "action_mask")``
(a seat that is not to act gets an all-True row, so a masked categorical stays finite).
All seats form one group (``ALL_IN_ONE_GROUP``) and share one actor and one critic, as in
TorchRL's multi-agent PPO tutorial; the actor samples from ``MaskedCategorical``.

Rewards arrive for every seat when the hand ends, not at its own decisions. GAE with
``gamma = lmbda = 1`` turns that into each seat's Monte-Carlo return minus the value of
the state it saw (the intermediate values telescope), so the advantage at a seat's decision
is right whatever the other seats did in between; the loss is then taken only over the
decisions each seat really made (``mask``).

``--route vector``: TorchRL's ``GymWrapper`` takes the Gymnasium ``VectorEnv`` over one core batch
(``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``) as a batched env. TorchRL resets
ended games itself, so the env is made with ``autoreset_mode="Disabled"`` (TorchRL refuses the next-step
mode and prefers this one; it passes ``reset_mask``). The legal actions come from ``info["action_mask"]``
through an info-dict reader, cast to bool, and TorchRL's ``ActionMask`` transform puts them on the action
spec; the actor samples from ``MaskedCategorical``. One learning seat (drawn at each reset) plays
``--opponents``; the hand's result is its reward at its last decision, and GAE with ``gamma = lmbda = 1``.

At the end the actor plays one seat against ``random`` and ``spoiler`` tables through
:func:`agents.evaluate.evaluate` (duplicate deals, every rotation).
"""

from __future__ import annotations

import argparse
import sys
import time

try:  # torch and the library take seconds to load: a Ctrl-C then is one line and exit 130, as later on
    import gymnasium
    import numpy as np
    import torch
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data import Binary
    from torchrl.envs import ActionMask, Compose, DTypeCastTransform, GymWrapper, TransformedEnv
    from torchrl.envs.libs.gym import default_info_dict_reader
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType
    from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    import spoilfive_env
    from agents.base import Agent
    from agents.evaluate import check_against_baselines, check_deal_count
    from agents.policy import MAX_HIDDEN_WIDTH, network_too_large
    from spoilfive_env.actions import NUM_ACTIONS
    from spoilfive_env.cli import (
        ArgumentParser,
        exit_interrupted,
        learning_rate,
        positive_int,
        run_command,
        seed_value,
        table_size,
    )
    from spoilfive_env.core import physical_memory
    from spoilfive_env.observation import OBS_DIM
    from spoilfive_integrations.opponents import check_opponents_flag
    from spoilfive_integrations.vector import check_env_fits_in_memory
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    print("torchrl_ppo.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None

ROUTES = ("pettingzoo", "vector")
FRAMES_PER_BATCH = {"pettingzoo": 2048, "vector": 8192}
"""``--frames-per-batch``'s default on each route (on the vector route, 32 steps of 256 games)."""
GROUP = "agents"
OBSERVATION = (GROUP, "observation", "observation")  # the AEC dict's "observation" entry


FRAME_SEAT_BYTES = 2 * (4 * OBS_DIM + NUM_ACTIONS) + 4 * NUM_ACTIONS + 64
"""About what one seat of one collected frame takes (observation and next observation, masks, logits)."""


def check_args(parser: ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line naming the flag, sizes and flags that would fail once training has started."""
    why = network_too_large([args.hidden, args.hidden])
    if why:
        parser.error(f"--hidden {args.hidden} is not allowed here: {why}")
    if args.route == "pettingzoo":
        given = [flag for flag, value in (("--num-envs", args.num_envs), ("--opponents", args.opponents))
                 if value is not None]
        if given:
            parser.error(f"{' and '.join(given)} {'need' if len(given) > 1 else 'needs'} --route vector: the "
                         "pettingzoo route is self-play, one game")
    else:
        num_envs_default = args.num_envs is None
        args.num_envs = 256 if num_envs_default else args.num_envs
        args.opponents = "random" if args.opponents is None else args.opponents
        try:
            check_env_fits_in_memory(args.num_envs, args.num_players, "--num-envs")
        except ValueError as error:
            parser.error(str(error))
        check_opponents_flag(parser, args.opponents, args.num_players)
    default = args.frames_per_batch is None
    if default:
        args.frames_per_batch = FRAMES_PER_BATCH[args.route]
    if args.route == "vector" and args.frames_per_batch % args.num_envs:
        parser.error(f"--frames-per-batch {args.frames_per_batch}{' (the default)' if default else ''} is not allowed "
                     f"with --num-envs {args.num_envs}{' (the default)' if num_envs_default else ''}: each step "
                     f"collects one frame from every game, so give a multiple of {args.num_envs}")
    memory = physical_memory()
    if memory is None:
        return
    per_frame = (args.num_players if args.route == "pettingzoo" else 1) * FRAME_SEAT_BYTES
    if args.frames_per_batch * per_frame > memory:
        parser.error(f"--frames-per-batch {args.frames_per_batch} is not allowed here: one batch at a table of "
                     f"{args.num_players} needs about {args.frames_per_batch * per_frame / 2**30:.1f} GiB, more than "
                     f"this machine's {memory / 2**30:.1f} GiB; allowed: at most {memory // per_frame:,}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--route", choices=ROUTES, default="pettingzoo",
                        help="pettingzoo: self-play on the AEC env; vector: one seat on the vector env "
                             "(default pettingzoo)")
    parser.add_argument("--num-players", type=table_size, default=4)
    parser.add_argument("--num-envs", type=positive_int, default=None,
                        help="games in the core batch (vector route; default 256)")
    parser.add_argument("--opponents", default=None,
                        help="the other seats' agent spec, agents.load_agent (vector route; default random)")
    parser.add_argument("--iterations", type=positive_int, default=20)
    parser.add_argument("--frames-per-batch", type=positive_int, default=None,
                        help="decisions per iteration (default 2048 on the pettingzoo route, 8192 on the vector route)")
    parser.add_argument("--epochs", type=positive_int, default=4)
    parser.add_argument("--minibatch-size", type=positive_int, default=512)
    parser.add_argument("--lr", type=learning_rate, default=3e-4)
    parser.add_argument("--hidden", type=positive_int, default=256,
                        help=f"hidden layer width (at most {MAX_HIDDEN_WIDTH:,})")
    parser.add_argument("--seed", type=seed_value, default=0)
    parser.add_argument("--eval-deals", type=check_deal_count, default=500,
                        help="duplicate deals per evaluation table (0: none)")
    args = parser.parse_args(argv)
    check_args(parser, args)
    return args


class ActorAgent(Agent):
    """The trained actor network as an :class:`agents.base.Agent` (the most probable legal action)."""

    name = "torchrl-ppo"

    def __init__(self, network: nn.Module):
        super().__init__(None)
        self.network = network

    @torch.inference_mode()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self.network(torch.as_tensor(np.asarray(observations, dtype=np.float32))).numpy()
        return np.where(np.asarray(masks, dtype=bool), logits, -np.inf).argmax(axis=1)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        train_and_evaluate(args)
    except KeyboardInterrupt:
        exit_interrupted("Ctrl-C: run stopped, nothing saved (this example saves no model)")
    return 0


def train_and_evaluate(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)  # the collector steps the environment on the same cores
    torch.manual_seed(args.seed)
    actor_network = MLP(in_features=OBS_DIM, out_features=NUM_ACTIONS, num_cells=[args.hidden] * 2,
                        activation_class=nn.Tanh)
    critic_network = MLP(in_features=OBS_DIM, out_features=1, num_cells=[args.hidden] * 2, activation_class=nn.Tanh)
    build = self_play_on_the_aec_env if args.route == "pettingzoo" else one_seat_on_the_vector_env
    env, policy, critic, keys, decisions_of = build(args, actor_network, critic_network)

    collector = Collector(env, policy, frames_per_batch=args.frames_per_batch,
                          total_frames=args.frames_per_batch * args.iterations,
                          auto_register_policy_transforms=False)  # a feed-forward policy needs none
    loss = ClipPPOLoss(actor_network=policy, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01,
                       normalize_advantage=True)
    loss.set_keys(**keys)
    loss.make_value_estimator(ValueEstimators.GAE, gamma=1.0, lmbda=1.0)
    optimizer = torch.optim.Adam(loss.parameters(), lr=args.lr)

    started, frames = time.perf_counter(), 0
    for iteration, batch in enumerate(collector, start=1):
        frames += batch.numel()
        with torch.no_grad():
            loss.value_estimator(batch, params=loss.critic_network_params,
                                 target_params=loss.target_critic_network_params)
        decisions = decisions_of(batch)
        for _ in range(args.epochs):
            for minibatch in torch.randperm(len(decisions)).split(args.minibatch_size):
                terms = loss(decisions[minibatch])
                total = terms["loss_objective"] + terms["loss_critic"] + terms["loss_entropy"]
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        collector.update_policy_weights_()
        elapsed = time.perf_counter() - started
        print(f"iteration {iteration:3d}  decisions {frames:7d}  {frames / elapsed:6.0f} decisions/s  "
              f"critic loss {terms['loss_critic'].item():.3f}", flush=True)
    collector.shutdown()

    if args.eval_deals:
        agent = ActorAgent(actor_network)
        check_against_baselines(agent, args.num_players, args.eval_deals, seed=args.seed + 1)


def self_play_on_the_aec_env(args, actor_network, critic_network):
    """The AEC env as PettingZoo users make it, every seat one group; the loss keys under the group; the
    decisions of a batch are those each seat really made: (steps, seats) -> (decisions,)."""
    env = PettingZooWrapper(env=spoilfive_env.env(num_players=args.num_players), use_mask=True,
                            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=args.seed)
    policy = ProbabilisticActor(
        TensorDictModule(actor_network, in_keys=[OBSERVATION], out_keys=[(GROUP, "logits")]),
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = TensorDictModule(critic_network, in_keys=[OBSERVATION], out_keys=[(GROUP, "state_value")])
    keys = dict(reward=(GROUP, "reward"), action=(GROUP, "action"), value=(GROUP, "state_value"),
                done=(GROUP, "done"), terminated=(GROUP, "terminated"),
                advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"))

    def decisions_of(batch):
        acted = batch[GROUP][batch[GROUP, "mask"]]
        return TensorDict({GROUP: acted}, batch_size=acted.batch_size)

    return env, policy, critic, keys, decisions_of


def vector_env(num_envs: int, seed: int, **env_options):
    """TorchRL's ``GymWrapper`` over the Gymnasium vector env, its legal actions on the action spec: the recipe of
    docs/integrations.md. ``env_options``: the env's (``num_players``, ``opponents``, ...)."""
    envs = gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                              autoreset_mode="Disabled", **env_options)
    env = GymWrapper(envs, categorical_action_encoding=True)
    mask_spec = Binary(n=NUM_ACTIONS, shape=(num_envs, NUM_ACTIONS), dtype=torch.int8)  # Gymnasium's int8 mask
    env.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec={"action_mask": mask_spec}))
    env = TransformedEnv(env, Compose(DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]),
                                      ActionMask()))
    env.set_seed(seed)
    return env


def one_seat_on_the_vector_env(args, actor_network, critic_network):
    """One learning seat in each of ``--num-envs`` games against ``--opponents``; every frame is a decision of
    it: (games, steps) -> (decisions,)."""
    env = vector_env(args.num_envs, args.seed, num_players=args.num_players, opponents=args.opponents)
    policy = ProbabilisticActor(
        TensorDictModule(actor_network, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
        distribution_class=MaskedCategorical, return_log_prob=True,
    )
    critic = TensorDictModule(critic_network, in_keys=["observation"], out_keys=["state_value"])
    return env, policy, critic, {}, lambda batch: batch.reshape(-1)


if __name__ == "__main__":
    run_command(main)
