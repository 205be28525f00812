"""The trump-count belief (``agents.trump_belief``) and the searches' deals resampled by it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import refused_in_process, with_entry

torch = pytest.importorskip("torch")

from agents import load_agent  # noqa: E402
from agents.pimc_policy import PolicyPIMCAgent  # noqa: E402
from agents.trump_belief import (  # noqa: E402
    COUNTS,
    SAMPLER_DEALS,
    TrumpCountBelief,
    TrumpCountNet,
    count_frequencies,
    load_belief,
    main,
    play_stream,
    play_streams,
    read_stream,
    save_belief,
    stream_file,
    streams,
    trump_counts,
)
from spoilfive_env.core import SpoilFiveCore  # noqa: E402
from spoilfive_env.observation import OBS_DIM  # noqa: E402
from spoilfive_env.rules import Rules  # noqa: E402


class FixedBelief(TrumpCountBelief):
    """A belief that says what the test wants: ``table(counts)`` gives the probabilities."""

    def __init__(self, table, sizes=(3,)):
        super().__init__({n: TrumpCountNet(n) for n in sizes})
        self.table = table

    def probabilities(self, observations, counts):
        return self.table(counts)


def decisions(num_players, games=6, seed=0, steps=4):
    """Observations and masks of seat-to-move decisions a few steps into ``games`` hands."""
    core = SpoilFiveCore(games, rules=Rules(num_players=num_players), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        masks = core.legal_mask()
        core.step(np.array([rng.choice(np.flatnonzero(row)) for row in masks]))
    live = np.flatnonzero(core.legal_mask().sum(axis=1) > 1)
    return core.observe()[live], core.legal_mask()[live]


def world_counts(worlds, num_players):
    """Each sampled world's trump count in the hands of the searcher's relative seats 1 .. n-1."""
    holders = worlds.holder.astype(np.int64)  # the searcher is seat 0 of every world
    return trump_counts(holders, worlds.trump, num_players)


def test_resampling_keeps_the_believed_count_wherever_a_drawn_deal_has_it():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, size=(5, 40, 2))
    counts[4, :, 0] = 2  # one decision where no drawn deal has the believed count: nothing to favour

    def only_one_trump_for_seat_1(counts):
        belief = count_frequencies(counts)  # seat 2: as drawn, no weight
        belief[:, 0] = 0
        belief[:, 0, 1] = 1
        return belief

    kept = FixedBelief(only_one_trump_for_seat_1).resample(np.zeros((5, 1)), counts, 10, rng)
    assert kept.shape == (5, 10) and ((kept >= 0) & (kept < 40)).all()
    chosen = np.take_along_axis(counts[:, :, 0], kept, axis=1)
    assert (chosen[:4] == 1).all()  # every kept deal gives seat 1 one trump
    assert len(np.unique(kept[4])) == 10  # weights all equal there: spread over the drawn deals


def test_a_belief_equal_to_the_drawn_frequencies_keeps_one_deal_in_each_stretch():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 6, size=(3, 64, 3))
    kept = FixedBelief(count_frequencies, sizes=(4,)).resample(np.zeros((3, 1)), counts, 8, rng)
    # Uniform weights: systematic resampling takes one deal from each eighth of the draws.
    assert (kept // 8 == np.arange(8)).all()


def test_each_decisions_resampling_starts_at_its_own_random_point():
    """Systematic resampling is unbiased only with a random start: under uniform weights each of 400 decisions keeps
    one deal from each eighth of its 64 draws, at an offset within the eighth drawn for that decision alone, so the
    offsets spread evenly over the eight places (about 50 each) and differ between decisions."""
    counts = np.zeros((400, 64, 2), np.int64)
    kept = FixedBelief(count_frequencies).resample(np.zeros((400, 1)), counts, 8, np.random.default_rng(2))
    offsets = kept % 8
    assert (offsets == offsets[:, :1]).all()  # one start per decision, the same step after it
    places = np.bincount(offsets[:, 0], minlength=8)
    assert places.min() >= 25 and places.max() <= 80, places


def test_trump_counts_are_the_trumps_in_each_other_hand_the_ace_of_hearts_among_them():
    """Clubs trump at three players: seat 1 holds the 5C and JC (and the 2H), seat 2 the AH, always a trump (and the
    KD); the viewer's own 3C is not counted."""
    from spoilfive_env import card_index

    holders = np.full((1, 52), -1)
    for card, seat in (("5C", 1), ("JC", 1), ("2H", 1), ("AH", 2), ("KD", 2), ("3C", 0)):
        holders[0, card_index(card)] = seat
    clubs = card_index("2C") // 13
    np.testing.assert_array_equal(trump_counts(holders, np.array([clubs]), 3), [[2, 1]])


def test_the_samplers_smoothed_marginal_is_a_distribution_over_the_counts():
    """Each seat's smoothed frequencies of the counts sum to one: a count met in all 64 deals has
    (64 + 0.05) / (64 + 6 * 0.05), the others 0.05 / 64.3 each."""
    from agents.trump_belief import SMOOTHING, log_sampler_marginal

    counts = np.zeros((2, SAMPLER_DEALS, 2), np.int64)
    counts[1, :, 1] = np.arange(SAMPLER_DEALS) % COUNTS
    marginal = np.exp(log_sampler_marginal(counts).astype(np.float64))
    np.testing.assert_allclose(marginal.sum(axis=2), 1, rtol=1e-6)
    total = SAMPLER_DEALS + COUNTS * SMOOTHING
    np.testing.assert_allclose(marginal[0, 0], [(SAMPLER_DEALS + SMOOTHING) / total] + [SMOOTHING / total] * 5,
                               rtol=1e-6)


def test_resampling_weighs_each_deal_by_the_belief_over_the_drawn_frequency():
    """Seat 1 holds no trump in 48 of 64 drawn deals and one in 16; a belief of one half each weighs a deal of the
    rarer count three times as much (0.5 / 0.25 against 0.5 / 0.75), so the 16 kept deals are half of each."""
    counts = np.zeros((2, 64, 2), np.int64)
    counts[:, 48:, 0] = 1

    def even_for_seat_1(counts):
        belief = count_frequencies(counts)  # seat 2: as drawn, no weight
        belief[:, 0, :2] = 0.5
        return belief

    kept = FixedBelief(even_for_seat_1).resample(np.zeros((2, 1)), counts, 16, np.random.default_rng(0))
    rarer = (np.take_along_axis(counts[:, :, 0], kept, axis=1) == 1).sum(axis=1)
    assert (np.abs(rarer - 8) <= 1).all()


def test_the_search_draws_belief_draws_times_its_deals_and_keeps_the_believed_counts():
    observations, _ = decisions(3)

    def two_trumps_each(counts):
        belief = np.zeros((len(counts), 2, COUNTS))
        belief[:, :, 2] = 1
        return belief

    rules = Rules(num_players=3)
    agent = PolicyPIMCAgent(seed=0, samples=6, belief=FixedBelief(two_trumps_each), belief_draws=16)
    drawn = []
    original = agent.belief.resample
    agent.belief.resample = lambda obs, counts, keep, rng: drawn.append(counts) or original(obs, counts, keep, rng)
    repeat, worlds = agent._sample_worlds(observations, rules)
    assert np.array_equal(repeat, np.repeat(np.arange(len(observations)), 6))
    assert drawn[0].shape == (len(observations), 6 * 16, 2)
    kept = world_counts(worlds, 3).reshape(len(observations), 6, 2)
    possible = (drawn[0] == 2).all(axis=2).any(axis=1)  # decisions where some drawn deal holds it
    assert possible.any()
    assert (kept[possible] == 2).all()


def test_without_a_belief_or_at_a_table_it_does_not_cover_the_deals_are_pimcs():
    observations, masks = decisions(6)
    believing = PolicyPIMCAgent(seed=3, samples=4, belief=FixedBelief(count_frequencies))
    plain = PolicyPIMCAgent(seed=3, samples=4)
    rules = Rules(num_players=6)
    for agent in (believing, plain):
        agent.bind(rules)
    assert np.array_equal(believing.act_batch(observations, masks), plain.act_batch(observations, masks))
    assert believing.rng.random() == plain.rng.random()  # the same draws, none more
    assert not believing.belief.covers(rules)
    assert not believing.belief.covers(Rules(num_players=3, jink_bonus=5))  # trained at the default rules only
    assert believing.belief.covers(Rules(num_players=3))


def test_the_network_starts_as_the_samplers_marginal():
    net = TrumpCountNet(4)
    log_marginal = torch.log(torch.softmax(torch.randn(5, 3, COUNTS), dim=-1))
    logits = net(torch.randn(5, OBS_DIM), log_marginal)
    assert torch.allclose(torch.log_softmax(logits, dim=-1), log_marginal, atol=1e-6)


def test_a_saved_belief_loads_and_plays_legal_moves(tmp_path):
    path = tmp_path / "belief.pt"
    save_belief({3: TrumpCountNet(3)}, path, {"3": {"note": "untrained"}})
    belief = load_belief(str(path))
    assert sorted(belief.nets) == [3] and belief.covers(Rules(num_players=3))
    agent = load_agent(f"pimc_ppo:samples=4:belief={path}:belief_draws=2", seed=0)
    agent.bind(Rules(num_players=3))
    observations, masks = decisions(3, seed=4)
    actions = agent.act_batch(observations, masks)
    assert masks[np.arange(len(actions)), actions].all()


@pytest.mark.parametrize("options, says", [
    ("belief_draws=0", "belief_draws=0 is not allowed: it must be a whole number from 1 to 64"),
    ("belief_draws=65", "from 1 to 64"),
    ("belief_draws=2.5", "whole number"),
    ("belief=nowhere", "no trump-count belief at"),
    ("belief=7", "belief=7 is not allowed"),
])
def test_bad_belief_options_say_what_is_allowed(options, says):
    with pytest.raises(ValueError, match=says):
        load_agent(f"pimc_ppo:samples=2:{options}")


def test_a_file_that_is_not_a_belief_is_refused(tmp_path):
    import agents

    with pytest.raises(ValueError, match="not a trump-count belief"):
        load_belief(str(agents.CHECKPOINT_DIR / "ppo.pt"))
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="not a readable torch file"):
        load_belief(str(junk))
    other = tmp_path / "other.pt"
    save_belief({3: TrumpCountNet(3)}, other, {})
    data = torch.load(other, weights_only=True)
    data["sampler_deals"] = SAMPLER_DEALS + 1
    torch.save(data, other)
    with pytest.raises(ValueError, match=f"this spoilfive reads {SAMPLER_DEALS}"):
        load_belief(str(other))


def test_the_shipped_belief_covers_three_to_five_players_and_beats_the_sampler():
    belief = load_belief("trump_counts")
    assert sorted(belief.nets) == [3, 4, 5]
    report = torch.load(belief_file(), weights_only=True)["report"]
    for size in (3, 4, 5):  # held-out loss of the belief under the sampler's own
        figures = report[size]
        assert figures["belief_nats_per_seat"] < figures["sampler_nats_per_seat"] - 0.01


def belief_file():
    from agents.trump_belief import belief_path

    return belief_path("trump_counts")


@pytest.mark.parametrize("argv, says", [
    (["--players", "3,4", "--hands", "1,2,3"], "--hands 1,2,3: give one number, or one for each of the 2 table sizes"),
    (["--players", "1"], "--players: '1': table sizes must be 2-10"),
    (["--players", "2,3"], "--players 2: give --hands (its default is for 3, 4, 5 players only)"),
    (["--hands", "0"], "--hands: '0': give whole numbers of at least 1"),
    (["--out", "belief.txt"], "ends in .pt"),
    (["--workers", "0"], "--workers: '0' is not allowed: give a whole number of at least 1"),
    (["--stream-hands", "0"], "--stream-hands: '0' is not allowed: give a whole number of at least 1"),
    (["--seed", "4294967295", "--hands", "20", "--stream-hands", "10"], "would take seeds past"),
    (["--cache", __file__], "cannot be written: it is a file, not a folder"),
])
def test_the_command_refuses_bad_flags_in_one_line(argv, says, capsys):
    refused_in_process(main, argv, capsys, says)


def test_the_command_collects_fits_and_saves(tmp_path, capsys):
    out = tmp_path / "tiny.pt"
    assert main(["--players", "3", "--hands", "40", "--seed", "9", "--out", str(out), "--json"]) == 0
    belief = load_belief(str(out))
    assert sorted(belief.nets) == [3]
    assert '"sampler_nats_per_seat"' in capsys.readouterr().out


def test_each_stream_takes_the_next_seed_and_each_size_goes_on_from_the_last():
    # the shipped belief's: one stream a size, seeds 600, 601, 602 (as before streams existed)
    assert streams([3, 4, 5], [12000, 10000, 6000], 12000, 600) == [(3, 12000, 600), (4, 10000, 601), (5, 6000, 602)]
    assert streams([3, 4, 5], [36000, 12000, 6000], 18000, 603) == [
        (3, 18000, 603), (3, 18000, 604), (4, 12000, 605), (5, 6000, 606)]
    assert streams([3, 4], [25, 10], 10, 0) == [(3, 10, 0), (3, 10, 1), (3, 5, 2), (4, 10, 3)]


def test_the_data_do_not_depend_on_the_workers_and_the_cache_is_read_back(tmp_path, monkeypatch):
    jobs = streams([3], [8], 4, 21)
    alone = play_streams(jobs, workers=1, cache=tmp_path)
    assert all(stream_file(tmp_path, *job).is_file() for job in jobs)
    side_by_side = play_streams(jobs, workers=2)
    for (obs_a, y_a), (obs_b, y_b) in zip(alone, side_by_side, strict=True):
        assert np.array_equal(obs_a, obs_b) and np.array_equal(y_a, y_b)
    assert not np.array_equal(alone[0][1][:50], alone[1][1][:50])  # two seeds, two streams

    import agents.trump_belief as module

    monkeypatch.setattr(module, "collect", lambda *args, **kwargs: pytest.fail("a cached stream was played again"))
    again = play_streams(jobs, workers=1, cache=tmp_path)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(alone, again, strict=True))


@pytest.mark.parametrize("argv, says", [
    # counts past what a machine can hold or play: refused before the streams are listed (which never ended)
    (["--players", "2", "--hands", "1" + "0" * 30], "--hands 1000000000000000000000000000000 is not allowed: give 1 "
                                                    "to 100,000 hands a size"),
    (["--players", "2", "--hands", "1" + "0" * 12, "--stream-hands", "1"], "give 1 to 100,000 hands a size"),
    (["--players", "2,3", "--hands", "5,100001"], "--hands 5,100001 is not allowed: give 1 to 100,000 hands a size"),
    (["--players", "2", "--hands", "5", "--stream-hands", "100001"], "--stream-hands 100001 is not allowed: give 1 to "
                                                                     "100,000 hands a stream"),
    (["--players", "2", "--hands", "5", "--workers", "65"], "--workers 65 is not allowed: give 1 to 64 processes"),
    # not the current folder
    (["--players", "2", "--hands", "5", "--cache", ""], "--cache '': give a folder for the streams, or leave --cache "
                                                        "out"),
    (["--players", "2", "--hands", "5", "--cache", " "], "--cache ' ': give a folder"),
])
def test_counts_past_the_bounds_and_a_blank_cache_are_refused_before_any_work(argv, says, tmp_path, monkeypatch,
                                                                              capsys):
    import agents.trump_belief as module

    monkeypatch.chdir(tmp_path)  # where a blank --cache wrote the streams
    monkeypatch.setattr(module, "streams", lambda *args: pytest.fail("the streams were listed before the check"))
    monkeypatch.setattr(module, "collect", lambda *args, **kwargs: pytest.fail("a stream was played"))
    refused_in_process(main, [*argv, "--out", str(tmp_path / "belief.pt")], capsys, says)
    assert not list(tmp_path.iterdir())


def test_a_folder_in_place_of_a_stream_file_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    import agents.trump_belief as module

    cache = tmp_path / "cache"
    stream_file(cache, 2, 5, 600).mkdir(parents=True)
    monkeypatch.setattr(module, "collect", lambda *args, **kwargs: pytest.fail("a stream was played"))
    refused_in_process(main, ["--players", "2", "--hands", "5", "--out", str(tmp_path / "belief.pt"), "--cache",
                              str(cache)], capsys,
                       f"--cache {str(cache)!r} cannot be written: pimc-tables-2p-seed600-5hands-obs1.npz in it is "
                       "a folder")
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["cache", "pimc-tables-2p-seed600-5hands-obs1.npz"]


def kept_stream(count: int = 30, players: int = 3):
    rng = np.random.default_rng(0)
    return rng.random((count, OBS_DIM), dtype=np.float32), rng.integers(0, COUNTS, (count, players - 1), dtype=np.int8)


def changed(index, change):
    def make():
        arrays = list(kept_stream())
        arrays[index] = change(arrays[index])
        return arrays
    return make


@pytest.mark.parametrize("make, says", [
    (changed(0, lambda a: a[:5, :3]), "observations must be float32 of shape (decisions, 968), got float32 of shape "
                                      "(5, 3)"),
    (changed(0, lambda a: a[:, 0]), "observations must be float32 of shape (decisions, 968)"),
    (changed(0, lambda a: a.astype(np.float64)), "got float64"),
    (changed(0, lambda a: a.astype(str)), "observations must be float32"),
    (lambda: [a[:0] for a in kept_stream()], "it holds no decision"),
    (changed(1, lambda a: a[:10]), "targets must be whole numbers of shape (30, 2), one trump count a seat for each "
                                   "observation, got int8 of shape (10, 2)"),
    (changed(1, lambda a: a[:, :1]), "targets must be whole numbers of shape (30, 2)"),
    (changed(1, lambda a: a.astype(np.float32)), "got float32"),
    (changed(0, with_entry(np.nan)), "observations hold NaN or infinite values"),
    (changed(0, with_entry(np.inf)), "observations hold NaN or infinite values"),
    (changed(1, with_entry(6)), "targets must be trump counts from 0 to 5, got 0 to 6"),
    (changed(1, with_entry(-1)), "targets must be trump counts from 0 to 5, got -1 to 5"),
])
def test_a_kept_stream_that_does_not_fit_is_not_read(make, says, tmp_path):
    path = tmp_path / "stream.npz"
    observations, targets = make()
    np.savez_compressed(path, observations=observations, targets=targets)
    stream, why = read_stream(path, 3)
    assert stream is None and says in why
    np.savez_compressed(path, observations=kept_stream()[0], targets=kept_stream()[1])  # what they were made from
    stream, why = read_stream(path, 3)
    assert why == "" and np.array_equal(stream[0], kept_stream()[0])


@pytest.mark.parametrize("content", [b"junk!", b"PK\x03\x04" + b"\0" * 100, "wrong shape"])
def test_a_kept_stream_that_cannot_be_read_is_played_again(content, tmp_path, monkeypatch, capsys):
    import agents.trump_belief as module

    path = stream_file(tmp_path, 3, 5, 9)
    if content == "wrong shape":
        np.savez_compressed(path, observations=np.zeros((5, 3), np.float32), targets=np.zeros((5, 2), np.int8))
    else:
        path.write_bytes(content)
    monkeypatch.setattr(module, "collect", lambda players, hands, seed, progress=False: kept_stream(players=players))
    observations, targets = play_stream(3, 5, 9, cache=tmp_path)
    assert np.array_equal(observations, kept_stream()[0]) and np.array_equal(targets, kept_stream()[1])
    out = capsys.readouterr().out
    assert f"3 players, seed 9: the stream kept in {path} cannot be read (" in out and "); playing it again" in out
    stream, why = read_stream(path, 3)  # the stream played replaced it
    assert why == "" and np.array_equal(stream[1], kept_stream()[1])
