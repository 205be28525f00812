"""Every command line answers a bad value with one line on standard error that names the flag
and what is allowed, a non-zero exit, no traceback, and no work done (checked before any).

The values of issue 10 run as real subprocesses (``SUBPROCESS`` cases); the rest of each kind
(every numeric option of ``train.py`` out of its range, every choice, the other commands' other
options) through each command's ``main`` in this process, which takes the same path: the parser
exits before ``main`` does any work. That keeps the file near half a minute.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import signal
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
from conftest import BAD_USAGE, assert_one_line_refusal, load_script, refused_in_process

from spoilfive_env.cli import (
    CLOSED_PIPE,
    MAX_LEARNING_RATE,
    MAX_SEED,
    ArgumentParser,
    learning_rate,
    non_negative_int,
    per_table_size,
    positive_int,
    refuse_bad_plot_path,
    rule_option,
    save_figure,
    seed_value,
    table_size,
    table_sizes,
    unit_fraction,
    unwritable,
)

ROOT = Path(__file__).resolve().parents[1]


def run(command: list[str], tmp_path: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, *command], cwd=tmp_path, env=env, input=stdin, capture_output=True,
                          text=True, timeout=120, encoding="utf-8")


def no_cuda() -> bool:
    torch = pytest.importorskip("torch")
    return not torch.cuda.is_available()


TRAIN_CASES = [
    (["--minibatch-size", "0"], ["--minibatch-size", "at least 1"]),
    (["--update-epochs", "-1"], ["--update-epochs", "1 to 1,000"]),
    (["--eval-players", "1"], ["--eval-players", "2 to 10"]),
    (["--eval-players", "3,3"], ["--eval-players", "give distinct table sizes"]),  # evaluated twice
    (["--ship-as", "../elsewhere"], ["--ship-as", "letters, digits"]),
    (["--total-decisions", "-5"], ["--total-decisions", "at least 1"]),
    (["--num-games", "0"], ["--num-games", "at least 1"]),
    (["--device", "cuda:99"], ["--device cuda:99"]),
    (["--update-epochs", str(10**30)], ["--update-epochs", "it must be 1 to 1,000"]),  # it never finished
]


@pytest.mark.parametrize("args, words", TRAIN_CASES, ids=[" ".join(a) for a, _ in TRAIN_CASES])
def test_train_refuses_bad_values_before_any_work(tmp_path, args, words):
    # One decision: a refusal let through then fails in seconds, not at the subprocess's limit.
    result = run([str(ROOT / "train.py"), "--runs-dir", "runs", "--total-decisions", "1", *args], tmp_path)
    assert result.returncode == BAD_USAGE
    assert_one_line_refusal(result.stderr, result.returncode, *words)
    assert not (tmp_path / "runs").exists()  # nothing was started


def test_train_refuses_cuda_without_cuda(tmp_path):
    if not no_cuda():
        pytest.skip("this machine has CUDA")
    result = run([str(ROOT / "train.py"), "--runs-dir", "runs", "--device", "cuda"], tmp_path)
    assert_one_line_refusal(result.stderr, result.returncode, "--device cuda", "CUDA is not available", "cpu")
    assert not (tmp_path / "runs").exists()


@pytest.fixture(scope="module")
def train():
    pytest.importorskip("torch")
    return load_script("train.py", "train_for_cli")


def out_of_range_values(train):
    """One value below (or above) the range of every numeric option, and a bad value of every
    choice and list option; a value out of range is refused naming it and the option's range."""
    cases = []
    for name, (low, high) in train.RANGES.items():
        flag = train.flag(name)
        below = low - 1 if isinstance(low, int) else (0.0 if name in train.ABOVE_ZERO else low - 0.5)
        outside = [str(below)]
        if high is not None:
            outside.append(str(high + 1))
        if isinstance(low, float):
            outside.append("nan")
        for text in outside:
            cases.append(([flag, text], (flag, "is not allowed: it must be", train.allowed_range(name))))
    for name, choices in train.CHOICES.items():
        cases.append(([train.flag(name), "nonsense"], (train.flag(name), "invalid choice", *choices)))
    built_in = "is not allowed: it is a built-in agent's name (random, greedy, spoiler, pimc, oracle, pimc_ppo, best)"
    cases += [
        (["--hidden", "256,x"], "--hidden '256,x': give comma-separated whole numbers"),
        (["--hidden", ""], "--hidden '': give at least one number"),
        (["--hidden", "0"], "--hidden '0': 0 is not allowed, each must be 1 to 8192"),
        (["--eval-players", "3,11"], "--eval-players '3,11': 11 is not allowed, each must be 2 to 10"),
        (["--league", "self=abc"], "--league item 'self=abc': the weight 'abc' is not a number"),
        (["--league", "chess=1"], "--league item 'chess=1' must be KIND=WEIGHT with KIND one of self, snapshot, "
                                  "spoiler, greedy, random, opponent"),
        (["--league", "self=-1,random=1"], "--league 'self=-1,random=1': weights must be non-negative and not all "
                                           "zero"),
        (["--league", "self=0"], "--league 'self=0': weights must be non-negative and not all zero"),
        (["--min-players", "6", "--max-players", "3"], "--min-players 6 is above --max-players 3"),
        (["--num-games", "3"], "--num-games 3 is not allowed: it must be at least 4, one game per table size 3-6"),
        (["--ship-as", "random"], f"--ship-as 'random' {built_in}"),
        (["--ship-as", "best"], f"--ship-as 'best' {built_in}"),
        (["--ship-as", "pimc_ppo"], f"--ship-as 'pimc_ppo' {built_in}"),
        (["--ship-as", "best.pt"], "--ship-as 'best.pt' is not allowed: a name of letters, digits, '_', '-' and '.', "
                                   "without .pt"),
        (["--run-name", "a/b"], "--run-name 'a/b' is not allowed: a name, not a path"),
        (["--run-name", "x,y"], "--run-name 'x,y' is not allowed: no ',' (the run's agent.pt goes into "
                                "comma-separated --agents lists"),
        (["--exp-name", "x,y"], "--exp-name 'x,y' is not allowed: no ','"),
        (["--runs-dir", "a,b"], "--runs-dir 'a,b' is not allowed: no ','"),
        (["--ship-as", "ppo"], "--ship-as 'ppo': agents/checkpoints/ppo.pt is already there (the shipped agents "
                               "live in that folder, and best plays its rollouts with ppo): give a new name, or add "
                               "--replace-shipped to replace it"),
        (["--replace-shipped"], "--replace-shipped is for --ship-as: add --ship-as NAME"),
        (["--players", "4"], "--players is not an option of train.py: it trains at every table size from "
                             "--min-players to --max-players (3 to 6 by default); give those"),
        (["--players=4"], "--players is not an option of train.py"),
        (["--device", "quantum"], "--device 'quantum' is not a device: use auto, cpu, cuda, cuda:N or mps"),
        (["--num-games", "many"], "--num-games: 'many' is not allowed: it must be a whole number, at least 1"),
        (["--resume", "--num-games", "8"], "--num-games cannot change when resuming (the run keeps its own); with "
                                           "--resume give only --total-decisions"),
        # Beside --run-name, --seed and --exp-name name nothing: they were ignored, the run keeping its own.
        (["--resume", "--run-name", "b1", "--seed", "99"],
         ("--seed cannot change when resuming (the run keeps its own; --run-name names it); with --resume give "
          "only --total-decisions", "--run-name, --runs-dir, --ray")),
        (["--resume", "--run-name", "b1", "--exp-name", "other"], "--exp-name cannot change when resuming"),
        (["--league", "self=1,opponent=1"], "draws opponent tables: name their agent with --opponent SPEC"),
        (["--opponent", "ppo-20min"], "--opponent 'ppo-20min' would play no table: give it a weight"),
        (["--league", "self=1,opponent=1", "--opponent", "nobody"],
         "--opponent: unknown agent 'nobody': choose one of"),
        (["--init-from", "no-such-checkpoint"], ("--init-from: no checkpoint file at", "give a checkpoint's path or "
                                                  "the name of one shipped in agents/checkpoints (ppo")),
        (["--init-from", "ppo", "--hidden", "64"], "--hidden 64 does not fit --init-from ppo: its network has --hidden "
                                                   "256,256 (leave --hidden out to take it)"),
        (["--hidden", "16,,16"], "--hidden '16,,16': an empty item"),
        (["--run-name", " "], "--run-name ' ' is not allowed: a name without spaces at either end, at most 200"),
        (["--run-name", "a" * 300], "at most 200 characters"),
        (["--exp-name", "x "], "--exp-name 'x ' is not allowed: a name without spaces at either end, at most 200"),
        (["--pfsp-temperature", "0.3"], "--pfsp-temperature 0.3 would change nothing"),
        (["--pfsp-temperature", "0.1"], "--pfsp-temperature 0.1 would change nothing"),  # the default, given
        (["--snapshot-sampling", "uniform", "--pfsp-temperature", "0.1"], "--pfsp-temperature 0.1 would change"),
        (["--snapshot-sampling", "pfsp", "--league", "self=1"], "--snapshot-sampling pfsp would draw nothing"),
    ]
    return cases


def test_train_refuses_every_option_out_of_its_range(train, tmp_path, capsys, monkeypatch):
    cases = out_of_range_values(train)
    assert len(cases) > 50
    # A refusal let through would start a 30M-decision run: it fails at once, where the run builds its network
    # after every check, not at the test's timeout.
    monkeypatch.setattr(train, "policy_net", lambda *_, **__: pytest.fail(f"train.py took {args}"))
    for args, words in cases:
        with pytest.raises(SystemExit) as stopped:
            train.main(["--runs-dir", str(tmp_path / "runs"), *args])
        assert stopped.value.code == BAD_USAGE, args
        words = (words,) if isinstance(words, str) else words  # the flag; or the value and what is allowed
        assert_one_line_refusal(capsys.readouterr().err, stopped.value.code, *words)
        assert not (tmp_path / "runs").exists(), args


TRAIN_CHECKED = [
    ("clip_coef", 1e308, "--clip-coef 1e+308 is not allowed: it must be above 0, at most 1,000,000"),
    ("ent_coef", 1e308, "--ent-coef 1e+308 is not allowed: it must be 0 to 1,000,000"),
    ("vf_coef", 1e7, "--vf-coef 10000000.0 is not allowed: it must be 0 to 1,000,000"),
    ("learning_rate", 1e308, "--learning-rate 1e+308 is not allowed: it must be above 0, at most 1"),
    ("learning_rate", 0.0, "--learning-rate 0.0 is not allowed: it must be above 0, at most 1"),
    ("league", "self=1,self=2", "--league 'self=1,self=2': self is given more than once"),
    ("runs_dir", " ", "--runs-dir ' ' is empty"),
    ("hidden", ",".join(["16"] * 17), "17 layers are not allowed, give 1 to 16"),
    ("update_epochs", 10**30, "--update-epochs 1000000000000000000000000000000 is not allowed: it must be 1 to 1,000"),
    ("pfsp_temperature", 5e-324, "--pfsp-temperature 5e-324 is not allowed: it must be at least 0.001"),
    ("league", "self=1,,greedy=1", "--league 'self=1,,greedy=1': an empty item; give comma-separated KIND=WEIGHT"),
    ("league", "self=1,", "--league 'self=1,': an empty item"),
]


@pytest.mark.parametrize("name, value, says", TRAIN_CHECKED, ids=[f"{n}={v}" for n, v, _ in TRAIN_CHECKED])
def test_train_refuses_values_its_arithmetic_cannot_hold_a_repeated_league_kind_and_a_blank_runs_dir(train, name,
                                                                                                     value, says):
    """--clip-coef 1e308 ended the first update in a traceback; --ent-coef, --vf-coef and --learning-rate
    1e308 trained a network of NaN and exited 0; a repeated --league kind kept its last weight; --runs-dir ' '
    made a folder named ' '; --hidden of 17 layers trained a run whose checkpoints no loader takes (nor --resume);
    --update-epochs 10**30 never finished; --pfsp-temperature 5e-324 drew NaN chances partway through the run;
    a blank --league item was skipped."""
    with pytest.raises(ValueError, match=re.escape(says)):
        train.check_args(dataclasses.replace(train.Args(), **{name: value}))


def test_train_takes_the_largest_allowed_values(train):
    train.check_args(dataclasses.replace(train.Args(), learning_rate=1.0, clip_coef=1e6, ent_coef=1e6, vf_coef=1e6))
    train.check_args(dataclasses.replace(train.Args(), hidden=",".join(["16"] * 16)))  # what a checkpoint may hold
    train.check_args(dataclasses.replace(train.Args(), update_epochs=1000, snapshot_sampling="pfsp",
                                         pfsp_temperature=0.001))  # and the coldest draw


def test_train_takes_the_smallest_allowed_values_and_names_of_the_longest_length(train):
    """Each check's boundary is allowed: one table size, one game per table size, the smallest hidden width,
    the smallest and largest table sizes to evaluate, a run and an experiment name of exactly 200 characters."""
    train.check_args(dataclasses.replace(train.Args(), min_players=4, max_players=4, num_games=1))
    train.check_args(dataclasses.replace(train.Args(), num_games=4, hidden="1", eval_players="2,10"))
    train.check_args(dataclasses.replace(train.Args(), run_name="r" * train.MAX_NAME, exp_name="e" * train.MAX_NAME))


@pytest.mark.parametrize("name", [".", ".."])
def test_train_refuses_a_run_name_that_is_the_runs_folder_or_its_parent(train, name):
    """"--run-name .." would put the run beside --runs-dir, not in it."""
    for option in ("run_name", "exp_name"):
        with pytest.raises(ValueError, match=re.escape(f"{train.flag(option)} {name!r} is not allowed: a name, not a")):
            train.check_args(dataclasses.replace(train.Args(), **{option: name}))


def test_train_refuses_a_rollout_one_byte_larger_than_the_memory_and_takes_one_that_fits(train, monkeypatch):
    args = train.Args()
    needed = train.rollout_bytes(args)
    monkeypatch.setattr(train, "physical_memory", lambda: needed)
    train.check_args(args)  # exactly fits
    monkeypatch.setattr(train, "physical_memory", lambda: needed - 1)
    with pytest.raises(ValueError, match="--num-games 4096 with --hands-per-game 1 needs about"):
        train.check_args(args)


def test_train_takes_ray_and_workers_together_on_resume_too_and_refuses_workers_alone(train, tmp_path, capsys):
    """Where the rollouts run is this command's, a resumed run's too; --workers alone would be ignored. Giving
    a resumed run's --pfsp-temperature is refused as any other of its settings, not as an idle one."""
    args = train.parse_args(["--resume", "--ray", "auto", "--workers", "3"])
    assert (args.resume, args.ray, args.workers) == (True, "auto", 3)
    runs = ["--runs-dir", str(tmp_path / "runs")]
    refused_in_process(train.main, [*runs, "--workers", "3"], capsys, "--workers is for --ray")
    refused_in_process(train.main, [*runs, "--resume", "--pfsp-temperature", "0.1"], capsys,
                       "--pfsp-temperature cannot change when resuming")


def test_train_checks_a_huge_whole_number_of_any_option_without_overflowing(train):
    """10**400 is no float: --seed, --num-games and every whole-number option ended in an OverflowError traceback.
    Now it is refused naming the option where the option has a bound (--num-games: the machine's memory), or
    taken (a --total-decisions or --save-every that is never reached)."""
    refused = []
    for field in dataclasses.fields(train.Args):
        if field.type is int:
            try:
                train.check_args(dataclasses.replace(train.Args(), **{field.name: 10**400}))
            except ValueError as error:
                assert train.flag(field.name) in str(error), error
                refused.append(field.name)
    assert {"seed", "num_games", "hands_per_game", "update_epochs", "eval_deals"} <= set(refused)


def test_train_says_what_a_number_option_takes_when_given_no_number(train, tmp_path, capsys):
    """argparse said only "invalid int value: 'abc'"; the values taken are argparse's int and float, as before."""
    for name in train.RANGES:
        whole = next(field.type for field in dataclasses.fields(train.Args) if field.name == name) is int
        refused_in_process(train.main, ["--runs-dir", str(tmp_path / "runs"), train.flag(name), "1e3x"], capsys,
                           f"argument {train.flag(name)}: '1e3x' is not allowed: it must be "
                           f"{'a whole number' if whole else 'a number'}, {train.allowed_range(name)}")
    refused_in_process(train.main, ["--total-decisions", "1e3"], capsys, "'1e3' is not allowed: it must be a whole "
                       "number, at least 1")
    refused_in_process(train.main, ["--seed", "abc"], capsys, "it must be a whole number, 0 to 4,294,967,295")
    refused_in_process(train.main, ["--learning-rate", "abc"], capsys, "it must be a number, above 0, at most 1")
    args = train.parse_args(["--runs-dir", str(tmp_path / "runs"), "--total-decisions", " 1_000 ", "--time-limit",
                             "1e1", "--learning-rate", "3E-4", "--seed", "007"])
    assert (args.total_decisions, args.time_limit, args.learning_rate, args.seed) == (1000, 10.0, 3e-4, 7)
    assert not (tmp_path / "runs").exists()


def test_train_refuses_a_runs_dir_it_cannot_write_in_its_own_words(train, tmp_path, capsys):
    afile = tmp_path / "a-file"
    afile.write_text("")
    with pytest.raises(SystemExit) as stopped:
        train.main(["--runs-dir", str(afile / "runs")])
    assert stopped.value.code == BAD_USAGE
    assert_one_line_refusal(capsys.readouterr().err, stopped.value.code, f"--runs-dir '{afile / 'runs'}'",
                            f"{afile} is a file, so no folder can be made in it")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_train_resume_without_a_checkpoint_is_one_line(tmp_path):
    result = run([str(ROOT / "train.py"), "--runs-dir", "runs", "--run-name", "nothing-here", "--resume"], tmp_path)
    assert_one_line_refusal(result.stderr, result.returncode, "--resume", "no checkpoint")


EVALUATE_SUBPROCESS = [
    (["--agents", "random", "--batch-size", "-1"], ["--batch-size", "at least 1"]),
    (["--agents", "random", "--deals", "0"], ["--deals", "at least 1"]),
    (["--agents", "random", "--rule", "jink_bonus=abc"], ["--rule", "jink_bonus=abc", "whole number or true/false"]),
    (["--agents", "nobody"], ["--agents", "unknown agent 'nobody'", "greedy"]),
    (["--agents", "random", "--players", "1"], ["--players", "'1' is not allowed", "2 to 10"]),
]
EVALUATE_CASES = [
    (["--agents", "random", "--rule", "jink_bonus=-1"], ["--rule", "jink_bonus=-1 is not allowed: it must be 0 to"]),
    (["--agents", "random", "--rule", "no_such_rule=1"], ["--rule", "unknown rules option 'no_such_rule'",
                                                          "--rule takes allow_jink, ante, conceal_ace_penalty, "
                                                          "dealer_ante, jink_bonus, max_hands, num_hands, "
                                                          "partnerships, spoil_ante, starting_chips"]),
    (["--agents", "random", "--players", "3,3"], ["--players", "'3,3'", "a whole number"]),
    (["--agents", "random", "--rule", "jink_bonus"], ["--rule", "KEY=VALUE"]),
    (["--agents", "random", "--rule", "num_players=3"], ["--rule", "num_players has its own flag, --players"]),
    (["--agents", "random", "--rule", "preset=1"], ["--rule", "preset has its own flag, --preset"]),
    (["--agents", "random", "--rule", "ante=1", "--rule", "ante=2"], ["--rule ante is given more than once"]),
    (["--agents", "random,missing.pt"], ["--agents", "does not exist"]),
    (["--agents", ","], ["--agents", "at least one"]),
    (["--agents", "pimc:samples=0"], ["--agents", "samples=0 is not allowed", "from 1 to 16,384"]),
    (["--agents", "random", "--players", "11"], ["--players", "'11' is not allowed", "2 to 10"]),
    (["--agents", "random,greedy,spoiler", "--players", "2"], ["--agents", "do not fit"]),
    (["--agents", "random", "--seed", "-3"], ["--seed", "a seed from 0 to 4,294,967,295"]),
    (["--agents", "random", "--deals", "99999999999999999999"], ["--deals", "at most 1,000,000"]),
    (["--agents", "random", "--preset", "casino"], ["--preset", "default, hoyle"]),
    (["--players", "4"], ["--agents"]),
    (["--agents", "random", "--paired-with", "nobody"], ["--paired-with", "unknown agent"]),
    (["--agents", "random", "--paired-with", " "], ["--paired-with", "give an agent"]),
    (["--agents", "random,,greedy", "--players", "3"], ["--agents 'random,,greedy': an empty item"]),
    (["--agents", "ppo:greedy=false"], ["--agents", "checkpoint", "'greedy'", "a checkpoint agent takes no options"]),
    (["--agents", "pimc_ppo:prior=inf"], ["--agents", "prior=inf is not allowed", "from 0 to 1,000,000"]),
    (["--agents", "pimc_ppo:loss_weight=1e308"], ["--agents", "loss_weight=1e+308", "from 0 to 1,000,000"]),
]


@pytest.mark.parametrize("args, words", EVALUATE_SUBPROCESS, ids=[" ".join(a) for a, _ in EVALUATE_SUBPROCESS])
def test_evaluate_refuses_bad_values(tmp_path, args, words):
    result = run(["-m", "agents.evaluate", *args], tmp_path)
    assert result.returncode == BAD_USAGE and result.stdout == ""  # nothing was played
    assert_one_line_refusal(result.stderr, result.returncode, *words)


@pytest.mark.parametrize("args, words", EVALUATE_CASES, ids=[" ".join(a) for a, _ in EVALUATE_CASES])
def test_evaluate_refuses_every_kind_of_bad_value(capsys, args, words):
    from agents.evaluate import main

    refused_in_process(main, args, capsys, *words)


BENCH_CASES = [
    (["--seconds", "0"], ["--seconds", "0.01 to 3600 seconds"]), (["--seconds", "inf"], ["--seconds", "0.01 to 3600"]),
    (["--players", "1"], ["--players", "2-10"]), (["--players", "4,x"], ["--players", "a comma-separated list"]),
    (["--batch-sizes", "0"], ["--batch-sizes", "whole numbers of at least 1"]),
    (["--seed", "-1"], ["--seed", "a seed from 0 to 4,294,967,295"]),
    (["--batch-sizes", "4,1000000000000"], ["--batch-sizes", "batch_size=1000000000000 is not allowed here"]),
    (["--players", "3,,4"], ["--players", "'3,,4': an empty item"]), (["--batch-sizes", "64,"], ["an empty item"]),
    (["--players", "4,4"], ["--players", "distinct"]),
    (["--batch-sizes", "1,1"], ["--batch-sizes", "'1,1': give distinct batch sizes"]),  # was measured twice
    (["--seconds", "1e-300"], ["--seconds 1e-300 is not allowed", "0.01 to 3600 seconds"]),
    # the hidden flags of --peers' measuring subprocess: a traceback, and a line without "error:"
    (["--worker", "nosuch"], ["spoilfive_env.bench: error: --worker 'nosuch' is not allowed",
                              "pettingzoo, pgx, open_spiel, ours"]),
    (["--worker", "ours:core", "--worker-cpu", "99999"], ["--worker-cpu 99999 is not allowed",
                                                          "a CPU this process may run on"]),
    (["--worker-cpu", "0"], ["--worker-cpu is for --worker"]),
    # a flag the run asked for would not use: refused, not ignored
    (["--profile", "--peers"], ["--peers and --profile", "give one of them"]),
    (["--profile", "--players", "3"], ["--players is for the default measurements", "--profile", "4 players"]),
    (["--peers", "--batch-sizes", "64"], ["--batch-sizes is for the default measurements", "--peers"]),
    (["--rounds", "3"], ["--rounds is for --peers"]),
    (["--peers", "--rounds", "1001"], ["--rounds 1001 is not allowed", "1 to 1000"]),
    (["--profile", "--seed", "3"], ["--profile", "takes no --seed"]),
]


def test_bench_refuses_a_measurement_that_would_never_end(tmp_path):
    result = run(["-m", "spoilfive_env.bench", "--quick", "--seconds", "nan"], tmp_path)
    assert result.returncode == BAD_USAGE and result.stdout == ""
    assert_one_line_refusal(result.stderr, result.returncode, "--seconds nan", "0.01 to 3600 seconds")


@pytest.mark.parametrize("args, words", BENCH_CASES, ids=[" ".join(a) for a, _ in BENCH_CASES])
def test_bench_refuses_bad_values(capsys, args, words):
    from spoilfive_env.bench import main

    refused_in_process(main, ["--quick", *args], capsys, *words)


PLAY_SUBPROCESS = [
    (["--players", "1"], ["--players", "2 to 10"]), (["--players", "3", "--seat", "3"], ["--seat 3", "0-2"]),
]
PLAY_CASES = [
    (["--seat", "-1"], ["--seat", "'-1' is not allowed: give a whole number of at least 0"]),
    (["--opponents", "nobody"], ["--opponents", "unknown agent"]),
    (["--players", "3", "--opponents", "random,greedy,spoiler"], ["--opponents", "2 other seats"]),
    (["--hands", "0"], ["--hands", "'0' is not allowed: give a whole number of at least 1"]),
    (["--preset", "casino"], ["--preset", "default, hoyle"]),
    # past the rules' max_hands: the refusal named max_hands=50, which no flag here sets, and said 1 to 32767
    (["--hands", "51"], ["--hands 51 is not allowed: give 1 to 50"]),
    (["--hands", "99999", "--preset", "hoyle"], ["--hands 99999 is not allowed: give 1 to 50"]),
    (["--seed", "x"], ["--seed", "whole number"]),
    (["--players", "4", "--opponents", "random,,greedy"], ["--opponents 'random,,greedy': an empty item"]),
]


@pytest.mark.parametrize("args, words", PLAY_SUBPROCESS, ids=[" ".join(a) for a, _ in PLAY_SUBPROCESS])
def test_terminal_game_refuses_bad_values(tmp_path, args, words):
    result = run(["-m", "spoilfive_env.play", *args], tmp_path, stdin="1\n" * 50)
    assert result.returncode == BAD_USAGE and result.stdout == ""  # the game never started
    assert_one_line_refusal(result.stderr, result.returncode, *words)


@pytest.mark.parametrize("args, words", PLAY_CASES, ids=[" ".join(a) for a, _ in PLAY_CASES])
def test_terminal_game_refuses_every_kind_of_bad_value(capsys, args, words):
    from spoilfive_integrations.play import main

    refused_in_process(main, args, capsys, *words)


def test_the_tournament_table_stays_aligned_with_long_agent_names():
    from agents.evaluate import evaluate, format_report

    long_name = "pimc:samples=2:rollout=random"  # longer than any fixed column would be
    report = evaluate(["random", long_name], num_players=3, deals=4, seed=0)
    lines = format_report(report).splitlines()
    table = lines[lines.index("") + 1: lines.index("", lines.index("") + 1)]
    assert [line.split()[0] for line in table] == ["agent", "random", long_name]
    assert len({len(line) for line in table}) == 1  # every column right-aligned to the same edge
    seats_edge = table[0].index("seats") + len("seats")
    assert all(line[seats_edge - 1].isdigit() for line in table[1:])  # the seat counts end under "seats"


def test_ctrl_c_during_a_tournament_is_one_line_and_exit_130(monkeypatch, capsys):
    import agents.evaluate as tournament

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "_evaluate", interrupted)  # the command's tournament, its values checked
    with pytest.raises(SystemExit) as stopped:
        tournament.main(["--agents", "random", "--deals", "10"])
    assert stopped.value.code == 130
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.strip() == "Ctrl-C: tournament stopped, nothing reported"


def test_commands_that_play_on_observations_alone_refuse_the_oracle_in_one_line(train, tmp_path, capsys):
    """The oracle reads every hand, so only a command that hands it the engine's state may play it."""
    from agents.beliefs import main as beliefs
    from agents.pimc_policy import main as timing

    refused_in_process(timing, ["3", "--decisions", "1", "--agents", "pimc,oracle"], capsys, "'oracle'", "cheats",
                       "agents.evaluate")
    refused_in_process(beliefs, ["--agents", "oracle", "--games", "1", "--players", "3"], capsys, "'oracle'",
                       "cheats")
    with pytest.raises(SystemExit) as stopped:
        train.main(["--runs-dir", str(tmp_path / "runs"), "--league", "self=1,opponent=1", "--opponent", "oracle"])
    assert stopped.value.code == BAD_USAGE
    assert_one_line_refusal(capsys.readouterr().err, stopped.value.code, "--opponent 'oracle'", "never an opponent")
    assert not (tmp_path / "runs").exists()  # refused before the run's folder


def test_unwritable_says_why_a_place_cannot_be_written_and_leaves_nothing_behind(tmp_path):
    afile = tmp_path / "a-file"
    afile.write_text("kept")
    assert unwritable(tmp_path / "new" / "deeper" / "x.pt") is None  # folders to make are only checked for
    assert unwritable(tmp_path / "new", folder=True) is None
    assert unwritable(afile) is None and afile.read_text() == "kept"  # opened to append, never changed
    assert unwritable(tmp_path) == "it is a folder"
    assert unwritable(afile, folder=True) == "it is a file, not a folder"
    assert unwritable(afile / "x.png") == f"{afile} is a file, so no folder can be made in it"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
    if Path("/proc/self").is_dir():  # Linux: a place even root cannot make a file in
        assert unwritable("/proc/spoilfive-probe.png") is not None


def closed_reader_run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``command`` with its standard output a pipe whose reader is gone before it writes a byte
    (what ``| head`` leaves once it has read its lines)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, *command], cwd=cwd, env=env, stdout=write_end, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, timeout=120, encoding="utf-8")
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", [
    ["-m", "agents.across_seeds", str(ROOT / "docs" / "results" / "best-pimc" / "3p-seed148.json"), "--json"],
    ["-m", "agents.evaluate", "--players", "3", "--agents", "greedy,spoiler", "--deals", "2", "--seed", "1"],
    ["-m", "agents.leaderboard", "--players", "3", "--agents", "greedy,spoiler", "--deals", "2", "--quiet"],
    [str(ROOT / "train.py"), "--total-decisions", "1000", "--runs-dir", "runs"],
    ["-c", "from spoilfive_env.cli import run_command; run_command(lambda: print('x' * 1_000_000) or 0)"],
], ids=["across_seeds", "evaluate", "leaderboard", "train", "a-megabyte"])
def test_a_command_whose_reader_stops_reading_ends_quietly_with_the_closed_pipe_status(command, tmp_path):
    done = closed_reader_run(command, tmp_path)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == CLOSED_PIPE


def test_run_command_exits_with_mains_status_and_flushes_what_it_printed(tmp_path):
    script = "from spoilfive_env.cli import run_command; run_command(lambda: print('the figures', end='') or 3)"
    done = run(["-c", script], tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (3, "the figures", "")


def test_per_table_size_spreads_one_number_keeps_one_a_size_and_takes_each_sizes_default():
    defaults = {3: 12000, 4: 10000, 5: 6000}
    assert per_table_size("--hands", [3, 4, 5], None, defaults) == [12000, 10000, 6000]
    assert per_table_size("--hands", [5, 3], None, defaults) == [6000, 12000]  # by size, not by place
    assert per_table_size("--hands", [2, 6], [40], defaults) == [40, 40]
    assert per_table_size("--hands", [2, 6], [40, 50], defaults) == [40, 50]
    with pytest.raises(ValueError, match=r"^--players 6,7: give --hands \(its default is for 3, 4, 5 players only\)$"):
        per_table_size("--hands", [3, 6, 7], None, defaults)
    with pytest.raises(ValueError, match=r"^--hands 1,2,3: give one number, or one for each of the 2 table sizes$"):
        per_table_size("--hands", [3, 4], [1, 2, 3], defaults)


def test_rule_option_reads_true_false_and_whole_numbers():
    """--rule KEY=VALUE: true and false in any case are the booleans, a whole number is an int, spaces around
    either side are dropped."""
    readings = [rule_option(text) for text in ("allow_jink=false", " allow_jink = FALSE ", "allow_jink=True",
                                                   "jink_bonus=0", "ante=3")]
    assert readings == [("allow_jink", False), ("allow_jink", False), ("allow_jink", True), ("jink_bonus", 0),
                        ("ante", 3)]
    assert [type(value) for _, value in readings] == [bool, bool, bool, int, int]  # (False == 0 in Python)


def test_seed_value_takes_every_seed_from_0_to_2_to_the_32_minus_1():
    """The bounds themselves are seeds: 0 and 2**32 - 1 are taken, -1 and 2**32 refused in words."""

    assert MAX_SEED == 2**32 - 1
    assert seed_value("0") == 0 and seed_value(str(2**32 - 1)) == 2**32 - 1
    for text in ("-1", str(2**32)):
        with pytest.raises(argparse.ArgumentTypeError, match="give a seed from 0 to 4,294,967,295"):
            seed_value(text)


@pytest.mark.parametrize("flags, says", [
    (["--out", "{tmp}/a-file/x.pt"], "--out '{tmp}/a-file/x.pt' cannot be written: {tmp}/a-file is a file"),
    (["--out", "{tmp}/new/x.pt", "--data", "{tmp}/a-file"], "--data '{tmp}/a-file' cannot be written: it is a file"),
    (["--out", "{tmp}/x.pt", "--samples", "16385"], "--samples 16385: give at most 16,384"),
])
def test_distill_refuses_a_place_it_cannot_write_or_too_many_samples_before_any_search(tmp_path, capsys, flags,
                                                                                        says):
    from agents.distill import main

    (tmp_path / "a-file").write_text("")
    flags = [flag.format(tmp=tmp_path) for flag in flags]
    refused_in_process(main, ["--expert", "pimc", "--players", "3", "--deals", "2", *flags], capsys,
                       says.format(tmp=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # no folder made before the refusal


def test_evaluate_refuses_a_core_batch_too_large_for_memory_before_any_play(capsys):
    from agents.evaluate import main
    from spoilfive_env.core import physical_memory

    memory = physical_memory()
    if memory is None or memory > 40 * 2**30:  # ten million games of ten seats take about 42 GiB
        pytest.skip("this machine could hold the largest tournament batch")
    refused_in_process(main, ["--agents", "random", "--players", "10", "--deals", "1000000", "--batch-size",
                              "100000000"], capsys,
                       "--batch-size 100000000 with --deals 1000000: a core batch of 10000000 games is not allowed")


SEEDED_COMMANDS = {
    "agents.evaluate": ["--agents", "random", "--deals", "2"],
    "agents.leaderboard": ["--agents", "random,greedy", "--deals", "2"],
    "agents.beliefs": ["--games", "2"],
    "agents.distill": ["--out", "x.pt"],
    "spoilfive_env.bench": ["--quick"],
    "spoilfive_integrations.bench": [],
    "spoilfive_integrations.play": [],
}


@pytest.mark.parametrize("module", SEEDED_COMMANDS)
def test_every_command_takes_the_same_seeds_as_train(module, capsys):
    """Seeds 0 to 2**32 - 1 everywhere, as train.py and the examples take them (they were any whole
    number of at least 0 in these commands)."""
    main = import_module(module).main
    refused_in_process(main, [*SEEDED_COMMANDS[module], "--seed", str(2**32)], capsys,
                       "--seed", "give a seed from 0 to 4,294,967,295")


def test_argument_parser_errors_are_one_line_even_for_a_message_of_several(capsys):
    """A message of several lines (a Rules error, a wrapped f-string) is joined into the one line every
    refusal is, with argparse's status 2."""
    parser = ArgumentParser(prog="spoilfive-x")
    with pytest.raises(SystemExit) as stopped:
        parser.error("--flag 3 is not allowed:\n    give 1 to 2\n")
    assert stopped.value.code == BAD_USAGE == 2
    assert capsys.readouterr().err == ("spoilfive-x: error: --flag 3 is not allowed: give 1 to 2 "
                                       "(see spoilfive-x --help)\n")


def test_table_size_takes_2_to_10_players_and_table_sizes_refuses_an_empty_list():
    """The bounds themselves are tables (RULES.md: 2 to 10 players); an empty --players list is refused in
    words, not taken as nothing to measure."""

    assert table_size("2") == 2 and table_size("10") == 10
    assert table_sizes("2,10") == [2, 10]
    for text in ("1", "11"):
        with pytest.raises(argparse.ArgumentTypeError, match="Spoil Five takes 2 to 10 players"):
            table_size(text)
    for text in ("", " , "):
        with pytest.raises(argparse.ArgumentTypeError, match="table sizes must be 2-10"):
            table_sizes(text)


def test_learning_rate_takes_up_to_1_and_refuses_more():
    """MAX_LEARNING_RATE is 1: an Adam step moves each weight by about the learning rate, so above 1 only
    diverges. 1 itself is taken; 1.5 and 10 are refused naming the bound."""

    assert MAX_LEARNING_RATE == 1.0 and learning_rate("1") == 1.0 and learning_rate("3e-4") == 3e-4
    for text in ("1.5", "10"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"give a learning rate above 0, at most 1$"):
            learning_rate(text)


def test_unit_fraction_takes_both_ends_of_0_to_1():
    """A discount or GAE's lambda of exactly 1 (undiscounted, Monte Carlo returns) or 0 is a real setting."""

    assert unit_fraction("0") == 0.0 and unit_fraction("1") == 1.0 and unit_fraction("0.95") == 0.95
    for text in ("-0.01", "1.01"):
        with pytest.raises(argparse.ArgumentTypeError, match="give a number from 0 to 1"):
            unit_fraction(text)


def test_a_closed_pipe_ends_a_command_with_the_status_a_shell_gives_a_tool_killed_by_sigpipe(tmp_path):
    """128 + SIGPIPE (141 on Linux), as ``yes | head -1`` leaves ``yes``: a script that checks statuses reads
    it as "the reader left", not as a failure of its own (status 1)."""

    if not hasattr(signal, "SIGPIPE"):
        pytest.skip("no SIGPIPE on this platform")
    assert CLOSED_PIPE == 128 + signal.SIGPIPE
    done = closed_reader_run(["-c", "from spoilfive_env.cli import run_command; "
                                    "run_command(lambda: print('x' * 1_000_000) or 0)"], tmp_path)
    assert done.returncode == 128 + signal.SIGPIPE and done.stderr == ""


def test_a_plot_path_s_suffix_is_read_in_any_case_and_names_the_format_written(tmp_path):
    """--plot RATINGS.PNG is a PNG (the suffix is compared lower-cased, and save_figure takes the format from
    it), and .svg and .pdf paths get SVG and PDF whatever matplotlib's default format is."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    parser = ArgumentParser(prog="spoilfive-x")
    for name in ("RATINGS.PNG", "b.Svg", "c.pdf"):
        refuse_bad_plot_path(parser, str(tmp_path / name))  # taken: no SystemExit
    magic = {"RATINGS.PNG": b"\x89PNG", "b.Svg": b"<?xml", "c.pdf": b"%PDF"}
    for name, start in magic.items():
        figure = Figure()
        figure.add_subplot().plot([0, 1], [1, 0])
        save_figure(figure, tmp_path / "plots" / name)
        assert (tmp_path / "plots" / name).read_bytes().startswith(start), name
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(magic)  # no .partial left


def test_unwritable_takes_a_folder_that_already_exists(tmp_path):
    """The commonest --runs-dir or --out folder is one left by an earlier run: a writable folder that exists is
    probed with a temporary file in it, never opened as a file ("Is a directory")."""
    (tmp_path / "runs").mkdir()
    assert unwritable(tmp_path / "runs", folder=True) is None
    assert unwritable(tmp_path, folder=True) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"] and not any((tmp_path / "runs").iterdir())


def test_non_negative_int_takes_0_and_positive_int_starts_at_1():
    """0 is a seat, a CPU and a count of warm-up rounds (non_negative_int); it is no number of deals or hands
    (positive_int)."""

    assert non_negative_int("0") == 0 and positive_int("1") == 1
    with pytest.raises(argparse.ArgumentTypeError, match="give a whole number of at least 0"):
        non_negative_int("-1")
    with pytest.raises(argparse.ArgumentTypeError, match="give a whole number of at least 1"):
        positive_int("0")
