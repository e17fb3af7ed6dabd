# cython: language_level=3
"""Fabryka Czekolady (Shimamura, Dogen; Nasza Ksiegarnia 2018): the rules engine.

Actions: 0..hand_len-1 play the card in that hand slot onto the belt; COLLECT takes the
collect_count most recent belt cards. A round is hand_size + 1 turns per player,
alternating from the token holder; each player collects exactly once per round.
"""
from libc.string cimport memset, memcpy
cimport cython
from libc.stdint cimport uint64_t

from simcore.rng cimport Rng, rng_seed, rng_next, shuffle_i8
from simcore.state cimport GameState, CHECKED
from simcore.seen cimport seen_fold, seen_mix
from simcore.batchjob cimport BatchJob
from simcore.strategy cimport Lineup

from pathlib import Path

from simcore.games.fabryka.params import KINDS, FILLINGS, FabrykaParams
from simcore.meta import FeatureRoles

__all__ = ["FabrykaState"]

# 0, 1, 2, ...: the play actions of a full hand, copied in one fixed-size move.
cdef int[MAX_HAND] IOTA = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]


cdef int fab_score(const FabConfig* c, const int* mine, const int* theirs) noexcept nogil:
    cdef int total = 0, k
    cdef int sets = mine[0]
    for k in range(N_FILLINGS):
        # Arithmetic, not a branch: who holds a majority is a coin flip to the predictor.
        total += c.majority[k] * (mine[k] > theirs[k])
        if mine[k] < sets:
            sets = mine[k]
    total += sets * c.set_points
    for k in range(N_FILLINGS, N_KINDS):
        total += mine[k] * c.card_points[k]
    return total


cdef void fab_scores(const FabConfig* c, const int* a, const int* b, int* sa, int* sb) noexcept nogil:
    cdef int k, ta = 0, tb = 0, seta = a[0], setb = b[0]
    for k in range(N_FILLINGS):
        ta += c.majority[k] * (a[k] > b[k])
        tb += c.majority[k] * (b[k] > a[k])
        if a[k] < seta:
            seta = a[k]
        if b[k] < setb:
            setb = b[k]
    for k in range(N_FILLINGS, N_KINDS):
        ta += a[k] * c.card_points[k]
        tb += b[k] * c.card_points[k]
    sa[0] = ta + seta * c.set_points
    sb[0] = tb + setb * c.set_points


ctypedef fused Game:
    FabrykaState
include "simcore/loop.pxi"


@cython.final
cdef class FabrykaState(GameState):
    """Fabryka Czekolady, two players."""

    NAME = "fabryka"
    TITLE = "Fabryka Czekolady"
    PLAYERS = (2, 2)
    PARAMS = FabrykaParams
    DEFAULTS = Path(__file__).parent / "data" / "rules.toml"
    FEATURE_ROLES = FeatureRoles(
        # Majorities and sets are scored at the end: parts of the final score.
        outcomes=("majority_*", "sets"),
        behaviours=("collect_turn_r*",),
        # The turn of a collect the game ended before is 0: no collect, not turn 0.
        zero_missing=("collect_turn_r*",),
    )
    # What the token holder of round 1 finds and what a collect takes (rulebook: 2, 5).
    POSITION_KNOBS = {"collect_count": (3, 4, 5, 6, 7), "opening_belt": (0, 1, 2)}
    # Three pieces of white chocolate win whatever the points; else the most points, then
    # more Chocolate Cards with almonds, then a shared victory.
    TIE_BREAKS = ("cards_almonds",)
    WON_IN_PLAY = ("white_chocolate",)
    END_REASONS = ("scoring", "white_chocolate")
    # Restricted play: the card kinds. Playing a card takes nothing; a collect takes the
    # kinds of the cards it would collect.
    COMPONENTS = KINDS
    INVARIANTS = (
        "every card of the deck is accounted for (set aside, pile, hands, belt, collected)",
        "each hand holds one card per turn left, less one once its owner has collected",
        "the seat to move is a player while the game runs",
        "each player collected exactly once in every finished round",
        "hands are empty when the game is scored",
        "the kept legal list is the current decision's",
        "the card points kept are those of the collections",
    )

    def __init__(self, params):
        self.params = params
        self.n_players = 2
        memset(&self.cfg, 0, sizeof(FabConfig))
        counts = params.deck.model_dump()
        n = 0
        for k, name in enumerate(KINDS):
            for _ in range(counts[name]):
                self.cfg.cards[n] = k
                n += 1
        self.cfg.n_cards = n
        self.cfg.removed = params.removed_unseen
        self.cfg.hand_size = params.hand_size
        self.cfg.opening_belt = params.opening_belt
        self.cfg.rounds = params.rounds
        self.cfg.collect_count = params.collect_count
        self.cfg.white_to_win = params.white_to_win
        self.cfg.set_points = params.set_points
        for k, name in enumerate(FILLINGS):
            self.cfg.majority[k] = getattr(params.majority, name)
        for k in range(N_FILLINGS, N_KINDS):
            self.cfg.card_points[k] = getattr(params.card_points, KINDS[k])
        for k, v in enumerate(params.compensation.by_position(N_SEATS)):
            self.cfg.komi[k] = v
        self.n_features = N_KINDS + params.rounds + N_FILLINGS + 1
        # Card counts and sets are at most the deck; a collect's turn is at most
        # hand_size + 1 (16), a majority 0 or 1.
        self.narrow_features = n <= 127
        self.n_interim = params.rounds
        memcpy(self.keep, IOTA, sizeof(IOTA))
        self.keep[MAX_HAND] = MAX_HAND
        self.keep_at = 0
        self.kept_legal = self.keep
        self.kept_n_legal = &self.n_keep
        self.reset(0)

    cdef int play_batch(self, object lineup, BatchJob* job) except -1 nogil:
        return play_games(self, <Lineup>lineup, job)

    cdef int play_out(self, Rng* rng, int depth) except -2 nogil:
        return play_out_uniform(self, rng, depth)

    # ---- the rules (nogil) ----

    cdef void reset(self, uint64_t seed) noexcept nogil:
        cdef int i
        # Zero only the counters: the card arrays are written before they are read.
        memset(self.s.collected, 0, sizeof(self.s.collected))
        memset(self.s.card_points, 0, sizeof(self.s.card_points))
        memset(self.s.collect_turn, 0, sizeof(self.s.collect_turn))
        memset(self.s.interim, 0, sizeof(self.s.interim))
        self.s.round = 0
        self.s.rounds_done = 0
        self.s.end = END_SCORING
        self.s.moves = 0
        rng_seed(&self.s.rng, seed)
        memcpy(self.s.deck, self.cfg.cards, self.cfg.n_cards)
        shuffle_i8(&self.s.rng, self.s.deck, self.cfg.n_cards)
        self.s.deck_pos = self.cfg.removed
        for i in range(self.cfg.opening_belt):
            self.s.belt[i] = self.s.deck[self.s.deck_pos]
            self.s.deck_pos += 1
        self.s.belt_len = self.cfg.opening_belt
        self.s.white_winner = -1
        self.s.token = 0
        self.deal_round()

    cdef void deal_round(self) noexcept nogil:
        cdef int p
        for p in range(N_SEATS):
            memcpy(self.s.hand[p], &self.s.deck[self.s.deck_pos], self.cfg.hand_size)
            self.s.deck_pos += self.cfg.hand_size
            self.s.hand_len[p] = self.cfg.hand_size
            self.s.turns_taken[p] = 0
            self.s.has_collected[p] = False
        self.s.to_move = self.s.token
        self.s.dealt = self.s.moves + 1
        self.keep_legal()

    cdef int current_player(self) noexcept nogil:
        return self.s.to_move

    cdef int legal_actions(self, int* out) noexcept nogil:
        cdef int p = self.s.to_move
        cdef int h, can_collect
        if p < 0:
            return 0
        h = self.s.hand_len[p]
        memcpy(out, IOTA, sizeof(IOTA))
        # A player who has not collected must keep one turn for it: with an empty hand
        # the collect is forced (on an empty belt it takes nothing, which only house
        # rules can bring about); otherwise it needs a card on the belt. Computed, not
        # branched on (it flips unpredictably): COLLECT is written anyway and counted
        # only when legal.
        can_collect = (self.s.has_collected[p] == 0) & ((h == 0) | (self.s.belt_len > 0))
        out[h] = COLLECT
        return h + can_collect

    cdef int apply(self, int action) except -2 nogil:
        cdef int p = self.s.to_move
        cdef int k, n, kind
        self.s.moves += 1
        if action == COLLECT:
            n = self.cfg.collect_count
            if n > self.s.belt_len:
                n = self.s.belt_len
            for k in range(self.s.belt_len - n, self.s.belt_len):
                self.s.collected[p][self.s.belt[k]] += 1
                self.s.card_points[p] += self.cfg.card_points[self.s.belt[k]]
            self.s.belt_len -= n
            self.s.has_collected[p] = True
            self.s.turns_taken[p] += 1
            self.s.collect_turn[p][self.s.round] = self.s.turns_taken[p]
            if self.s.collected[p][WHITE] >= self.cfg.white_to_win:
                self.s.white_winner = p
                self.finish(END_WHITE)
                return -1
        else:
            kind = self.s.hand[p][action]
            self.s.belt[self.s.belt_len] = kind
            self.s.belt_len += 1
            self.s.hand_len[p] -= 1
            self.s.hand[p][action] = self.s.hand[p][self.s.hand_len[p]]
            self.s.turns_taken[p] += 1
        # Turns alternate; the round ends when both have had hand_size + 1 turns.
        if self.s.turns_taken[1 - p] <= self.cfg.hand_size:
            self.s.to_move = 1 - p
            self.keep_legal()
        elif self.s.turns_taken[p] <= self.cfg.hand_size:
            self.s.to_move = p
            self.keep_legal()
        else:
            self.end_round()
        return self.s.to_move

    cdef void end_round(self) noexcept nogil:
        self.record_interim(self.s.round, self.s.round + 1)
        self.s.rounds_done = self.s.round + 1
        if self.s.round + 1 == self.cfg.rounds:
            self.finish(END_SCORING)
            return
        self.s.round += 1
        self.s.token = 1 - self.s.token
        self.deal_round()

    cdef void finish(self, int end) noexcept nogil:
        self.s.end = end
        self.s.to_move = -1
        self.record_interim(self.s.rounds_done, self.cfg.rounds)

    cdef void record_interim(self, int r0, int r1) noexcept nogil:
        # The standings now, as the interim scores of rounds [r0, r1): fab_scores with
        # the points per card kept by apply, summed at every round's end otherwise.
        cdef int r, k
        cdef const int* x = self.s.collected[0]
        cdef const int* y = self.s.collected[1]
        cdef int a = self.s.card_points[0], b = self.s.card_points[1], seta = x[0], setb = y[0]
        for k in range(N_FILLINGS):
            a += self.cfg.majority[k] * (x[k] > y[k])
            b += self.cfg.majority[k] * (y[k] > x[k])
            seta = min(seta, x[k])
            setb = min(setb, y[k])
        a += seta * self.cfg.set_points
        b += setb * self.cfg.set_points
        for r in range(r0, r1):
            self.s.interim[0][r] = a
            self.s.interim[1][r] = b

    # ---- results ----

    cdef int first_player(self) noexcept nogil:
        return 0

    cdef int turn_position(self, int seat) noexcept nogil:
        # Seat 0 always moves first (first_player): a direct call, not the base's two
        # virtual ones, at every result row and outcome.
        return seat

    cdef int end_reason(self) noexcept nogil:
        return self.s.end

    cdef int standing(self, int seat) noexcept nogil:
        return fab_score(&self.cfg, self.s.collected[seat], self.s.collected[1 - seat])

    cdef void outcome(self, int* scores, int* ranks) noexcept nogil:
        cdef int p, a0, a1
        for p in range(N_SEATS):
            # A finished game has its final standings recorded as the last interim; the
            # house rule's bonus by turn position comes on top (interims stay without it).
            scores[p] = self.s.interim[p][self.cfg.rounds - 1] if self.s.to_move < 0 else self.standing(p)
            scores[p] += self.cfg.komi[self.turn_position(p)]
        # White chocolate wins whatever the points, bonus included.
        if self.s.end == END_WHITE:
            ranks[self.s.white_winner] = 1
            ranks[1 - self.s.white_winner] = 2
            return
        # Points (with the bonus), then more almonds, then a shared victory.
        a0 = self.s.collected[0][ALMONDS]
        a1 = self.s.collected[1][ALMONDS]
        if scores[0] > scores[1] or (scores[0] == scores[1] and a0 > a1):
            ranks[0] = 1
            ranks[1] = 2
        elif scores[1] > scores[0] or (scores[0] == scores[1] and a1 > a0):
            ranks[0] = 2
            ranks[1] = 1
        else:
            ranks[0] = 1
            ranks[1] = 1

    cdef void interim(self, int seat, int* out) noexcept nogil:
        cdef int r
        for r in range(self.cfg.rounds):
            out[r] = self.s.interim[seat][r]

    cdef void features(self, int seat, int* out) noexcept nogil:
        cdef int k, i = N_KINDS + self.cfg.rounds
        cdef int* mine = self.s.collected[seat]
        cdef int* theirs = self.s.collected[1 - seat]
        cdef int sets = mine[0]
        memcpy(out, mine, N_KINDS * sizeof(int))
        memcpy(&out[N_KINDS], self.s.collect_turn[seat], self.cfg.rounds * sizeof(int))
        for k in range(N_FILLINGS):
            out[i] = mine[k] > theirs[k]
            i += 1
            if mine[k] < sets:
                sets = mine[k]
        out[i] = sets

    cdef int action_component(self, int action) noexcept nogil:
        # A collect may take several kinds (action_takes tests each of them); the one
        # named here is the newest card on the belt, the first it takes.
        if action != COLLECT or self.s.belt_len == 0:
            return -1
        return self.s.belt[self.s.belt_len - 1]

    cdef bint action_takes(self, int action, int component) noexcept nogil:
        cdef int k, n
        if action != COLLECT:
            return False
        n = self.cfg.collect_count
        if n > self.s.belt_len:
            n = self.s.belt_len
        for k in range(self.s.belt_len - n, self.s.belt_len):
            if self.s.belt[k] == component:
                return True
        return False

    # ---- search support ----

    cdef int action_key(self, int action, int observer) noexcept nogil:
        # A play is the kind of the card (both seats see it reach the belt), not its
        # hand slot, which holds another card in each resampled world.
        if action == COLLECT:
            return COLLECT
        return self.s.hand[self.s.to_move][action]

    cdef int outcome_key(self, int observer) noexcept nogil:
        # The only chance a move brings: the new round's deal, each seat seeing its hand
        # (the whole hand, as the deal is the move's last act). Worked out here when asked
        # rather than recorded card by card: random play, the yardstick, never asks.
        cdef unsigned int h = 0
        cdef int i
        if self.s.dealt != self.s.moves + 1:
            return 0
        for i in range(self.s.hand_len[observer]):
            h += seen_mix(self.s.hand[observer][i])
        return seen_fold(h)

    cdef void copy_into(self, GameState other) noexcept nogil:
        (<FabrykaState>other).s = self.s
        if self.s.to_move >= 0:
            (<FabrykaState>other).keep_legal()

    cdef void determinize(self, int observer, Rng* rng) noexcept nogil:
        # Unseen by `observer`: the cards set aside, the rest of the pile and the other
        # hand. Shuffle them together and deal them back to the same places. The pool
        # is laid out by kind before the shuffle, so that the deal depends only on what
        # the observer knows (which cards are unseen), never on where they really are.
        cdef signed char pool[MAX_CARDS]
        cdef int count[N_KINDS]
        cdef int n = 0, i, k, o = 1 - observer
        memset(count, 0, sizeof(count))
        for i in range(self.cfg.removed):
            count[self.s.deck[i]] += 1
        for i in range(self.s.deck_pos, self.cfg.n_cards):
            count[self.s.deck[i]] += 1
        for i in range(self.s.hand_len[o]):
            count[self.s.hand[o][i]] += 1
        for k in range(N_KINDS):
            for i in range(count[k]):
                pool[n] = k
                n += 1
        shuffle_i8(rng, pool, n)
        n = 0
        for i in range(self.cfg.removed):
            self.s.deck[i] = pool[n]
            n += 1
        for i in range(self.s.deck_pos, self.cfg.n_cards):
            self.s.deck[i] = pool[n]
            n += 1
        for i in range(self.s.hand_len[o]):
            self.s.hand[o][i] = pool[n]
            n += 1
        rng_seed(&self.s.rng, rng_next(rng))
        self.s.moves += 1

    cdef int validate(self) noexcept nogil:
        cdef int count[N_KINDS]
        cdef int legal[MAX_HAND + 1]
        cdef int p, i, k, r, n
        memset(count, 0, sizeof(count))
        for i in range(self.cfg.removed):
            count[self.s.deck[i]] += 1
        for i in range(self.s.deck_pos, self.cfg.n_cards):
            count[self.s.deck[i]] += 1
        for i in range(self.s.belt_len):
            count[self.s.belt[i]] += 1
        for p in range(N_SEATS):
            for i in range(self.s.hand_len[p]):
                count[self.s.hand[p][i]] += 1
            for k in range(N_KINDS):
                count[k] += self.s.collected[p][k]
        for i in range(self.cfg.n_cards):
            count[self.cfg.cards[i]] -= 1
        for k in range(N_KINDS):
            if count[k] != 0:
                return 1
        if self.s.to_move >= 0:
            for p in range(N_SEATS):
                if self.s.hand_len[p] + (0 if self.s.has_collected[p] else 1) != self.cfg.hand_size + 1 - self.s.turns_taken[p]:
                    return 2
            if self.s.to_move >= N_SEATS:
                return 3
        for p in range(N_SEATS):
            for r in range(self.s.rounds_done):
                if self.s.collect_turn[p][r] < 1 or self.s.collect_turn[p][r] > self.cfg.hand_size + 1:
                    return 4
        if self.s.to_move < 0 and self.s.end == END_SCORING:
            for p in range(N_SEATS):
                if self.s.hand_len[p] != 0:
                    return 5
        for p in range(N_SEATS):
            n = 0
            for k in range(N_KINDS):
                n += self.s.collected[p][k] * self.cfg.card_points[k]
            if n != self.s.card_points[p]:
                return 7
        if self.s.to_move >= 0:
            n = self.legal_actions(legal)
            if n != self.n_keep:
                return 6
            for i in range(MAX_HAND + 1):
                if self.keep[i] != (COLLECT if i == self.keep_at else i):
                    return 6
            for i in range(n):
                if self.keep[i] != legal[i]:
                    return 6
        return 0

    # ---- Python API: names, descriptions, observation, trace, hand-built positions ----

    def feature_names(self):
        return ([f"cards_{k}" for k in KINDS]
                + [f"collect_turn_r{r + 1}" for r in range(self.cfg.rounds)]
                + [f"majority_{f}" for f in FILLINGS] + ["sets"])

    def interim_names(self):
        return [f"round_{r + 1}" for r in range(self.cfg.rounds)]

    def phase_label(self):
        return f"round {self.s.round + 1}"

    def describe(self, int action):
        p = self.s.to_move
        if action == COLLECT:
            n = min(self.cfg.collect_count, self.s.belt_len)
            taken = [KINDS[self.s.belt[self.s.belt_len - 1 - i]] for i in range(n)]
            return f"collect {n} card{'s' if n != 1 else ''}: " + (", ".join(taken) or "none")
        # The hand position tells two cards of one kind apart.
        return f"play {KINDS[self.s.hand[p][action]]} (hand card {action + 1})"

    cdef list _kinds(self, const signed char* cards, int n):
        # cdef: a def method would receive the cards as a NUL-terminated bytes copy,
        # and biscuits are kind 0.
        return [KINDS[cards[i]] for i in range(n)]

    def _counts(self, int seat):
        return {KINDS[k]: self.s.collected[seat][k] for k in range(N_KINDS)}

    def observation(self, int seat):
        """What `seat` may see, as plain Python values."""
        other = 1 - seat
        return {
            "seat": seat,
            "hand": self._kinds(self.s.hand[seat], self.s.hand_len[seat]),
            "belt": self._kinds(self.s.belt, self.s.belt_len),
            "collected": [self._counts(0), self._counts(1)],
            "hand_sizes": [self.s.hand_len[0], self.s.hand_len[1]],
            "round": self.s.round + 1,
            "token": self.s.token,
            "turns_taken": [self.s.turns_taken[0], self.s.turns_taken[1]],
            "has_collected": [bool(self.s.has_collected[0]), bool(self.s.has_collected[1])],
            "pile": self.cfg.n_cards - self.s.deck_pos,
            "collect_action": COLLECT,
        }

    def to_dict(self):
        """The whole state (hidden parts included), for traces."""
        return {
            "round": self.s.round + 1,
            "token": self.s.token,
            "to_move": self.s.to_move,
            "hands": [self._kinds(self.s.hand[p], self.s.hand_len[p]) for p in range(N_SEATS)],
            "belt": self._kinds(self.s.belt, self.s.belt_len),
            "collected": [self._counts(p) for p in range(N_SEATS)],
            "has_collected": [bool(self.s.has_collected[p]) for p in range(N_SEATS)],
            "pile": self._kinds(&self.s.deck[self.s.deck_pos], self.cfg.n_cards - self.s.deck_pos),
            "set_aside": self._kinds(self.s.deck, self.cfg.removed),
            "standings": self.standings(),
        }

    def render(self):
        """A few readable lines: the belt, the hands, the collections."""
        d = self.to_dict()
        lines = [f"round {d['round']}, token: seat {d['token']}, belt ({len(d['belt'])}): "
                 + (" ".join(d["belt"]) or "-")]
        for p in range(N_SEATS):
            got = ", ".join(f"{k} {v}" for k, v in d["collected"][p].items() if v) or "-"
            lines.append(f"  seat {p}: hand [{' '.join(d['hands'][p])}]  collected: {got}"
                         f"  ({d['standings'][p]} points)")
        return "\n".join(lines)

    def set_position(self, hands, belt, collected, int round=1, int to_move=0, token=None,
                     turns_taken=(0, 0), has_collected=(False, False)):
        """Lay out a hand-built position (kind names; round is 1-based). The cards not
        placed form the set-aside cards and the pile, in canonical order. Earlier rounds
        count as played, each with its collect (on the last turn; a collect already made
        this round counts on the seat's last turn taken). to_move = -1 lays out a
        finished game (won by white chocolate if a seat has enough, else scored).
        Raises ValueError if the cards do not exist in the deck or leave too few to deal
        the later rounds."""
        cdef int p, i, k, n
        index = {name: k for k, name in enumerate(KINDS)}
        left = [0] * N_KINDS
        for i in range(self.cfg.n_cards):
            left[self.cfg.cards[i]] += 1
        used = [index[c] for h in hands for c in h] + [index[c] for c in belt]
        used += [index[c] for col in collected for c, v in col.items() for _ in range(v)]
        for k in used:
            left[k] -= 1
        if min(left) < 0:
            raise ValueError(f"more cards placed than the deck holds: {dict(zip(KINDS, left))}")
        memset(&self.s, 0, sizeof(Fab))
        rng_seed(&self.s.rng, 0)
        rest = [k for k in range(N_KINDS) for _ in range(left[k])]
        still_dealt = (self.cfg.rounds - round) * N_SEATS * self.cfg.hand_size
        if len(rest) < self.cfg.removed + still_dealt:
            raise ValueError(f"{len(rest)} cards left unplaced: too few for the {self.cfg.removed} "
                             f"set aside and the {still_dealt} the later rounds deal")
        # The unused cards: the set-aside ones first, then the pile, which starts at
        # deck_pos so the pile is what remains after all the rounds dealt so far.
        n = self.cfg.n_cards - len(rest)
        for i, k in enumerate(rest[:self.cfg.removed]):
            self.s.deck[i] = k
        for i, k in enumerate(rest[self.cfg.removed:]):
            self.s.deck[self.cfg.removed + n + i] = k
        self.s.deck_pos = self.cfg.removed + n
        for p in range(N_SEATS):
            self.s.hand_len[p] = len(hands[p])
            for i, c in enumerate(hands[p]):
                self.s.hand[p][i] = index[c]
            for c, v in collected[p].items():
                self.s.collected[p][index[c]] = v
                self.s.card_points[p] += v * self.cfg.card_points[index[c]]
            self.s.turns_taken[p] = turns_taken[p]
            self.s.has_collected[p] = has_collected[p]
            for r in range(round - 1):
                self.s.collect_turn[p][r] = self.cfg.hand_size + 1
            if has_collected[p]:
                # The turn of a laid-out collect is unknown: count it as the last turn taken.
                if turns_taken[p] < 1:
                    raise ValueError(f"seat {p} has collected but taken no turn")
                self.s.collect_turn[p][round - 1] = turns_taken[p]
        for i, c in enumerate(belt):
            self.s.belt[i] = index[c]
        self.s.belt_len = len(belt)
        self.s.round = round - 1
        self.s.rounds_done = round - 1
        self.s.token = (round - 1) % 2 if token is None else token
        self.s.white_winner = -1
        self.s.to_move = to_move
        if to_move < 0:
            # A finished game, ended as play would have ended it: standings recorded.
            whites = [p for p in range(N_SEATS) if self.s.collected[p][WHITE] >= self.cfg.white_to_win]
            if whites:
                self.s.white_winner = whites[0]
            self.finish(END_WHITE if whites else END_SCORING)
        else:
            self.keep_legal()
        self.assert_valid()
