"""Chocolate Factory (Alley Cat Games): see README.md in this folder for the rules as
implemented."""
from simcore.games.alleycat.rules import AlleyCatState

# The game: its state class, which declares its metadata (simcore.meta).
GAME = AlleyCatState
