"""``agents.distill``: the search's recorded values, the fit to them, and the command line."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import INTERRUPTED, exit_status, with_entry

torch = pytest.importorskip("torch")

from agents import distill, load_agent  # noqa: E402
from agents.policy import load_checkpoint, resolve_checkpoint  # noqa: E402
from spoilfive_env.core import SpoilFiveCore  # noqa: E402
from spoilfive_env.observation import OBS_DIM  # noqa: E402
from spoilfive_env.rules import Rules  # noqa: E402


@pytest.mark.parametrize("recorder_class", [distill.SearchRecorder, distill.PIMCRecorder])
def test_recorded_values_are_the_searchs_choice(recorder_class):
    """Every recorded row: a value for each legal action and none for an illegal one, and the
    action the agent played has the best recorded mean."""
    rules = Rules(num_players=4)
    recorder = recorder_class(seed=3, samples=4)
    recorder.bind(rules)
    core = SpoilFiveCore(16, rules=rules, seed=5)
    played, seen = [], []
    while not core.done.all():
        masks, live = core.legal_mask(), np.flatnonzero(~core.done)
        searched = live[masks[live].sum(axis=1) > 1]
        actions = np.zeros(core.batch_size, np.int64)
        actions[live] = recorder.act_batch(core.observe()[live], masks[live])
        played.append(actions[searched])
        seen.append((core.observe()[searched], masks[searched]))
        core.step(actions, where=~core.done)
    data, played = recorder.recorded(), np.concatenate(played)
    assert len(data["observations"]) == len(played) > 0
    assert data["observations"].dtype == np.float16 and data["observations"].shape[1] == core.observe().shape[1]
    values, masks = data["values"], data["masks"]
    assert np.array_equal(~np.isnan(values), masks)
    # each row is the decision it was searched for: its observation and mask, in the order they came
    assert np.array_equal(data["observations"], np.concatenate([obs for obs, _ in seen]).astype(np.float16))
    assert np.array_equal(masks, np.concatenate([mask for _, mask in seen]))
    best = np.nanmax(values, axis=1)
    assert np.allclose(values[np.arange(len(played)), played], best)


def test_the_fit_moves_the_policy_toward_the_search():
    """Values that prefer one legal action in every row: after fitting, the network plays it far
    more often than before, the held-out regret falls, and the critic is untouched."""
    rules = Rules(num_players=3)
    core = SpoilFiveCore(64, rules=rules, seed=0)
    observations, masks = [], []
    while not core.done.all() and len(observations) < 20:
        mask = core.legal_mask()
        many = ~core.done & (mask.sum(axis=1) > 1)
        observations.append(core.observe()[many])
        masks.append(mask[many])
        core.step(np.argmax(mask, axis=1), where=~core.done)
    observations, masks = np.concatenate(observations), np.concatenate(masks)
    preferred = masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)  # the highest legal action id
    values = np.where(masks, 0.0, np.nan)
    values[np.arange(len(masks)), preferred] = 1.0
    data = {"observations": observations.astype(np.float16), "masks": masks, "values": values.astype(np.float32)}
    net, _ = load_checkpoint(resolve_checkpoint("ppo"))
    critic = {k: v.clone() for k, v in net.state_dict().items() if k.startswith("critic")}
    history = distill.fit_to_search(net, data, tau=0.1, epochs=20, lr=3e-3, holdout=0.2, say=lambda _: None)
    assert history[-1]["agreement"] > history[0]["agreement"] + 0.3
    assert history[-1]["held_out_regret"] < history[0]["held_out_regret"] - 0.3
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in critic.items())


def test_the_command_writes_a_loadable_policy_and_reuses_its_targets(tmp_path, monkeypatch, capsys):
    out, data_dir = tmp_path / "distilled.pt", tmp_path / "targets"
    argv = ["--out", str(out), "--players", "3", "--deals", "2", "--seed", "7", "--samples", "2",
            "--epochs", "1", "--data", str(data_dir)]
    assert distill.main(argv) == 0
    assert len(list(data_dir.glob("*.npz"))) == 1
    agent = load_agent(str(out))
    _, checkpoint = load_checkpoint(out)
    assert checkpoint["args"]["distilled"]["players"] == [3] and checkpoint["args"]["distilled"]["seed"] == 7
    assert len(checkpoint["progress"]["distill_history"]) == 2
    assert load_agent(f"pimc_ppo:samples=2:policy={out}").policy.name == str(out) == agent.name

    def no_search(*args, **kwargs):
        raise AssertionError("the saved targets should have been read")

    monkeypatch.setattr(distill, "search_targets", no_search)
    assert distill.main(argv) == 0
    assert "decisions read from" in capsys.readouterr().out


def test_the_command_fits_a_network_to_pimc_for_the_other_seats(tmp_path, capsys):
    out, data_dir = tmp_path / "pimc-like.pt", tmp_path / "targets"
    argv = ["--expert", "pimc", "--out", str(out), "--players", "3", "--deals", "2", "--seed", "7",
            "--epochs", "1", "--data", str(data_dir)]
    assert distill.main(argv) == 0
    assert [path.name for path in data_dir.glob("*.npz")] == ["targets_pimc_3p_2deals_seed7_128samples.npz"]
    _, checkpoint = load_checkpoint(out)
    assert checkpoint["args"]["distilled"]["expert"] == "pimc" and checkpoint["args"]["distilled"]["samples"] == 128
    assert f"pimc_ppo:others={out}" in capsys.readouterr().out
    assert load_agent(f"pimc_ppo:samples=2:others={out}").others == str(out)


@pytest.mark.parametrize("argv, message", [
    (["--out", "x"], "ending in .pt"),
    (["--out", "x.pt", "--players", "1,3"], "table sizes must be 2-10"),
    (["--out", "x.pt", "--players", "3,3"], "distinct"),
    (["--out", "x.pt", "--players", "3,4", "--deals", "1,2,3"],
     "--deals 1,2,3: give one number, or one for each of the 2 table sizes"),
    (["--out", "x.pt", "--players", "3,8,9"],
     "--players 8,9: give --deals (its default is for 2, 3, 4, 5, 6 players only)"),
    (["--out", "x.pt", "--players", "three"], "comma-separated list of table sizes"),
    (["--out", "x.pt", "--players", "3", "--deals", "0"], "whole numbers of at least 1"),
    (["--out", "x.pt", "--players", "3,4", "--deals", "5,2000000"], "at most 1,000,000"),
    (["--out", "x.pt", "--policy", "no-such-policy"], "no checkpoint file"),
    (["--out", "x.pt", "--policy", "no-such-policy"], "give a checkpoint's path or the name of one shipped in "
                                                      "agents/checkpoints (ppo"),
    (["--out", "x.pt", "--tau", "0"], "--tau: '0' is not allowed: give a finite number above 0"),
    (["--out", "x.pt", "--expert", "ppo"], "invalid choice: 'ppo'"),
    # values the fit cannot hold: a traceback (--epochs, --lr) or a checkpoint of NaN (--lr, --tau), after the search
    (["--out", "x.pt", "--players", "3", "--deals", "2", "--epochs", "99999999999999999999"],
     "--epochs 99999999999999999999 is not allowed: give at most 10,000"),
    (["--out", "x.pt", "--players", "3", "--deals", "2", "--lr", "1e308"], "--lr: '1e308' is not allowed: give a "
                                                                           "learning rate above 0, at most 1"),
    # size i plays seed + i: the last size's seed must be one the engine takes too
    (["--out", "x.pt", "--players", "2,3", "--seed", "4294967295"], "--seed 4294967295 is not allowed with 2 table "
                                                                     "sizes: they would take seeds past 4,294,967,295; "
                                                                     "give at most 4,294,967,294"),
    (["--out", "x.pt", "--players", "3", "--deals", "2", "--tau", "1e-320"], "is not allowed: give a temperature "
                                                                             "from 1e-06 to 1,000,000 chips"),
    # a temperature so high that the illegal actions' value weighs in: a fit to play them, at a loss of millions
    (["--out", "x.pt", "--players", "3", "--deals", "2", "--tau", "1e300"], "--tau 1e+300 is not allowed: give a "
                                                                            "temperature from 1e-06 to 1,000,000"),
])
def test_bad_flags_are_one_line(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        distill.main([*argv, "--data", str(tmp_path)])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert message in error and len(error.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing searched, nothing written


@pytest.mark.parametrize("data", ["", " "])
def test_a_blank_data_folder_is_refused_not_taken_for_the_current_one(data, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # where '' put the targets, and where ' ' was made
    with pytest.raises(SystemExit) as stopped:
        distill.main(["--out", "x.pt", "--players", "3", "--deals", "2", "--epochs", "1", "--data", data])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and f"--data {data!r}: give a folder" in error and len(error.splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_an_output_folder_that_cannot_be_made_is_refused_before_the_search(tmp_path, capsys):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    data = tmp_path / "d"
    for argv, flag in ((["--out", str(blocked / "x.pt"), "--data", str(data)], "--out"),
                       (["--out", str(tmp_path / "x.pt"), "--data", str(blocked / "data")], "--data")):
        with pytest.raises(SystemExit) as stopped:
            distill.main([*argv, "--players", "3", "--deals", "2"])
        assert stopped.value.code == 2
        error = capsys.readouterr().err
        assert f"{flag} " in error and "is a file, so no folder can be made in it" in error
        assert len(error.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # no folder made, nothing searched


@pytest.mark.parametrize("argv, message", [
    (["--players", "3,3"], "distinct"), (["--policy", "nobody"], "no checkpoint file"),
    (["--players", "2", "--deals", "2"], "at least 6 hands in all"),
])
def test_a_refused_command_leaves_no_folder_behind(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        distill.main(["--out", str(tmp_path / "new" / "x.pt"), "--data", str(tmp_path / "data"), *argv])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and message in error and len(error.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # the folders are made only once every value passed


def test_an_output_that_is_a_folder_is_refused_before_the_search(tmp_path, capsys):
    (tmp_path / "x.pt").mkdir()
    with pytest.raises(SystemExit) as stopped:
        distill.main(["--out", str(tmp_path / "x.pt"), "--data", str(tmp_path / "data"), "--players", "3"])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and "is a folder" in error and len(error.strip().splitlines()) == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["x.pt"]


def test_the_fit_holds_out_at_least_one_decision_and_refuses_too_few():
    from agents.policy import PolicyNet

    rng = np.random.default_rng(0)
    masks = np.zeros((10, 107), bool)
    masks[:, :3] = True
    data = {"observations": rng.random((10, OBS_DIM)).astype(np.float32), "masks": masks,
            "values": np.where(masks, rng.random((10, 107)), np.nan)}
    history = distill.fit_to_search(PolicyNet(hidden=(8,)), data, epochs=1, say=lambda text: None)
    assert np.isfinite(history[-1]["held_out_regret"])  # 5% of 10 rounds to none: one is held out anyway
    with pytest.raises(ValueError, match="^1 searched decisions are too few to fit and measure: search more deals$"):
        distill.fit_to_search(PolicyNet(hidden=(8,)), {key: value[:1] for key, value in data.items()}, epochs=1)


SMALL_RUN = ["--expert", "pimc", "--samples", "2", "--players", "3", "--deals", "2", "--seed", "7", "--epochs", "1"]


def test_a_ctrl_c_while_the_targets_are_written_leaves_no_cut_off_file(tmp_path, monkeypatch, capsys):
    def cut_short(file, **arrays):  # half a zip file written, then Ctrl-C
        with open(file, "wb") if isinstance(file, (str, Path)) else nullcontext(file) as out:
            out.write(b"PK\x03\x04" + b"\0" * 100)
        raise KeyboardInterrupt

    monkeypatch.setattr(distill.np, "savez", cut_short)
    data_dir = tmp_path / "targets"
    argv = [*SMALL_RUN, "--out", str(tmp_path / "x.pt"), "--data", str(data_dir)]
    assert exit_status(distill.main, argv) == INTERRUPTED
    assert "Traceback" not in capsys.readouterr().err
    assert list(data_dir.iterdir()) == []  # neither the targets file nor its temporary


def test_targets_that_cannot_be_read_are_searched_again(tmp_path, capsys):
    data_dir = tmp_path / "targets"
    data_dir.mkdir()
    saved = data_dir / "targets_pimc_3p_2deals_seed7_2samples.npz"
    saved.write_bytes(b"PK\x03\x04" + b"\0" * 100)  # cut off by a Ctrl-C of an older version
    assert distill.main([*SMALL_RUN, "--out", str(tmp_path / "x.pt"), "--data", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert f"3 players: the saved targets in {saved} cannot be read (BadZipFile" in out
    assert "searching again" in out and "saved to" in out
    with np.load(saved) as targets:
        assert len(targets["observations"]) == len(targets["values"]) > 0
    assert sorted(path.name for path in data_dir.iterdir()) == [saved.name]


def synthetic_targets(count: int = 40, seed: int = 0) -> dict[str, np.ndarray]:
    """Search targets of the recorded kind (float16 observations, bool masks, NaN at illegal actions)."""
    rng = np.random.default_rng(seed)
    masks = np.zeros((count, 107), bool)
    masks[:, :3] = True
    return {"observations": rng.random((count, OBS_DIM)).astype(np.float16), "masks": masks,
            "values": np.where(masks, rng.random((count, 107)), np.nan).astype(np.float32)}


def misfit(key, change):
    def make():
        data = synthetic_targets()
        data[key] = change(data[key])
        return data
    return make


@pytest.mark.parametrize("make, says", [
    (misfit("observations", lambda a: a[:, :5]), "observations must be floats of shape (decisions, 968), got "
                                                 "float16 of shape (40, 5)"),
    (misfit("observations", lambda a: a[:, 0]), "observations must be floats of shape (decisions, 968)"),
    (misfit("observations", lambda a: a.astype(str)), "observations must be floats"),
    (misfit("observations", lambda a: a[:0]), "it holds no decision"),
    (misfit("masks", lambda a: a.astype(np.int8)), "masks must be booleans of shape (40, 107), one row per "
                                                   "observation, got int8"),
    (misfit("masks", lambda a: a[:10]), "masks must be booleans of shape (40, 107)"),
    (misfit("values", lambda a: a[:10]), "values must be floats of shape (40, 107), one row per observation, "
                                         "got float32 of shape (10, 107)"),
    (misfit("values", lambda a: a.astype(str)), "values must be floats"),
    (misfit("masks", lambda a: np.where(np.arange(len(a))[:, None] == 3, False, a)), "a decision has no legal action"),
    (misfit("observations", with_entry(np.nan)), "observations hold NaN or infinite values"),
    (misfit("observations", with_entry(np.inf)), "observations hold NaN or infinite values"),
    (misfit("values", with_entry(np.inf)), "the values of legal actions hold NaN or infinite values"),
    (misfit("values", with_entry(np.nan)), "the values of legal actions hold NaN or infinite values"),
])
def test_saved_targets_that_do_not_fit_are_not_read(make, says, tmp_path):
    """Arrays of the right names but of a shape, type or value the fit cannot take: read as a file that
    cannot be read (searched again), not fitted (a traceback, or a checkpoint of NaN)."""
    path = tmp_path / "targets.npz"
    distill.save_targets(path, make())
    part, why = distill.read_targets(path)
    assert part is None and says in why
    distill.save_targets(path, synthetic_targets())  # the valid file they were made from is read
    part, why = distill.read_targets(path)
    assert why == "" and len(part["observations"]) == 40


def test_saved_targets_with_infinite_values_are_searched_again(tmp_path, capsys):
    data_dir = tmp_path / "targets"
    saved = data_dir / "targets_pimc_3p_2deals_seed7_2samples.npz"
    data_dir.mkdir()
    distill.save_targets(saved, misfit("values", with_entry(np.inf))())
    out_file = tmp_path / "x.pt"
    assert distill.main([*SMALL_RUN, "--out", str(out_file), "--data", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert (f"3 players: the saved targets in {saved} cannot be read (the values of legal actions hold NaN or "
            "infinite values); searching again") in out
    net, _ = load_checkpoint(out_file)
    assert all(torch.isfinite(value).all() for value in net.state_dict().values())
    part, why = distill.read_targets(saved)  # the search's own targets replaced them
    assert why == "" and len(part["observations"]) > 0


def test_a_network_fitted_to_nan_is_not_saved(tmp_path, monkeypatch, capsys):
    data_dir, out_file = tmp_path / "targets", tmp_path / "x.pt"
    data_dir.mkdir()
    distill.save_targets(data_dir / "targets_pimc_3p_2deals_seed7_2samples.npz", synthetic_targets())

    def fit_to_nan(net, data, **kwargs):
        with torch.no_grad():
            next(net.parameters()).fill_(float("nan"))
        return []

    monkeypatch.setattr(distill, "fit_to_search", fit_to_nan)
    assert distill.main([*SMALL_RUN, "--out", str(out_file), "--data", str(data_dir)]) == 1
    err = capsys.readouterr().err
    assert "error: the fitted network's weights hold NaN or infinite values" in err and "nothing saved" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["targets"]  # no checkpoint written


def test_two_policies_of_one_file_name_do_not_share_targets(tmp_path, monkeypatch, capsys):
    """The targets are kept by the policy's content, not its file name: another network saved under
    the same name is searched, not given the first one's targets."""
    from agents.policy import save_checkpoint

    net, checkpoint = load_checkpoint(resolve_checkpoint("ppo"))
    first, second = tmp_path / "a" / "agent.pt", tmp_path / "b" / "agent.pt"
    for path in (first, second):
        path.parent.mkdir()
        with torch.no_grad():
            next(net.parameters()).add_(0.01)  # another network each time
        save_checkpoint(path, net, checkpoint.get("args", {}))
    searched = []

    def search(num_players, deals, seed, policy, *args, **kwargs):
        searched.append(policy)
        return synthetic_targets()

    monkeypatch.setattr(distill, "search_targets", search)
    data_dir = tmp_path / "targets"
    run = ["--players", "3", "--deals", "2", "--seed", "7", "--samples", "2", "--epochs", "1", "--data", str(data_dir)]
    for policy in (first, second, first):
        assert distill.main([*run, "--policy", str(policy), "--out", str(tmp_path / "x.pt")]) == 0
    assert searched == [str(first), str(second)]  # the third run read the first one's targets
    assert len(list(data_dir.glob("targets_agent-*_3p_2deals_seed7_2samples.npz"))) == 2
    copy = tmp_path / "agent.pt"
    copy.write_bytes(first.read_bytes())
    assert distill.policy_key(copy) == distill.policy_key(first) != distill.policy_key(second)  # by content


def test_a_folder_in_place_of_the_targets_file_is_refused_before_the_search(tmp_path, capsys):
    data_dir = tmp_path / "targets"
    (data_dir / "targets_pimc_3p_2deals_seed7_2samples.npz").mkdir(parents=True)
    with pytest.raises(SystemExit) as stopped:
        distill.main([*SMALL_RUN, "--out", str(tmp_path / "x.pt"), "--data", str(data_dir)])
    captured = capsys.readouterr()
    assert stopped.value.code == 2 and captured.out == ""
    assert (f"--data {str(data_dir)!r} cannot be written: targets_pimc_3p_2deals_seed7_2samples.npz in it is a "
            "folder") in captured.err and len(captured.err.strip().splitlines()) == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["targets"]


def test_the_loss_does_not_weigh_the_network_s_logits_of_illegal_actions():
    """The fit is a cross-entropy over the legal actions alone: two networks that differ only in the logit of an
    action never legal in the data (lifted by 50) have the same loss, epoch by epoch (learning rate 0)."""
    from agents.policy import PolicyNet

    data = synthetic_targets()
    torch.manual_seed(0)
    net = PolicyNet(hidden=(8,))
    lifted = PolicyNet(hidden=(8,))
    lifted.load_state_dict(net.state_dict())
    with torch.no_grad():
        lifted.actor_head.bias[50] += 50.0  # action 50: never legal (the legal ones are 0-2)
    losses = [[epoch["loss"] for epoch in distill.fit_to_search(model, data, epochs=2, lr=0.0, say=lambda _: None)[1:]]
              for model in (net, lifted)]
    assert np.isfinite(losses[0]).all() and losses[0] == pytest.approx(losses[1], rel=1e-6)


def test_the_loss_is_the_cross_entropy_to_the_softmax_of_the_values_over_the_temperature():
    """A network whose logits are its head's bias alone (1, 0, -1 for the legal actions 0-2), fitted at learning
    rate 0 to rows that all value those actions 0, 0.1 and 0.3 chips: at tau 0.1 the targets are softmax(0, 1, 3),
    and the loss their cross-entropy to the network's softmax over the legal actions (not to the best action
    alone)."""
    from agents.policy import PolicyNet

    data = synthetic_targets()
    data["values"][:, :3] = [0.0, 0.1, 0.3]
    net = PolicyNet(hidden=(8,))
    with torch.no_grad():
        net.actor_head.weight.zero_()
        net.actor_head.bias.zero_()
        net.actor_head.bias[:3] = torch.tensor([1.0, 0.0, -1.0])
    target = np.exp([0.0, 1.0, 3.0]) / np.exp([0.0, 1.0, 3.0]).sum()
    log_policy = np.array([1.0, 0.0, -1.0]) - np.log(np.exp([1.0, 0.0, -1.0]).sum())
    history = distill.fit_to_search(net, data, tau=0.1, epochs=1, lr=0.0, say=lambda _: None)
    assert history[1]["loss"] == pytest.approx(-(target * log_policy).sum(), rel=1e-5)


def test_a_value_given_to_an_illegal_action_is_no_target():
    """Targets whose illegal actions hold a (finite) value fit as those that hold none (NaN, as the search
    records them): an illegal action has no target weight, whatever value a file gives it."""
    from agents.policy import PolicyNet

    data = synthetic_targets()
    valued = {**data, "values": np.where(data["masks"], data["values"], np.float32(5.0))}
    histories = []
    for targets in (data, valued):
        torch.manual_seed(0)
        histories.append(distill.fit_to_search(PolicyNet(hidden=(8,)), targets, epochs=2, say=lambda _: None))
    assert [h["loss"] for h in histories[1][1:]] == pytest.approx([h["loss"] for h in histories[0][1:]], rel=1e-6)
    assert histories[1][-1]["held_out_regret"] == pytest.approx(histories[0][-1]["held_out_regret"])


def test_the_fit_holds_out_its_share_of_the_decisions_and_trains_on_the_rest():
    """40 decisions with 5% held out: 2 are held out (the figure said first), the other 38 trained on."""
    from agents.policy import PolicyNet

    said = []
    distill.fit_to_search(PolicyNet(hidden=(8,)), synthetic_targets(), epochs=1, say=said.append)
    assert said[0].startswith("40 searched decisions (2 held out); before: held-out regret ")


def stand_in_search(searched: list):
    """A stand-in for the search: records its call, and gives targets that depend on the table size alone."""
    def search(num_players, deals, seed, policy, samples, **kwargs):
        searched.append((num_players, deals, seed, samples))
        return synthetic_targets(seed=num_players)
    return search


def test_table_size_i_searches_the_deals_of_seed_plus_i_and_the_fit_sees_the_sizes_in_order(tmp_path, monkeypatch):
    """``--players 4,3 --seed 7`` searches 4 players on seed 7 and 3 on seed 8; the fit takes the sizes in
    order whatever --players' order: the same targets given as 3,4 give the same network."""
    searched = []
    monkeypatch.setattr(distill, "search_targets", stand_in_search(searched))
    run = ["--deals", "2", "--seed", "7", "--samples", "2", "--epochs", "1"]
    for players in ("4,3", "3,4"):
        assert distill.main([*run, "--players", players, "--out", str(tmp_path / f"{players}.pt"),
                             "--data", str(tmp_path / players)]) == 0
    assert searched == [(4, 2, 7, 2), (3, 2, 8, 2), (3, 2, 7, 2), (4, 2, 8, 2)]
    (first, _), (second, _) = (load_checkpoint(tmp_path / f"{players}.pt") for players in ("4,3", "3,4"))
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values()))


def test_the_last_seed_a_size_may_take_is_taken(tmp_path, monkeypatch):
    """Two table sizes from seed 4,294,967,294: the second size plays seed 4,294,967,295, the last the engine
    takes (refused only one seed later: tests above)."""
    searched = []
    monkeypatch.setattr(distill, "search_targets", stand_in_search(searched))
    assert distill.main(["--players", "2,3", "--deals", "2", "--seed", "4294967294", "--samples", "2", "--epochs",
                         "1", "--out", str(tmp_path / "x.pt"), "--data", str(tmp_path / "data")]) == 0
    assert [seed for _, _, seed, _ in searched] == [4294967294, 4294967295]


def test_targets_of_another_sample_count_are_searched_anew_and_the_checkpoint_keeps_its_source_s_settings(
        tmp_path, monkeypatch):
    """Saved targets are reused only for the same settings: a run with more samples a decision searches again
    (a third run, as the first, reads the first's). The checkpoint keeps the source policy's settings beside
    the distillation's."""
    searched = []
    monkeypatch.setattr(distill, "search_targets", stand_in_search(searched))
    run = ["--players", "3", "--deals", "2", "--seed", "7", "--epochs", "1", "--data", str(tmp_path / "data")]
    for samples in ("2", "3", "2"):
        assert distill.main([*run, "--samples", samples, "--out", str(tmp_path / "x.pt")]) == 0
    assert searched == [(3, 2, 7, 2), (3, 2, 7, 3)]
    _, source = load_checkpoint(resolve_checkpoint("ppo"))
    _, checkpoint = load_checkpoint(tmp_path / "x.pt")
    distilled = checkpoint["args"].pop("distilled")
    assert checkpoint["args"] == source["args"] and distilled["samples"] == 2 and distilled["policy"] == "ppo"


def test_the_progress_bar_counts_every_searched_decision():
    """The bar a search is shown with moves by the decisions searched in each call (several games' at once), so
    at the end it reads the number of decisions recorded."""
    rules = Rules(num_players=3)
    counted = []
    recorder = distill.PIMCRecorder(seed=0, samples=2, progress=SimpleNamespace(update=counted.append))
    recorder.bind(rules)
    core = SpoilFiveCore(6, rules=rules, seed=1)
    while not core.done.all():
        live = np.flatnonzero(~core.done)
        actions = np.zeros(core.batch_size, np.int64)
        actions[live] = recorder.act_batch(core.observe()[live], core.legal_mask()[live])
        core.step(actions, where=~core.done)
    assert max(counted) > 1  # some calls searched several decisions
    assert sum(counted) == len(recorder.recorded()["observations"])


def test_the_search_plays_the_policy_it_is_given_and_pimc_none(monkeypatch):
    """search_targets builds pimc_ppo's recorder with the --policy that plays its rollouts (and its samples);
    pimc's takes no policy. The tables are stood in for: only what reaches the recorder is checked."""
    built, played = [], []

    class StandIn:
        def __init__(self, **options):
            built.append(options)

        def recorded(self):
            return synthetic_targets()

    monkeypatch.setattr(distill, "EXPERTS", {"pimc_ppo": (StandIn, 4), "pimc": (StandIn, 128)})
    monkeypatch.setattr(distill, "evaluate", lambda agents, **table: played.append(table))
    distill.search_targets(3, 2, 7, policy="runs/x.pt", samples=5)
    distill.search_targets(4, 1, 8, policy="runs/x.pt", samples=6, expert="pimc")
    assert [{key: value for key, value in options.items() if key != "progress"} for options in built] == \
        [{"samples": 5, "policy": "runs/x.pt"}, {"samples": 6}]
    assert played == [dict(num_players=3, deals=2, seed=7), dict(num_players=4, deals=1, seed=8)]


def test_the_held_out_regret_and_agreement_are_over_the_legal_actions_and_averaged():
    """A network that prefers action 0 of the legal 0-2 (and an illegal action 50 above all): in three rows whose
    best actions are 0, 1 and 2 it agrees once and gives up 0, 0.3 and 0.7 chips: regret 1/3 a decision, the
    mean (not the worst row), agreement 1/3; its illegal favourite is never its choice."""
    from agents.policy import PolicyNet

    net = PolicyNet(hidden=(8,))
    with torch.no_grad():
        net.actor_head.weight.zero_()
        net.actor_head.bias.zero_()
        net.actor_head.bias[:3] = torch.tensor([1.0, 0.0, -1.0])
        net.actor_head.bias[50] = 50.0
    masks = torch.zeros((3, 107), dtype=torch.bool)
    masks[:, :3] = True
    values = torch.full((3, 107), distill.ILLEGAL)
    values[:, :3] = torch.tensor([[0.5, 0.2, 0.1], [0.1, 0.4, 0.0], [0.2, 0.2, 0.9]])
    regret, agreement = distill.held_out_regret(net, torch.zeros((3, OBS_DIM)), masks, values)
    assert regret == pytest.approx(1 / 3) and agreement == pytest.approx(1 / 3)


def test_the_held_out_decisions_are_never_trained_on():
    """40 decisions, 5% held out: each epoch trains on the other 38, each once, and never on the 2 held out (the
    regret they measure would be flattered by a fit to them)."""
    from agents.policy import PolicyNet

    class Watched(PolicyNet):
        def logits(self, observations):
            if torch.is_grad_enabled():  # the fit's forward passes; the regret's run under inference_mode
                trained.append(observations.clone())
            return super().logits(observations)

    data, trained = synthetic_targets(), []
    distill.fit_to_search(Watched(hidden=(8,)), data, epochs=2, batch_size=16, say=lambda _: None)
    rows = {tuple(row.tolist()) for row in torch.as_tensor(data["observations"]).float()}
    assert len(rows) == 40
    epochs = torch.cat(trained).split(38)
    assert len(epochs) == 2 and all(len({tuple(row.tolist()) for row in epoch}) == 38 for epoch in epochs)
    assert {tuple(row.tolist()) for row in epochs[0]} == {tuple(row.tolist()) for row in epochs[1]} < rows


def test_a_targets_file_that_lacks_an_array_is_searched_again(tmp_path):
    path = tmp_path / "targets.npz"
    distill.save_targets(path, {key: value for key, value in synthetic_targets().items() if key != "values"})
    part, why = distill.read_targets(path)
    assert part is None and why.startswith("KeyError")
