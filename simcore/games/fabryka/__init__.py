"""Fabryka Czekolady: see README.md in this folder for the rules as implemented."""
from simcore.games.fabryka.rules import FabrykaState

# The game: its state class, which declares its metadata (simcore.meta).
GAME = FabrykaState
