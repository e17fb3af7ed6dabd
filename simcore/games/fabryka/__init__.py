"""Fabryka Czekolady: see README.md in this folder for the rules as implemented."""
from pathlib import Path

from simcore.games.fabryka.params import FabrykaParams
from simcore.games.fabryka.rules import FabrykaState
from simcore.registry import FeatureRoles, GameSpec, Victory

GAME = GameSpec(
    name="fabryka",
    title="Fabryka Czekolady",
    state_cls=FabrykaState,
    params_cls=FabrykaParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(2, 2),
    features=FeatureRoles(
        # Majorities and sets are scored at the end: parts of the final score.
        outcomes=("majority_*", "sets"),
        behaviours=("collect_turn_r*",),
        # The turn of a collect the game ended before is 0: no collect, not turn 0.
        zero_missing=("collect_turn_r*",),
    ),
    # What the token holder of round 1 finds and what a collect takes (rulebook: 2, 5).
    position_knobs={"collect_count": (3, 4, 5, 6, 7), "opening_belt": (0, 1, 2)},
    # Three pieces of white chocolate win whatever the points; else the most points, then
    # more Chocolate Cards with almonds, then a shared victory.
    victory=Victory(tie_breaks=("cards_almonds",), in_play=("white_chocolate",)),
)
