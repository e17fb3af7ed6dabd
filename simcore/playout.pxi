# The search bot's uniformly random rollout, compiled once per game class beside the
# batch loop (simcore/loop.pxi includes this file; simcore/state.pyx compiles it for the
# GameState base, with a virtual call per step). A compiled game's GameState.play_out
# returns it, so that a rollout's legal lists and moves are direct calls the C compiler
# inlines.
# The including module cimports Rng, rng_below and MAX_ACTIONS.


cdef int play_out_uniform(Game state, Rng* rng, int depth) except -2 nogil:
    """Play uniformly random moves (a forced move draws nothing) until the game ends or
    `depth` moves are played (0: no limit); the seat to move then, -1 at the end."""
    cdef int buf[MAX_ACTIONS]
    cdef const int* moves = buf
    cdef const int* n_kept = NULL
    cdef int p = state.current_player()
    cdef int nl, steps = 0
    # A game's own compiled version reads a kept legal list (GameState.kept_legal) in
    # place; the base asks legal_actions, as the game's own version may not be there.
    if Game is not GameState:
        if state.kept_legal != NULL:
            moves = state.kept_legal
            n_kept = state.kept_n_legal
    while p >= 0 and (depth == 0 or steps < depth):
        nl = n_kept[0] if n_kept != NULL else state.legal_actions(buf)
        p = state.apply(moves[0] if nl == 1 else moves[rng_below(rng, nl)])
        steps += 1
    return p
