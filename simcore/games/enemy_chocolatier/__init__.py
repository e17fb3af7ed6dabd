"""Enemy Chocolatier: see README.md in this folder for the rules as implemented."""
from pathlib import Path

from simcore.games.enemy_chocolatier.params import EnemyParams
from simcore.games.enemy_chocolatier.rules import EnemyState
from simcore.registry import FeatureRoles, GameSpec, Victory

GAME = GameSpec(
    name="enemy_chocolatier",
    title="Enemy Chocolatier",
    state_cls=EnemyState,
    params_cls=EnemyParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(2, 6),
    features=FeatureRoles(
        positional=("start_money", "turn_order"),  # both follow from the turn order
        # The result and what a player holds at the end (houses, income, rain checks).
        outcomes=("won_*", "points", "money", "recipe_progress", "houses_owned", "nbhds_held",
                  "rain_checks_held", "income_*"),
        behaviours=("houses_*", "nbhds_*", "rain_checks_*"),
    ),
    # Each later seat starts with this many dollars more (rulebook: 1).
    position_knobs={"start_money.step": (0, 1, 2, 3)},
    # A race to 20 points or a recipe, won during play: a bonus at the end changes no result.
    bonus_decides=False,
    victory=Victory(in_play=("points", "recipe", "cap")),
)
