"""Chocolate Factory (Alley Cat Games): see README.md in this folder for the rules as
implemented."""
from pathlib import Path

from simcore.games.alleycat.params import AlleyCatParams
from simcore.games.alleycat.rules import AlleyCatState
from simcore.registry import FeatureRoles, GameSpec

GAME = GameSpec(
    name="alleycat",
    title="Chocolate Factory (Alley Cat Games)",
    state_cls=AlleyCatState,
    params_cls=AlleyCatParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(1, 4),
    features=FeatureRoles(
        # Money by source adds up to the score (less compensation.points); the solo
        # objectives are the result.
        outcomes=("money_*", "stages_completed", "target_met", "demand_*_met", "objectives",
                  "objectives_met", "failed_*"),
        setup=("target", "demand_*"),
        behaviours=("day*_slot", "day*_employee", "covered_*", "orders_*"),
        # A store's track position, final place on it and supplies sold there.
        same_information=(r"(store_.+)_(?:track|place|supplies)",),
    ),
    # None: no amount of the rules depends on turn order (README, "Turn order").
    position_knobs={},
)
