"""Tic-tac-toe for chocosim, written in plain Python (see game.py)."""
