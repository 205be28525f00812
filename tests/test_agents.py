"""Agents: the registry and loader, legality everywhere, determinism, the rules they follow."""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import dealt_core, play_core

import agents
from agents import REGISTRY, baselines, load_agent, pimc
from agents.base import Agent, distinct_entries
from agents.baselines import numpy_core_rule_actions, view_from_core, view_from_observations
from agents.pimc import MAX_SAMPLES, _rule_moves, play_out
from spoilfive_env import card_index, env
from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, ROB_FIRST
from spoilfive_env.cards import CLUBS, HEARTS, STRENGTH
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.observation import SLICES
from spoilfive_env.rules import Rules

FAST = {"pimc": "pimc:samples=2", "oracle": "oracle"}


def make(name, seed=0):
    return load_agent(FAST.get(name, name), seed=seed)


# ---------------------------------------------------------------------------- loading
def test_registry_names_and_base_class():
    assert set(REGISTRY) == {"random", "greedy", "spoiler", "pimc", "oracle"}
    for name in REGISTRY:
        agent = load_agent(name, seed=3)
        assert isinstance(agent, Agent)
        assert agent.name == name and agent.seed == 3
    assert load_agent("oracle").cheats and not load_agent("pimc").cheats


def test_load_agent_options_and_errors():
    agent = load_agent("pimc:samples=5:rollout=greedy", seed=1)
    assert agent.samples == 5 and agent.rollout == "greedy"
    with pytest.raises(ValueError, match="unknown agent 'nobody'.*random"):
        load_agent("nobody")
    with pytest.raises(ValueError, match="key=value"):
        load_agent("pimc:samples")
    with pytest.raises(ValueError, match="bad options"):
        load_agent("greedy:depth=3")
    with pytest.raises(ValueError, match="rollout"):
        load_agent("pimc:rollout=clever")
    with pytest.raises(ValueError, match="does not exist"):
        load_agent("no/such/checkpoint.pt")
    same = load_agent("greedy")
    assert load_agent(same) is same


def test_checkpoints_go_to_the_policy_loader(tmp_path, monkeypatch):
    calls = []

    def load_policy_agent(path):
        calls.append(path)
        return load_agent("random")

    fake = types.ModuleType("agents.policy")
    fake.load_policy_agent = load_policy_agent
    monkeypatch.setitem(sys.modules, "agents.policy", fake)
    checkpoint = tmp_path / "mine.pt"
    checkpoint.write_bytes(b"")
    load_agent(str(checkpoint), seed=4)
    other = tmp_path / "weights.bin"
    other.write_bytes(b"")
    load_agent(str(other))
    monkeypatch.setattr(agents, "CHECKPOINT_DIR", tmp_path)
    load_agent("mine")
    assert calls == [str(checkpoint), str(other), str(checkpoint)]
    assert "mine" in agents.shipped_checkpoints()


# ---------------------------------------------------------------------------- legality
RULES = [Rules(num_players=n) for n in range(2, 11)] + [
    Rules(num_players=4, conceal_ace_penalty=True),
    Rules(num_players=3, allow_jink=False),
    Rules(num_players=4, partnerships=True),
    Rules(num_players=6, partnerships=True),
    Rules.preset("hoyle", num_players=5),
]


def rules_id(rules):
    return (f"n{rules.num_players}" + ("-conceal" if rules.conceal_ace_penalty else "")
            + ("-nojink" if not rules.allow_jink else "") + ("-teams" if rules.partnerships else "")
            + ("-hoyle" if rules.dealer_ante else ""))


@pytest.mark.parametrize("rules", RULES, ids=rules_id)
def test_no_agent_ever_plays_an_illegal_move(rules):
    """Every agent is asked for every live game at every step (all phases come up: robbing,
    concealing, playing, the jink choice), and the game moves on with a mix of them."""
    batch = 300 if rules.num_players <= 5 else 120
    core = SpoilFiveCore(batch, rules=rules, mode="game", seed=rules.num_players)
    players = {name: make(name, seed=7) for name in REGISTRY}
    for agent in players.values():
        agent.bind(rules)
    rng = np.random.default_rng(0)
    phases_seen = set()
    for _ in range(40):
        live = np.flatnonzero(~core.done)
        if not len(live):
            break
        mask = core.legal_mask()
        obs = core.observe()
        phases_seen.update(np.unique(core.phase[live]).tolist())
        chosen = {}
        search_rows = live[:40]  # the search agents on a slice, to keep the test quick
        for name, agent in players.items():
            rows = search_rows if name in ("pimc", "oracle") else live
            if agent.cheats:
                actions = agent.act_batch_state(core, rows, obs[rows], mask[rows])
            else:
                actions = agent.act_batch(obs[rows], mask[rows])
            assert actions.shape == (len(rows),)
            assert mask[rows, actions].all(), f"{name} played an illegal move"
            chosen[name] = (rows, actions)
        step = np.zeros(batch, np.int64)
        pick = rng.integers(0, 3, size=len(live))
        for k, name in enumerate(("random", "greedy", "spoiler")):
            rows, actions = chosen[name]
            step[rows[pick == k]] = actions[pick == k]
        core.step(step)
    assert {0, 1}.issubset(phases_seen)
    if rules.allow_jink and rules.num_players <= 6:
        assert 2 in phases_seen  # the jink choice came up


def test_act_on_aec_observations_through_whole_hands():
    for name in REGISTRY:
        if name == "oracle":
            continue
        agent = make(name, seed=1)
        for num_players in (2, 4, 7):
            game = env(num_players=num_players)
            game.reset(seed=num_players)
            for _ in game.agent_iter():
                observation, _, termination, truncation, _ = game.last()
                if termination or truncation:
                    game.step(None)
                    continue
                action = agent.act(observation)
                assert isinstance(action, int) and observation["action_mask"][action]
                game.step(action)


def test_oracle_refuses_to_play_without_the_state():
    core = SpoilFiveCore(1, seed=0)
    with pytest.raises(ValueError, match="cheats"):
        load_agent("oracle").act_batch(core.observe(), core.legal_mask())


def _counts_in_hands(relative_holders, trump, num_players, suits_wanted):
    """(seats, suits) cards of each wanted effective suit in each relative seat's hand."""
    from spoilfive_env.cards import EFFECTIVE_SUIT

    suits = EFFECTIVE_SUIT[trump]
    return np.array([[int(((relative_holders == seat) & (suits == suit)).sum()) for suit in suits_wanted]
                     for seat in range(num_players)])


@pytest.mark.parametrize("knows, suits_wanted", [("trumps", [4]), ("suits", [0, 1, 2, 3, 4])])
def test_an_oracle_told_the_counts_searches_only_deals_that_hold_them(monkeypatch, knows, suits_wanted):
    """Every deal it searches puts the true count of trumps (or of every suit) in each hidden hand."""
    searched = []
    real = pimc.games_from_information

    def spy(info, holders, discards, rules, **keywords):
        searched.append(np.asarray(holders).copy())
        return real(info, holders, discards, rules, **keywords)

    monkeypatch.setattr(pimc, "games_from_information", spy)
    num_players = 3
    core = SpoilFiveCore(6, rules=Rules(num_players=num_players), seed=4)
    oracle = load_agent(f"oracle:knows={knows}:samples=16", seed=0)
    assert oracle.samples == 16
    decided = 0
    for _ in range(12):
        mask, obs = core.legal_mask(), core.observe()
        rows = np.flatnonzero(~core.done & (mask.sum(axis=1) > 1))
        if not len(rows):
            break
        actions = oracle.act_batch_state(core, rows, obs[rows], mask[rows])
        assert mask[rows, actions].all()
        # The searched deals of each decision, in row order, samples apiece.
        holders = np.concatenate(searched).reshape(len(rows), oracle.samples, -1)
        searched.clear()
        for row, deals in zip(rows, holders):
            viewer = int(core.current[row])
            held = core.holder[row].astype(np.int64)
            truth = _counts_in_hands(np.where(held >= 0, (held - viewer) % num_players, -1), core.trump[row],
                                     num_players, suits_wanted)
            fully = [np.array_equal(_counts_in_hands(deal, core.trump[row], num_players, suits_wanted), truth)
                     for deal in deals]
            assert all(fully) or not any(fully)  # matched deals only, or (none drawn) unconditioned ones
            decided += all(fully)
        step = np.zeros(len(mask), np.int64)
        step[rows] = actions
        forced = ~core.done & (mask.sum(axis=1) == 1)
        step[forced] = mask[forced].argmax(axis=1)
        core.step(step)
    assert oracle.decisions_searched >= decided > 0
    assert decided >= oracle.decisions_fully_matched


def test_the_oracles_knowledge_is_checked_and_sets_its_sample_default():
    assert load_agent("oracle").samples == 1 and load_agent("oracle").knows == "hands"
    assert load_agent("oracle:knows=trumps").samples == 128
    with pytest.raises(ValueError, match="knows='cards' is not allowed: choose one of hands, trumps, suits"):
        load_agent("oracle:knows=cards")


@pytest.mark.parametrize("spec, says", [
    ("pimc:samples=1000000000000", "from 1 to 16,384"),  # refused before any memory is asked for
    ("oracle:samples=0", "from 1 to 16,384"),
    ("pimc:samples=true", "samples=True"),
    ("pimc:max_rows=0", "max_rows=0 is not allowed: it must be a positive integer"),
    ("oracle:max_rows=-5", "max_rows=-5"),
])
def test_search_sizes_are_checked_when_the_agent_is_made(spec, says):
    with pytest.raises(ValueError, match=says):
        load_agent(spec)


def test_the_largest_sample_count_is_allowed():
    assert load_agent(f"pimc:samples={MAX_SAMPLES}").samples == MAX_SAMPLES


# ---------------------------------------------------------------------------- the searches' moves
def greedy_positions(num_players, games, seed, steps):
    """A core of ``games`` hands, each played by greedy players for its own number (0 to ``steps``) of moves."""
    core = SpoilFiveCore(games, rules=Rules(num_players=num_players), seed=seed)
    stop = np.random.default_rng(seed).integers(0, steps + 1, size=games)
    for step in range(steps):
        moving = ~core.done & (stop > step)
        core.step(numpy_core_rule_actions(core, core.legal_mask(), spoil=False), where=moving)
    return core


def test_a_play_out_counts_every_reward_from_its_first_move_on():
    """play_out gives each game's whole reward for its seat from the decision on: the same as stepping the game to
    its end by hand, the reward of the first move included (where it ends the hand: a claim, a third trick)."""
    core = greedy_positions(3, 200, seed=5, steps=14)
    core = core.subset(np.flatnonzero(~core.done))
    rows, seats = np.arange(core.batch_size), core.current.astype(np.int64)
    first = numpy_core_rule_actions(core, core.legal_mask(), spoil=False)
    by_hand = core.subset(rows)
    rewards, _ = by_hand.step(first)
    expected = rewards[rows, seats].astype(np.float64)
    assert (expected != 0).any()  # some first moves end the hand
    while not by_hand.done.all():
        rewards, _ = by_hand.step(numpy_core_rule_actions(by_hand, by_hand.legal_mask(), spoil=False),
                                  where=~by_hand.done)
        expected += rewards[rows, seats]
    greedy = functools.partial(_rule_moves, spoil=False)
    np.testing.assert_allclose(play_out(core, first, seats, greedy, np.random.default_rng(0)), expected)


def test_ties_between_moves_go_to_the_rollout_policys_own_choice(monkeypatch):
    """Where every move plays out to the same value the search plays its rollout policy's move (the spoiler's)."""
    monkeypatch.setattr(pimc, "play_out", lambda core, first, seats, policy, rng: np.zeros(len(first)))
    core = greedy_positions(4, 60, seed=2, steps=10)
    masks, observations = core.legal_mask(), core.observe()
    choice = ~core.done & (masks.sum(axis=1) > 1)
    assert choice.sum() > 20
    spoiler = make("spoiler").act_batch(observations[choice], masks[choice])
    assert np.array_equal(make("pimc").act_batch(observations[choice], masks[choice]), spoiler)


def test_the_oracle_plays_the_move_whose_play_out_is_best_for_the_player_to_act():
    """The oracle scores each move by the reward of the seat to act (not seat 0): with a greedy rollout (no random
    draw) on the true deal, its move is one whose greedy play-out gives that seat the most."""
    core = greedy_positions(3, 80, seed=7, steps=9)
    masks, observations = core.legal_mask(), core.observe()
    games = np.flatnonzero(~core.done & (masks.sum(axis=1) > 1) & (core.current != 0))
    oracle = load_agent("oracle:rollout=greedy", seed=0)
    oracle.bind(core.rules)
    chosen = oracle.act_batch_state(core, games, observations[games], masks[games])
    game, action = np.nonzero(masks[games])
    values = play_out(core.subset(games[game]), action, core.current[games][game].astype(np.int64),
                      functools.partial(_rule_moves, spoil=False), np.random.default_rng(0))
    best = np.full(len(games), -np.inf)
    np.maximum.at(best, game, values)
    value_of_chosen = values[action == chosen[game]]
    assert len(value_of_chosen) == len(games) > 10
    np.testing.assert_allclose(value_of_chosen, best)
    assert (best > values.min()).any()  # some decisions have a worse move to avoid


def test_the_greedy_rollout_plays_greedy_moves_and_the_spoiler_rollout_spoiler_ones():
    """``rollout=greedy`` finishes the sampled hands with the greedy rule and ``rollout=spoiler`` with the
    spoiler's, at positions where the two differ."""
    core = greedy_positions(4, 200, seed=3, steps=12)
    masks = core.legal_mask()
    greedy = numpy_core_rule_actions(core, masks, spoil=False)
    spoiler = numpy_core_rule_actions(core, masks, spoil=True)
    assert (greedy != spoiler).any()
    for name, moves in (("greedy", greedy), ("spoiler", spoiler)):
        policy = load_agent(f"pimc:rollout={name}")._policy
        assert np.array_equal(policy(core, masks, np.random.default_rng(0)), moves)


# ---------------------------------------------------------------------------- determinism
def test_seeded_agents_repeat_and_rule_agents_ignore_the_batch():
    core = SpoilFiveCore(200, rules=Rules(num_players=4), seed=2)
    rng = np.random.default_rng(1)
    for _ in range(6):
        core.step(load_agent("random", seed=0).act_batch(core.observe(), core.legal_mask()))
    obs, mask = core.observe(), core.legal_mask()
    for name in ("random", "pimc"):
        first = make(name, seed=11).act_batch(obs, mask)
        again = make(name, seed=11).act_batch(obs, mask)
        assert np.array_equal(first, again)
    for name in ("greedy", "spoiler"):
        agent = make(name)
        whole = agent.act_batch(obs, mask)
        order = rng.permutation(len(obs))
        shuffled = agent.act_batch(obs[order], mask[order])
        assert np.array_equal(whole[order], shuffled)


def test_views_from_observations_and_from_the_core_agree():
    rng = np.random.default_rng(0)
    for num_players in (2, 4, 9):
        core = SpoilFiveCore(300, rules=Rules(num_players=num_players), seed=num_players)
        while not core.done.all():
            live = ~core.done
            a, b = view_from_observations(core.observe()), view_from_core(core)
            for field in a.__dataclass_fields__:
                assert np.array_equal(getattr(a, field)[live], getattr(b, field)[live]), field
            core.step(load_agent("random", seed=int(rng.integers(1000))).act_batch(core.observe(), core.legal_mask()))


@pytest.mark.parametrize("rules", RULES, ids=rules_id)
def test_compiled_rule_moves_equal_the_definition(rules):
    """agents.rules_kernel plays what rule_actions(view_from_core(...)) plays, greedy and spoiler,
    in every live game at every step of whole games (mixed random and spoiler play)."""
    kernel = pytest.importorskip("agents.rules_kernel")
    core = SpoilFiveCore(400, rules=rules, mode="game", seed=rules.num_players)
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(60):
        masks = core.legal_mask()
        live = ~core.done
        for spoil in (False, True):
            expected = numpy_core_rule_actions(core, masks, spoil)
            compiled = kernel.rule_moves(core, masks, spoil)
            assert np.array_equal(compiled[live], expected[live]), (spoil, np.flatnonzero(compiled != expected)[:5])
            compared += int(live.sum())
        random_moves = (rng.random(masks.shape) * masks).argmax(axis=1)
        core.step(np.where(rng.random(len(masks)) < 0.5, random_moves, expected))
    assert compared > 20_000


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("rules", RULES, ids=rules_id)
def test_rule_players_read_from_the_core_what_they_read_from_observations(rules, backend, monkeypatch):
    """``act_batch_core`` (what the Gymnasium envs and the tournaments call) gives ``act_batch``'s moves on the
    observations of the player to act, greedy and spoiler, for a shuffled subset of the live games (their own
    order), at each of 50 steps of game-mode play (every phase; hands end and new ones are dealt), with either
    rules backend."""
    if backend == "numba":
        pytest.importorskip("agents.rules_kernel")
    monkeypatch.setenv("SPOILFIVE_RULES", backend)
    monkeypatch.setattr(baselines._rules, "chosen", None)
    if rules.conceal_ace_penalty:  # there the rule players read observations (the next test says why)
        monkeypatch.setattr(baselines, "core_rule_actions", lambda *args: pytest.fail("read the core's strengths"))
    core = SpoilFiveCore(300, rules=rules, mode="game", seed=rules.num_players)
    rng = np.random.default_rng(1)
    players = [make("greedy"), make("spoiler")]
    compared = differing = 0
    for _ in range(50):
        masks = core.legal_mask()
        live = np.flatnonzero(~core.done)
        games = rng.permutation(live)[: max(1, len(live) * 2 // 3)]
        moves = []
        for player in players:
            from_observations = player.act_batch(core.observe(games=games), masks[games])
            assert np.array_equal(player.act_batch_core(core, games, masks[games]), from_observations), player.name
            moves.append(player.act_batch_core(core, live, masks[live]))
            compared += len(games)
        differing += int((moves[0] != moves[1]).sum())
        step = (rng.random(masks.shape) * masks).argmax(axis=1)
        step[live] = np.where(rng.random(len(live)) < 0.5, step[live], moves[1])
        core.step(step)
    assert compared > 10_000 and differing > 50  # the spoiler's own rules came up


def test_the_compiled_rule_refuses_games_and_masks_it_would_read_past():
    """The compiled loop reads without bounds checks, so :func:`agents.rules_kernel.rule_moves` refuses masks that are
    not one row a game and games outside the core, where it would have read past its arrays."""
    kernel = pytest.importorskip("agents.rules_kernel")
    core = SpoilFiveCore(4, rules=Rules(num_players=3), seed=0)
    masks = core.legal_mask()
    with pytest.raises(ValueError, match=r"games \(k,\) and their masks \(k, 107\), got games of shape \(3,\) and "
                                         r"masks of shape \(1, 107\)"):
        kernel.rule_moves(core, masks[:1], True, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"games from 0 to 3 \(the core's batch\), got \[1, 7\]"):
        kernel.rule_moves(core, masks[:2], True, np.array([1, 7]))
    with pytest.raises(ValueError, match="got games of shape"):
        kernel.rule_moves(core, masks[:2], True, np.array([[1, 2]]))


def test_a_rule_player_reads_observations_where_the_core_would_show_a_concealed_ace():
    """Under ``conceal_ace_penalty`` the core already ranks a concealed ace of trumps last, which the other
    players cannot see: seat 1 played 3D without robbing, so seat 0's spoiler, leading with the 5, the jack,
    the ace of hearts and the king of trumps, must still fear that ace above its king and lead the ace of hearts
    (its cheapest trump nothing unseen can beat), as it does from its observation. Read from the core's
    strengths, the king would look safe."""
    core = dealt_core(["5C JC AH KC KD", "AC 3D 7H 8H 9H", "4D 2S 3S 4S 6S"], "9C", 2, conceal_ace_penalty=True)
    play_core(core, "KD", "3D", "4D")
    masks, seat_0 = core.legal_mask(), np.array([0])
    assert baselines.core_rule_actions(core, masks, True)[0] == card_index("KC")  # what the core's strengths say
    spoiler = make("spoiler")
    assert spoiler.act_batch(core.observe(), masks)[0] == card_index("AH")
    assert spoiler.act_batch_core(core, seat_0, masks)[0] == card_index("AH")


def test_random_draws_the_same_numbers_from_the_core_without_observations(monkeypatch):
    """``random``'s ``act_batch_core`` draws what its ``act_batch`` draws on the same rows from the same stream,
    and builds no observation for it."""
    core = SpoilFiveCore(60, rules=Rules(num_players=5), seed=8)
    masks, games = core.legal_mask(), np.array([7, 3, 41, 0])
    reference, player = make("random", seed=9), make("random", seed=9)
    expected = reference.act_batch(core.observe(games=games), masks[games])
    monkeypatch.setattr(core, "observe", lambda *args, **kwargs: pytest.fail("random observed a game"))
    assert np.array_equal(player.act_batch_core(core, games, masks[games]), expected)
    assert player.rng.bit_generator.state == reference.rng.bit_generator.state  # the stream goes on alike


def test_a_baseline_subclass_with_its_own_act_batch_is_asked_through_it():
    """A subclass of a baseline that plays its own ``act_batch`` (here: always the last legal action), or a
    baseline object given one, is asked through it by ``act_batch_core``, not by the compiled rule or the draw
    without observations."""
    def last_legal(self, observations, masks):
        self.asked = len(observations)
        return masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)

    core = SpoilFiveCore(40, rules=Rules(num_players=4), seed=3)
    masks, games = core.legal_mask(), np.arange(0, 40, 3)
    last = masks.shape[1] - 1 - masks[games, ::-1].argmax(axis=1)
    for base in (baselines.SpoilerAgent, baselines.GreedyAgent, baselines.RandomAgent):
        subclassed = type("LastLegal", (base,), {"act_batch": last_legal})()
        patched = make(base.name)
        patched.act_batch = types.MethodType(last_legal, patched)  # an object given its own act_batch
        for player in (subclassed, patched):
            assert np.array_equal(player.act_batch_core(core, games, masks[games]), last), base.name
            assert player.asked == len(games)
        assert not np.array_equal(make(base.name).act_batch_core(core, games, masks[games]), last)


@pytest.mark.parametrize("games, masks, message", [
    (np.array([[0, 1]]), None, r"games as a 1-D array of game indices \(whole numbers\), got shape \(1, 2\)"),
    (np.array([0.0, 1.0]), None, "games as a 1-D array of game indices .* dtype float64"),
    (np.array([0, 5]), None, r"games from 0 to 4 \(the core's batch\), got \[0, 5\]"),
    (np.array([-1]), None, r"games from 0 to 4 \(the core's batch\), got \[-1\]"),
    (np.array([0, 1]), "one row", r"masks \(2, 107\), one row for each game, got \(1, 107\)"),
    (np.array([0, 1]), "a 2", "masks of 0/1 or True/False values .* row 1 has 2 for action 3"),
    (np.array([0, 1]), "empty", r"at least one legal action in every mask row; rows \[1\] have none"),
    (np.array([0, 1]), "decline", r"allows action 104 \(decline to rob\) in game 1, which the core does not allow"),
])
def test_act_batch_core_refuses_what_does_not_fit_the_core(games, masks, message):
    """``act_batch_core`` says what is wrong with its games or masks, for a rule player (the compiled way) and for
    an agent asked through observations (the base class's way), and draws nothing from the agent's generator."""
    core = SpoilFiveCore(5, rules=Rules(num_players=3), seed=0)
    legal = core.legal_mask()
    rows = legal[np.clip(games.reshape(-1), 0, 4).astype(int)].astype(np.int64)
    if masks == "one row":
        rows = rows[:1]
    elif masks == "a 2":
        rows[1, 3] = 2
    elif masks == "empty":
        rows[1] = 0
    elif masks == "decline":
        rows[1, DECLINE_ROB] = 1
    class FirstLegal(Agent):  # asked through observations, the base class's way
        def act_batch(self, observations, masks):
            return masks.argmax(axis=1)

    for agent in (make("spoiler"), make("random", seed=4), FirstLegal(seed=4)):
        before = agent.rng.bit_generator.state
        with pytest.raises(ValueError, match=message):
            agent.act_batch_core(core, games, rows)
        assert agent.rng.bit_generator.state == before


def test_actions_in_core_asks_each_kind_of_agent_its_own_way():
    """The tournaments' and the envs' one call: an agent object that has only ``act_batch`` gets the games'
    observations, an :class:`Agent` its ``act_batch_core``, the oracle the hidden state."""
    from agents.base import actions_in_core

    core = SpoilFiveCore(30, rules=Rules(num_players=4), seed=5)
    masks, games = core.legal_mask(), np.array([4, 0, 17])
    seen = {}

    class OnlyActBatch:
        def act_batch(self, observations, masks):
            seen["observations"] = observations
            return masks.argmax(axis=1)

    assert np.array_equal(actions_in_core(OnlyActBatch(), core, games, masks[games]), masks[games].argmax(axis=1))
    np.testing.assert_array_equal(seen["observations"], core.observe(games=games))

    spoiler = make("spoiler")
    expected = spoiler.act_batch(core.observe(games=games), masks[games])
    with pytest.MonkeyPatch.context() as patch:  # through act_batch_core: read from the core, nothing observed
        patch.setattr(core, "observe", lambda *args, **kwargs: pytest.fail("the spoiler's games were observed"))
        assert np.array_equal(actions_in_core(spoiler, core, games, masks[games]), expected)

    oracle = make("oracle", seed=2)
    state_calls = []
    oracle.act_batch_state = lambda *args: state_calls.append(args) or args[3].argmax(axis=1)
    actions_in_core(oracle, core, games, masks[games])
    (called_core, called_games, called_observations, _), = state_calls
    assert called_core is core and np.array_equal(called_games, games)
    np.testing.assert_array_equal(called_observations, core.observe(games=games))


def test_the_rules_backend_is_chosen_by_the_environment(monkeypatch):
    core = SpoilFiveCore(50, rules=Rules(num_players=5), seed=1)
    masks = core.legal_mask()
    expected = numpy_core_rule_actions(core, masks, True)
    for choice in ("numpy", "auto"):
        monkeypatch.setattr(baselines._rules, "chosen", None)
        monkeypatch.setenv("SPOILFIVE_RULES", choice)
        assert baselines.rules_backend() in (("numpy",) if choice == "numpy" else ("numba", "numpy"))
        assert np.array_equal(baselines.core_rule_actions(core, masks, True), expected)
    monkeypatch.setattr(baselines._rules, "chosen", None)
    monkeypatch.setenv("SPOILFIVE_RULES", "cuda")
    with pytest.raises(ValueError, match="SPOILFIVE_RULES='cuda' is not allowed: choose one of auto, numba, numpy"):
        baselines.rules_backend()


# ---------------------------------------------------------------------------- the rules they follow
def decide(name, hands, turnup, moves=(), dealer=3, **rules):
    """Play ``moves`` (card text, or action ids) on a fixed deal, then ask ``name``."""
    game = env(num_players=len(hands), **rules)
    game.reset(options={"dealer": dealer, "hands": hands, "turnup": turnup})
    for move in moves:
        game.step(card_index(move) if isinstance(move, str) else move)
    observation = game.observe(game.agent_selection)
    return make(name).act(observation)


HANDS = [
    ["5C", "9H", "2D", "KS", "3H"],   # seat 0, eldest (dealer is 3)
    ["AC", "4D", "8H", "7S", "QD"],   # seat 1 holds the ace of trumps (clubs)
    ["JC", "KH", "6D", "2S", "10H"],
    ["QC", "3S", "4H", "JD", "8D"],
]


def test_greedy_leads_strongest_robs_weakest_and_takes_cheaply():
    # Eldest with the 5 of trumps leads it.
    assert decide("greedy", HANDS, "6C") == card_index("5C")
    # Seat 1 holds the ace of trumps: he robs, discarding his weakest card (the 4D and the
    # 7S both rank fourth from the bottom of their suits; ties go to the lower card index).
    action = decide("greedy", HANDS, "6C", ["3H"])
    assert ROB_FIRST <= action < DECLINE_ROB
    discard = action - ROB_FIRST
    assert discard == card_index("4D")
    # After the rob, on a heart lead, the cheapest card that takes it is the 8H.
    assert decide("greedy", HANDS, "6C", ["3H", ROB_FIRST + card_index("4D")]) == card_index("8H")


def test_greedy_claims_and_sheds_when_it_cannot_win():
    hands = [
        ["5C", "JC", "AH", "2D", "3D"],
        ["4D", "5D", "6D", "7H", "8H"],
        ["9D", "10D", "KD", "2S", "3S"],
    ]
    moves = ["5C", "4D", "9D", "JC", "5D", "10D", "AH", "6D", "KD"]
    assert decide("greedy", hands, "7C", moves, dealer=2) == CLAIM
    assert decide("spoiler", hands, "7C", moves, dealer=2) == CLAIM
    # Seat 1 cannot beat the 5 of trumps: he sheds his weakest card.
    assert decide("greedy", hands, "7C", ["5C"], dealer=2) == card_index("4D")
    # The claim above was a choice: after the first three tricks seat 0 may claim or jink.
    game = env(num_players=3)
    game.reset(options={"dealer": 2, "hands": hands, "turnup": "7C"})
    for move in moves:
        game.step(card_index(move))
    assert game.agent_selection == "player_0"
    assert np.flatnonzero(game.observe("player_0")["action_mask"]).tolist() == [CLAIM, JINK]


def test_spoiler_keeps_its_trumps_and_stops_a_player_with_two_tricks():
    three = [["JC", "2H", "3H", "9S", "4D"], ["KC", "QC", "9C", "8D", "6S"],
             ["2C", "3C", "10S", "JS", "7D"]]
    # No threat and no trump that nothing left can beat (the 5C is out): greedy leads its
    # strongest card, the spoiler its weakest.
    assert decide("greedy", three, "4C", dealer=2) == card_index("JC")
    assert decide("spoiler", three, "4C", dealer=2) == card_index("2H")
    # With the 5C and JC both sure winners the spoiler leads the cheaper, keeping the 5C.
    three[0][3] = "5C"
    assert decide("greedy", three, "4C", dealer=2) == card_index("5C")
    assert decide("spoiler", three, "4C", dealer=2) == card_index("JC")
    # Seat 0 takes two tricks and leads 2H: seat 1 spends the cheapest card that beats it.
    hands = [["5C", "JC", "2H", "3H", "4H"], ["KC", "QC", "9C", "8D", "6S"],
             ["2C", "3C", "9S", "10S", "4D"]]
    moves = ["5C", "9C", "3C", "JC", "QC", "2C", "2H"]
    assert decide("spoiler", hands, "4C", moves, dealer=2) == card_index("KC")


def test_a_tie_between_plain_cards_of_equal_rank_goes_to_the_lower_card_index_for_the_strongest_too():
    """Eldest of three with no trump leads his strongest card: the KH and the KD rank alike (red kings), and the
    tie goes to the lower card index, the KD."""
    hands = [["KH", "KD", "2S", "3S", "4D"], ["5H", "6H", "7D", "8S", "9S"], ["2H", "3H", "10D", "JS", "QS"]]
    assert card_index("KD") < card_index("KH")
    assert decide("greedy", hands, "7C", dealer=2) == card_index("KD")


def test_with_a_chance_of_three_tricks_both_lead_their_strongest_card():
    """Two players, clubs trump. Seat 0 loses the first two tricks and takes the third (KD): with one trick and two
    cards he can still take three, so greedy leads his strongest card (the QD, not the 4D); so does the spoiler,
    against a player with two tricks."""
    hands = [["2H", "3H", "KD", "QD", "4D"], ["5H", "6H", "7D", "8S", "9S"]]
    moves = ["2H", "5H", "6H", "3H", "7D", "KD"]
    assert decide("greedy", hands, "7C", moves, dealer=1) == card_index("QD")
    assert decide("spoiler", hands, "7C", moves, dealer=1) == card_index("QD")


def test_the_spoiler_leads_its_strongest_card_with_two_tricks_of_its_own():
    """Three players, clubs trump. Seat 0 takes the first two tricks with the KH and the KD and leads the third with
    no trump and nobody else threatening: a contender now, the spoiler leads its strongest card (the QS) as greedy
    does."""
    hands = [["KH", "KD", "QS", "10S", "4D"], ["2H", "2D", "5S", "6S", "7S"], ["3H", "3D", "8S", "9S", "JD"]]
    moves = ["KH", "2H", "3H", "KD", "2D", "3D"]
    assert decide("greedy", hands, "7C", moves, dealer=2) == card_index("QS")
    assert decide("spoiler", hands, "7C", moves, dealer=2) == card_index("QS")


def test_the_spoiler_stops_a_player_with_two_tricks_with_its_cheapest_winner():
    """Three players, clubs trump. Seat 0 has two tricks and leads the 5H; seat 1 holds two hearts that take it and
    spends the cheaper, the 9H, keeping the QH."""
    hands = [["KH", "KD", "5H", "7S", "8S"], ["2H", "2D", "9H", "QH", "4S"], ["3H", "3D", "10S", "6S", "JD"]]
    moves = ["KH", "2H", "3H", "KD", "2D", "3D", "5H"]
    assert decide("spoiler", hands, "7C", moves, dealer=2) == card_index("9H")


def test_the_spoiler_stops_a_player_with_one_trick_who_is_winning_the_trick():
    """Three players, clubs trump. Seat 0 has two tricks, seat 1 one; seat 0 leads the 5H and seat 1 takes it with
    the 9H. Seat 2 cannot reach three tricks any more, yet he stops seat 1's second trick with the 10H (not the
    4H): seat 1 winning is the threat, not a fellow player beating seat 0."""
    hands = [["10S", "KH", "KD", "5H", "6S"], ["KS", "2H", "2D", "9H", "7S"], ["9S", "3H", "3D", "10H", "4H"]]
    moves = ["10S", "KS", "9S", "2H", "3H", "KH", "KD", "2D", "3D", "5H", "9H"]
    assert decide("spoiler", hands, "7C", moves, dealer=2) == card_index("10H")


def test_the_spoiler_takes_the_trick_with_its_strongest_card_before_a_player_with_two_tricks():
    """Three players, clubs trump. Seat 0 has two tricks and is still to play to the fourth, which seat 1 leads with
    the 5H: seat 2 takes it with his strongest winner, the QH, where greedy takes it with the 10H."""
    hands = [["KH", "KD", "10S", "JH", "6S"], ["2H", "2D", "KS", "5H", "7S"], ["3H", "3D", "9S", "QH", "10H"]]
    moves = ["KH", "2H", "3H", "KD", "2D", "3D", "10S", "KS", "9S", "5H"]
    assert decide("greedy", hands, "7C", moves, dealer=2) == card_index("10H")
    assert decide("spoiler", hands, "7C", moves, dealer=2) == card_index("QH")


def test_the_spoiler_never_overtakes_a_fellow_player_who_beats_the_threat_with_a_sure_trump():
    """Three players, clubs trump. Seat 0 has two tricks and leads the 6H; seat 1 trumps it with the JC, which no
    unseen trump beats (the 5C is seat 2's own). Seat 2 sheds the 4H and keeps the 5C, which greedy would spend."""
    hands = [["KH", "KD", "6H", "7S", "8S"], ["2H", "2D", "JC", "10S", "4S"], ["3H", "3D", "5C", "4H", "9S"]]
    moves = ["KH", "2H", "3H", "KD", "2D", "3D", "6H", "JC"]
    assert decide("greedy", hands, "7C", moves, dealer=2) == card_index("5C")
    assert decide("spoiler", hands, "7C", moves, dealer=2) == card_index("4H")


def test_a_spec_gives_each_option_once_and_never_the_rules_object():
    with pytest.raises(ValueError, match="'samples' is given twice"):
        load_agent("pimc:samples=1:samples=2")
    with pytest.raises(ValueError, match="'rules' in 'pimc:samples=1:rules=x' is not allowed"):
        load_agent("pimc:samples=1:rules=x")  # was taken, then failed at the first act()
    assert load_agent("pimc:samples=4").samples == 4


def test_a_folder_named_like_a_checkpoint_is_called_a_folder(tmp_path):
    (tmp_path / "run.pt").mkdir()
    with pytest.raises(ValueError, match="is a folder: give the .pt file's path"):
        load_agent(str(tmp_path / "run.pt"))
    with pytest.raises(ValueError, match="does not exist"):
        load_agent(str(tmp_path / "missing.pt"))


@pytest.mark.parametrize("spec", ["pimc:samples=4", "pimc:samples=4:rollout=random", "oracle:samples=4"])
def test_the_searches_pickle_and_the_copy_plays_on_as_the_original(spec):
    """Their rollout policy was a lambda: the standard pickle refused them, and so an env holding one as an
    opponent (SB3's SubprocVecEnv and Gymnasium's AsyncVectorEnv use cloudpickle, which took them)."""
    import pickle

    rules = Rules(num_players=3)
    core = SpoilFiveCore(6, rules=rules, seed=4)
    agent = load_agent(spec, seed=9)
    agent.bind(rules)
    copy = pickle.loads(pickle.dumps(agent))
    masks, observations = core.legal_mask(), core.observe()
    if spec.startswith("oracle"):
        games = np.arange(core.batch_size)
        assert np.array_equal(copy.act_batch_state(core, games, observations, masks),
                              agent.act_batch_state(core, games, observations, masks))
    else:
        assert np.array_equal(copy.act_batch(observations, masks), agent.act_batch(observations, masks))


def test_a_gymnasium_env_with_a_search_opponent_pickles():
    import pickle

    import gymnasium

    game = gymnasium.make("spoilfive/SpoilFive-v0", num_players=3, opponents="pimc:samples=4")
    game.reset(seed=0)
    copy = pickle.loads(pickle.dumps(game))
    action = int(np.flatnonzero(game.unwrapped.action_masks())[0])
    first, second = game.step(action), copy.step(action)
    assert np.array_equal(first[0], second[0]) and first[1:4] == second[1:4]


def test_a_forced_move_is_played_without_a_search_and_each_decision_draws_its_own_deals(monkeypatch):
    """pimc searches only the decisions with a choice (a forced move draws no deal: the later draws stay as they
    were), and its generator moves on from one call to the next: the same decision asked twice is searched on
    other deals."""
    drawn = []
    real = pimc.draw_deals

    def spy(observations, per_decision, rng, rules):
        found = real(observations, per_decision, rng, rules)
        drawn.append((len(observations), found[2].copy()))
        return found

    monkeypatch.setattr(pimc, "draw_deals", spy)
    core = greedy_positions(4, 60, seed=2, steps=10)
    masks, observations = core.legal_mask(), core.observe()
    live = ~core.done
    forced, choice = np.flatnonzero(live & (masks.sum(axis=1) == 1)), np.flatnonzero(live & (masks.sum(axis=1) > 1))
    assert len(forced) and len(choice)
    agent = make("pimc")
    rows = np.concatenate([forced, choice])
    agent.act_batch(observations[rows], masks[rows])
    assert sum(size for size, _ in drawn) == len(choice)
    drawn.clear()
    for _ in range(2):
        agent.act_batch(observations[choice[:1]], masks[choice[:1]])
    assert not np.array_equal(drawn[0][1], drawn[1][1])


def test_pimc_given_the_true_deal_plays_the_move_whose_play_out_is_best_for_itself(monkeypatch):
    """pimc's games put the searcher in seat 0, and it scores each move by that seat's reward: given the true hidden
    hands as its deals and a greedy rollout (no random draw), its move is one whose greedy play-out gives the player
    to act the most, as the oracle's is."""
    core = greedy_positions(3, 80, seed=7, steps=9)
    masks, observations = core.legal_mask(), core.observe()
    games = np.flatnonzero(~core.done & (masks.sum(axis=1) > 1) & (core.current != 0))
    viewer, held = core.current[games].astype(np.int64), core.holder[games].astype(np.int64)
    truth = np.where(held >= 0, (held - viewer[:, None]) % 3, -1).astype(np.int8)
    samples = 2

    def true_deals(info, rng, rules):
        decision = np.arange(len(info.phase)) // samples
        return truth[decision], core.discard[games][decision]

    monkeypatch.setattr(pimc, "sample_hidden", true_deals)
    agent = load_agent(f"pimc:rollout=greedy:samples={samples}", seed=0)
    agent.bind(core.rules)
    chosen = agent.act_batch(observations[games], masks[games])
    game, action = np.nonzero(masks[games])
    values = play_out(core.subset(games[game]), action, viewer[game], functools.partial(_rule_moves, spoil=False),
                      np.random.default_rng(0))
    best = np.full(len(games), -np.inf)
    np.maximum.at(best, game, values)
    value_of_chosen = values[action == chosen[game]]
    assert len(value_of_chosen) == len(games) > 10
    np.testing.assert_allclose(value_of_chosen, best)
    assert (best > values.min()).any()


def test_a_greedy_player_ranks_his_own_concealed_ace_below_every_other_trump():
    """conceal_ace_penalty, two players, diamonds trump. Seat 0 holds the AD and plays the KS to the first trick
    without announcing it, and takes the trick: his ace now ranks below every other trump (docs/rules.md), below
    the 2D too. With one trick and four cards he can still take three, so greedy leads his strongest card: the 2D,
    not the concealed ace (which his observation flags; the view must demote it, as the engine does)."""
    hands = [["AD", "2D", "KS", "3C", "4C"], ["3S", "5S", "6S", "7S", "8S"]]
    game = env(num_players=2, conceal_ace_penalty=True)
    game.reset(options={"dealer": 1, "hands": hands, "turnup": "9D"})
    game.step(card_index("KS"))
    game.step(card_index("3S"))
    observation = game.observe(game.agent_selection)
    assert game.agent_selection == "player_0" and observation["observation"][SLICES["own_concealed"]][0] == 1
    assert decide("greedy", hands, "9D", ["KS", "3S"], dealer=1, conceal_ace_penalty=True) == card_index("2D")
    # Without the variant the same ace ranks fourth of the trumps and is his strongest card.
    assert decide("greedy", hands, "9D", [DECLINE_ROB, "KS", "3S"], dealer=1) == card_index("AD")


def test_a_view_reads_the_trick_so_far_as_documented():
    """Three players, clubs trump, nobody holds the ace of trumps. Eldest (seat 0) to lead: no suit led, no
    winning card (strength and seat -1), nobody in the trick. After the 9H and the 8H, seat 2 sees hearts led,
    the 9H winning (its strength under clubs, not a trump), played by seat 0, his relative seat 1."""
    core = dealt_core(["2H 9H 2D KS 3H", "4D 8H 7S QD 10S", "JC KH 6D 2S 10H"], "6C", dealer=2)
    views = [view_from_observations(core.observe()), view_from_core(core)]
    for view in views:
        assert view.leading[0] and view.led_suit[0] == -1 and not view.best_trump[0]
        assert view.best_strength[0] == -1 and view.best_seat[0] == -1 and not view.in_trick[0].any()
    play_core(core, "9H", "8H")
    for view in (view_from_observations(core.observe()), view_from_core(core)):
        assert not view.leading[0] and view.led_suit[0] == HEARTS and not view.best_trump[0]
        assert view.best_strength[0] == STRENGTH[CLUBS, card_index("9H")] > STRENGTH[CLUBS, card_index("8H")]
        assert view.best_seat[0] == 1 and view.in_trick[0, :3].tolist() == [False, True, True]


def test_the_spoiler_with_two_tricks_follows_as_greedy_even_against_a_jinking_partner():
    """Partnerships of four, clubs trump. Seat 0 takes the first two tricks, his partner seat 2 the third, and seat 2
    jinks with one trick of his own (his team's three allow it). Seat 2 leads the QH to the fourth; seat 3 trumps it
    with the JC, which no unseen trump beats. Seat 0, on two tricks himself, follows as greedy does: he takes the
    trick with the 5C. (The spoiler's rules would see the jinker beaten by a sure trump and shed the 7H.)"""
    hands = [["KH", "KD", "10S", "5C", "7H"], ["2H", "2D", "9S", "6D", "6S"], ["3H", "3D", "KS", "QH", "8D"],
             ["4H", "4D", "8S", "JC", "5D"]]
    moves = ["KH", "2H", "3H", "4H", "KD", "2D", "3D", "4D", "10S", "9S", "KS", "8S", JINK, "QH", "JC"]
    assert decide("greedy", hands, "4C", moves, partnerships=True) == card_index("5C")
    assert decide("spoiler", hands, "4C", moves, partnerships=True) == card_index("5C")


def test_reseed_restarts_the_stream_and_records_the_new_seed():
    """After reseed(s) an agent draws what a fresh agent made with seed s draws, and says s is its seed."""
    core = SpoilFiveCore(50, rules=Rules(num_players=4), seed=2)
    observations, masks = core.observe(), core.legal_mask()
    agent = load_agent("random", seed=1)
    agent.act_batch(observations, masks)
    agent.reseed(8)
    assert agent.seed == 8 and repr(agent) == "RandomAgent(name='random', seed=8)"
    assert np.array_equal(agent.act_batch(observations, masks), load_agent("random", seed=8).act_batch(observations,
                                                                                                         masks))


def test_a_lineup_counts_agent_objects_by_identity_and_specs_by_name():
    """Two agent objects are two agents even when they print alike (same class, same seed); the same object twice,
    or the same name or path twice, is one."""
    first, twin = load_agent("random", seed=0), load_agent("random", seed=0)
    assert repr(first) == repr(twin)
    first_entries, index = distinct_entries([first, twin, first])
    assert first_entries == [0, 1] and index.tolist() == [0, 1, 0]
    first_entries, index = distinct_entries(["random", Path("runs/a.pt"), "runs/a.pt", "random"])
    assert first_entries == [0, 1] and index.tolist() == [0, 1, 1, 0]


def test_a_spec_is_read_without_the_spaces_around_it():
    """A spec read from a file or typed with spaces ("greedy\\n", "pimc: rollout = greedy ") names the same agent, with
    the same options."""
    assert load_agent(" greedy\n").name == "greedy"
    agent = load_agent(" pimc: rollout = greedy : samples = 3 ")
    assert agent.rollout == "greedy" and agent.samples == 3
