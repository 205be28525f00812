"""CleanRL-style PPO, one file read top to bottom, on the Gymnasium VectorEnv over one core batch.

    python examples/cleanrl_ppo.py                          # ~2 minutes on 2 CPU cores
    python examples/cleanrl_ppo.py --total-timesteps 4096 --num-envs 16 --num-steps 32 --eval-deals 20
    tensorboard --logdir runs

The environment is made exactly as Gymnasium users make a vector env::

    gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=N, vectorization_mode="vector_entry_point",
                       num_players=4, opponents="random")

(one learning seat per game, drawn at each reset; the opponents act in batch inside the env).
The legal actions come in ``infos["action_mask"]`` and the policy samples from a masked
categorical. The env autoresets in Gymnasium's next-step mode: the step after a game's
episode ends ignores that game's action and returns the first observation of the next
episode; those rows are not transitions and are left out of the loss (``valid``).
Rewards are undiscounted (``gamma = 1``): an episode is one hand and its reward the seat's
result in it. Layout and names follow CleanRL's ``ppo.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from dataclasses import dataclass, field

try:  # torch and the library take seconds to load: a Ctrl-C then is one line and exit 130, as later on
    import gymnasium
    import numpy as np
    import torch
    from torch import nn
    from torch.utils.tensorboard import SummaryWriter

    import spoilfive_env  # noqa: F401  (registers "spoilfive/SpoilFive-v0")
    from agents import base
    from agents.evaluate import check_against_baselines, check_deal_count
    from spoilfive_env.actions import NUM_ACTIONS
    from spoilfive_env.cli import (
        MAX_COEF,
        ArgumentParser,
        exit_interrupted,
        learning_rate,
        non_negative_float,
        positive_float,
        positive_int,
        run_command,
        seed_value,
        table_size,
        unit_fraction,
    )
    from spoilfive_env.core import physical_memory
    from spoilfive_env.observation import OBS_DIM
    from spoilfive_integrations.opponents import check_opponents_flag
    from spoilfive_integrations.vector import check_env_fits_in_memory
except KeyboardInterrupt:
    if __name__ != "__main__":  # imported by a program of its own: the Ctrl-C is that program's
        raise
    print("cleanrl_ppo.py: stopped by Ctrl-C while starting up; nothing was run", file=sys.stderr)
    raise SystemExit(130) from None


@dataclass
class Args:
    exp_name: str = field(default="cleanrl_ppo", metadata={"help": "the name of this experiment"})
    seed: int = field(default=1, metadata={"help": "seed of the experiment"})
    torch_deterministic: bool = field(default=True, metadata={"help": "torch.backends.cudnn.deterministic"})
    track_tensorboard: bool = field(default=True, metadata={"help": "write TensorBoard events to runs/"})
    # Environment
    num_players: int = field(default=4, metadata={"help": "players at each table"})
    opponents: str = field(default="random", metadata={"help": "the opponents' agent spec (agents.load_agent)"})
    # Algorithm
    total_timesteps: int = field(default=500_000, metadata={"help": "total learner decisions"})
    learning_rate: float = field(default=3e-4, metadata={"help": "the learning rate of the optimizer"})
    num_envs: int = field(default=256, metadata={"help": "games in the one core batch"})
    num_steps: int = field(default=32, metadata={"help": "steps per game in each rollout"})
    anneal_lr: bool = field(default=True, metadata={"help": "anneal the learning rate"})
    gamma: float = field(default=1.0, metadata={"help": "the discount factor"})
    gae_lambda: float = field(default=0.95, metadata={"help": "the lambda of the general advantage estimation"})
    num_minibatches: int = field(default=4, metadata={"help": "the number of mini-batches"})
    update_epochs: int = field(default=4, metadata={"help": "the K epochs to update the policy"})
    norm_adv: bool = field(default=True, metadata={"help": "advantage normalisation"})
    clip_coef: float = field(default=0.2, metadata={"help": "the surrogate clipping coefficient"})
    ent_coef: float = field(default=0.01, metadata={"help": "coefficient of the entropy"})
    vf_coef: float = field(default=0.5, metadata={"help": "coefficient of the value function"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "the maximum norm for gradient clipping"})
    eval_deals: int = field(default=500, metadata={"help": "duplicate deals per evaluation table (0: none)"})
    # Filled in at runtime
    batch_size: int = 0
    minibatch_size: int = 0
    num_iterations: int = 0


# Every number is checked as it is parsed (one line and exit 2 for a bad value).
CHECKED_TYPES = {"num_players": table_size, "total_timesteps": positive_int, "num_envs": positive_int,
                 "num_steps": positive_int, "num_minibatches": positive_int, "update_epochs": positive_int,
                 "seed": seed_value, "eval_deals": check_deal_count, "learning_rate": learning_rate,
                 "gamma": unit_fraction, "gae_lambda": unit_fraction, "clip_coef": positive_float,
                 "ent_coef": non_negative_float, "vf_coef": non_negative_float, "max_grad_norm": positive_float}

MAX_NAME = 200
"""The longest --exp-name: with the seed and the time it names a folder under runs/ (most file
systems stop at 255 bytes), as train.py's."""

MIN_MINIBATCH = 2
"""The fewest decisions a minibatch may hold: its advantages are normalised by their spread."""

ROLLOUT_BYTES = 2 * (4 * OBS_DIM + NUM_ACTIONS) + 64
"""About what one decision of the rollout storage takes, with its flattened copy."""

MASKED_LOGIT = -1e9
"""The logit of an illegal action: its probability is exactly 0 in float32, as at the lowest finite value,
but the entropy's gradient through it (``--ent-coef`` over the minibatch size times this) stays finite: at
the lowest finite value it overflowed to inf, then NaN, from --ent-coef 100 with small minibatches."""


def check_args(parser: ArgumentParser, args: Args) -> None:
    """Refuse, in one line naming the flag, what would fail after the run has started (before
    anything is written: the run folder comes later)."""
    name = args.exp_name
    if not name or os.sep in name or (os.altsep and os.altsep in name) or name in (".", ".."):
        parser.error(f"--exp-name {name!r} is not allowed: a name, not a path or nothing (it names a folder "
                     "under runs/)")
    if name != name.strip() or len(name) > MAX_NAME:
        parser.error(f"--exp-name {name!r} is not allowed: a name without spaces at either end, at most "
                     f"{MAX_NAME} characters (it names a folder)")
    for name in ("clip_coef", "ent_coef", "vf_coef"):
        if getattr(args, name) > MAX_COEF:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)} is not allowed: give at most {MAX_COEF:,}")
    batch = args.num_envs * args.num_steps
    if batch // args.num_minibatches < MIN_MINIBATCH:
        parser.error(f"--num-minibatches {args.num_minibatches} is not allowed with --num-envs {args.num_envs} "
                     f"x --num-steps {args.num_steps} = {batch} decisions a rollout: give at most "
                     f"{max(1, batch // MIN_MINIBATCH)} (each minibatch needs at least {MIN_MINIBATCH} decisions)"
                     + ("" if batch >= MIN_MINIBATCH else ", or more games or steps"))
    try:
        check_env_fits_in_memory(args.num_envs, args.num_players, "--num-envs")
    except ValueError as error:
        parser.error(str(error))
    memory = physical_memory()
    if memory is not None and batch * ROLLOUT_BYTES > memory:
        parser.error(f"--num-envs {args.num_envs} x --num-steps {args.num_steps} is not allowed here: the rollout "
                     f"storage needs about {batch * ROLLOUT_BYTES / 2**30:.1f} GiB, more than this machine's "
                     f"{memory / 2**30:.1f} GiB; allowed: at most {memory // ROLLOUT_BYTES:,} decisions a rollout")
    check_opponents_flag(parser, args.opponents, args.num_players)


def parse_args(argv=None) -> Args:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Args):
        if "help" not in f.metadata:
            continue
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=f.metadata["help"])
        else:
            kind = CHECKED_TYPES.get(f.name) or {"int": int, "float": float, "str": str}[
                f.type if isinstance(f.type, str) else f.type.__name__]
            parser.add_argument(flag, type=kind, default=f.default, help=f.metadata["help"])
    args = Args(**vars(parser.parse_args(argv)))
    check_args(parser, args)
    return args


SQRT2 = float(np.sqrt(2))


def layer_init(layer, std=SQRT2, bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """CleanRL's actor-critic with a masked categorical (illegal logits at :data:`MASKED_LOGIT`)."""

    def __init__(self, obs_dim: int, num_actions: int):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, 256)), nn.Tanh(),
                                    layer_init(nn.Linear(256, 256)), nn.Tanh(), layer_init(nn.Linear(256, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, 256)), nn.Tanh(), layer_init(nn.Linear(256, 256)),
                                   nn.Tanh(), layer_init(nn.Linear(256, num_actions), std=0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, mask, action=None):
        logits = self.actor(x).masked_fill(~mask, MASKED_LOGIT)
        probs = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


class TrainedPolicy(base.Agent):
    """The trained actor as an :class:`agents.base.Agent` for ``agents.evaluate`` (most probable legal action)."""

    name = "cleanrl-ppo"

    def __init__(self, network: Agent):
        super().__init__(None)
        self.network = network

    @torch.inference_mode()
    def act_batch(self, observations, masks):
        logits = self.network.actor(torch.as_tensor(np.asarray(observations, dtype=np.float32))).numpy()
        return np.where(np.asarray(masks, dtype=bool), logits, -np.inf).argmax(axis=1)


def main(argv=None) -> int:
    args = parse_args(argv)
    args.batch_size = int(args.num_envs * args.num_steps)
    args.minibatch_size = int(args.batch_size // args.num_minibatches)  # at most; autoreset rows are dropped
    args.num_iterations = max(1, args.total_timesteps // args.batch_size)
    run_name = f"{args.exp_name}__{args.seed}__{int(time.time())}"
    writer = None
    if args.track_tensorboard:
        try:  # a folder that cannot be made (a file named runs, no permission): one line, not a traceback
            writer = SummaryWriter(f"runs/{run_name}")
        except OSError as error:
            print(f"{os.path.basename(sys.argv[0])}: error: cannot write the TensorBoard events to runs/{run_name}: "
                  f"{error.strerror or error} (or run with --no-track-tensorboard)", file=sys.stderr)
            return 2
    if writer:
        table = "\n".join(f"|{key}|{value}|" for key, value in vars(args).items())
        writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")
    try:
        train_and_evaluate(args, writer)
    except KeyboardInterrupt:
        if writer:
            writer.close()  # writes out the events still buffered
            exit_interrupted(f"Ctrl-C: run stopped; its TensorBoard events are in runs/{run_name} (this example "
                             "saves no model)")
        exit_interrupted("Ctrl-C: run stopped, nothing saved (TensorBoard is off; this example saves no model)")
    return 0


def train_and_evaluate(args: Args, writer: SummaryWriter | None) -> None:
    # TRY NOT TO MODIFY: seeding
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(1)  # the env steps on the same cores
    device = torch.device("cpu")

    # env setup: one core batch of num_envs games
    envs = gymnasium.make_vec("spoilfive/SpoilFive-v0", num_envs=args.num_envs,
                              vectorization_mode="vector_entry_point",
                              num_players=args.num_players, opponents=args.opponents)
    assert isinstance(envs.single_action_space, gymnasium.spaces.Discrete), "only discrete action space is supported"
    obs_dim, num_actions = envs.single_observation_space.shape[0], envs.single_action_space.n

    agent = Agent(obs_dim, num_actions).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # ALGO Logic: Storage setup
    obs = torch.zeros((args.num_steps, args.num_envs, obs_dim)).to(device)
    masks = torch.zeros((args.num_steps, args.num_envs, num_actions), dtype=torch.bool).to(device)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long).to(device)
    logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)
    rewards = torch.zeros((args.num_steps, args.num_envs)).to(device)
    dones = torch.zeros((args.num_steps, args.num_envs)).to(device)
    valid = torch.zeros((args.num_steps, args.num_envs), dtype=torch.bool).to(device)
    values = torch.zeros((args.num_steps, args.num_envs)).to(device)

    # TRY NOT TO MODIFY: start the game
    global_step = 0
    start_time = time.time()
    next_obs, infos = envs.reset(seed=args.seed)
    next_obs = torch.Tensor(next_obs).to(device)
    next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
    next_done = torch.zeros(args.num_envs).to(device)
    next_valid = torch.ones(args.num_envs, dtype=torch.bool)  # False on a next-step autoreset row
    episode_returns = np.zeros(args.num_envs)

    for iteration in range(1, args.num_iterations + 1):
        # Annealing the rate if instructed to do so.
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        finished_returns = []
        for step in range(0, args.num_steps):
            obs[step], masks[step], dones[step], valid[step] = next_obs, next_mask, next_done, next_valid
            global_step += int(next_valid.sum())

            # ALGO LOGIC: action logic
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            # TRY NOT TO MODIFY: execute the game and log data.
            next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
            next_done_np = np.logical_or(terminations, truncations)
            rewards[step] = torch.tensor(reward).to(device).view(-1)
            next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(next_done_np).to(device)
            next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
            next_valid = torch.as_tensor(~next_done_np)  # the step after a done is the reset step
            episode_returns += reward
            finished_returns.extend(episode_returns[next_done_np].tolist())
            episode_returns[next_done_np] = 0.0

        if writer and finished_returns:
            writer.add_scalar("charts/episodic_return", np.mean(finished_returns), global_step)

        # bootstrap value if not done
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards).to(device)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        # flatten the batch, keeping only real transitions (not the autoreset rows)
        keep = valid.reshape(-1)
        b_obs = obs.reshape((-1, obs_dim))[keep]
        b_masks = masks.reshape((-1, num_actions))[keep]
        b_logprobs = logprobs.reshape(-1)[keep]
        b_actions = actions.reshape(-1)[keep]
        b_advantages = advantages.reshape(-1)[keep]
        b_returns = returns.reshape(-1)[keep]
        b_values = values.reshape(-1)[keep]

        # Optimizing the policy and value network
        b_inds = np.arange(len(b_obs))
        clipfracs = []
        pg_loss = v_loss = entropy_loss = approx_kl = torch.tensor(float("nan"))  # if every minibatch is skipped
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            # num_minibatches even parts (the number of real transitions varies per rollout)
            for mb_inds in np.array_split(b_inds, args.num_minibatches):
                if len(mb_inds) < MIN_MINIBATCH:  # a rollout of mostly autoreset rows: too few to learn from
                    continue
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb_inds], b_masks[mb_inds], b_actions[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()

                with torch.no_grad():
                    # calculate approx_kl http://joschu.net/blog/kl-approx.html
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

                # Policy loss
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                # Value loss
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb_inds]) ** 2).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true) if len(y_true) else 0.0
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y

        # TRY NOT TO MODIFY: record rewards for plotting purposes
        sps = int(global_step / (time.time() - start_time))
        if writer:
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
            writer.add_scalar("losses/value_loss", v_loss.item(), global_step)
            writer.add_scalar("losses/policy_loss", pg_loss.item(), global_step)
            writer.add_scalar("losses/entropy", entropy_loss.item(), global_step)
            writer.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
            writer.add_scalar("losses/clipfrac", np.mean(clipfracs) if clipfracs else np.nan, global_step)
            writer.add_scalar("losses/explained_variance", explained_var, global_step)
            writer.add_scalar("charts/SPS", sps, global_step)
        mean_return = np.mean(finished_returns) if finished_returns else float("nan")
        print(f"iteration {iteration:3d}  global_step {global_step:8d}  SPS {sps:6d}  "
              f"episodic_return {mean_return:+.3f}", flush=True)

    envs.close()
    if writer:
        writer.close()

    if args.eval_deals:
        policy = TrainedPolicy(agent)
        check_against_baselines(policy, args.num_players, args.eval_deals, seed=args.seed + 1)


if __name__ == "__main__":
    run_command(main)
