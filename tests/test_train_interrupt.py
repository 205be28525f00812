"""Nothing is lost on Ctrl-C: a stop during the PPO update resumes into the same run as an
uninterrupted one, a failed checkpoint save leaves no half-written file, and a run stopped
before its first iteration names only the files it wrote.

Ctrl-C is simulated in-process: :class:`train.StopRequest` is replaced by a subclass that
records itself, and the test calls its signal handler at the moment it wants.
"""

from __future__ import annotations

import csv
import signal

import pytest

torch = pytest.importorskip("torch")

from conftest import load_script  # noqa: E402

from agents.policy import PolicyNet, load_checkpoint, save_checkpoint  # noqa: E402

TINY_RUN = ("--num-games", "32", "--min-players", "3", "--max-players", "4", "--hidden", "32",
            "--minibatch-size", "64", "--total-decisions", "3000", "--eval-every", "0", "--eval-players", "3",
            "--final-eval-deals", "0", "--torch-threads", "1", "--no-progress-bar")
# Columns of progress.csv that a repeated run reproduces (not the wall-clock ones).
REPEATABLE_COLUMNS = ("iteration", "decisions", "trained", "learning_rate", "value_loss", "policy_loss",
                      "entropy", "approx_kl", "clipfrac", "explained_variance", "hands", "self_spoil_rate",
                      "equity_vs_snapshot", "snapshot")


def train_with_ctrl_c(monkeypatch):
    """The train module, with every StopRequest it makes kept in the returned list."""
    train = load_script("train.py", "train_interrupt_module")
    stops = []

    class RecordedStopRequest(train.StopRequest):
        def __enter__(self):
            stops.append(self)
            return super().__enter__()

    monkeypatch.setattr(train, "StopRequest", RecordedStopRequest)
    return train, stops


def press_ctrl_c(stop) -> None:
    stop._handle(signal.SIGINT, None)


def repeatable_rows(run) -> list[dict]:
    with open(run / "progress.csv", newline="") as f:
        return [{k: row[k] for k in REPEATABLE_COLUMNS} for row in csv.DictReader(f)]


@pytest.mark.parametrize("league", [(), ("--snapshot-sampling", "pfsp", "--snapshot-every", "1")],
                         ids=["uniform", "pfsp"])
def test_ctrl_c_during_the_update_resumes_into_the_uninterrupted_run(tmp_path, monkeypatch, league):
    train, stops = train_with_ctrl_c(monkeypatch)
    iterations, minibatches, armed = [], [], [True]

    def seat_gae(*args):  # called once an iteration, just before its update
        iterations.append(len(iterations) + 1)
        minibatches.clear()
        return original_gae(*args)

    def clip_grad_norm(*args, **kwargs):  # once a minibatch: Ctrl-C in the middle of iteration 2's update
        minibatches.append(1)
        if armed[0] and iterations[-1] == 2 and len(minibatches) == 2:
            press_ctrl_c(stops[-1])
        return original_clip(*args, **kwargs)

    original_gae, original_clip = train.seat_gae, torch.nn.utils.clip_grad_norm_
    monkeypatch.setattr(train, "seat_gae", seat_gae)
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", clip_grad_norm)
    runs = ["--runs-dir", str(tmp_path)]
    threads_at_start = torch.get_num_threads()

    def session(*argv) -> dict:  # each as a new process would start it: a run leaves torch at 1 thread,
        torch.set_num_threads(threads_at_start)  # and CPU bf16 rounds differently after that
        return train.main([*runs, *argv])

    stopped = session("--run-name", "stopped", *TINY_RUN, *league)
    assert stopped["interrupted"] and stopped["progress"]["iteration"] == 2
    armed[0] = False
    resumed = session("--run-name", "stopped", "--resume", "--no-progress-bar")
    whole = session("--run-name", "whole", *TINY_RUN, *league)
    torch.set_num_threads(threads_at_start)
    assert not resumed["interrupted"] and not whole["interrupted"]
    assert whole["progress"]["iteration"] > 2  # the stop was not the run's last iteration anyway

    assert repeatable_rows(tmp_path / "stopped") == repeatable_rows(tmp_path / "whole")
    (net, data), (whole_net, whole_data) = (load_checkpoint(tmp_path / name / "checkpoint.pt")
                                            for name in ("stopped", "whole"))
    assert data["progress"] == {**whole_data["progress"], "seconds": data["progress"]["seconds"]}
    assert ("snapshot_equity" in data["progress"]) == bool(league)  # pfsp's figures are resumed with the run
    for (name, value), whole_value in zip(net.state_dict().items(), whole_net.state_dict().values(), strict=True):
        assert torch.equal(value, whole_value), name
    for key, state in data["optimizer"]["state"].items():  # Adam's moments and step counts too
        for name, value in state.items():
            assert torch.equal(value, whole_data["optimizer"]["state"][key][name]), (key, name)


@pytest.mark.parametrize("failure", [KeyboardInterrupt(), OSError(28, "No space left on device")])
def test_a_failed_save_leaves_the_old_checkpoint_and_no_partial_file(tmp_path, monkeypatch, failure):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, PolicyNet(hidden=(8,)), {"seed": 1}, {"iteration": 4})
    before = path.read_bytes()

    def torch_save_cut_short(data, file):  # a few bytes written, then the second Ctrl-C (or a full disk)
        file.write(b"PK\x03\x04 partial")
        file.flush()
        raise failure

    monkeypatch.setattr(torch, "save", torch_save_cut_short)
    with pytest.raises(type(failure)):
        save_checkpoint(path, PolicyNet(hidden=(8,)), {"seed": 1}, {"iteration": 5})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]
    assert path.read_bytes() == before
    monkeypatch.undo()
    assert load_checkpoint(path)[1]["progress"]["iteration"] == 4


def train_stopped_at_once(monkeypatch):
    """``train`` whose run is stopped by Ctrl-C as it starts, before its first iteration."""
    train, _ = train_with_ctrl_c(monkeypatch)

    class StoppedAtOnce(train.StopRequest):
        def __enter__(self):
            super().__enter__()
            press_ctrl_c(self)
            return self

    monkeypatch.setattr(train, "StopRequest", StoppedAtOnce)
    return train


def test_a_run_stopped_before_its_first_iteration_names_only_what_it_wrote(tmp_path, monkeypatch, capsys):
    train = train_stopped_at_once(monkeypatch)
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "early", *TINY_RUN])
    assert summary["interrupted"] and summary["progress"]["iteration"] == 0
    run = tmp_path / "early"
    assert not (run / "learning_curve.png").exists()
    words = capsys.readouterr().out
    agent_line = next(line for line in words.splitlines() if line.startswith("The agent:"))
    assert "learning curve" not in agent_line and "learning_curve.png" not in words
    for name in ("agent.pt", "checkpoint.pt", "summary.json"):
        assert str(run / name) in agent_line and (run / name).is_file(), name


def press_ctrl_c_after_iteration(train, stops, monkeypatch, iteration: int) -> None:
    """Ctrl-C while the given iteration's update is about to start (once an iteration: at its GAE)."""
    calls, original_gae = [], train.seat_gae

    def seat_gae(*args):
        calls.append(1)
        if len(calls) == iteration:
            press_ctrl_c(stops[-1])
        return original_gae(*args)

    monkeypatch.setattr(train, "seat_gae", seat_gae)


def test_a_run_stopped_by_ctrl_c_skips_the_final_check_and_is_shipped_only_once_resumed_to_its_end(
        tmp_path, monkeypatch, capsys):
    """An interrupted run stops after the iteration Ctrl-C came in, without its evaluation (due every iteration
    here) or the final check, and --ship-as waits for the resumed run, which then ships its agent.pt (the weights
    without the optimizer) as agents/checkpoints/NAME.pt."""
    train, stops = train_with_ctrl_c(monkeypatch)
    monkeypatch.setattr(train, "CHECKPOINT_DIR", tmp_path / "checkpoints")  # not the repository's own folder
    press_ctrl_c_after_iteration(train, stops, monkeypatch, 1)
    argv = ["--runs-dir", str(tmp_path), "--run-name", "ship"]
    stopped = train.main([*argv, *TINY_RUN, "--final-eval-deals", "2", "--ship-as", "shipped-here",
                          "--eval-every", "1", "--eval-deals", "2"])
    assert stopped["interrupted"] and stopped["progress"]["iteration"] == 1
    assert [row["eval_3p_share"] for row in csv.DictReader((tmp_path / "ship" / "progress.csv").open())] == [""]
    assert "final_eval" not in stopped and "shipped" not in stopped
    assert not (tmp_path / "checkpoints").exists()
    assert "not shipped as 'shipped-here': the run was interrupted" in capsys.readouterr().out
    finished = train.main([*argv, "--resume", "--no-progress-bar"])
    shipped = tmp_path / "checkpoints" / "shipped-here.pt"
    assert not finished["interrupted"] and finished["shipped"] == str(shipped) and "final_eval" in finished
    assert shipped.read_bytes() == (tmp_path / "ship" / "agent.pt").read_bytes()


def test_ship_as_replaces_a_checkpoint_already_shipped_only_when_told_to(tmp_path, monkeypatch, capsys):
    """The shipped agents live in agents/checkpoints/ (best plays its rollouts with ppo there): --ship-as onto a
    name already there is refused before any work, the file untouched; with --replace-shipped the run's agent.pt
    replaces it."""
    train = load_script("train.py", "train_ship_module")
    monkeypatch.setattr(train, "CHECKPOINT_DIR", tmp_path / "checkpoints")  # not the repository's own folder
    shipped = tmp_path / "checkpoints" / "mine.pt"
    shipped.parent.mkdir()
    shipped.write_bytes(b"the shipped one")
    argv = ["--runs-dir", str(tmp_path), "--run-name", "again", *TINY_RUN, "--ship-as", "mine"]
    with pytest.raises(SystemExit) as refused:
        train.main(argv)
    assert refused.value.code == 2 and "--replace-shipped to replace it" in capsys.readouterr().err
    assert shipped.read_bytes() == b"the shipped one" and not (tmp_path / "again").exists()
    finished = train.main([*argv, "--replace-shipped"])
    assert finished["shipped"] == str(shipped)
    assert shipped.read_bytes() == (tmp_path / "again" / "agent.pt").read_bytes()


def test_sigterm_during_the_final_check_skips_it_as_ctrl_c_does(tmp_path, monkeypatch, capsys):
    """The final check has no safe point: a stop ends it at once. SIGTERM there was the default's, which killed the
    run before its summary and left it neither resumable (it had its decisions) nor shipped."""
    import os

    train = load_script("train.py", "train_final_check_module")
    monkeypatch.setattr(train, "CHECKPOINT_DIR", tmp_path / "checkpoints")

    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not stop the final check")

    monkeypatch.setattr(train, "evaluate_against_spoilers", terminated)
    previous = signal.getsignal(signal.SIGTERM)
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "end", *TINY_RUN, "--final-eval-deals", "2",
                          "--ship-as", "ended"])
    assert summary["interrupted"] and summary["stopped_by"] == "SIGTERM" and "final_eval" not in summary
    assert signal.getsignal(signal.SIGTERM) is previous
    out = capsys.readouterr().out
    assert "SIGTERM: final check skipped (the checkpoint is saved)" in out and "Stopped by SIGTERM" in out
    agent = tmp_path / "end" / "agent.pt"
    assert f"the final check was stopped; the run is done, so to ship it: cp {agent} " in out
    assert not (tmp_path / "checkpoints").exists()


def test_a_checkpoint_that_appeared_under_the_ship_name_during_the_run_is_left_alone(tmp_path, monkeypatch, capsys):
    """The name was free when the run started; another run (or a link) took it while this one trained: without
    --replace-shipped it is not overwritten, and the run says how to ship by hand."""
    train = load_script("train.py", "train_ship_race_module")
    monkeypatch.setattr(train, "CHECKPOINT_DIR", tmp_path / "checkpoints")
    theirs = tmp_path / "checkpoints" / "taken.pt"

    def another_run_ships(*args, **kwargs):  # just before the ship, as the end's last step but one
        theirs.parent.mkdir(exist_ok=True)
        theirs.write_bytes(b"another run's agent")
        return False

    monkeypatch.setattr(train, "plot_learning_curve", another_run_ships)
    summary = train.main(["--runs-dir", str(tmp_path), "--run-name", "late", *TINY_RUN, "--ship-as", "taken"])
    assert not summary["interrupted"] and "shipped" not in summary
    assert theirs.read_bytes() == b"another run's agent"
    assert f"not shipped as 'taken': {theirs} is there" in capsys.readouterr().out


def test_a_second_stop_quits_at_once_with_its_own_signal_s_status():
    train = load_script("train.py", "train_quit_module")
    stop = train.StopRequest(lambda text: None)
    stop._handle(signal.SIGTERM, None)
    assert stop.requested and stop.signum == signal.SIGTERM
    with pytest.raises(KeyboardInterrupt) as quit_now:
        stop._handle(signal.SIGTERM, None)
    assert quit_now.value.signum == signal.SIGTERM
    assert train.stop_status(train.signal_words(signal.SIGTERM)) == 143
    assert train.stop_status(train.signal_words(signal.SIGINT)) == 130


def test_a_run_named_with_a_comma_before_0_5_resumes(tmp_path):
    """New runs refuse ',' in their names (the printed --agents commands split there); one made before resumes."""
    train = load_script("train.py", "train_comma_module")
    train.main(["--runs-dir", str(tmp_path), "--run-name", "old", *TINY_RUN])
    (tmp_path / "old").rename(tmp_path / "old,run")
    resumed = train.main(["--runs-dir", str(tmp_path), "--run-name", "old,run", "--resume", "--total-decisions",
                          "6000"])
    assert not resumed["interrupted"] and resumed["progress"]["decisions"] >= 6000


def test_a_run_stopped_before_its_first_iteration_resumes_with_its_own_settings(tmp_path, monkeypatch):
    """Its checkpoint counts 0 iterations, 0 decisions: a count of 0 is one to resume from, not a damaged file.
    The options not given again are the run's (no final check), not the defaults (1,000 deals of one)."""
    train = train_stopped_at_once(monkeypatch)
    argv = ["--runs-dir", str(tmp_path), "--run-name", "early"]
    assert train.main([*argv, *TINY_RUN])["progress"]["iteration"] == 0
    monkeypatch.undo()
    checkpoint = tmp_path / "early" / "checkpoint.pt"
    saved = load_checkpoint(checkpoint)[1]["args"]
    resumed = train.main([*argv, "--resume", "--total-decisions", "2000"])
    assert not resumed["interrupted"] and resumed["progress"]["decisions"] >= 2000
    assert "final_eval" not in resumed and load_checkpoint(checkpoint)[1]["args"] == {**saved, "total_decisions": 2000,
                                                                                  "resume": True}


def test_a_run_that_dies_keeps_its_last_save_every_checkpoint_and_its_snapshot_every_snapshots(tmp_path,
                                                                                               monkeypatch):
    """An error in iteration 5 (a killed process saves nothing more): --save-every 2 left iteration 4's
    checkpoint, --snapshot-every 2 the snapshots of iterations 0 (the first), 2 and 4."""
    train = load_script("train.py", "train_interrupt_module")
    calls, original_gae = [], train.seat_gae

    def dies_in_iteration_5(*args):
        calls.append(1)
        if len(calls) == 5:
            raise RuntimeError("the process is killed")
        return original_gae(*args)

    monkeypatch.setattr(train, "seat_gae", dies_in_iteration_5)
    with pytest.raises(RuntimeError, match="the process is killed"):
        train.main(["--runs-dir", str(tmp_path), "--run-name", "died", *TINY_RUN, "--total-decisions", "100000",
                    "--save-every", "2", "--snapshot-every", "2"])
    run = tmp_path / "died"
    assert load_checkpoint(run / "checkpoint.pt")[1]["progress"]["iteration"] == 4
    assert sorted(path.name for path in (run / "snapshots").iterdir()) == [
        "iter_000000.pt", "iter_000002.pt", "iter_000004.pt"]


def test_a_second_ctrl_c_quits_at_once(monkeypatch):
    """The first asks for a stop at the next safe point, in words; a second one does not wait for it."""
    train, _ = train_with_ctrl_c(monkeypatch)
    said = []
    stop = train.StopRequest(said.append)
    press_ctrl_c(stop)
    assert stop.requested and len(said) == 1 and "press Ctrl-C again to quit without saving" in said[0]
    with pytest.raises(KeyboardInterrupt):
        press_ctrl_c(stop)


class Killed(BaseException):
    """What a second Ctrl-C (quit at once, no save), kill -9 or the out-of-memory killer does to a run."""


def test_a_run_killed_between_checkpoints_resumes_into_the_uninterrupted_run(tmp_path, monkeypatch):
    """Killed after iteration 8's snapshot with its last checkpoint at iteration 6, the run resumed at 6 with
    iter_000008.pt already in snapshots/: its draws at iterations 7 and 8 ran over one file more than the
    uninterrupted run's, and it played a policy from its own future (found by a review). The resume now draws
    from the snapshots up to its own iteration, and repeats the uninterrupted run."""
    train = load_script("train.py", "train_killed_module")
    league = ("--snapshot-every", "2", "--save-every", "3", "--no-anneal-lr", "--total-decisions", "8000")
    original_save = train.save_checkpoint

    def save_then_die(path, *args, **kwargs):
        original_save(path, *args, **kwargs)
        if path.name == "iter_000008.pt":
            raise Killed

    runs = ["--runs-dir", str(tmp_path)]
    threads_at_start = torch.get_num_threads()

    def session(*argv) -> dict:
        torch.set_num_threads(threads_at_start)
        return train.main([*runs, *argv])

    monkeypatch.setattr(train, "save_checkpoint", save_then_die)
    with pytest.raises(Killed):
        session("--run-name", "killed", *TINY_RUN, *league)
    monkeypatch.setattr(train, "save_checkpoint", original_save)
    assert load_checkpoint(tmp_path / "killed" / "checkpoint.pt")[1]["progress"]["iteration"] == 6
    assert (tmp_path / "killed" / "snapshots" / "iter_000008.pt").exists()
    session("--run-name", "killed", "--resume", "--no-progress-bar")
    whole = session("--run-name", "whole", *TINY_RUN, *league)
    torch.set_num_threads(threads_at_start)
    assert whole["progress"]["iteration"] > 8
    assert repeatable_rows(tmp_path / "killed") == repeatable_rows(tmp_path / "whole")
    (net, _), (whole_net, _) = (load_checkpoint(tmp_path / name / "agent.pt") for name in ("killed", "whole"))
    for (name, value), whole_value in zip(net.state_dict().items(), whole_net.state_dict().values(), strict=True):
        assert torch.equal(value, whole_value), name


def test_a_run_moved_to_another_runs_folder_resumes_and_is_watched_where_it_is(tmp_path, monkeypatch, capsys):
    """Made under --runs-dir cluster/ and copied to ./runs (the default), the run resumed without --runs-dir: its
    saved runs folder came back with its arguments, and the resume said to watch a folder that was gone."""
    import shutil

    train = load_script("train.py", "train_moved_module")
    threads_at_start = torch.get_num_threads()
    try:
        train.main(["--runs-dir", str(tmp_path / "cluster"), "--run-name", "run", *TINY_RUN])
        shutil.copytree(tmp_path / "cluster" / "run", tmp_path / "here" / "runs" / "run")
        shutil.rmtree(tmp_path / "cluster")
        monkeypatch.chdir(tmp_path / "here")
        capsys.readouterr()
        torch.set_num_threads(threads_at_start)
        train.main(["--run-name", "run", "--resume", "--total-decisions", "4000", "--no-progress-bar"])
    finally:
        torch.set_num_threads(threads_at_start)
    watch = next(line for line in capsys.readouterr().out.splitlines() if "watch it:" in line)
    assert watch.endswith("--logdir runs") and "cluster" not in watch, watch
    _, data = load_checkpoint(tmp_path / "here" / "runs" / "run" / "checkpoint.pt")
    assert data["args"]["runs_dir"] == "runs"
