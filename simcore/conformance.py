"""Checks a designer gets for free: import them in your own tests.

    from simcore.conformance import check_game

    def test_my_game_conforms():
        check_game(MyGame)                   # a state class (a PyGame...), or a registered name

Each check plays random games through the same engine every command uses (seeded, so a
failure replays) and raises AssertionError naming the game, the check and the seed:
- random games end (before MAX_MOVES) with an end reason the game declares;
- the same seed gives the same game (actions, observations, outcome);
- a copy is independent: playing on the copy leaves the original as it was;
- observations are JSON-serialisable;
- looking leaves the game as it was: observation() asked for every seat at every move
  gives the same game as never asking, and the same answer twice;
- determinize (hidden information) keeps everything the seat saw: its observation is
  the same before and after, and the game plays on from there;
- an observation tells every decision apart: two positions a seat cannot tell apart
  (same observation, same legal list) offer it moves that mean the same.
"""
from __future__ import annotations

import json
from typing import Any

from simcore.batch import seed_of_game
from simcore.pygame import MOVE_LIMIT, GameFailure
from simcore.registry import GameSpec, get_game, spec_of

__all__ = ["CHECKS", "check_game", "check_observation", "random_game"]


def _spec(game: type | str | GameSpec) -> GameSpec:
    if isinstance(game, GameSpec):
        return game
    if isinstance(game, str):
        return get_game(game)
    return spec_of(game, f"{game.__module__}:{game.__qualname__}", game.NAME or game.__name__,
                   f"{game.__module__}:{game.__qualname__}")


def _draw(seed: int, step: int, n: int) -> int:
    """A reproducible uniform pick of the checks' own (not the game's chance stream)."""
    return seed_of_game(seed, step) % n


def random_game(spec: GameSpec, params: Any, seed: int) -> tuple[Any, list[dict[str, Any]]]:
    """Play the game of `seed` with uniformly random moves; return the final state and
    every step (seat, legal list, action, the mover's observation)."""
    state = spec.new_state(params)
    state.new_game(seed)
    steps = []
    try:
        while not state.is_terminal():
            legal = state.legal_actions()
            _check_kept(spec, state, f"(seed {seed}, move {len(steps)})")
            action = legal[_draw(seed, len(steps), len(legal))]
            steps.append({"seat": state.current_player(), "legal": legal, "action": action,
                          "observation": state.observation(state.current_player())})
            state.apply(action)
    except GameFailure as e:  # what the engine refuses of a Python game, as a failed check
        raise AssertionError(f"{e} (seed {seed}, move {len(steps)})") from None
    return state, steps


def _check_kept(spec: GameSpec, state: Any, where: str) -> None:
    """A game that keeps its legal list for the loops to read in place keeps it current:
    the search's rollouts read it on copies and determinized worlds too."""
    kept = state._kept_legal_actions()
    if kept is not None and not state.is_terminal():
        assert kept == state.legal_actions(), \
            f"{spec.name}: the legal list the game keeps is not legal_actions() {where}: {kept}"


def _outcome(state: Any) -> tuple:
    return (state.scores(), state.ranks(), state.end_reason(),
            [state.features(p) for p in range(state.n_players)],
            [state.interim(p) for p in range(state.n_players)])


def check_terminates(spec: GameSpec, params: Any, seeds: range) -> None:
    for seed in seeds:
        state, steps = random_game(spec, params, seed)
        assert state.end_reason() != MOVE_LIMIT, \
            f"{spec.name}: a random game (seed {seed}) did not end within MAX_MOVES ({len(steps)} moves)"
        ranks = state.ranks()
        assert min(ranks) == 1, f"{spec.name}: nobody ranks 1 (seed {seed}): ranks {ranks}"


def check_same_seed(spec: GameSpec, params: Any, seeds: range) -> None:
    for seed in seeds:
        a, steps_a = random_game(spec, params, seed)
        b, steps_b = random_game(spec, params, seed)
        assert steps_a == steps_b and _outcome(a) == _outcome(b), \
            f"{spec.name}: the same seed ({seed}) gave two different games (chance outside self.chance?)"


def check_serialisable(spec: GameSpec, params: Any, seeds: range) -> None:
    for seed in seeds:
        _, steps = random_game(spec, params, seed)
        for i, step in enumerate(steps):
            try:
                json.dumps(step["observation"])
            except (TypeError, ValueError) as e:
                raise AssertionError(f"{spec.name}: observation at move {i} of seed {seed} is not "
                                     f"JSON-serialisable ({e})") from None


def _looked_at(spec: GameSpec, params: Any, seed: int, look: bool) -> tuple:
    """The random game of `seed` (each move drawn as random_game draws it, from the legal
    list in hand) with, if `look`, every seat's observation asked twice before each
    move: each decision's seat, legal list and action, and the outcome."""
    state = spec.new_state(params)
    state.new_game(seed)
    seen: list[tuple] = []
    while not state.is_terminal():
        if look:
            for p in range(state.n_players):
                first, second = state.observation(p), state.observation(p)
                assert first == second, f"{spec.name}: observation({p}) gave two answers in a row (seed {seed}, " \
                                        f"move {len(seen)}): it changes the game"
        legal = state.legal_actions()
        action = legal[_draw(seed, len(seen), len(legal))]
        seen.append((state.current_player(), legal, action))
        state.apply(action)
    return seen, _outcome(state)


def check_observation(spec: GameSpec, params: Any, seeds: range) -> None:
    """Asking every seat's observation at every move leaves the game as never asking
    does: the same seats to act, legal lists and outcome."""
    for seed in seeds:
        try:
            plain, looked = _looked_at(spec, params, seed, False), _looked_at(spec, params, seed, True)
        except GameFailure as e:
            raise AssertionError(f"{e} (seed {seed})") from None
        assert plain == looked, f"{spec.name}: observation() changed the game (seed {seed}): a game looked at " \
                                "played differently from one that was not"


def check_copies(spec: GameSpec, params: Any, seeds: range) -> None:
    """Halfway through each game, a copy is played to its end: the original must be
    exactly as it was, and replaying the rest on it must end as the copy did."""
    for seed in seeds:
        _, steps = random_game(spec, params, seed)
        half = len(steps) // 2
        state = spec.new_state(params)
        state.new_game(seed)
        for step in steps[:half]:
            state.apply(step["action"])
        before = [state.observation(p) for p in range(state.n_players)], state.legal_actions(), state.current_player()
        other = state.copy()
        _check_kept(spec, other, f"on a copy (seed {seed}, move {half})")
        for step in steps[half:]:
            other.apply(step["action"])
        after = [state.observation(p) for p in range(state.n_players)], state.legal_actions(), state.current_player()
        assert before == after, f"{spec.name}: playing on a copy changed the original (seed {seed}, " \
                                f"move {half}): copy() shares mutable state"
        for step in steps[half:]:
            state.apply(step["action"])
        assert _outcome(state) == _outcome(other), \
            f"{spec.name}: a copy and its original ended differently (seed {seed})"


def check_determinize(spec: GameSpec, params: Any, seeds: range) -> None:
    """At every decision of a random game: each seat's determinized copy shows that
    seat the same observation and legal list, and the copy plays on to an end."""
    for seed in seeds:
        _, steps = random_game(spec, params, seed)
        state = spec.new_state(params)
        state.new_game(seed)
        for i, step in enumerate(steps):
            for seat in range(state.n_players):
                world = state.determinized(seat, seed_of_game(seed, 1000 + i))
                _check_kept(spec, world, f"in seat {seat}'s determinized world (seed {seed}, move {i})")
                assert world.observation(seat) == state.observation(seat), \
                    f"{spec.name}: determinize({seat}) changed what seat {seat} sees (seed {seed}, move {i})"
                if seat == state.current_player():
                    assert world.legal_actions() == state.legal_actions(), \
                        f"{spec.name}: determinize({seat}) changed the mover's legal actions (seed {seed}, move {i})"
                    world.apply(world.legal_actions()[0])  # plays on
            state.apply(step["action"])


# Legal moves tried from each position by check_observation_tells_moves: all of a
# decision's moves up to this many, else a reproducible sample of this many.
SIBLINGS = 12


def _view(state: Any, seat: int) -> str:
    """What `seat` has to decide on: its observation and the legal list, as one key."""
    return json.dumps([state.observation(seat), state.legal_actions()], sort_keys=True)


def _same_meaning(spec: GameSpec, a: Any, b: Any, where: str, played: bool) -> None:
    """`a` and `b` show their seat to move the same observation and legal list: each
    legal move must be described alike in both and, with `played` (the two differ
    only by that seat's own moves), played in both leave that seat the same
    observation unless it saw different chance outcomes of the move."""
    seat = a.current_player()
    for action in a.legal_actions():
        texts = a.describe(action), b.describe(action)
        assert texts[0] == texts[1], \
            f"{spec.name}: seat {seat} sees the same observation and legal list {where}, yet action " \
            f"{action} means {texts[0]!r} in one and {texts[1]!r} in the other: the observation " \
            f"hides what the decision is about"
        if not played:
            continue
        after = a.copy(), b.copy()
        for s in after:
            s.apply(action)
        if after[0].outcome_key(seat) == after[1].outcome_key(seat):
            assert after[0].observation(seat) == after[1].observation(seat), \
                f"{spec.name}: seat {seat} sees the same observation and legal list {where}, yet action " \
                f"{action} leaves it two different observations with no chance outcome to tell them " \
                f"apart: the observation hides what the decision is about"


def check_observation_tells_moves(spec: GameSpec, params: Any, seeds: range) -> None:
    """At every decision of a random game the mover's legal moves (up to SIBLINGS) are
    each played on a copy; two copies where the same seat moves next and sees the same
    observation and legal list must put the same decision to it (_same_meaning). A bot
    reads the observation: if it hid what is pending (the card being placed, say), the
    bot could not know what its next move does. A determinized copy of each position,
    the same to the seat to move, must also describe its moves as the original does."""
    for seed in seeds:
        _, steps = random_game(spec, params, seed)
        state = spec.new_state(params)
        state.new_game(seed)
        for i, step in enumerate(steps):
            seat, legal = step["seat"], step["legal"]
            where = f"(seed {seed}, move {i})"
            world = state.determinized(seat, seed_of_game(seed, 2000 + i))
            _same_meaning(spec, state, world, f"in a position and its determinized copy {where}", False)
            tried = legal if len(legal) <= SIBLINGS else \
                sorted({legal[_draw(seed, 3000 * i + k, len(legal))] for k in range(SIBLINGS)})
            seen: dict[str, tuple[int, Any]] = {}
            for action in tried:
                child = state.copy()
                child.apply(action)
                if child.current_player() != seat:
                    continue
                view = _view(child, seat)
                if view in seen:
                    _same_meaning(spec, seen[view][1], child,
                                  f"after action {seen[view][0]} and after action {action} {where}", True)
                else:
                    seen[view] = action, child
            state.apply(step["action"])


CHECKS = (check_terminates, check_same_seed, check_serialisable, check_observation, check_copies,
          check_determinize, check_observation_tells_moves)


def check_game(game: type | str | GameSpec, games: int = 20, seed: int = 0,
               players: int | None = None, sets: dict[str, Any] | None = None) -> None:
    """Run every check on `games` random games (seeds from `seed`) of `game` (a state
    class, compiled or a PyGame, a game name, or a GameSpec) with its default params
    (at `players`, with `sets` overrides). AssertionError on a failure."""
    spec = _spec(game)
    params = spec.params(sets=sets, players=players)
    seeds = range(seed, seed + games)
    for check in CHECKS:
        check(spec, params, seeds)
