"""Chocolate Factory (Dan Manfredini): see README.md in this folder for the rules as implemented."""
from pathlib import Path

from simcore.games.manfredini.params import ManfrediniParams
from simcore.games.manfredini.rules import ManfrediniState
from simcore.registry import GameSpec

GAME = GameSpec(
    name="manfredini",
    title="Chocolate Factory (Manfredini)",
    state_cls=ManfrediniState,
    params_cls=ManfrediniParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(2, 4),
)
