"""Play Spoil Five in the terminal against chosen agents.

``python -m spoilfive_env.play --players 4 --opponents spoiler``

You sit in seat 0 (``--seat``) of a whole game (RULES.md: ``--hands`` hands, then on until
the pool is won). After every move the table is shown with suit symbols: trump and
turn-up, the trick so far, tricks, chips and pool, your hand. Your legal moves are
numbered; type a number, or a card as text (``5H``, ``10♠``, ``td``). When you may rob
the turn-up, type the card to discard (or its number), or ``d`` to decline; after taking
the first three tricks, ``c`` claims the pool and ``j`` jinks (plays on for all five).
``q`` quits. Bad input gets a message and a new prompt.

``--opponents`` takes agent names or checkpoint paths, comma-separated, seat by seat; a
short list is filled with its last entry (``--opponents spoiler`` at 4 players gives
three spoilers).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .actions import CLAIM, DECLINE_ROB, JINK, NUM_ACTIONS, ROB_FIRST, action_str
from .cards import SUIT_SYMBOLS, card_index, card_str
from .core import PHASE_JINK, PHASE_ROB
from .env import raw_env, render_table


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


def parse_move(text: str, legal: list[int], phase: int) -> int:
    """The action the player's text means, or ``ValueError`` with what went wrong."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("q", "quit", "exit"):
        raise Quit
    if not text:
        raise ValueError("type a move")
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(legal):
            return legal[number - 1]
        raise ValueError(f"{number} is not one of the numbered moves 1-{len(legal)}")
    if phase == PHASE_ROB and lowered in ("d", "decline", "n", "no"):
        if DECLINE_ROB in legal:
            return DECLINE_ROB
    if phase == PHASE_JINK:
        if lowered in ("c", "claim"):
            return CLAIM
        if lowered in ("j", "jink"):
            return JINK
        raise ValueError("type c to claim the pool or j to jink")
    if lowered.startswith("rob "):
        text = text[4:]
    try:
        card = card_index(text)
    except ValueError:
        raise ValueError(f"I did not understand {text!r}: type a number, a card such as 5H or "
                         f"10{SUIT_SYMBOLS[3]}, or q to quit") from None
    if phase == PHASE_ROB and ROB_FIRST + card in legal:
        return ROB_FIRST + card
    if card in legal:
        return card
    raise ValueError(f"{card_str(card, symbols=True)} is not a legal move now")


def prompt_text(phase: int, core) -> str:
    if phase == PHASE_ROB:
        turnup = card_str(int(core.turnup[0]), symbols=True)
        return (f"You may rob the turn-up {turnup}: type the card to discard (or its number), "
                "or d to decline")
    if phase == PHASE_JINK:
        bonus = core.rules.jink_bonus
        return (f"You took the first three tricks: c claims the pool, j jinks (win the last two "
                f"tricks too for {bonus} chip{'s' if bonus != 1 else ''} from every player)")
    return "Your move: type a number or a card"


def ask(phase: int, legal: list[int], core, read, write) -> int:
    while True:
        write(f"{prompt_text(phase, core)} (q quits)\n  {legal_moves_text(legal)}\n> ")
        line = read()
        if line == "":  # end of input
            raise Quit
        try:
            return parse_move(line, legal, phase)
        except ValueError as error:
            write(f"  {error}\n")


def hand_result(core, human: int) -> str:
    winner = int(core.last_winner[0])
    tricks = " ".join(str(int(t)) for t in core.last_tricks[0])
    if winner < 0:
        text = "The hand is spoiled: the pool stays in the middle."
    else:
        who = (f"team {winner}" if core.rules.partnerships else
               "You" if winner == human else f"player_{winner}")
        text = f"{who} {'take' if who == 'You' else 'takes'} the pool"
        if core.last_jink_won[0]:
            text += " and the jink bonus"
        text += "."
    chips = ", ".join(f"{'you' if s == human else f'player_{s}'} {int(c)}" for s, c in enumerate(core.chips[0]))
    return f"{text} Tricks: {tricks}. Chips: {chips}; pool {int(core.pool[0])}."


def play_game(num_players: int, opponents: list, human: int = 0, seed: int | None = None,
              read=None, write=None, **rules) -> int:
    """Play one game in the terminal (``read`` and ``write`` default to standard input and
    output); returns 0, also when the player quits."""
    read = read or sys.stdin.readline
    write = write or (lambda text: (sys.stdout.write(text), sys.stdout.flush()))
    game = raw_env(num_players=num_players, mode="game", **rules)
    core = game.core
    seat_agent = {}
    others = [s for s in range(num_players) if s != human]
    for index, seat in enumerate(others):
        seat_agent[seat] = opponents[min(index, len(opponents) - 1)]
    for agent in seat_agent.values():
        if hasattr(agent, "bind"):
            agent.bind(game.rules)
    game.reset(seed=seed)
    write(f"Spoil Five: you are player_{human}. Opponents: "
          + ", ".join(f"player_{s} {getattr(a, 'name', a)}" for s, a in seat_agent.items()) + "\n")
    write(render_table(core, viewer=human) + "\n")
    try:
        for name in game.agent_iter():
            observation, _, termination, truncation, _ = game.last()
            if termination or truncation:
                game.step(None)
                continue
            seat = game.agent_name_mapping[name]
            mask = observation["action_mask"]
            legal = [int(a) for a in np.flatnonzero(mask)]
            phase = int(core.phase[0])
            if seat == human:
                action = ask(phase, legal, core, read, write)
            else:
                agent = seat_agent[seat]
                if getattr(agent, "cheats", False):
                    action = int(agent.act_batch_state(core, np.array([0]), observation["observation"][None],
                                                       mask.astype(bool)[None])[0])
                else:
                    action = int(agent.act(observation))
                if not 0 <= action < NUM_ACTIONS or not mask[action]:
                    raise RuntimeError(f"agent {agent!r} chose the illegal action {action}")
            hands_before = int(core.hand_index[0])
            tricks_before = core.tricks_won[0].copy()
            trick_cards = [int(c) for c in core.trick_cards[0] if c >= 0]
            game.step(action)
            lines = [describe_move(seat, action, human)]
            finished_hand = int(core.hand_index[0]) > hands_before
            tricks_after = core.last_tricks[0] if finished_hand else core.tricks_won[0]
            if action < ROB_FIRST and len(trick_cards) + 1 == num_players:
                taker = int(np.argmax(tricks_after - tricks_before))
                lines.append(f"{'You take' if taker == human else f'player_{taker} takes'} the trick.")
            if finished_hand:
                lines.append(hand_result(core, human))
                if not game.agents or all(game.terminations.values()):
                    lines.append("Game over.")
                else:
                    lines.append("--- next hand ---")
            write("\n".join(lines) + "\n")
            if not all(game.terminations.values()):
                write(render_table(core, viewer=human) + "\n")
    except Quit:
        write("\nBye.\n")
        return 0
    chips = core.chips[0]
    best = int(chips.max())
    winners = [("you" if s == human else f"player_{s}") for s in range(num_players) if chips[s] == best]
    write(f"Final chips: " + ", ".join(f"{'you' if s == human else f'player_{s}'} {int(c)}"
                                       for s, c in enumerate(chips)) + f". Most chips: {', '.join(winners)}.\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spoilfive_env.play",
                                     description="Play Spoil Five in the terminal against agents.")
    parser.add_argument("--players", type=int, default=4, help="table size, 2-10 (default 4)")
    parser.add_argument("--opponents", default="spoiler",
                        help="agent names or checkpoint paths, comma-separated (default spoiler)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deals and the agents")
    parser.add_argument("--hands", type=int, default=None, help="hands in the game (default 10)")
    parser.add_argument("--preset", default=None, help="rules preset: default, hoyle, dealer_feeds")
    args = parser.parse_args(argv)
    from agents import load_agent  # the agents package sits above the environment

    rules = {}
    if args.hands is not None:
        rules["num_hands"] = args.hands
    if args.preset is not None:
        rules["preset"] = args.preset
    try:
        if not 0 <= args.seat < args.players:
            raise ValueError(f"--seat must be 0-{args.players - 1}, got {args.seat}")
        specs = [s.strip() for s in args.opponents.split(",") if s.strip()]
        if not specs:
            raise ValueError("--opponents needs at least one agent")
        opponents = [load_agent(spec, seed=None if args.seed is None else args.seed + i)
                     for i, spec in enumerate(specs)]
        return play_game(args.players, opponents, human=args.seat, seed=args.seed, **rules)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
