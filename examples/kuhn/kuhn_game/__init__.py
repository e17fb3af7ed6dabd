"""Kuhn poker for chocosim, written in plain Python (see game.py)."""
