"""Chocolate Factory (Dan Manfredini): see README.md in this folder for the rules as implemented."""
from pathlib import Path

from simcore.games.manfredini.params import ManfrediniParams
from simcore.games.manfredini.rules import ManfrediniState
from simcore.registry import FeatureRoles, GameSpec, Victory

GAME = GameSpec(
    name="manfredini",
    title="Chocolate Factory (Manfredini)",
    state_cls=ManfrediniState,
    params_cls=ManfrediniParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(2, 4),
    features=FeatureRoles(
        outcomes=("scored_*", "coins", "unscored_goods"),  # the score, and its tie-breakers
        behaviours=("recruited_*", "kept_*", "played_*", "used_*", "seat_turns"),
    ),
    # None: no amount of the rules depends on turn order (README, "Turn order").
    position_knobs={},
    # The most points, then the most coins, then the most goods left in the other trucks
    # and the warehouse, then a shared victory.
    victory=Victory(tie_breaks=("coins", "unscored_goods")),
)
