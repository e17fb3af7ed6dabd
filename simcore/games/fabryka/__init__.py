"""Fabryka Czekolady: see README.md in this folder for the rules as implemented."""
from pathlib import Path

from simcore.games.fabryka.params import FabrykaParams
from simcore.games.fabryka.rules import FabrykaState
from simcore.registry import GameSpec

GAME = GameSpec(
    name="fabryka",
    title="Fabryka Czekolady",
    state_cls=FabrykaState,
    params_cls=FabrykaParams,
    defaults_path=Path(__file__).parent / "data" / "rules.toml",
    players=(2, 2),
)
