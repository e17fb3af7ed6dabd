"""Chocolate Factory (Dan Manfredini): see README.md in this folder for the rules as implemented."""
from simcore.games.manfredini.rules import ManfrediniState

# The game: its state class, which declares its metadata (simcore.meta).
GAME = ManfrediniState
