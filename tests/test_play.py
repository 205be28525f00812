"""Playing in the terminal: scripted standard input drives whole games; the reasons a move is
refused; Ctrl-C; the launcher in spoilfive_env that finds the game by its entry point."""

from __future__ import annotations

import ast
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import TRUMPS_FIRST, fixed_deal, play_cards

from agents import load_agent
from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, ROB_FIRST
from spoilfive_env.cards import card_index
from spoilfive_env.core import PHASE_JINK, PHASE_PLAY, PHASE_ROB
from spoilfive_env.env import raw_env
from spoilfive_integrations.play import Quit, parse_move, play_game, why_not

ROOT = Path(__file__).resolve().parents[1]

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


def test_the_opponents_are_called_as_the_command_named_them():
    # best was announced as "pimc_ppo", the name of the search it is a setting of
    result = run(["--players", "4", "--opponents", "best,ppo-20min", "--seed", "2"], "q\n")
    assert result.returncode == 0, result.stderr
    assert "Opponents: player_1 best, player_2 ppo-20min, player_3 ppo-20min" in result.stdout
    with pytest.raises(ValueError, match="labels has 1 entries and opponents 2: give one label per opponent"):
        play_game(3, [load_agent("spoiler"), load_agent("greedy")], labels=["spoiler"], read=lambda: "q\n",
                  write=lambda text: None)


def test_bad_options_give_an_error():
    result = run(["--players", "4", "--opponents", "nobody"], "")
    assert result.returncode == 2 and "unknown agent 'nobody': choose one of random, greedy" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    result = run(["--players", "3", "--seat", "5"], "")
    assert result.returncode == 2 and "--seat 5 is not allowed: at 3 players the seats are 0-2" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_ctrl_c_says_goodbye_and_exits_130():
    process = subprocess.Popen(COMMAND + ["--players", "3", "--seed", "4"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen, deadline = b"", time.monotonic() + 60
    while b"\n> " not in seen and time.monotonic() < deadline:  # wait for the first prompt
        chunk = os.read(process.stdout.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
    assert b"\n> " in seen, seen[-500:]
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    text = stderr.decode()
    assert "Bye" in text and "Traceback" not in text and len(text.strip().splitlines()) == 1


def test_the_table_is_shown_only_on_your_turn_and_enter_plays_a_forced_move():
    forced = []

    def answer(tail):
        prompt = "\n".join(tail)
        if "press Enter to play it" in prompt:
            forced.append(prompt)
            return "\n"
        return "1\n"

    read, write, written = scripted(answer)
    assert play_game(4, [load_agent("spoiler")], seed=5, read=read, write=write, num_hands=3) == 0
    text = "".join(written)
    assert forced, "no forced move in three hands"
    assert "not understand" not in text and "type a move" not in text
    your_moves = len(re.findall(r"(?:^|> )You (play|rob|decline|claim|jink)", text, flags=re.MULTILINE))
    their_moves = len(re.findall(r"^player_\d (plays|robs|declines|claims|jinks)", text, flags=re.MULTILINE))
    assert their_moves > your_moves > 0
    assert text.count("Spoil Five · ") == your_moves  # one table per turn of yours, none for theirs


def test_a_player_in_another_seat_than_0_is_shown_his_own_hand_and_no_one_else_s():
    """--seat 2: every table shown (one a turn of yours) is seen from seat 2, so the hand on it is player_2's,
    never seat 0's."""
    read, write, written = scripted(lambda tail: "1\n")
    assert play_game(3, [load_agent("greedy")], human=2, seed=7, read=read, write=write, num_hands=1) == 0
    text = "".join(written)
    tables = re.findall(r"^(player_\d)'s hand: ", text, flags=re.MULTILINE)
    assert tables and set(tables) == {"player_2"}
    assert text.count("Spoil Five · ") == len(tables) and "player_0 plays" in text


def test_each_finished_trick_names_who_took_it_as_the_hand_s_trick_count_says():
    """After the last card of every trick the log names its taker ("You take" / "player_N takes"): over a
    hand, those lines count each seat's tricks as the hand's result line gives them."""
    read, write, written = scripted(lambda tail: "1\n")
    assert play_game(3, [load_agent("greedy")], seed=11, read=read, write=write, num_hands=2) == 0
    hands = re.findall(r"(.*?)Tricks: (\d+) (\d+) (\d+)\.", "".join(written), flags=re.DOTALL)
    assert len(hands) >= 2
    for log, *tricks in hands:
        takers = re.findall(r"^(You take|player_1 takes|player_2 takes) the trick\.$", log, flags=re.MULTILINE)
        assert [takers.count(who) for who in ("You take", "player_1 takes", "player_2 takes")] == list(map(int, tricks))


def test_the_game_ends_naming_the_seats_with_most_chips():
    """RULES.md: most chips wins. The last line gives every seat's chips, then the seats that hold the most."""
    read, write, written = scripted(lambda tail: "1\n")
    assert play_game(3, [load_agent("greedy"), load_agent("random")], seed=2, read=read, write=write,
                     num_hands=2) == 0
    final = re.search(r"^Final chips: you (-?\d+), player_1 (-?\d+), player_2 (-?\d+)\. Most chips: (.*)\.$",
                      "".join(written), flags=re.MULTILINE)
    chips = dict(zip(("you", "player_1", "player_2"), map(int, final.groups()[:3])))
    assert final.group(4).split(", ") == [seat for seat, held in chips.items() if held == max(chips.values())]
    assert len(set(chips.values())) > 1  # (a seed where not everyone is tied)


def test_each_opponent_is_seeded_from_the_seed_flag_and_no_two_alike(monkeypatch):
    """--seed seeds the deals and the agents: a run is repeatable, and two opponents of the same kind get
    seeds of their own (alike, they would draw the same random numbers in step)."""
    import spoilfive_integrations.play as play

    seeds = []

    def recording(spec, seed=None):
        seeds.append(seed)
        return load_agent(spec, seed=seed)

    monkeypatch.setattr(play, "load_agent", recording)
    for _ in range(2):
        monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
        assert play.main(["--players", "4", "--opponents", "random,random,random", "--seed", "9"]) == 0
    assert seeds[:3] == seeds[3:] and len(set(seeds[:3])) == 3 and None not in seeds


class IllegalAgent:
    """An opponent that always answers ``action``, whatever its mask allows."""

    name = "illegal"

    def __init__(self, action):
        self.action = action

    def act(self, observation):
        return self.action


@pytest.mark.parametrize("action", [107, -1, JINK])
def test_an_opponent_s_illegal_action_stops_the_game_naming_the_agent_and_the_action(action):
    """The game checks each opponent's move against its mask: a broken agent is named with what it chose, as a
    RuntimeError (a fault of the program, not of the player's typing)."""
    read, write, _ = scripted(lambda tail: "1\n")
    with pytest.raises(RuntimeError, match=f"^agent .*IllegalAgent.* chose the illegal action {action}$"):
        play_game(3, [IllegalAgent(action)], seed=0, read=read, write=write)


def test_the_launcher_finds_the_game_by_its_entry_point_and_imports_no_upper_layer(monkeypatch, capsys):
    for path in (ROOT / "spoilfive_env").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            assert not any(n.split(".")[0] in ("agents", "spoilfive_integrations") for n in names), path
    import spoilfive_env.play as launcher

    monkeypatch.setattr(launcher, "entry_points", lambda **selection: [])
    assert launcher.main(["--players", "3"]) != 0
    assert "pip install -e ." in capsys.readouterr().err


@pytest.mark.parametrize("entry", ["spoilfive_env.play", "spoilfive_integrations.play"])
def test_a_bad_rules_backend_variable_is_refused_before_the_game_by_every_entry(entry, monkeypatch, capsys):
    # python -m spoilfive_env.play checked the variables before agents had registered SPOILFIVE_RULES, and the
    # spoilfive-play script (spoilfive_integrations.play:main) not at all: the game was played (bad-input sweep 16)
    import importlib

    monkeypatch.setenv("SPOILFIVE_RULES", "bogus")
    with pytest.raises(SystemExit) as stopped:
        importlib.import_module(entry).main(["--seed", "1", "--hands", "2"])
    captured = capsys.readouterr()
    assert stopped.value.code == 2 and captured.out == ""
    assert captured.err.splitlines() == ["python -m spoilfive_env.play: error: SPOILFIVE_RULES='bogus' is not allowed: "
                                         "choose one of auto, numba, numpy (see python -m spoilfive_env.play --help)"]


def four_player_deal():
    """Seat 0 leads (dealer 3); spades are trump and nobody holds the ace of spades (no rob)."""
    game = raw_env(num_players=4)
    game.reset(options={"dealer": 3, "turnup": "9S", "pool": 0, "hands": [
        ["10S", "KD", "2C", "3C", "4C"], ["JS", "4S", "2D", "3H", "7C"],
        ["5S", "AH", "KS", "QS", "6S"], ["3D", "4D", "6D", "7D", "8D"]]})
    return game


def refusal(game, text):
    legal = [int(a) for a in np.flatnonzero(game.core.legal_mask()[0])]
    with pytest.raises(ValueError) as error:
        parse_move(text, legal, int(game.core.phase[0]), why=lambda action: why_not(game.core, action))
    return str(error.value)


def test_an_illegal_move_says_why():
    game = four_player_deal()
    game.step(card_index("KD"))  # a plain lead; seat 1 holds a diamond
    message = refusal(game, "3H")
    assert "K♦ was led" in message and "follow suit (♦) or play a trump (♠" in message
    assert "you do not hold A♣" in refusal(game, "AC")
    assert "robbing is not open" in refusal(game, "rob 2d") and "robbing is not open" in refusal(game, "d")
    assert "first three tricks" in refusal(game, "c")

    game = four_player_deal()
    game.step(card_index("10S"))  # a trump lead below seat 1's jack, but seat 1 also holds the four
    message = refusal(game, "7C")
    assert "a trump must be played" in message and "(J♠ may)" in message


def test_a_privileged_trump_below_the_trump_led_is_not_offered_as_one_to_keep_back():
    """RULES.md: the five, the jack of trumps and the ace of hearts may be kept back only from a lower trump led.
    Against the five of trumps led, seat 1's jack must follow like any trump, and the reason says no more."""
    game = raw_env(num_players=3)
    game.reset(options={"dealer": 2, "turnup": "9S", "pool": 0, "hands": [
        ["5S", "KD", "2C", "3C", "4C"], ["JS", "4S", "2D", "3H", "7C"], ["AH", "KS", "QS", "6S", "8D"]]})
    game.step(card_index("5S"))
    message = refusal(game, "7C")
    assert message.endswith("a trump (5♠) was led and you hold 4♠, J♠: a trump must be played")


def test_the_hand_result_names_the_taker_the_jink_bonus_tricks_chips_and_pool():
    """hand_result, worked out by hand for a 3-player hand of ante 1 (pool 3, 20 chips each): a claim pays 3,
    a won jink 2 more from each player; in the words of the player (you) or of another seat."""
    from spoilfive_integrations.play import hand_result

    def played(*moves):
        game = raw_env(num_players=3)
        game.reset(options=fixed_deal())
        play_cards(game, *TRUMPS_FIRST, *moves)  # player_0 takes three tricks
        return game.core

    claimed, jinked = played("claim"), played("jink", "KC", "6C", "6D", "KD", "7C", "7D")
    assert hand_result(claimed, human=0) == ("You take the pool. Tricks: 3 0 0. Chips: you 22, player_1 19, "
                                             "player_2 19; pool 0.")
    assert hand_result(claimed, human=1) == ("player_0 takes the pool. Tricks: 3 0 0. Chips: player_0 22, you 19, "
                                             "player_2 19; pool 0.")
    assert hand_result(jinked, human=0) == ("You take the pool and the jink bonus. Tricks: 5 0 0. Chips: you 26, "
                                            "player_1 17, player_2 17; pool 0.")


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


def test_the_move_log_hides_an_opponent_s_discard_and_shows_your_own():
    """RULES.md: the discard is hidden from everyone else; who robbed is public. So the log says only that an
    opponent robbed, and names your own discard to you."""
    from spoilfive_integrations.play import describe_move

    discard = ROB_FIRST + card_index("9D")
    assert describe_move(2, discard, human=0) == "player_2 robs the turn-up"
    assert describe_move(0, discard, human=0) == "You rob the turn-up, discarding 9♦"
    assert describe_move(1, card_index("9D"), human=0) == "player_1 plays 9♦"  # a card played is seen by all


def test_parse_move():
    legal = [card_index("5H"), card_index("10S")]
    assert parse_move("5h", legal, PHASE_PLAY) == card_index("5H")
    assert parse_move("10♠", legal, PHASE_PLAY) == card_index("10S")
    assert parse_move("ts", legal, PHASE_PLAY) == card_index("10S")
    assert parse_move(" 2 ", legal, PHASE_PLAY) == card_index("10S")
    with pytest.raises(ValueError, match="not a legal move"):
        parse_move("KS", legal, PHASE_PLAY)
    with pytest.raises(ValueError, match="type a move"):
        parse_move("", legal, PHASE_PLAY)
    assert parse_move("", legal[:1], PHASE_PLAY) == legal[0]  # Enter plays the only legal move
    with pytest.raises(ValueError, match="^I did not understand 'hello': type a number, a card such as 5H .*or q to "
                                         "quit$"):
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


def test_a_digit_that_is_no_number_and_a_number_too_long_for_int_are_answered_in_words():
    """'²' passed str.isdigit() and int() then answered in Python's words ("invalid literal for int()");
    a number of 4,300 digits and more in Python's too ("Exceeds the limit ... integer string conversion")."""
    legal = [card_index("5H"), card_index("10S")]
    with pytest.raises(ValueError, match="I did not understand '²'"):
        parse_move("²", legal, PHASE_PLAY)
    with pytest.raises(ValueError, match="^9{5000} is not one of the numbered moves 1-2$"):
        parse_move("9" * 5000, legal, PHASE_PLAY)
    with pytest.raises(ValueError, match="^3 is not one of the numbered moves 1-2$"):
        parse_move("٣", legal, PHASE_PLAY)  # an Arabic-Indic 3: a decimal digit, read as 3
    assert parse_move("02", legal, PHASE_PLAY) == legal[1]


def test_the_same_seed_deals_the_same_game_and_another_seed_another():
    """--seed seeds the deals: the same seed and the same answers give the same game, line for line."""
    def transcript(seed):
        read, write, written = scripted(lambda tail: "1\n")
        assert play_game(3, [load_agent("greedy")], seed=seed, read=read, write=write, num_hands=1) == 0
        return "".join(written)

    first = transcript(5)
    assert transcript(5) == first and transcript(6) != first


def test_each_opponent_is_told_the_table_s_rules_before_the_first_deal():
    """An agent's bind(rules) is how a search learns the table it plays (a PIMC search samples its deals and
    scores its rollouts under them): every opponent is bound to the game's own rules."""
    from spoilfive_env.rules import make_rules

    opponents = [load_agent("pimc:samples=2"), load_agent("spoiler")]
    play_game(3, opponents, seed=0, read=lambda: "q\n", write=lambda text: None, num_hands=2, jink_bonus=2)
    table = make_rules(num_players=3, num_hands=2, jink_bonus=2)
    assert [agent.rules for agent in opponents] == [table, table]


def rules_played(monkeypatch, argv):
    """The rules of the game ``main(argv)`` starts (quitting at once), and what it wrote."""
    import spoilfive_integrations.play as play

    made = []

    def recording(**kwargs):
        made.append(raw_env(**kwargs))
        return made[-1]

    monkeypatch.setattr(play, "raw_env", recording)
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert play.main(argv) == 0
    [game] = made
    return game.rules


def test_the_command_s_defaults_are_four_players_against_spoilers(monkeypatch, capsys):
    """As its --help says: --players 4, --opponents spoiler (filling the three other seats)."""
    from spoilfive_env.rules import make_rules

    assert rules_played(monkeypatch, ["--seed", "1"]) == make_rules(num_players=4)
    assert "Opponents: player_1 spoiler, player_2 spoiler, player_3 spoiler" in capsys.readouterr().out


def test_hands_up_to_the_rules_max_hands_and_a_preset_are_the_rules_played(monkeypatch):
    """--hands 50, the cap itself (max_hands), is taken; --preset hoyle plays Hoyle's antes and jink bonus."""
    from spoilfive_env.rules import make_rules

    cap = make_rules(num_players=3).max_hands
    assert rules_played(monkeypatch, ["--players", "3", "--hands", str(cap)]).num_hands == cap
    assert rules_played(monkeypatch, ["--preset", "hoyle"]) == make_rules(num_players=4, preset="hoyle")
    assert make_rules(num_players=4, preset="hoyle") != make_rules(num_players=4)  # (the preset changes rules)


def test_ctrl_c_while_an_opponent_loads_says_goodbye_not_a_traceback(monkeypatch, capsys):
    """A checkpoint opponent imports torch, seconds before the first prompt: a Ctrl-C then ended in a traceback."""
    import spoilfive_integrations.play as game

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(game, "load_agent", interrupted)
    with pytest.raises(SystemExit) as stopped:
        game.main(["--players", "3", "--opponents", "ppo"])
    assert stopped.value.code == 130 and capsys.readouterr().err.strip() == "Bye (Ctrl-C)."


def test_the_console_script_piped_into_a_reader_that_stops_early_ends_quietly():
    """``spoilfive-play ... | head -2``: the console script ran main() bare and ended in a BrokenPipeError
    traceback; it runs it as python -m does (run_command), exit status 141."""
    script = "import sys; from spoilfive_integrations.play import console_main; sys.exit(console_main())"
    process = subprocess.Popen([sys.executable, "-c", script, "--players", "3", "--opponents", "random", "--seed", "0"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    process.stdout.readline()
    process.stdout.close()  # the reader stops
    _, error = process.communicate(b"1\n" * 400, timeout=120)
    assert process.returncode == 141 and b"Traceback" not in error, error.decode()


def test_the_last_hand_a_game_allows_ends_spoiled_with_the_pool_split_and_says_so():
    """At max_hands a spoiled pool is split evenly, the remainder unpaid (RULES.md): the line said the pool stays
    in the middle. Before the last hand, the chips shown are after the next hand's antes, and the line says so."""
    written = []
    play_game(5, [load_agent("random", seed=1)], human=0, seed=1, read=lambda: "1\n", write=written.append,
              num_hands=1, max_hands=1)
    text = "".join(written)
    hand_lines = [line for line in text.splitlines() if "Tricks:" in line]
    assert len(hand_lines) == 1 and "Game over." in text
    assert hand_lines[0] == ("The hand is spoiled, and it is the last the game allows (1): the pool is split evenly, "
                             "the remainder unpaid. Tricks: 2 1 2 0 0. Chips: you 20, player_1 20, player_2 20, "
                             "player_3 20, player_4 20; pool 0.")  # each paid 1 and got 5 // 5 back
    written.clear()
    play_game(3, [load_agent("random", seed=1)], human=0, seed=2, read=lambda: "1\n", write=written.append,
              num_hands=2)
    hand_lines = [line for line in "".join(written).splitlines() if "Tricks:" in line]
    assert "Chips, the next hand's antes paid: " in hand_lines[0] and "Chips: " in hand_lines[-1]
