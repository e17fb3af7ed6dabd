"""The decisions of the one-move-look-ahead bots, recorded: every action of seeded games
played through the Python API, per game, bot and table size, as one digest a game. A
fixture recorded from the copy-apply-evaluate bots (tests/data/decisions.json) pins the
faster ones to the same choice at every decision.

    PYTHONPATH=. python tests/decisions.py > tests/data/decisions.json   # re-record
"""
from __future__ import annotations

import hashlib
import json

import strategies
from simcore.registry import games
from simcore.strategy import RngView

# (game, bot) -> games recorded per table size: a few thousand decisions of each.
CASES = {
    ("fabryka", "greedy"): 30,
    ("enemy_chocolatier", "greedy"): 15,
    ("manfredini", "greedy"): 40,
    ("alleycat", "greedy"): 8,
    ("alleycat", "heuristic"): 10,
    ("alleycat", "heuristic_v1"): 5,
}


def digest(game: str, bot: str, players: int, seed: int) -> tuple[str, int]:
    """The digest of the actions of game `seed` with `bot` in every seat, and how many
    decisions it asked of the bot (more than one legal action)."""
    spec = games()[game]
    state = spec.new_state(spec.params(players=players))
    bots = [strategies.build(game, bot) for _ in range(players)]
    for b in bots:
        b.prepare(state)
    rng = RngView.seeded(seed + 7)
    state.new_game(seed)
    h = hashlib.sha256()
    asked = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        action = bots[state.current_player()].choose_action(state, rng)
        asked += len(legal) > 1
        h.update(action.to_bytes(2, "little"))
        state.apply(action)
    return h.hexdigest()[:16], asked


def table_sizes(game: str) -> range:
    lo, hi = games()[game].players
    return range(lo, hi + 1)


def record() -> dict:
    out = {}
    for (game, bot), n in CASES.items():
        for players in table_sizes(game):
            out[f"{game}/{bot}/{players}"] = [digest(game, bot, players, 100 + i)[0] for i in range(n)]
    return out


if __name__ == "__main__":
    print("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in record().items()) + "\n}")
