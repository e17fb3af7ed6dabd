"""Pig, the dice game, for chocosim, written in plain Python (see game.py)."""
