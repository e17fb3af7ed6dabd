"""One game played step by step through the Python API, with a full trace. It uses the
same seeds as the batch loop, so `play --seed S` is game 0 of a run with seed S seated
in the given order."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simcore.batch import seed_of_bot, seed_of_game
from simcore.pygame import GameFailure
from simcore.registry import GameSpec
from simcore.strategy import RngView


@dataclass
class Trace:
    game: str
    seed: int  # the run seed
    game_seed: int
    seats: list[str]  # spec of the bot in each seat
    steps: list[dict[str, Any]] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    end_reason: str = ""
    final_state: dict[str, Any] = field(default_factory=dict)
    final_render: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game, "seed": self.seed, "game_seed": self.game_seed,
            "seats": self.seats, "steps": self.steps, "scores": self.scores,
            "ranks": self.ranks, "end_reason": self.end_reason, "final_state": self.final_state,
        }

    def render(self) -> str:
        lines = [f"{self.game}, seed {self.seed} (game seed {self.game_seed})"]
        lines += [f"  seat {i}: {s}" for i, s in enumerate(self.seats)]
        for st in self.steps:
            if "state" in st:
                lines.append(st["state"])
            chance = f": {st['chance_text']}" if st.get("chance_text") else ""
            lines.append(f"{st['turn']:>4}  seat {st['seat']}  {st['action_text']}{chance}")
        # The final position renders with the phase it ended in ("round 4"), which the
        # trace showed at that phase's start: labelled, it does not read as a second one.
        lines.append(f"final position, after turn {len(self.steps)}:")
        lines.append(self.final_render)
        lines.append(f"end: {self.end_reason}")
        for i, (sc, rk) in enumerate(zip(self.scores, self.ranks)):
            lines.append(f"  seat {i} ({self.seats[i]}): {sc} points, rank {rk}")
        return "\n".join(lines)


def play_game(spec: GameSpec, params, bots, seed: int, index: int = 0,
              max_turns: int = 1_000_000) -> Trace:
    """Play game `index` of a run with `seed`, bot i in seat i; record every step and,
    at each change of round, the full state. A Python game's failure is named with the
    game index, as a run names it."""
    try:
        return _play(spec, params, bots, seed, index, max_turns)
    except GameFailure as e:
        raise e.in_game(index) from None


def _play(spec: GameSpec, params, bots, seed: int, index: int, max_turns: int) -> Trace:
    state = spec.new_state(params)
    gseed = seed_of_game(seed, index)
    state.new_game(gseed)
    rngs = [RngView.seeded(seed_of_bot(gseed, p)) for p in range(state.n_players)]
    for bot in bots:
        bot.bind(state)
    trace = Trace(spec.name, seed, gseed, [b.spec for b in bots])
    last_render = None  # the phase (round, day...) last shown in full
    turn = 0
    while not state.is_terminal():
        if turn >= max_turns:
            raise RuntimeError(f"no end after {max_turns} turns")
        p = state.current_player()
        step: dict[str, Any] = {"turn": turn + 1, "seat": p}
        phase = state.phase_label()
        if phase != last_render:
            step["state"] = state.render()
            last_render = phase
        step["legal"] = state.legal_actions()
        # As in the batch loop: a forced move is not put to a bot, except that the
        # uniform bot still makes its draw there; a restricted bot (forbid=) is asked
        # only when more than one of the actions it may play remain.
        allowed = bots[p].allowed(state)
        if len(allowed) == 1 and not bots[p].plays_uniform:
            action = allowed[0]
        else:
            action = bots[p].choose_action(state, rngs[p])
        step["action"] = action
        step["action_text"] = state.describe(action)
        state.apply(action)
        # What chance produced in the move (the die rolled), when the game says.
        if chance := state.describe_outcome():
            step["chance_text"] = chance
        trace.steps.append(step)
        turn += 1
    trace.scores, trace.ranks = state.scores(), state.ranks()
    trace.end_reason = state.end_reason()
    trace.final_state = state.to_dict()
    trace.final_render = state.render()
    return trace
