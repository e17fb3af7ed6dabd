from simcore.state cimport GameState

# Each seat's reward for a finished game or, cut short, by its standings: win share
# plus 0.1 x (n - rank) / (n - 1); shared with strategies/mcts.pyx.
cdef void rewards(GameState s, bint finished, double* out) noexcept nogil
