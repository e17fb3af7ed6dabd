"""Errors a user can fix: the CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """Bad input (unknown name, invalid param, foreign run directory...)."""


class CounterOverflow(UserError, OverflowError):
    """A game's feature or interim score beyond the integer type results store it in
    (int16; int8 for a game's narrow features): the params made it larger than any
    printed game does."""
