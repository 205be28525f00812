"""Playing in the terminal: scripted standard input drives whole games."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from agents import load_agent
from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, ROB_FIRST
from spoilfive_env.cards import card_index
from spoilfive_env.core import PHASE_JINK, PHASE_PLAY, PHASE_ROB
from spoilfive_env.play import Quit, parse_move, play_game

COMMAND = [sys.executable, "-m", "spoilfive_env.play"]


def run(args, stdin):
    return subprocess.run(COMMAND + args, input=stdin, capture_output=True, text=True, timeout=120,
                          encoding="utf-8")


def test_a_whole_game_with_bad_input_along_the_way():
    stdin = "xyz\n99\n0\n" + "1\n" * 600
    result = run(["--players", "3", "--opponents", "spoiler,greedy", "--seed", "1", "--hands", "2"], stdin)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "I did not understand 'xyz'" in out
    assert "99 is not one of the numbered moves" in out
    assert "0 is not one of the numbered moves" in out
    assert "Final chips" in out and "Game over." in out
    assert any(symbol in out for symbol in "♣♦♥♠")
    assert "player_1 spoiler" in out and "player_2 greedy" in out
    assert re.search(r"1\) play \S+", out)


def test_q_quits_and_end_of_input_quits():
    result = run(["--players", "4", "--opponents", "random", "--seed", "2"], "q\n")
    assert result.returncode == 0 and "Bye." in result.stdout
    result = run(["--players", "4", "--opponents", "random", "--seed", "2"], "")
    assert result.returncode == 0 and "Bye." in result.stdout


def test_bad_options_give_an_error():
    result = run(["--players", "4", "--opponents", "nobody"], "")
    assert result.returncode == 2 and "unknown agent" in result.stderr
    result = run(["--players", "3", "--seat", "5"], "")
    assert result.returncode == 2 and "--seat" in result.stderr


def scripted(answer):
    """A reader that answers every prompt with ``answer(prompt_text)``, and a writer."""
    written = []

    def write(text):
        written.append(text)

    def read():
        return answer("".join(written).rsplit("\n", 3)[-3:])

    return read, write, written


def test_card_text_robbing_and_the_jink_choice():
    # Answer with the text of the first legal move's card ("5♥"), "d" never: rob when
    # offered by naming the discard, and jink when offered.
    seen = set()

    def answer(tail):
        prompt = "\n".join(tail)
        match = re.search(r"1\) (play|rob, discard) (\S+)", prompt)
        if "c claims the pool" in prompt:
            seen.add("jink")
            return "j\n"
        if "rob the turn-up" in prompt:
            seen.add("rob")
        return (match.group(2) if match else "1") + "\n"

    read, write, written = scripted(answer)
    assert play_game(2, [load_agent("greedy")], seed=21, read=read, write=write, num_hands=3) == 0
    text = "".join(written)
    assert "Final chips" in text and "not understand" not in text and "not a legal move" not in text
    assert seen == {"rob", "jink"}
    assert "You rob the turn-up, discarding" in text and "You jink" in text


def test_the_oracle_can_sit_at_the_table():
    read, write, written = scripted(lambda tail: "1\n")
    assert play_game(3, [load_agent("oracle"), load_agent("pimc:samples=4")], seed=3,
                     read=read, write=write, num_hands=1) == 0
    assert "Final chips" in "".join(written)


def test_parse_move():
    legal = [card_index("5H"), card_index("10S")]
    assert parse_move("5h", legal, PHASE_PLAY) == card_index("5H")
    assert parse_move("10♠", legal, PHASE_PLAY) == card_index("10S")
    assert parse_move("ts", legal, PHASE_PLAY) == card_index("10S")
    assert parse_move(" 2 ", legal, PHASE_PLAY) == card_index("10S")
    with pytest.raises(ValueError, match="not a legal move"):
        parse_move("KS", legal, PHASE_PLAY)
    with pytest.raises(ValueError, match="did not understand"):
        parse_move("hello", legal, PHASE_PLAY)
    with pytest.raises(Quit):
        parse_move("q", legal, PHASE_PLAY)
    rob = [ROB_FIRST + card_index("2C"), ROB_FIRST + card_index("9D"), DECLINE_ROB]
    assert parse_move("9D", rob, PHASE_ROB) == ROB_FIRST + card_index("9D")
    assert parse_move("rob 2c", rob, PHASE_ROB) == ROB_FIRST + card_index("2C")
    assert parse_move("d", rob, PHASE_ROB) == DECLINE_ROB
    assert parse_move("3", rob, PHASE_ROB) == DECLINE_ROB
    assert parse_move("c", [CLAIM, JINK], PHASE_JINK) == CLAIM
    assert parse_move("jink", [CLAIM, JINK], PHASE_JINK) == JINK
    with pytest.raises(ValueError, match="c to claim"):
        parse_move("5H", [CLAIM, JINK], PHASE_JINK)
