"""Play Spoil Five in the terminal against chosen agents.

``python -m spoilfive_env.play --players 4 --opponents spoiler`` (or the ``spoilfive-play``
command; both run :func:`main` here).

You sit in seat 0 (``--seat``) of a whole game (docs/rules.md: ``--hands`` hands, then on until
the pool is won). Each opponent's move is one line; when it is your turn the table is shown
with suit symbols (trump and turn-up, the trick so far, tricks, chips and pool, your hand) and
your legal moves are numbered: type a number, or a card as text (``5H``, ``10♠``, ``td``). When
only one move is legal, Enter plays it. When you may rob the turn-up, type the card to discard
(or its number), or ``d`` to decline; after taking the first three tricks, ``c`` claims the pool
and ``j`` jinks (plays on for all five). A move that is not allowed is answered with the reason
(follow suit or trump; a trump is due; which top trumps may be kept back; ...) and a new prompt.
``q`` quits; so does Ctrl-C (exit status 130).

``--opponents`` takes agent names or checkpoint paths, comma-separated, seat by seat; a
short list is filled with its last entry (``--opponents spoiler`` at 4 players gives
three spoilers).

This module sits in the integration layer because it uses :mod:`agents`; the environment
package reaches it only through the ``spoilfive-play`` entry point (``spoilfive_env/play.py``).
"""

from __future__ import annotations

import sys

import numpy as np

from agents import load_agent
from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, NUM_ACTIONS, ROB_FIRST, action_str
from spoilfive_env.backends import BackendSettingError, check_backend_variables
from spoilfive_env.cards import (
    ACE,
    ACE_OF_TRUMPS,
    NUM_RANKS,
    SUIT_SYMBOLS,
    TRUMP,
    card_index,
    card_str,
)
from spoilfive_env.cli import (
    ArgumentParser,
    comma_items,
    exit_interrupted,
    non_negative_int,
    positive_int,
    run_command,
    seed_value,
    table_size,
)
from spoilfive_env.core import PHASE_JINK, PHASE_PLAY, PHASE_ROB
from spoilfive_env.env import raw_env, render_table
from spoilfive_env.rules import PRESETS, make_rules

GAME = 0  # the terminal game is game 0 of its environment's core
MOVE_DIGITS = 20  # a typed number longer than this is no move's (there are at most 107 moves)


class Quit(Exception):
    """The player typed q (or standard input ended)."""


def describe_move(seat: int, action: int, human: int) -> str:
    """A line for the move log; an opponent's discard stays hidden."""
    who = "You" if seat == human else f"player_{seat}"
    if action < ROB_FIRST:
        verb = "play" if seat == human else "plays"
        return f"{who} {verb} {card_str(action, symbols=True)}"
    if action < DECLINE_ROB:
        if seat == human:
            return f"You rob the turn-up, discarding {card_str(action - ROB_FIRST, symbols=True)}"
        return f"{who} robs the turn-up"
    if action == DECLINE_ROB:
        return f"{who} {'decline' if seat == human else 'declines'} to rob"
    if action == CLAIM:
        return f"{who} {'claim' if seat == human else 'claims'} the pool"
    return f"{who} {'jink' if seat == human else 'jinks'}: playing on for all five"


def legal_moves_text(legal: list[int]) -> str:
    return "   ".join(f"{i + 1}) {action_str(a, symbols=True)}" for i, a in enumerate(legal))


def cards_text(cards) -> str:
    return ", ".join(card_str(int(c), symbols=True) for c in cards)


def why_not(core, action: int) -> str:
    """Why ``action`` is not legal for the seat to act in game 0 of ``core``, in the rules' words."""
    seat = int(core.current[GAME])
    phase = int(core.phase[GAME])
    trump = int(core.trump[GAME])
    held = np.flatnonzero(core.holder[GAME] == seat)
    turnup = card_str(int(core.turnup[GAME]), symbols=True)
    if ROB_FIRST <= action < DECLINE_ROB or action == DECLINE_ROB:
        if phase != PHASE_ROB:
            return ("robbing is not open to you now: only the holder of the ace of trumps (the dealer, when an "
                    "ace is turned up) may rob, at his first turn of the hand")
        card = action - ROB_FIRST
        if action != DECLINE_ROB and card not in held:
            return f"you do not hold {card_str(card, symbols=True)}: discard one of {cards_text(held)}"
        return f"{action_str(action, symbols=True)} is not allowed now"
    if action in (CLAIM, JINK):
        return "claim and jink are offered only to a player who has taken each of the first three tricks"
    if action not in held:
        return f"you do not hold {card_str(action, symbols=True)}; your hand is {cards_text(held)}"
    if phase == PHASE_ROB:
        return f"first decide on the turn-up {turnup}: type the card to discard to rob it, or d to decline"
    if phase == PHASE_JINK:
        return "first choose: c claims the pool, j jinks"
    if phase != PHASE_PLAY:
        return "the hand is over"
    led = int(core.led_card[GAME])
    suit_of = core.effective_suit[GAME]
    led_suit = int(suit_of[led])
    trumps_held = held[suit_of[held] == TRUMP]
    if led_suit != TRUMP:
        following = held[suit_of[held] == led_suit]
        return (f"{card_str(led, symbols=True)} was led and you hold {cards_text(following)}: follow suit "
                f"({SUIT_SYMBOLS[led_suit]}) or play a trump ({SUIT_SYMBOLS[trump]}, with the ace of hearts)")
    stronger = core.strength[GAME, trumps_held] > core.strength[GAME, led]
    kept_back = trumps_held[core.privileged[GAME, trumps_held] & stronger]
    text = (f"a trump ({card_str(led, symbols=True)}) was led and you hold {cards_text(trumps_held)}: "
            "a trump must be played")
    if len(kept_back):
        text += (f"; only the five, the jack of trumps and the ace of hearts above the card led may be kept "
                 f"back ({cards_text(kept_back)} may), and you hold another trump")
    elif core.rules.conceal_ace_penalty and ACE_OF_TRUMPS[trump] in trumps_held and \
            int(core.turnup[GAME]) % NUM_RANKS != ACE:
        text += " (a concealed ace of trumps has lost its privilege to be kept back)"
    return text


def parse_move(text: str, legal: list[int], phase: int, why=None) -> int:
    """The action the player's text means, or ``ValueError`` with what went wrong.

    Args:
        text: what the player typed.
        legal: the legal actions, in the numbered order shown.
        phase: the game's phase (``PHASE_ROB``, ``PHASE_PLAY``, ``PHASE_JINK``).
        why: optional ``why(action) -> str``, the reason an action is not legal
            (:func:`why_not`); without it the error just says the move is not legal now.
    """
    text = text.strip()
    lowered = text.lower()
    if lowered in ("q", "quit", "exit"):
        raise Quit
    if not text:
        if len(legal) == 1:  # Enter plays the one legal move
            return legal[0]
        raise ValueError("type a move")

    def refuse(action: int) -> ValueError:
        move = action_str(action, symbols=True)
        return ValueError(f"{move} is not allowed: {why(action)}" if why is not None else
                          f"{move} is not a legal move now")

    if text.isdecimal():  # not isdigit(): "²" is a digit that int() refuses
        number = int(text) if len(text) <= MOVE_DIGITS else None  # int() refuses 4,300 digits and more
        if number is not None and 1 <= number <= len(legal):
            return legal[number - 1]
        raise ValueError(f"{text if number is None else number} is not one of the numbered moves 1-{len(legal)}")
    if lowered in ("d", "decline", "n", "no"):
        if DECLINE_ROB in legal:
            return DECLINE_ROB
        raise refuse(DECLINE_ROB)
    if lowered in ("c", "claim", "j", "jink"):
        action = CLAIM if lowered[0] == "c" else JINK
        if action in legal:
            return action
        raise refuse(action)
    if phase == PHASE_JINK:
        raise ValueError("type c to claim the pool or j to jink")
    robbing = lowered.startswith("rob ")
    if robbing:
        text = text[4:]
    try:
        card = card_index(text)
    except ValueError:
        raise ValueError(f"I did not understand {text!r}: type a number, a card such as 5H or "
                         f"10{SUIT_SYMBOLS[3]}, or q to quit") from None
    if phase == PHASE_ROB and ROB_FIRST + card in legal:
        return ROB_FIRST + card
    if robbing or phase == PHASE_ROB:  # a card typed at the rob prompt is a discard, never a play
        raise refuse(ROB_FIRST + card)
    if card in legal:
        return card
    raise refuse(card)


def prompt_text(phase: int, core, legal: list[int]) -> str:
    if len(legal) == 1:
        return f"Your only legal move is to {action_str(legal[0], symbols=True)}: press Enter to play it"
    if phase == PHASE_ROB:
        turnup = card_str(int(core.turnup[GAME]), symbols=True)
        return (f"You may rob the turn-up {turnup}: type the card to discard (or its number), "
                "or d to decline")
    if phase == PHASE_JINK:
        bonus = core.rules.jink_bonus
        return (f"You took the first three tricks: c claims the pool, j jinks (win the last two "
                f"tricks too for {bonus} chip{'s' if bonus != 1 else ''} from every other player)")
    return "Your move: type a number or a card"


def ask(phase: int, legal: list[int], core, read, write) -> int:
    while True:
        write(f"{prompt_text(phase, core, legal)} (q quits)\n  {legal_moves_text(legal)}\n> ")
        line = read()
        if line == "":  # end of input
            raise Quit
        try:
            return parse_move(line, legal, phase, why=lambda action: why_not(core, action))
        except ValueError as error:
            write(f"  {error}\n")


def hand_result(core, human: int, game_over: bool = True) -> str:
    """The line that ends a hand of game 0 of ``core`` (just settled). ``game_over``: it was the game's last hand;
    else the next hand is dealt and the chips and pool shown are after its antes, and the line says so."""
    winner = int(core.last_winner[GAME])
    tricks = " ".join(str(int(t)) for t in core.last_tricks[GAME])
    if winner < 0 and game_over:  # the game ends on a spoil only at max_hands (docs/rules.md)
        text = (f"The hand is spoiled, and it is the last the game allows ({core.rules.max_hands}): the pool is "
                "split evenly, the remainder unpaid.")
    elif winner < 0:
        text = "The hand is spoiled: the pool stays in the middle."
    else:
        who = (f"team {winner}" if core.rules.partnerships else
               "You" if winner == human else f"player_{winner}")
        text = f"{who} {'take' if who == 'You' else 'takes'} the pool"
        if core.last_jink_won[GAME]:
            text += " and the jink bonus"
        text += "."
    chips = ", ".join(f"{'you' if s == human else f'player_{s}'} {int(c)}" for s, c in enumerate(core.chips[GAME]))
    after = "" if game_over else ", the next hand's antes paid"
    return f"{text} Tricks: {tricks}. Chips{after}: {chips}; pool {int(core.pool[GAME])}."


def play_game(num_players: int, opponents: list, human: int = 0, seed: int | None = None,
              read=None, write=None, labels: list[str] | None = None, **rules) -> int:
    """Play one game in the terminal (``read`` and ``write`` default to standard input and
    output); returns 0, also when the player quits. ``labels``: what to call each of ``opponents``
    (default: the agent's name; the command line gives the specs as typed, so ``best`` is ``best``)."""
    read = read or sys.stdin.readline
    write = write or (lambda text: (sys.stdout.write(text), sys.stdout.flush()))
    if labels is None:
        labels = [getattr(agent, "name", agent) for agent in opponents]
    elif len(labels) != len(opponents):
        raise ValueError(f"labels has {len(labels)} entries and opponents {len(opponents)}: "
                         "give one label per opponent")
    game = raw_env(num_players=num_players, mode="game", **rules)
    core = game.core
    seat_agent, seat_label = {}, {}
    others = [s for s in range(num_players) if s != human]
    for index, seat in enumerate(others):
        which = min(index, len(opponents) - 1)
        seat_agent[seat] = opponents[which]
        seat_label[seat] = labels[which]
    for agent in seat_agent.values():
        if hasattr(agent, "bind"):
            agent.bind(game.rules)
    game.reset(seed=seed)
    write(f"Spoil Five: you are player_{human}. Opponents: "
          + ", ".join(f"player_{s} {label}" for s, label in seat_label.items()) + "\n")
    try:
        for name in game.agent_iter():
            observation, _, termination, truncation, _ = game.last()
            if termination or truncation:
                game.step(None)
                continue
            seat = game.agent_name_mapping[name]
            mask = observation["action_mask"]
            legal = [int(a) for a in np.flatnonzero(mask)]
            phase = int(core.phase[GAME])
            if seat == human:
                write(render_table(core, viewer=human) + "\n")  # the table only when it is your turn
                action = ask(phase, legal, core, read, write)
            else:
                agent = seat_agent[seat]
                if getattr(agent, "cheats", False):
                    action = int(agent.act_batch_state(core, np.array([GAME]), observation["observation"][None],
                                                       mask.astype(bool)[None])[0])
                else:
                    action = int(agent.act(observation))
                if not 0 <= action < NUM_ACTIONS or not mask[action]:
                    raise RuntimeError(f"agent {agent!r} chose the illegal action {action}")
            hands_before = int(core.hand_index[GAME])
            tricks_before = core.tricks_won[GAME].copy()
            trick_cards = [int(c) for c in core.trick_cards[GAME] if c >= 0]
            game.step(action)
            lines = [describe_move(seat, action, human)]
            finished_hand = int(core.hand_index[GAME]) > hands_before
            tricks_after = core.last_tricks[GAME] if finished_hand else core.tricks_won[GAME]
            if action < ROB_FIRST and len(trick_cards) + 1 == num_players:
                taker = int(np.argmax(tricks_after - tricks_before))
                lines.append(f"{'You take' if taker == human else f'player_{taker} takes'} the trick.")
            if finished_hand:
                game_over = not game.agents or all(game.terminations.values())
                lines += [hand_result(core, human, game_over), "Game over." if game_over else "--- next hand ---"]
            write("\n".join(lines) + "\n")
    except Quit:
        write("\nBye.\n")
        return 0
    chips = core.chips[GAME]
    best = int(chips.max())
    winners = [("you" if s == human else f"player_{s}") for s in range(num_players) if chips[s] == best]
    write("Final chips: " + ", ".join(f"{'you' if s == human else f'player_{s}'} {int(c)}"
                                      for s, c in enumerate(chips)) + f". Most chips: {', '.join(winners)}.\n")
    return 0


def main(argv=None) -> int:
    """The command line: options checked before the game starts (a bad one: one line, exit 2);
    ``q`` or the end of input quit (exit 0), Ctrl-C too (exit 130)."""
    parser = ArgumentParser(prog="python -m spoilfive_env.play",
                            description="Play Spoil Five in the terminal against agents.")
    parser.add_argument("--players", type=table_size, default=4, help="table size, 2-10 (default 4)")
    parser.add_argument("--opponents", default="spoiler",
                        help="agent names or checkpoint paths, comma-separated (default spoiler)")
    parser.add_argument("--seat", type=non_negative_int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=seed_value, default=None, help="seed of the deals and the agents")
    parser.add_argument("--hands", type=positive_int, default=None,
                        help="hands in the game (default 10); if the pool is still in the middle then, play goes on "
                             "until it is won (docs/rules.md)")
    parser.add_argument("--preset", default=None, help="rules preset: default, hoyle, dealer_feeds")
    try:  # checked here too: python -m spoilfive_env.play checks before agents has registered SPOILFIVE_RULES
        check_backend_variables()
    except BackendSettingError as error:
        parser.error(str(error))
    args = parser.parse_args(argv)
    rules = {}
    if args.hands is not None:
        rules["num_hands"] = args.hands
    if args.preset is not None:
        rules["preset"] = args.preset
    if args.preset is not None and args.preset not in PRESETS:
        parser.error(f"--preset {args.preset!r} is not allowed: choose one of {', '.join(PRESETS)}")
    cap = make_rules(num_players=args.players, preset=args.preset).max_hands  # no flag of this command sets it
    if args.hands is not None and args.hands > cap:
        parser.error(f"--hands {args.hands} is not allowed: give 1 to {cap} (a game stops after {cap} hands, "
                     "its max_hands)")
    try:
        make_rules(num_players=args.players, **rules)
    except ValueError as error:  # what is left to check is the number of hands
        parser.error(f"--hands: {error}")
    if args.seat >= args.players:
        parser.error(f"--seat {args.seat} is not allowed: at {args.players} players the seats are 0-{args.players - 1}")
    try:
        specs = comma_items(args.opponents)
    except ValueError as error:
        parser.error(f"--opponents {error}")
    if not specs:
        parser.error("--opponents needs at least one agent")
    if len(specs) > args.players - 1:
        parser.error(f"--opponents: {len(specs)} agents for the {args.players - 1} other seats of "
                     f"--players {args.players}")
    opponents = []
    for i, spec in enumerate(specs):
        try:  # a checkpoint imports torch here, seconds in which a Ctrl-C is as likely as at a prompt
            opponents.append(load_agent(spec, seed=None if args.seed is None else args.seed + i))
        except (ValueError, ImportError) as error:
            parser.error(f"--opponents: {error}")
        except KeyboardInterrupt:
            exit_interrupted("Bye (Ctrl-C).")
    try:
        return play_game(args.players, opponents, human=args.seat, seed=args.seed, labels=specs, **rules)
    except KeyboardInterrupt:
        exit_interrupted("Bye (Ctrl-C).")
    return 0


def console_main(argv=None) -> None:
    """The ``spoilfive-play`` console script: :func:`main` under :func:`~spoilfive_env.cli.run_command`, as ``python
    -m`` runs it, so that a reader that stops early (``spoilfive-play ... | head``) ends it quietly (status 141)."""
    run_command(lambda: main(argv), check_variables=False)  # main checks them, naming itself and its --help


if __name__ == "__main__":
    run_command(main)
