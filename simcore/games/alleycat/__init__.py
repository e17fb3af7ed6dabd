"""Chocolate Factory (Alley Cat Games): see README.md in this folder for the rules as
implemented."""
from pathlib import Path

from simcore.games.alleycat.params import AlleyCatParams
from simcore.games.alleycat.rules import AlleyCatState
from simcore.registry import GameSpec

GAME = GameSpec(
    name="alleycat",
    title="Chocolate Factory (Alley Cat Games)",
    state_cls=AlleyCatState,
    params_cls=AlleyCatParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(1, 4),
)
