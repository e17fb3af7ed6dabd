"""Enemy Chocolatier: see README.md in this folder for the rules as implemented."""
from pathlib import Path

from simcore.games.enemy_chocolatier.params import EnemyParams
from simcore.games.enemy_chocolatier.rules import EnemyState
from simcore.registry import GameSpec

GAME = GameSpec(
    name="enemy_chocolatier",
    title="Enemy Chocolatier",
    state_cls=EnemyState,
    params_cls=EnemyParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(2, 6),
)
