"""Masked multi-agent PPO with TorchRL on the AEC environment, with no adapter.

    python examples/torchrl_ppo.py                     # a few minutes on 2 CPU cores
    python examples/torchrl_ppo.py --iterations 2 --frames-per-batch 256 --eval-deals 20   # smoke test

TorchRL's own ``PettingZooWrapper`` takes the environment as it is. With ``use_mask=True``
(an AEC environment: one seat acts per step) it reports which seat acted in
``("agents", "mask")`` and moves each seat's legal actions into ``("agents", "action_mask")``
(a seat that is not to act gets an all-True row, so a masked categorical stays finite).
All seats form one group (``ALL_IN_ONE_GROUP``) and share one actor and one critic, as in
TorchRL's multi-agent PPO tutorial; the actor samples from ``MaskedCategorical``.

Rewards arrive for every seat when the hand ends, not at its own decisions. GAE with
``gamma = lmbda = 1`` turns that into each seat's Monte-Carlo return minus the value of
the state it saw (the intermediate values telescope), so the advantage at a seat's decision
is right whatever the other seats did in between; the loss is then taken only over the
decisions each seat really made (``mask``).

At the end the actor plays one seat against ``random`` and ``spoiler`` tables through
:func:`agents.evaluate.evaluate` (duplicate deals, every rotation).
"""

from __future__ import annotations

import argparse
import sys
import time

try:  # torch and the library take seconds to load: a Ctrl-C then is one line and exit 130, as later on
    import numpy as np
    import torch
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
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
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    print("torchrl_ppo.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None

GROUP = "agents"
OBSERVATION = (GROUP, "observation", "observation")  # the AEC dict's "observation" entry


FRAME_SEAT_BYTES = 2 * (4 * OBS_DIM + NUM_ACTIONS) + 4 * NUM_ACTIONS + 64
"""About what one seat of one collected frame takes (observation and next observation, masks, logits)."""


def check_args(parser: ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line naming the flag, sizes that would fail once training has started."""
    why = network_too_large([args.hidden, args.hidden])
    if why:
        parser.error(f"--hidden {args.hidden} is not allowed here: {why}")
    memory = physical_memory()
    if memory is None:
        return
    per_frame = args.num_players * FRAME_SEAT_BYTES
    if args.frames_per_batch * per_frame > memory:
        parser.error(f"--frames-per-batch {args.frames_per_batch} is not allowed here: one batch at a table of "
                     f"{args.num_players} needs about {args.frames_per_batch * per_frame / 2**30:.1f} GiB, more than "
                     f"this machine's {memory / 2**30:.1f} GiB; allowed: at most {memory // per_frame:,}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-players", type=table_size, default=4)
    parser.add_argument("--iterations", type=positive_int, default=20)
    parser.add_argument("--frames-per-batch", type=positive_int, default=2048,
                        help="environment steps (decisions) per iteration")
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

    # The environment exactly as PettingZoo users make it; TorchRL's wrapper does the rest.
    env = PettingZooWrapper(env=spoilfive_env.env(num_players=args.num_players), use_mask=True,
                            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=args.seed)

    # One actor and one critic shared by every seat (the MLPs act on the last dimension).
    actor_network = MLP(in_features=OBS_DIM, out_features=NUM_ACTIONS, num_cells=[args.hidden] * 2,
                        activation_class=nn.Tanh)
    critic_network = MLP(in_features=OBS_DIM, out_features=1, num_cells=[args.hidden] * 2, activation_class=nn.Tanh)
    policy = ProbabilisticActor(
        TensorDictModule(actor_network, in_keys=[OBSERVATION], out_keys=[(GROUP, "logits")]),
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = TensorDictModule(critic_network, in_keys=[OBSERVATION], out_keys=[(GROUP, "state_value")])

    collector = Collector(env, policy, frames_per_batch=args.frames_per_batch,
                          total_frames=args.frames_per_batch * args.iterations,
                          auto_register_policy_transforms=False)  # a feed-forward policy needs none
    loss = ClipPPOLoss(actor_network=policy, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01,
                       normalize_advantage=True)
    loss.set_keys(reward=(GROUP, "reward"), action=(GROUP, "action"), value=(GROUP, "state_value"),
                  done=(GROUP, "done"), terminated=(GROUP, "terminated"),
                  advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"))
    loss.make_value_estimator(ValueEstimators.GAE, gamma=1.0, lmbda=1.0)
    optimizer = torch.optim.Adam(loss.parameters(), lr=args.lr)

    started, frames = time.perf_counter(), 0
    for iteration, batch in enumerate(collector, start=1):
        frames += batch.numel()
        with torch.no_grad():
            loss.value_estimator(batch, params=loss.critic_network_params,
                                 target_params=loss.target_critic_network_params)
        # Only the decisions each seat really made: (steps, seats) -> (decisions,).
        acted = batch[GROUP][batch[GROUP, "mask"]]
        decisions = TensorDict({GROUP: acted}, batch_size=acted.batch_size)
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


if __name__ == "__main__":
    run_command(main)
