"""Bad input to the agents: one clear ``ValueError`` before any random draw, nothing changed.

Masks whose values are not 0/1, masks that do not fit their observation, observations that are not
numbers or lie outside the observation space, unknown ``load_agent`` options, a checkpoint with broken
weights and ``bind`` of something that is not the rules. Valid input that NumPy allows but torch did
not (a reversed view) is played.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import agents
from agents import load_agent
from agents.pimc import PIMCAgent
from spoilfive_env import SpoilFiveCore, env
from spoilfive_env.actions import CLAIM, NUM_ACTIONS, ROB_FIRST
from spoilfive_env.observation import OBS_DIM, SLICES
from spoilfive_env.rules import Rules

AGENTS = ["random", "greedy", "spoiler", "pimc:samples=2", "pimc_ppo:samples=2", "ppo"]


def aec_observation(seed=0):
    """One AEC observation dict of the player to act (5 cards in hand, playing or robbing)."""
    table = env(num_players=4)
    table.reset(seed=seed)
    return table.observe(table.agent_selection)


def state(agent):
    return agent.rng.bit_generator.state


@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("bad", [np.nan, -1, 2, 0.5, "x"], ids=repr)
def test_a_mask_value_other_than_0_or_1_is_refused_naming_row_and_value(name, bad):
    agent = load_agent(name, seed=1)
    one = aec_observation()
    mask = one["action_mask"].astype(object if isinstance(bad, str) else np.float64)
    illegal = int(np.flatnonzero(one["action_mask"] == 0)[0])
    mask[illegal] = bad
    masks = np.stack([one["action_mask"], mask])
    before = state(agent)
    shown = repr(bad if isinstance(bad, str) else float(bad))  # the float mask holds -1.0
    with pytest.raises(ValueError, match=rf"masks of 0/1 or True/False.*row 1 has {shown} for action {illegal}"):
        agent.act_batch(np.stack([one["observation"]] * 2), masks)
    with pytest.raises(ValueError, match="masks of 0/1 or True/False"):
        agent.act({"observation": one["observation"], "action_mask": mask})
    assert state(agent) == before


@pytest.mark.parametrize("name", ["greedy", "pimc:samples=2", "pimc_ppo:samples=2"])
def test_masks_of_floats_or_ints_0_and_1_play_as_the_bool_mask(name):
    one = aec_observation(3)
    observations = one["observation"][None]
    chosen = [load_agent(name, seed=4).act_batch(observations, one["action_mask"].astype(dtype)[None])
              for dtype in (bool, np.int8, np.float32, object)]
    assert all(np.array_equal(chosen[0], other) for other in chosen[1:])


@pytest.mark.parametrize("name", AGENTS)
def test_a_mask_that_does_not_fit_the_observation_is_refused_before_any_draw(name):
    agent = load_agent(name, seed=1)
    one = aec_observation()
    held = np.flatnonzero(one["observation"][SLICES["hand"]]).tolist()
    not_held = next(card for card in range(52) if card not in held)
    claim = one["action_mask"].copy()
    claim[CLAIM] = 1  # the jink choice, in another phase
    before = state(agent)
    for mask, says in [(np.ones(NUM_ACTIONS, np.int8), rf"allows {not_held} .*card {not_held} is not in the "
                                                         rf"observation's hand \[{', '.join(map(str, held))}\]"),
                       (claim, rf"allows {CLAIM} \(claim the pool\), but the observation.s phase is (play|rob)")]:
        with pytest.raises(ValueError, match="mask that does not fit its observation: row 0 " + says):
            agent.act_batch(one["observation"][None], mask[None])
    assert state(agent) == before


@pytest.mark.parametrize("name", ["random", "greedy", "pimc:samples=2", "ppo"])
def test_a_finished_games_row_may_allow_every_action(name):
    """The core gives a finished game an all-True mask: still valid input."""
    core = SpoilFiveCore(6, rules=Rules(num_players=3), seed=2)
    while not core.done.any():
        masks = core.legal_mask()
        core.step(masks.argmax(axis=1))
    masks = core.legal_mask()
    assert masks[core.done].all()
    actions = load_agent(name, seed=0).act_batch(core.observe(), masks)
    assert masks[np.arange(6), actions].all()


@pytest.mark.parametrize("name", AGENTS)
def test_reversed_views_are_played_as_their_copies(name):
    core = SpoilFiveCore(8, rules=Rules(num_players=4), seed=5)
    observations, masks = core.observe(), core.legal_mask()
    reversed_ = load_agent(name, seed=2).act_batch(observations[::-1], masks[::-1])
    copied = load_agent(name, seed=2).act_batch(observations[::-1].copy(), masks[::-1].copy())
    assert np.array_equal(reversed_, copied)


@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("value, block, says", [
    (np.nan, "hand", "nan in its 'hand' block.*numbers from 0 to 1"),
    (np.inf, "chips", "inf in its 'chips' block.*numbers from -1.07374e\\+08 to 1.07374e\\+08"),
    (-np.inf, "pool", "-inf in its 'pool' block.*numbers from 0 to 1.07374e\\+08"),
    (1e30, "hand", "1e\\+30 in its 'hand' block"),
    (-1, "played", "-1 in its 'played' block"),
    (2, "tricks_won", "2 in its 'tricks_won' block.*from 0 to 1.66667"),
], ids=["nan", "inf", "-inf", "1e30", "negative", "too many tricks"])
def test_an_observation_outside_the_observation_space_is_refused(name, value, block, says):
    agent = load_agent(name, seed=1)
    one = aec_observation()
    bad = one["observation"].copy()
    bad[SLICES[block].start] = value
    before = state(agent)
    with pytest.raises(ValueError, match="needs observations as spoilfive_env builds them: row 1 has " + says):
        agent.act_batch(np.stack([one["observation"], bad]), np.stack([one["action_mask"]] * 2))
    assert state(agent) == before


@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("block, value, counts", [
    ("pool", 1.2e8, "chip counts 0 to 2147483647"), ("chips", 1.2e8, "chip counts -2147483648 to 2147483647"),
    ("chips", -1e30, "chip counts -2147483648 to 2147483647"),
], ids=["pool", "chips", "negative chips"])
def test_chips_or_a_pool_beyond_the_engine_s_32_bits_are_refused(name, block, value, counts):
    """The searches read them back into int32: a pool of 2.4e9 chips was -2147483648 to pimc, and pimc_ppo
    named a value the caller never gave, each after drawing (bad-input sweep 2, A2)."""
    agent = load_agent(name, seed=1)
    one = aec_observation()
    bad = one["observation"].copy()
    bad[SLICES[block].start] = value
    before = state(agent)
    with pytest.raises(ValueError, match=rf"row 0 has {re.escape(f'{value:g}')} in its '{block}' block .*{counts}, "
                                         "the engine's 32-bit range, divided by 20"):
        agent.act_batch(bad[None], one["action_mask"][None])
    assert state(agent) == before


def test_the_engine_s_largest_chips_and_pool_are_played():
    from spoilfive_env.rules import CHIPS_MAX, CHIPS_MIN

    one = aec_observation()
    extreme = one["observation"].copy()
    extreme[SLICES["pool"]] = np.float32(CHIPS_MAX / 20)  # as the engine shows CHIPS_MAX
    extreme[SLICES["chips"].start:SLICES["chips"].start + 2] = np.float32(CHIPS_MAX / 20), np.float32(CHIPS_MIN / 20)
    for name in ("greedy", "pimc:samples=2"):
        assert one["action_mask"][load_agent(name, seed=1).act_batch(extreme[None], one["action_mask"][None])[0]]


def widened_play_mask():
    """A play-phase observation that must follow suit, and its mask widened to every card held."""
    core = SpoilFiveCore(64, rules=Rules(num_players=4), seed=0)
    while True:
        observations, masks = core.observe(), core.legal_mask()
        held = observations[:, SLICES["hand"]] > 0.5
        bound = np.flatnonzero(~core.done & (core.phase == 1) & (masks[:, :52].sum(axis=1) < held.sum(axis=1)))
        if len(bound):
            row = bound[0]
            widened = masks[row].copy()
            widened[:52] = held[row]
            return observations[row], masks[row], widened
        core.step(masks.argmax(axis=1))


@pytest.mark.parametrize("name", ["pimc:samples=2", "pimc:samples=2:rollout=random", "pimc_ppo:samples=2", "best"])
def test_a_mask_that_allows_a_card_the_rules_forbid_is_refused_before_any_draw(name):
    """It was "illegal action ... in game 2", a search rollout the caller never had, the RNG moved (B1)."""
    observation, legal, widened = widened_play_mask()
    forbidden = np.flatnonzero(widened & ~legal)
    agent = load_agent(name, seed=1)
    before = state(agent)
    named = ", ".join(rf"{action} \(play \w+\)" for action in forbidden)
    with pytest.raises(ValueError, match=rf"^act_batch got a mask that does not fit its observation: row 1 allows "
                                         rf"{named}, which the rules forbid there; its legal actions are "
                                         rf"{np.flatnonzero(legal)[0]} \(play"):
        agent.act_batch(np.stack([observation] * 2), np.stack([legal, widened]))
    assert state(agent) == before
    assert legal[agent.act_batch(observation[None], legal[None])[0]]  # the rules' own mask is played


@pytest.mark.parametrize("name", ["pimc:samples=2", "pimc_ppo:samples=2", "best"])
def test_a_search_at_a_table_of_rules_it_was_not_told_says_how_to_tell_it(name):
    """With conceal_ace_penalty the ace holder may play a card at his rob turn, which the default rules
    forbid: the search refuses, naming the rules it plays and how to give it the table's; told them, it
    plays one of the table's legal moves."""
    game = env(num_players=4, conceal_ace_penalty=True)
    hands = [["2C", "3C", "4C", "6C", "7C"], ["AS", "JD", "8H", "KC", "QD"], ["2D", "3D", "4D", "6D", "7D"],
             ["2H", "3H", "4H", "6H", "7H"]]
    game.reset(options={"dealer": 0, "turnup": "9S", "hands": hands})
    assert game.agent_selection == "player_1"  # eldest, holding the ace of trumps: rob, decline or conceal
    observation = game.observe("player_1")
    agent = load_agent(name, seed=1)
    before = state(agent)
    with pytest.raises(ValueError, match=r"which the rules forbid there; .* \(by the rules the search plays: "
                                         r"conceal_ace_penalty=False, allow_jink=True; at a table of other rules, "
                                         r"tell it them: agent.bind\(rules\), or load_agent\(spec, rules=rules\)"):
        agent.act(observation)
    assert state(agent) == before
    agent.bind(game.unwrapped.rules)
    assert observation["action_mask"][agent.act(observation)]


def test_the_searches_legal_masks_are_the_engine_s():
    from agents.pimc import legal_masks

    for num_players, options in [(2, {}), (4, {"partnerships": True}), (5, {"conceal_ace_penalty": True}),
                                 (10, {"allow_jink": False})]:
        rules = Rules(num_players=num_players, **options)
        core = SpoilFiveCore(32, rules=rules, seed=num_players)
        rng = np.random.default_rng(0)
        while not core.done.all():
            live = ~core.done
            masks = core.legal_mask()
            assert np.array_equal(legal_masks(core.observe()[live], rules), masks[live])
            scores = rng.random(masks.shape)
            core.step(np.where(masks, scores, -1).argmax(axis=1))


@pytest.mark.parametrize("name", ["pimc:samples=2", "pimc:samples=2:rollout=random", "pimc_ppo:samples=2"])
def test_an_observation_without_a_phase_is_refused_before_any_draw(name):
    """It was "illegal action ... (phase rob)" from inside the search, the RNG moved (B2)."""
    one = aec_observation()
    bad = one["observation"].copy()
    bad[SLICES["phase"]] = 0
    agent = load_agent(name, seed=1)
    before = state(agent)
    with pytest.raises(ValueError, match="row 0 is no Spoil Five observation: the phase block is not one-hot"):
        agent.act_batch(bad[None], one["action_mask"][None])
    assert state(agent) == before


def oracle_table():
    core = SpoilFiveCore(5, rules=Rules(num_players=3), seed=2)
    core.step(core.legal_mask().argmax(axis=1))
    return core, core.observe(), core.legal_mask()


@pytest.mark.parametrize("knows", ["hands", "trumps"])
@pytest.mark.parametrize("core, games, says", [
    (None, np.arange(5), "needs the engine's state as a spoilfive_env.SpoilFiveCore, got NoneType"),  # AttributeError
    ("core", np.arange(3), r"one per observation row \(shape \(5,\)\), got int64 of shape \(3,\)"),  # IndexError
    ("core", np.arange(5) + 0.5, "got float64 of shape"),  # truncated
    ("core", np.arange(5)[None], r"got int64 of shape \(1, 5\)"),
    ("core", np.arange(5) + 3, "needs games 0 to 4 \\(the core's games\\), got 5"),  # IndexError with trumps
    ("core", np.array([1, 0, 2, 3, 4]), "games that do not match its observations: row 0 does not show the hand "
                                        "and phase of game 1's player to act"),  # another game's hidden state
], ids=["no core", "short", "float", "2-D", "out of range", "other games"])
def test_the_oracle_checks_the_core_and_games_it_is_given(knows, core, games, says):
    table, observations, masks = oracle_table()
    oracle = load_agent(f"oracle:knows={knows}:samples=2", seed=0)
    before = state(oracle)
    with pytest.raises(ValueError, match="^act_batch_state .*" + says):
        oracle.act_batch_state(table if core == "core" else core, games, observations, masks)
    assert state(oracle) == before
    assert masks[np.arange(5), oracle.act_batch_state(table, np.arange(5), observations, masks)].all()


def test_the_oracle_refuses_a_mask_the_rules_forbid():
    table, observations, masks = oracle_table()
    widened = masks.copy()
    widened[:, :52] = observations[:, SLICES["hand"]] > 0.5
    row = int(np.flatnonzero((widened != masks).any(axis=1))[0])
    with pytest.raises(ValueError, match=f"^act_batch_state got a mask that does not fit its observation: row {row} "
                                         "allows .*which the rules forbid there"):
        load_agent("oracle").act_batch_state(table, np.arange(5), observations, widened)


@pytest.mark.parametrize("name", ["pimc:samples=2", "ppo"])
def test_every_value_far_out_of_range_is_called_so(name):
    """What used to say "partnerships=True is not allowed" (pimc) or "its weights are broken" (ppo)."""
    one = aec_observation()
    for value in (1e30, np.nan):
        with pytest.raises(ValueError, match="act_batch needs observations as spoilfive_env builds them"):
            load_agent(name, seed=1).act_batch(np.full((1, OBS_DIM), value), one["action_mask"][None])


@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("observation, says", [
    (None, "got None"),
    (np.array(["0"] * OBS_DIM), "got dtype <U1, such as '0'"),
    ([[0.0] * 3, [0.0]], "got a ragged nested sequence"),
], ids=["None", "text", "ragged"])
def test_an_observation_that_is_not_numbers_is_refused(name, observation, says):
    agent = load_agent(name, seed=1)
    mask = aec_observation()["action_mask"]
    before = state(agent)
    with pytest.raises(ValueError, match="act\\(\\) needs an observation of numbers .*" + says):
        agent.act({"observation": observation, "action_mask": mask})
    with pytest.raises(ValueError, match="act_batch needs observations of numbers .*"):
        agent.act_batch([observation], mask[None])
    assert state(agent) == before


@pytest.mark.parametrize("name", ["random", "greedy"])
def test_a_ragged_mask_is_refused_in_words(name):
    """It was NumPy's "setting an array element with a sequence", naming neither the mask nor what it must be."""
    agent = load_agent(name, seed=1)
    one = aec_observation()
    before = state(agent)
    with pytest.raises(ValueError, match=r"^act\(\) needs masks of 107 0/1 or True/False values a row, got a ragged"):
        agent.act({"observation": one["observation"], "action_mask": [[1]] * (NUM_ACTIONS - 1) + [1]})
    with pytest.raises(ValueError, match=r"^act_batch needs masks of 107 0/1 .* got a ragged nested sequence"):
        agent.act_batch(np.stack([one["observation"]] * 2), [one["action_mask"].tolist(), [1]])
    assert state(agent) == before


def test_a_negative_zero_is_a_zero():
    one = aec_observation(7)
    signed = np.where(one["observation"] == 0, np.float32(-0.0), one["observation"])
    assert np.signbit(signed).any()
    for name in ("greedy", "ppo"):
        assert load_agent(name).act({**one, "observation": signed}) == load_agent(name).act(one)


def test_the_sb3_policy_agent_checks_its_batch_like_every_agent():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from spoilfive_integrations.sb3 import SB3PolicyAgent, SpoilFiveSB3VecEnv

    venv = SpoilFiveSB3VecEnv(num_envs=2, num_players=4, opponents="random", seed=0)
    policy = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, seed=0).policy
    agent = SB3PolicyAgent(policy, seed=1)
    core = SpoilFiveCore(2, rules=Rules(num_players=4), seed=2)
    observations, masks = core.observe(), core.legal_mask()
    nothing = masks.copy()
    nothing[1] = False
    before = state(agent)
    with pytest.raises(ValueError, match=r"rows \[1\] have none"):
        agent.act_batch(observations, nothing)  # was action 0 for that row
    with pytest.raises(ValueError, match="act_batch needs observations"):
        agent.act_batch(observations[:, :10], masks)  # was torch's "mat1 and mat2 shapes cannot be multiplied"
    assert state(agent) == before
    greedy = SB3PolicyAgent(policy, greedy=True)
    assert np.array_equal(greedy.act_batch(observations[::-1], masks[::-1]),
                          greedy.act_batch(observations, masks)[::-1])


@pytest.mark.parametrize("spec, options, says", [
    ("ppo", {"greedy": False}, "bad options for checkpoint .*ppo.pt': 'greedy'; a checkpoint agent takes no options"),
    ("random:seed=3", {}, "'seed' is not one of its options \\(the seed is load_agent's seed= argument"),
    ("random:foo=1", {}, "bad options for agent 'random' .*'foo' is not one of its options; it takes none"),
    ("pimc:foo=1", {}, "'foo' is not one of its options; it takes samples, rollout, max_rows$"),
    ("pimc", {"depth": 2}, "'depth' is not one of its options; it takes samples, rollout, max_rows$"),
    ("greedy", {"rules": Rules()}, "'rules' is not one of its options; it takes none"),
    ("pimc_ppo:policy=nobody", {}, "no checkpoint file .*nobody.pt: .*shipped in agents/checkpoints \\(.*ppo"),
    # a shipped checkpoint's name with options: was "unknown agent 'ppo:greedy=false'"
    ("ppo:greedy=false", {}, "bad options for checkpoint .*ppo.pt': 'greedy'; a checkpoint agent takes no options"),
    # the same option in the spec and as a keyword: the spec's silently won
    ("pimc:samples=2", {"samples": 3}, "'samples' is given twice: samples=2 in 'pimc:samples=2' and samples=3 as a "
                                       "keyword; give it once"),
    ("best:samples=2", {"samples": 3}, "'samples' is given twice"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_load_agent_refuses_options_the_agent_does_not_take(spec, options, says):
    with pytest.raises(ValueError, match=says):
        load_agent(spec, **options)


def test_a_checkpoint_path_takes_no_options_and_an_agent_object_none(tmp_path):
    path = tmp_path / "copy.pt"
    path.write_bytes(agents.CHECKPOINT_DIR.joinpath("ppo.pt").read_bytes())
    with pytest.raises(ValueError, match="'foo'; a checkpoint agent takes no options"):
        load_agent(str(path), foo=3)
    with pytest.raises(ValueError, match="'foo'; a checkpoint agent takes no options"):
        load_agent(f"{path}:foo=3")  # options in the spec, after the path
    assert load_agent(str(path)).name == str(path)
    with pytest.raises(ValueError, match="is an agent already: it takes no options, got 'samples'"):
        load_agent(load_agent("greedy"), samples=3)


def test_best_s_own_options_give_way_to_the_caller_s_in_the_spec_or_as_keywords():
    assert load_agent("best", samples=8).samples == 8 and load_agent("best:samples=12").samples == 12


@pytest.mark.parametrize("options, says", [
    # any truthy value played greedily: "false" too
    ({"greedy": "false"}, "greedy='false' is not allowed: give True .* or False"),
    ({"greedy": None}, "greedy=None is not allowed"), ({"greedy": 0.5}, "greedy=0.5 is not allowed"),
    # each was "ppo.pt is not a readable torch checkpoint: the file is damaged" (or meta's bare RuntimeError)
    ({"device": "gpu"}, "device 'gpu' is not a device: use cpu, cuda, cuda:N or mps"),
    ({"device": "meta"}, "device 'meta' cannot run a policy"),
], ids=repr)
def test_load_policy_agent_refuses_a_greedy_that_is_not_a_bool_and_a_device_that_is_not_here(options, says):
    pytest.importorskip("torch")
    from agents.policy import load_policy_agent

    with pytest.raises(ValueError, match=says):
        load_policy_agent("ppo", **options)


@pytest.mark.parametrize("options, says", [
    ({"name": 5}, "name=5 is not allowed: give a non-empty string, or None for 'policy'"),  # was taken
    ({"name": " "}, "name=' ' is not allowed"),  # a row of a report with no name
    # each was torch's RuntimeError at the first move, not when the agent was made
    ({"threads": 0}, "threads=0 is not allowed: give a whole number of torch CPU threads, at least 1, or None"),
    ({"threads": 2.5}, "threads=2.5 is not allowed"), ({"threads": "2"}, "threads='2' is not allowed"),
    ({"threads": True}, "threads=True is not allowed"),
], ids=repr)
def test_a_policy_agent_refuses_a_name_or_threads_it_could_not_use_when_made(options, says):
    pytest.importorskip("torch")
    from agents.policy import PolicyAgent, PolicyNet

    with pytest.raises(ValueError, match=says):
        PolicyAgent(PolicyNet(hidden=(8,)), **options)
    agent = PolicyAgent(PolicyNet(hidden=(8,)), name="mine", threads=np.int64(2))
    assert agent.name == "mine" and agent.threads == 2
    assert PolicyAgent(PolicyNet(hidden=(8,)), threads=None).threads is None


@pytest.mark.parametrize("net", [None, "linear"])
def test_a_policy_agent_refuses_a_network_that_is_not_a_policy_net(net):
    """None was an AttributeError; another torch module was taken and failed at its first move."""
    torch = pytest.importorskip("torch")
    from agents.policy import PolicyAgent

    with pytest.raises(ValueError, match="PolicyAgent needs the policy network as an agents.policy.PolicyNet "
                                         rf".*got {'NoneType' if net is None else 'Linear'}$"):
        PolicyAgent(None if net is None else torch.nn.Linear(3, 3))


def test_a_cuda_device_on_a_machine_without_one_is_named_and_cpu_0_is_the_cpu():
    torch = pytest.importorskip("torch")
    from agents.policy import load_policy_agent

    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device cuda: CUDA is not available here .*use cpu"):
            load_policy_agent("ppo", device="cuda")
    agent = load_policy_agent("ppo", device="cpu:0")  # torch could not map the checkpoint to "cpu:0"
    assert agent.device == torch.device("cpu") and load_policy_agent("ppo", greedy=np.bool_(False)).greedy is False


def test_a_checkpoint_with_non_finite_weights_is_refused_when_loaded(tmp_path):
    torch = pytest.importorskip("torch")
    data = torch.load(agents.CHECKPOINT_DIR / "ppo.pt", weights_only=True)
    name = next(iter(data["state_dict"]))
    data["state_dict"][name] = torch.full_like(data["state_dict"][name], float("nan"))
    torch.save(data, tmp_path / "diverged.pt")
    with pytest.raises(ValueError, match=f"its weights hold NaN or infinite values \\({name}\\): a diverged run"):
        load_agent(str(tmp_path / "diverged.pt"))


@pytest.mark.parametrize("dtype", ["int64", "complex64", "bool"])
def test_a_checkpoint_whose_weights_are_not_floating_point_is_refused_when_loaded(tmp_path, dtype):
    # they were cast without a word: integers truncated, the imaginary part dropped (bad-input sweep, item 13)
    torch = pytest.importorskip("torch")
    from agents.policy import load_checkpoint

    data = torch.load(agents.CHECKPOINT_DIR / "ppo.pt", weights_only=True)
    data["state_dict"] = {name: value.to(getattr(torch, dtype)) for name, value in data["state_dict"].items()}
    torch.save(data, tmp_path / "cast.pt")
    first = next(iter(data["state_dict"]))
    with pytest.raises(ValueError, match=f"its weights must be floating point \\({first} \\(torch.{dtype}\\), "):
        load_agent(str(tmp_path / "cast.pt"))
    with pytest.raises(ValueError, match="train.py saves float32 weights"):  # train.py --init-from and --resume
        load_checkpoint(tmp_path / "cast.pt")
    half = {name: value.half() for name, value in torch.load(agents.CHECKPOINT_DIR / "ppo.pt",
                                                              weights_only=True)["state_dict"].items()}
    torch.save({**data, "state_dict": half}, tmp_path / "half.pt")
    assert load_checkpoint(tmp_path / "half.pt")[0] is not None  # floating point of another width still loads


@pytest.mark.parametrize("name", ["pimc", "pimc_ppo:samples=2", "greedy"])
def test_bind_refuses_what_is_not_the_rules(name):
    agent = load_agent(name)
    agent.bind(Rules(num_players=3))
    for bad in ("x", 4, {"num_players": 4}):
        with pytest.raises(ValueError, match="bind\\(\\) needs the table's rules as a spoilfive_env.rules.Rules"):
            agent.bind(bad)
    assert agent.rules == Rules(num_players=3)
    with pytest.raises(ValueError, match="rules= needs the table's rules"):
        PIMCAgent(rules="x")


def test_a_folder_given_as_an_agent_is_called_a_folder(tmp_path):
    with pytest.raises(ValueError, match="is a folder: give a checkpoint's .pt file"):
        load_agent(str(tmp_path))


@pytest.mark.parametrize("spec, options, says", [
    # each read the file and built the network (a draw from torch's generator) before the seed was refused
    ("ppo", {"seed": -1}, "seed must be a whole number 0 or more, or None, got -1"),
    ("ppo", {"seed": 1.5}, "got 1.5"),
    # each built the policy's network first, then refused the number
    ("pimc_ppo:prior=-1", {}, "prior=-1 is not allowed"),
    ("pimc_ppo:inner_samples=-1", {}, "inner_samples=-1 is not allowed"),
    ("best:jink_confidence=2", {}, "jink_confidence=2 is not allowed"),  # and best loaded its belief before it
    # was "bad options for agent 'pimc_ppo': expected str, bytes or os.PathLike object, not int"
    ("pimc_ppo:policy=3", {}, r"a checkpoint is a path or the name of one shipped in agents/checkpoints \(.*ppo.*\), "
                              "got 3$"),
    ("pimc_ppo:policy=true", {}, "got True$"),
    ("pimc_ppo:policy=", {}, "got ''$"),  # was "no checkpoint file at ."
    # a file loaded (the belief, the policy) before another was refused: its network's draws are undone
    ("pimc_ppo:belief=trump_counts:policy=missing.pt", {}, "no checkpoint file at missing.pt"),
    ("pimc_ppo:others=missing.pt", {}, "others='missing.pt' is not allowed"),
], ids=repr)
def test_a_refused_agent_leaves_torch_s_generator_as_it_was(spec, options, says):
    torch = pytest.importorskip("torch")
    before = torch.get_rng_state()
    with pytest.raises(ValueError, match=says):
        load_agent(spec, **options)
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.parametrize("name", ["greedy", "spoiler"])
def test_a_finished_games_row_is_played_its_first_legal_action_whatever_its_mask_allows(name):
    """A finished game's row is not checked against its observation, so its mask may allow any actions at all (the
    core's allows every one): the rule agents play its lowest legal action, never one it forbids."""
    core = SpoilFiveCore(6, rules=Rules(num_players=3), seed=2)
    while not core.done.any():
        core.step(core.legal_mask().argmax(axis=1))
    done = np.flatnonzero(core.done)
    masks = core.legal_mask()
    masks[done] = False
    masks[done, CLAIM] = True
    masks[done[0], [7, CLAIM]] = True, False
    actions = load_agent(name).act_batch(core.observe(), masks)
    assert actions[done[0]] == 7 and (actions[done[1:]] == CLAIM).all()


def test_an_empty_mask_given_to_act_is_refused_by_act_itself():
    """act() names its own argument (not act_batch's rows) when the mask allows nothing."""
    observation = aec_observation()
    observation["action_mask"] = np.zeros(NUM_ACTIONS, np.int8)
    for name in ("random", "greedy"):
        with pytest.raises(ValueError, match=r"^act\(\) needs an observation with at least one legal action"):
            load_agent(name).act(observation)


def test_masks_with_another_number_of_rows_than_the_observations_are_refused():
    core = SpoilFiveCore(4, rules=Rules(num_players=3), seed=1)
    observations, masks = core.observe(), core.legal_mask()
    for name in ("random", "greedy"):
        with pytest.raises(ValueError, match=rf"needs observations \(B, {OBS_DIM}\) and masks \(B, {NUM_ACTIONS}\), "
                                             rf"got \(3, {OBS_DIM}\) and \(4, {NUM_ACTIONS}\)"):
            load_agent(name).act_batch(observations[:3], masks)


def test_an_observation_of_bools_is_numbers_and_played_as_its_float_copy():
    """0/1 as bools are numbers: act_batch plays them as the same values in float32."""
    core = SpoilFiveCore(8, rules=Rules(num_players=4), seed=3)
    flags, masks = core.observe() > 0.5, core.legal_mask()
    for name in ("random", "greedy", "spoiler"):
        assert np.array_equal(load_agent(name, seed=1).act_batch(flags, masks),
                              load_agent(name, seed=1).act_batch(flags.astype(np.float32), masks))


@pytest.mark.parametrize("name", ["random", "greedy", "spoiler"])
def test_a_mask_that_lets_a_rob_discard_a_card_not_in_the_hand_is_refused(name):
    """A rob discards a card of the robber's own hand: a mask that would discard another card does not fit."""
    one = aec_observation()
    held = np.flatnonzero(one["observation"][SLICES["hand"]]).tolist()
    not_held = next(card for card in range(52) if card not in held)
    mask = one["action_mask"].copy()
    mask[ROB_FIRST + not_held] = 1
    with pytest.raises(ValueError, match=rf"row 0 allows {ROB_FIRST + not_held} \(.*\), but card {not_held} is not in "
                                         rf"the observation's hand"):
        load_agent(name, seed=1).act_batch(one["observation"][None], mask[None])
