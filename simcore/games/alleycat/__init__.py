"""Chocolate Factory (Alley Cat Games): see README.md in this folder for the rules as
implemented."""
from pathlib import Path
from typing import Any

from simcore.games.alleycat.params import AlleyCatParams
from simcore.games.alleycat.rules import AlleyCatState
from simcore.registry import FeatureRoles, GameSpec, Victory


def final_day_order(params: dict[str, Any]) -> list[int]:
    """Each turn position's place in the final day's turn order: the first player moves
    one seat on each day, so the final day starts with turn position days - 1."""
    n, days = params["players"], len(params["coal_per_day"])
    return [(position - (days - 1)) % n for position in range(n)]


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
    # The most money; a tie goes to the seat later in the final day's turn order. The
    # solo week is won or lost on its objectives.
    victory=Victory(tie_breaks=(final_day_order,), in_play=("solo_win", "solo_loss")),
)
