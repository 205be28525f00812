"""Shared helpers for driving scripted hands through the public AEC API (CONTRACT.md).

Import them in a test module with ``from conftest import Deal, ScriptedHand`` (pytest puts
``tests`` on the path, see pyproject.toml). Besides the scripts: :func:`random_legal`,
:func:`core_fields` and :func:`assert_same_state` (snapshots of a core, compared),
:func:`edited_checkpoint`, :func:`load_script` and :func:`interrupt_training`.

A scenario script is a string of whitespace-separated tokens, read left to right:

==============  ===========================================================================
token           meaning
==============  ===========================================================================
``2:5H``        seat 2 is to act and plays the 5 of hearts
``2:rob:3C``    seat 2 robs the turn-up, discarding the 3 of clubs
``2:decline``   seat 2 declines to rob; likewise ``2:claim`` and ``2:jink``
``2?5H,JD``     seat 2 is to act and its legal actions are exactly these. Items: a card
                (play it), ``*`` (play any card of the seat's hand), ``decline``, ``claim``,
                ``jink``, and ``rob`` (rob discarding any card of the hand; discarding the
                ace of trumps itself may be offered or not). No item for rob: no rob offered.
``>1``          the trick just completed was won by seat 1: seat 1 acts next
``|``           the outcome is decided here: the engine may end the hand (RULES.md); if it
                did, the remaining tokens are skipped
==============  ===========================================================================

Besides what a script asks, every step checks the invariants below, so a scenario also
checks them throughout its hand:

* the action mask is an int8 array of shape (107,) and its playable cards lie in the acting
  seat's hand, as tracked here from the deal, the plays and the robs (so a rob's discard
  never comes back and the robber holds the turn-up);
* a seat offered a rob that plays a card instead is only allowed to under
  ``conceal_ace_penalty`` (nobody gets a rob offer the script does not answer).
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, NUM_ACTIONS, ROB_FIRST
from spoilfive_env.cards import NUM_CARDS, NUM_RANKS, card_index, card_str
from spoilfive_env.core import SpoilFiveCore
from spoilfive_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]

SPECIAL_ACTIONS = {"decline": DECLINE_ROB, "claim": CLAIM, "jink": JINK}
SPECIAL_NAMES = {value: name for name, value in SPECIAL_ACTIONS.items()}


INTERRUPTED = 130
"""A command's exit status after a Ctrl-C (128 + SIGINT)."""
BAD_USAGE = 2
"""A command line's exit status when it refuses a bad flag (argparse's)."""

CTRL_C_ON_TORCH = """import runpy, sys
class CtrlCOnTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlCOnTorch())
"""
"""The start of a ``python -c`` script in which the first ``import torch`` raises ``KeyboardInterrupt``:
a Ctrl-C exactly while torch loads."""


def ctrl_c(*args, **kwargs):
    """Stands in for any call: a Ctrl-C there."""
    raise KeyboardInterrupt


def ctrl_c_on_call(monkeypatch, owner, name: str, call: int) -> None:
    """Make the ``call``-th call of ``owner.name`` end in Ctrl-C; the calls before it run as they would."""
    real, calls = getattr(owner, name), []

    def counted(*args, **kwargs):
        calls.append(args)
        if len(calls) == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def exit_status(main, argv) -> int:
    """``main(argv)``'s exit status; a Ctrl-C that comes out of it fails the test (uncaught, it would stop pytest)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C came out of the command: a traceback, and no exit status 130")


def make_env(num_players: int, reward: str = "chips", mode: str = "hand", **rules):
    """The public AEC environment, imported late so card tests run without it."""
    from spoilfive_env import env

    return env(num_players=num_players, reward=reward, mode=mode, **rules)


def parse_action(text: str) -> int:
    """``"5H"`` -> play, ``"rob:3C"`` -> rob discarding 3C, ``"decline"``/``"claim"``/``"jink"``."""
    if text in SPECIAL_ACTIONS:
        return SPECIAL_ACTIONS[text]
    if text.startswith("rob:"):
        return ROB_FIRST + card_index(text[4:])
    return card_index(text)


def play_cards(game, *moves: str) -> None:
    """Step an AEC env through ``moves``, each in :func:`parse_action`'s words."""
    for move in moves:
        game.step(parse_action(move))


def dealt_core(hands: list[str], turnup: str, dealer: int, **rules) -> SpoilFiveCore:
    """One game of the core dealt by hand: one string of five cards a seat, the turn-up, the dealer; ``rules``:
    options of the table."""
    core = SpoilFiveCore(1, rules=Rules(num_players=len(hands), **rules), deal=False)
    core.reset(hands=np.array([[[card_index(c) for c in hand.split()] for hand in hands]]),
               turnups=np.array([card_index(turnup)]), dealers=np.array([dealer]))
    return core


def play_core(core: SpoilFiveCore, *moves: str) -> None:
    """Step a one-game core through ``moves``, each in :func:`parse_action`'s words."""
    for move in moves:
        core.step(np.array([parse_action(move)]))


def fixed_deal() -> dict:
    """A 3-player deal for ``reset(options=...)``: player_2 deals, spades are trumps, and player_0 holds the five
    and jack of trumps and the ace of hearts, so that he takes the first three tricks with :data:`TRUMPS_FIRST`."""
    return {"dealer": 2, "turnup": "KS",
            "hands": [["5S", "JS", "AH", "KC", "KD"], ["2C", "3C", "4C", "6C", "7C"],
                      ["2D", "3D", "4D", "6D", "7D"]]}


TRUMPS_FIRST = ("5S", "2C", "2D", "JS", "3C", "3D", "AH", "4C", "4D")
"""The first three tricks of :func:`fixed_deal`, player_0 leading his three top trumps."""


def cards_text(cards) -> str:
    return "{" + ", ".join(card_str(int(c)) for c in sorted(cards)) + "}"


def mask_text(mask) -> str:
    legal = np.flatnonzero(mask)
    parts = [card_str(int(a)) for a in legal if a < ROB_FIRST]
    parts += [f"rob:{card_str(int(a) - ROB_FIRST)}" for a in legal if ROB_FIRST <= a < DECLINE_ROB]
    parts += [SPECIAL_NAMES[int(a)] for a in legal if a >= DECLINE_ROB]
    return "[" + " ".join(parts) + "]"


def random_legal(rng: np.random.Generator, masks) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (``(..., 107)``; an all-zero row: 0)."""
    return np.argmax(rng.random(np.shape(masks)) * masks, axis=-1)


def core_fields(core) -> dict:
    """A copy of every state field of a core (:data:`spoilfive_env.core.STATE_FIELDS`)."""
    from spoilfive_env.core import STATE_FIELDS

    return {name: getattr(core, name).copy() for name in STATE_FIELDS}


def assert_same_state(before: dict, after: dict) -> None:
    """Two snapshots (dicts of arrays and plain values) are equal; the message names what changed."""
    assert before.keys() == after.keys()
    for name, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(after[name], value, err_msg=f"{name} changed")
        else:
            assert after[name] == value, f"{name} changed"


def edited_checkpoint(tmp_path, critic: str = "local", **changes):
    """A real small policy checkpoint (hidden 16, ``critic``) with some entries replaced."""
    import torch

    from agents.policy import PolicyNet, save_checkpoint

    path = tmp_path / "edited.pt"
    save_checkpoint(path, PolicyNet(hidden=(16,), critic=critic), {})
    data = torch.load(path, weights_only=True)
    data.update(changes)
    torch.save(data, path)
    return path


def load_script(path: str, module_name: str):
    """A fresh import of a script of the repository (``train.py``, ``examples/NAME.py``: no package). It is in
    ``sys.modules`` while it runs, as an import puts it (a dataclass looks its module up there), and not after."""
    spec = importlib.util.spec_from_file_location(module_name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        if previous is None:
            del sys.modules[module_name]
        else:
            sys.modules[module_name] = previous
    return module


def interrupt_training(args, run_dir, iterations: int, env=None, cwd=None, timeout_s: float = 120.0,
                       signum=signal.SIGINT):
    """Start ``python train.py ARGS``, press Ctrl-C (or send ``signum``) once ``run_dir/progress.csv`` logs
    ``iterations`` iterations, and return ``(exit status, stdout, stderr)``."""
    progress = Path(run_dir) / "progress.csv"
    process = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *map(str, args)], cwd=cwd or ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and process.poll() is None:
            if progress.is_file() and len(progress.read_text().splitlines()) - 1 >= iterations:  # (a header line)
                break
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, stdout, stderr


@dataclass
class Deal:
    """A fixed deal: one string of five cards per seat, the turn-up, the dealer."""

    hands: list[str]
    turnup: str
    dealer: int | None = None  # default: the last seat, so seat 0 is eldest

    @property
    def num_players(self) -> int:
        return len(self.hands)

    def options(self, pool: int = 0) -> dict:
        dealer = self.num_players - 1 if self.dealer is None else self.dealer
        return {"dealer": dealer, "hands": [h.split() for h in self.hands],
                "turnup": self.turnup, "pool": pool}


@dataclass
class ScriptedHand:
    """Drives one env through a script, tracking hands and summing every step's rewards."""

    deal: Deal
    rules: dict = field(default_factory=dict)
    reward: str = "chips"
    mode: str = "hand"
    pool: int = 0
    seed: int = 0

    def __post_init__(self):
        n = self.deal.num_players
        self.env = make_env(n, reward=self.reward, mode=self.mode, **self.rules)
        self.env.reset(seed=self.seed, options=self.deal.options(self.pool))
        self.hands = [{card_index(c) for c in h.split()} for h in self.deal.hands]
        self.turnup = card_index(self.deal.turnup)
        self.trump = self.turnup // NUM_RANKS
        self.ace_of_trumps = NUM_RANKS * self.trump
        self.totals = np.zeros(n)
        self.trick_len = 0
        self.tricks_done = 0
        self.log: list[str] = []
        self.conceal = bool(self.rules.get("conceal_ace_penalty", False))

    # -------------------------------------------------------------- state
    @property
    def n(self) -> int:
        return self.deal.num_players

    def done(self) -> bool:
        e = self.env
        if not e.agents:
            return True
        return all(e.terminations.get(a, False) or e.truncations.get(a, False) for a in e.agents)

    def seat(self) -> int:
        return int(self.env.agent_selection.split("_")[1])

    def mask(self) -> np.ndarray:
        return self.env.observe(self.env.agent_selection)["action_mask"]

    def where(self) -> str:
        return f"after [{' '.join(self.log)}]"

    # -------------------------------------------------------------- acting
    def expect_actor(self, seat: int):
        assert not self.done(), f"hand ended early, {self.where()}; rewards {self.totals.tolist()}"
        assert self.env.agent_selection == f"player_{seat}", (
            f"expected player_{seat} to act, got {self.env.agent_selection}, {self.where()}")

    def act(self, seat: int, action: int):
        self.expect_actor(seat)
        mask = self.mask()
        self.check_invariants(seat, mask, action)
        try:
            self.env.step(action)
        except ValueError as error:
            pytest.fail(f"player_{seat} action {action} refused {self.where()}; "
                        f"legal {mask_text(mask)}: {error}")
        for i in range(self.n):
            self.totals[i] += self.env.rewards.get(f"player_{i}", 0.0)
        if action < ROB_FIRST:
            self.hands[seat].discard(action)
            self.trick_len += 1
            if self.trick_len == self.n:
                self.trick_len = 0
                self.tricks_done += 1
        elif action < DECLINE_ROB:
            self.hands[seat].discard(action - ROB_FIRST)
            self.hands[seat].add(self.turnup)

    def check_invariants(self, seat: int, mask: np.ndarray, action: int):
        assert isinstance(mask, np.ndarray) and mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,), (
            f"action_mask must be int8 (107,), got {getattr(mask, 'dtype', None)} "
            f"{getattr(mask, 'shape', None)}")
        plays = {int(a) for a in np.flatnonzero(mask[:NUM_CARDS])}
        assert plays <= self.hands[seat], (
            f"player_{seat} may play {cards_text(plays - self.hands[seat])} not in its hand "
            f"{cards_text(self.hands[seat])}, {self.where()}")
        rob_offered = mask[ROB_FIRST:DECLINE_ROB + 1].any()
        if rob_offered and action < ROB_FIRST:
            assert self.conceal, (
                f"player_{seat} was offered a rob {mask_text(mask)} but the script plays a card; "
                f"only conceal_ace_penalty allows that, {self.where()}")

    def check_legal(self, seat: int, items: str):
        self.expect_actor(seat)
        mask = self.mask()
        hand = self.hands[seat]
        plays, specials, rob = set(), set(), False
        for item in items.split(","):
            if item == "*":
                plays |= hand
            elif item == "rob":
                rob = True
            elif item in SPECIAL_ACTIONS:
                specials.add(SPECIAL_ACTIONS[item])
            else:
                plays.add(card_index(item))
        legal = np.flatnonzero(mask)
        got_plays = {int(a) for a in legal if a < ROB_FIRST}
        got_robs = {int(a) - ROB_FIRST for a in legal if ROB_FIRST <= a < DECLINE_ROB}
        got_specials = {int(a) for a in legal if a >= DECLINE_ROB}
        context = f"player_{seat} legal {mask_text(mask)}, expected {items}, {self.where()}"
        assert got_plays == plays, (
            f"playable cards {cards_text(got_plays)} != expected {cards_text(plays)}: {context}")
        assert got_specials == specials, context
        if rob:
            assert hand - {self.ace_of_trumps} <= got_robs <= hand, (
                f"rob should offer every discard of {cards_text(hand)}: {context}")
        else:
            assert not got_robs, f"no rob expected: {context}"

    def check_trick_winner(self, seat: int):
        assert self.trick_len == 0 and self.tricks_done > 0, (
            f"'>{seat}' placed mid-trick, {self.where()}")
        if self.done():
            return
        assert self.env.agent_selection == f"player_{seat}", (
            f"trick {self.tricks_done} should go to player_{seat}; "
            f"{self.env.agent_selection} acts next, {self.where()}")

    # -------------------------------------------------------------- scripts
    def run(self, script: str, until_done: bool = True):
        """Play a script; with ``until_done`` the hand (or episode) must end at its last token."""
        decided = False
        for token in script.split():
            if decided and self.done():
                break
            if token == "|":
                decided = True
            elif m := re.fullmatch(r"(\d+):(\S+)", token):
                self.act(int(m[1]), parse_action(m[2]))
            elif m := re.fullmatch(r"(\d+)\?(\S+)", token):
                self.check_legal(int(m[1]), m[2])
            elif m := re.fullmatch(r">(\d+)", token):
                self.check_trick_winner(int(m[1]))
            else:
                raise AssertionError(f"bad script token {token!r}")
            self.log.append(token)
        if until_done:
            assert self.done(), f"hand should be over {self.where()}; player_{self.seat()} to act"
        else:
            assert not self.done(), f"hand ended early {self.where()}"
        return self



@pytest.fixture(autouse=True, scope="session")
def ctrl_c_not_ignored():
    """Give the tests Python's own Ctrl-C handler. A suite started in the background of a shell
    (``pytest &``) inherits SIGINT ignored, and so would every command a test starts; the tests that
    send a Ctrl-C would then fail for the way the suite was launched, not for the code."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_under_pytests_own_folder(tmp_path_factory):
    """stable-baselines3 makes a folder at every ``learn()`` that has no logger: ``$SB3_LOGDIR``, else a
    new dated one under the system's temporary directory, left behind (three a run of the suite)."""
    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))
    yield
    if before is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = before


@pytest.fixture(autouse=True)
def sigint_handler_restored():
    """Fail a test that leaves Python's Ctrl-C handler changed: the tests after it in the same worker
    (and every subprocess they start) would then not see a Ctrl-C as a user's terminal delivers it."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the test left the SIGINT handler changed: {before!r} -> {after!r}")


def assert_one_line_refusal(stderr: str, returncode: int, *words: str) -> None:
    assert returncode != 0
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def refused_in_process(main, argv, capsys, *words) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == BAD_USAGE, argv
    captured = capsys.readouterr()
    assert captured.out == "", argv  # nothing was played or measured
    assert_one_line_refusal(captured.err, stopped.value.code, *words)


def with_entry(value):
    """A change of a cached array (a test's damaged file): its entry [1, 0] set to ``value``, on a copy."""
    def change(array):
        array = array.copy()
        array[1, 0] = value
        return array
    return change
