"""A slow, obvious, pure-Python reference for one hand of Spoil Five.

Written straight from ``shared/spec/RULES.md`` and ``docs/rules.md`` to check the vectorised
core against (``tests/test_differential.py``). It shares nothing with ``spoilfive_env.core``:
only the card numbering (CONTRACT.md) and the action ids come from the package, and the card
order is written out again below as text, straight from the tables of RULES.md, so that the
strength tables of ``spoilfive_env.cards`` are checked too. Clarity over speed, everywhere.

One hand, in phases:

``rob``      the turn-up is an ace: the dealer robs (``ROB_FIRST + discard``) or declines
             (``DECLINE_ROB``) before the eldest leads.
``play``     tricks. At his own turn in trick 1, before playing, the holder of the ace of
             trumps robs or declines; with ``conceal_ace_penalty`` he may instead just play,
             and his ace then ranks below every other trump (the ace of hearts also loses its
             privilege to renege), already for the play that conceals it.
``jink``     the player (partnerships: the team, chosen by the winner of trick 3) who took the
             first three tricks claims (``CLAIM``) or jinks (``JINK``).
``done``     pool won, jink won, or spoiled (nobody can reach three tricks any more, or a jink
             lost a trick).
"""

from __future__ import annotations

from spoilfive_env.actions import CLAIM, DECLINE_ROB, JINK, ROB_FIRST

RANK_NAMES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUIT_NAMES = ["C", "D", "H", "S"]

# RULES.md, "Card order, highest first". "AH" is the ace of hearts whatever the trump suit;
# every other entry is a rank of the suit in question.
TRUMP_ORDER_TEXT = {
    "C": ["5", "J", "AH", "A", "K", "Q", "2", "3", "4", "6", "7", "8", "9", "10"],
    "S": ["5", "J", "AH", "A", "K", "Q", "2", "3", "4", "6", "7", "8", "9", "10"],
    "D": ["5", "J", "AH", "A", "K", "Q", "10", "9", "8", "7", "6", "4", "3", "2"],
    "H": ["5", "J", "A", "K", "Q", "10", "9", "8", "7", "6", "4", "3", "2"],
}
PLAIN_ORDER_TEXT = {
    "C": ["K", "Q", "J", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10"],
    "S": ["K", "Q", "J", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10"],
    "D": ["K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2", "A"],
    "H": ["K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2"],  # its ace is a trump
}


def card_from_text(text: str) -> int:
    """``"10S"`` -> 48, by the CONTRACT.md formula, without the package's parser."""
    return 13 * SUIT_NAMES.index(text[-1]) + RANK_NAMES.index(text[:-1])


def card_text(card: int) -> str:
    return RANK_NAMES[card % 13] + SUIT_NAMES[card // 13]


def trump_order(trump: int) -> list[int]:
    """Every trump for this trump suit, highest first."""
    letter = SUIT_NAMES[trump]
    return [card_from_text("AH" if rank == "AH" else rank + letter) for rank in TRUMP_ORDER_TEXT[letter]]


def plain_order(suit: int, trump: int) -> list[int]:
    """The plain cards of ``suit`` when ``trump`` is trump, highest first (none for trump)."""
    if suit == trump:
        return []
    letter = SUIT_NAMES[suit]
    return [card_from_text(rank + letter) for rank in PLAIN_ORDER_TEXT[letter] if rank + letter != "AH"]


class ReferenceHand:
    """One hand of Spoil Five, played one action at a time.

    Args:
        rules: a ``spoilfive_env.rules.Rules``.
        hands: five card ids per seat.
        turnup: the turned-up card id.
        dealer: the dealer's seat.
        pool: chips already in the pool (carried over from a spoiled hand when > 0).
        chips: chips per seat before the antes (default ``rules.starting_chips`` each).
        spoiled_before: the previous hand was spoiled, so antes are ``spoil_ante``. ``None``
            (default): a pool given here is taken as carried over from a spoil (docs/rules.md),
            so antes are ``spoil_ante`` exactly when ``pool > 0``. Pass False for a pool that
            is only a partnership's indivisible remainder after a won hand.
    """

    def __init__(self, rules, hands, turnup, dealer, pool=0, chips=None, spoiled_before=None):
        n = rules.num_players
        if len(hands) != n or any(len(h) != 5 for h in hands):
            raise ValueError("need five cards for each of num_players seats")
        every = [c for h in hands for c in h] + [turnup]
        if len(set(every)) != len(every):
            raise ValueError("a card is dealt twice")
        self.rules = rules
        self.n = n
        self.hands = [sorted(int(c) for c in h) for h in hands]
        self.turnup = int(turnup)
        self.trump = self.turnup // 13
        self.dealer = int(dealer)
        self.eldest = (self.dealer + 1) % n
        self.order = trump_order(self.trump)
        self.ace_of_trumps = 13 * self.trump  # rank 0 is the ace
        self.privileged = set(self.order[:3])  # 5T, JT, AH
        self.demoted = None  # the concealed ace of trumps, once played to trick 1 unannounced

        # Chips and the pool: antes first.
        self.chips_start = list(chips) if chips is not None else [rules.starting_chips] * n
        self.chips = list(self.chips_start)
        self.pool_start = int(pool)
        self.pool = int(pool)
        carried_over = pool > 0 if spoiled_before is None else spoiled_before
        for seat in range(n):
            pay = rules.spoil_ante if carried_over else rules.ante
            if seat == self.dealer:
                pay += rules.dealer_ante
            self.chips[seat] -= pay
            self.pool += pay

        # Tricks.
        self.tricks_won = [0] * n
        self.trick_winners = []  # seat that won each finished trick
        self.trick = []  # (seat, card) in playing order
        self.leader = self.eldest
        self.current_player = self.eldest
        self.jinking = False
        self.jinker = None  # seat that chose to jink
        self.robbed_by = None
        self.discard = None
        self.declined_by = None

        # Rob: the dealer first if an ace is turned; otherwise the holder at his turn in trick 1.
        self.holder = None
        self.rob_pending = False
        if self.turnup % 13 == 0:
            self.phase = "rob"
            self.current_player = self.dealer
        else:
            self.phase = "play"
            for seat in range(n):
                if self.ace_of_trumps in self.hands[seat]:
                    self.holder = seat
                    self.rob_pending = True

        self.done = False
        self.spoiled = False
        self.winner = None
        self.winning_team = None
        self.jink_succeeded = False
        self.history = []
        # Counters for the differential test: how often interesting rules were exercised.
        self.stats = {"renege_option": 0, "renege_taken": 0, "renege_under_a_higher_trump": 0,
                      "trump_lead": 0, "forced_trump": 0, "demoted_ace_of_hearts_bound": 0,
                      "concealing_play_bound": 0,
                      "rob": 0, "decline": 0, "conceal": 0, "jink_offer": 0, "jink": 0}

    # ------------------------------------------------------------------ card order
    def is_trump(self, card):
        return card in self.order

    def effective_suit(self, card):
        return "T" if self.is_trump(card) else card // 13

    def trump_position(self, card):
        """0 for the best trump; the concealed ace ranks below every other trump."""
        if card == self.demoted:
            return len(self.order)
        return self.order.index(card)

    def is_privileged(self, card):
        return card in self.privileged and card != self.demoted

    def trick_winner(self, trick):
        trumps = [(self.trump_position(card), seat) for seat, card in trick if self.is_trump(card)]
        if trumps:
            return min(trumps)[1]
        led_suit = trick[0][1] // 13
        order = plain_order(led_suit, self.trump)
        followers = [(order.index(card), seat) for seat, card in trick if self.effective_suit(card) == led_suit]
        return min(followers)[1]

    # ------------------------------------------------------------------ legal actions
    def legal_plays(self, seat, concealing=False):
        """The cards ``seat`` may play now. ``concealing``: the play that conceals the ace of
        trumps, judged as if that ace were already demoted (RULES.md, ``conceal_ace_penalty``)."""
        demoted = self.ace_of_trumps if concealing else self.demoted

        def position(card):
            return len(self.order) if card == demoted else self.order.index(card)

        def privileged(card):
            return card in self.privileged and card != demoted

        hand = self.hands[seat]
        if not self.trick:
            return list(hand)
        led = self.trick[0][1]
        if self.is_trump(led):
            trumps = [c for c in hand if self.is_trump(c)]
            if not trumps:
                return list(hand)
            led_position = position(led)
            may_renege = all(privileged(c) and position(c) < led_position for c in trumps)
            if may_renege:
                return list(hand)
            return trumps
        led_suit = led // 13
        if any(self.effective_suit(c) == led_suit for c in hand):
            return [c for c in hand if self.effective_suit(c) == led_suit or self.is_trump(c)]
        return list(hand)

    def legal_actions(self):
        if self.done:
            return []
        seat = self.current_player
        if self.phase == "rob":
            return sorted([ROB_FIRST + c for c in self.hands[seat]] + [DECLINE_ROB])
        if self.phase == "jink":
            return [CLAIM, JINK]
        if self.rob_pending and seat == self.holder:
            actions = [ROB_FIRST + c for c in self.hands[seat]] + [DECLINE_ROB]
            if self.rules.conceal_ace_penalty:
                actions += self.legal_plays(seat, concealing=True)
            return sorted(actions)
        return sorted(self.legal_plays(seat))

    # ------------------------------------------------------------------ acting
    def apply(self, action):
        action = int(action)
        legal = self.legal_actions()
        if action not in legal:
            raise ValueError(f"action {action} is not legal for seat {self.current_player}; legal: {legal}")
        seat = self.current_player
        self.history.append(action)
        if self.phase == "rob":
            if action != DECLINE_ROB:
                self._rob(seat, action - ROB_FIRST)
            else:
                self.declined_by = seat
                self.stats["decline"] += 1
            self.phase = "play"
            self.current_player = self.eldest
            return
        if self.phase == "jink":
            if action == CLAIM:
                self._finish_won()
            else:
                self.stats["jink"] += 1
                self.jinking = True
                self.jinker = seat
                self.phase = "play"
                self.current_player = seat  # the winner of trick 3 leads trick 4
            return
        if self.rob_pending and seat == self.holder:
            if self.rules.conceal_ace_penalty and self.legal_plays(seat, concealing=True) != self.legal_plays(seat):
                self.stats["concealing_play_bound"] += 1  # judged with the ace demoted, fewer plays
            self.rob_pending = False
            if action == DECLINE_ROB:
                self.declined_by = seat
                self.stats["decline"] += 1
                return  # the same player now plays
            if action >= ROB_FIRST:
                self._rob(seat, action - ROB_FIRST)
                return
            self.demoted = self.ace_of_trumps  # played without announcing
            self.stats["conceal"] += 1
        self._play(seat, action)

    def _rob(self, seat, discard):
        self.hands[seat].remove(discard)
        self.hands[seat].append(self.turnup)
        self.hands[seat].sort()
        self.robbed_by = seat
        self.discard = discard
        self.stats["rob"] += 1

    def _play(self, seat, card):
        legal = self.legal_plays(seat)
        if self.trick and self.is_trump(self.trick[0][1]) and any(self.is_trump(c) for c in self.hands[seat]):
            if len(legal) == len(self.hands[seat]):
                self.stats["renege_option"] += 1
                if not self.is_trump(card):
                    self.stats["renege_taken"] += 1
                best_so_far = min(self.trump_position(c) for _, c in self.trick if self.is_trump(c))
                if any(self.trump_position(c) > best_so_far for c in self.hands[seat] if self.is_trump(c)):
                    self.stats["renege_under_a_higher_trump"] += 1  # the card led decides
            elif len(legal) < len(self.hands[seat]) and any(self.is_privileged(c) for c in self.hands[seat]):
                self.stats["forced_trump"] += 1
            if self.demoted == 26 and 26 in self.hands[seat]:
                led_position = self.order.index(self.trick[0][1]) if self.trick[0][1] != 26 else 99
                if all(c in self.privileged and self.order.index(c) < led_position
                       for c in self.hands[seat] if self.is_trump(c)):
                    self.stats["demoted_ace_of_hearts_bound"] += 1  # it could renege, undemoted
        if not self.trick and self.is_trump(card):
            self.stats["trump_lead"] += 1
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        if len(self.trick) < self.n:
            self.current_player = (seat + 1) % self.n
            return
        winner = self.trick_winner(self.trick)
        self.trick = []
        self.trick_winners.append(winner)
        self.tricks_won[winner] += 1
        self.leader = winner
        self.current_player = winner
        self._after_trick(winner)

    def _team(self, seat):
        return seat % 2

    def _after_trick(self, winner):
        played = len(self.trick_winners)
        remaining = 5 - played
        partners = self.rules.partnerships
        side = self._team if partners else (lambda s: s)
        winning_side = side(winner)

        if self.jinking:
            if side(winner) != side(self.jinker):
                self._finish_spoiled()
            elif played == 5:
                self.jink_succeeded = True
                self._finish_won()
            return

        side_tricks = {}
        for s in self.trick_winners:
            side_tricks[side(s)] = side_tricks.get(side(s), 0) + 1
        if side_tricks.get(winning_side, 0) >= 3:
            if played == 3 and self.rules.allow_jink:
                self.stats["jink_offer"] += 1
                self.phase = "jink"
                self.current_player = winner
            else:
                self._finish_won()
            return
        best = max(side_tricks.values())
        if best + remaining < 3:
            self._finish_spoiled()

    # ------------------------------------------------------------------ endings
    def _finish_won(self):
        seat = self.current_player
        n, rules = self.n, self.rules
        if rules.partnerships:
            team = seat % 2
            members = [s for s in range(n) if s % 2 == team]
            share = self.pool // len(members)
            for s in members:
                self.chips[s] += share
            self.pool -= share * len(members)
            if self.jink_succeeded:
                for s in range(n):
                    self.chips[s] += rules.jink_bonus if s % 2 == team else -rules.jink_bonus
            self.winning_team = team
        else:
            self.chips[seat] += self.pool
            self.pool = 0
            if self.jink_succeeded:
                for s in range(n):
                    if s != seat:
                        self.chips[s] -= rules.jink_bonus
                        self.chips[seat] += rules.jink_bonus
            self.winner = seat
        self.done = True
        self.phase = "done"

    def _finish_spoiled(self):
        self.spoiled = True
        self.done = True
        self.phase = "done"

    # ------------------------------------------------------------------ results
    def chip_changes(self):
        """Each seat's chip change in the hand, antes included."""
        return [self.chips[s] - self.chips_start[s] for s in range(self.n)]

    def equity_changes(self):
        """Each seat's change in ``chips + pool / num_players``."""
        return [(self.chips[s] + self.pool / self.n) - (self.chips_start[s] + self.pool_start / self.n)
                for s in range(self.n)]

    def describe(self):
        hands = " | ".join(" ".join(card_text(c) for c in h) for h in self.hands)
        return f"turnup {card_text(self.turnup)} dealer {self.dealer} hands {hands}"
