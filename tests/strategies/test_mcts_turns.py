"""A search tree where whose turn it is depends on a hidden card (strategies/mcts.pyx,
child_with and keep): in some worlds the bot moves again, in others the other seat does,
with moves of the same keys. Each seat's move must be a child of its own, credited to
that seat, and the subtree kept for the bot's next decision must be its own move's;
matched by key alone, the other seat's moves fell on the bot's children."""
from __future__ import annotations

import strategies
from simcore import registry
from simcore.pygame import GameParams, PyGame, param
from simcore.strategy import RngView


class KnockParams(GameParams):
    players: int = param(2, "rulebook", "Players at the table", ge=2, le=2)


class Knock(PyGame):
    """Seat 1 is dealt a hidden coin. Seat 0 moves (0 or 1); then, if the coin shows 1,
    seat 1 moves, else seat 0 moves again; then seat 0 moves last. Seat 0 wins if its
    moves sum to 2, seat 1 otherwise."""
    NAME = "knock"
    TITLE = "Knock"
    PLAYERS = (2, 2)
    PARAMS = KnockParams
    END_REASONS = ("played",)
    HIDDEN_INFORMATION = True

    def setup(self) -> None:
        self.coin = self.chance.below(2)
        self.history: list[int] = []

    def current_player(self) -> int:
        return (0, self.coin, 0, -1)[len(self.history)]  # the coin names who moves second

    def legal_actions(self) -> list[int]:
        return [0, 1]

    def apply(self, action: int) -> None:
        self.history.append(action)

    def scores(self) -> list[int]:
        own = self.history[0] + self.history[2] + (0 if self.coin else self.history[1])
        return [int(own == 2), int(own != 2)]

    def end_reason(self) -> str:
        return "played"

    def observation(self, seat: int) -> dict:
        seen = {"history": list(self.history)}
        if seat == 1 or self.history:
            seen["coin"] = self.coin  # seat 0 knows it once it sees who moves second
        return seen

    def describe(self, action: int) -> str:
        return str(action)

    def determinize(self, seat: int, rng) -> None:
        if seat == 0 and not self.history:
            self.coin = rng.below(2)

    def copy(self) -> Knock:
        other = object.__new__(type(self))
        other.params, other.chance = self.params, self.chance.copy()
        other.coin, other.history = self.coin, list(self.history)
        return other


def test_each_seats_move_is_its_own_child_where_turns_differ_between_worlds():
    spec = registry.get_game(f"{__name__}:Knock")
    state = spec.new_state(spec.params(players=2))
    state.new_game(3)
    bot = strategies.build(spec.name, "mcts(iterations=400, stop=0, widen=0)")
    bot.bind(state)
    bot.choose_action(state, RngView.seeded(1))
    for seat in (0, 1):
        rows = bot.tree(seat)
        assert any(r[0] == 1 and r[3] >= 100 for r in rows)
        for i, (depth, _, _, visits, _) in enumerate(rows):
            if depth != 1 or visits < 100:   # the root's moves searched at length
                continue
            below = {(r[1], r[2]): r[3] for r in rows if r[4] == i}
            # Both seats' moves 0 and 1, each under its own seat, and in about half the
            # worlds each (the coin is even): a seat's moves are its own share.
            assert set(below) == {(0, 0), (1, 0), (0, 1), (1, 1)}, (seat, below)
            for mover in (0, 1):
                share = (below[(0, mover)] + below[(1, mover)]) / (visits - 1)
                assert 0.35 < share < 0.65, (seat, mover, below, visits)


def test_the_kept_subtree_is_the_bots_own_move():
    """The coin shows 0: seat 0 decides three times in a row, each search from the
    subtree of its last move. Below its first move its tree also holds seat 1's moves of
    the same keys (the worlds where the coin shows 1); the root kept for the third
    decision is seat 0's second move in both seats' trees."""
    spec = registry.get_game(f"{__name__}:Knock")
    state = spec.new_state(spec.params(players=2))
    kept = 0
    for seed in range(12):
        state.new_game(seed)
        if state.game.coin:
            continue
        bot = strategies.build(spec.name, "mcts(iterations=300, stop=0, widen=0)")
        bot.bind(state)
        for _ in range(3):
            state.apply(bot.choose_action(state, RngView.seeded(seed)))
        assert bot.reused == 2, seed
        assert [bot.tree(q)[0][2] for q in (0, 1)] == [0, 0], seed
        kept += 1
    assert kept >= 4
