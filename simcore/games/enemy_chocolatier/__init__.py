"""Enemy Chocolatier: see README.md in this folder for the rules as implemented."""
from simcore.games.enemy_chocolatier.rules import EnemyState

# The game: its state class, which declares its metadata (simcore.meta).
GAME = EnemyState
