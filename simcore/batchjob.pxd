# What the batch loop (simcore/loop.pxi) needs to play a range of games: plain C, so a
# GameState can take it in a nogil call without knowing the strategy classes.
from libc.stdint cimport uint64_t, int64_t, int8_t, int16_t, int32_t


cdef struct BatchJob:
    const int32_t* perms         # n_perms rows of n_players strategy indices (seat orders)
    int64_t n_perms
    int seating                  # 0 rotate through perms by game index, 1 fixed (row 0), 2 random row
    uint64_t run_seed
    int64_t i0                   # games [i0, i1) of the run
    int64_t i1
    const char* uniform          # per strategy index: the bot is the uniform random one
    # Outputs, row g - i0 per game and (g - i0) * n_players + seat per seat.
    int64_t* game_index
    uint64_t* seeds
    int32_t* turns
    int8_t* end_reason
    int8_t* seat_strategy
    int32_t* score
    int8_t* rank
    float* win
    int8_t* first
    int8_t* position             # turn position at the start (0 = acts first)
    # Features and interim scores column by column (feature f of row r at
    # f * features_stride + r), as int16, or the features as int8 (features8) for a
    # game with narrow_features: the layout and width of a result part's columns, so
    # the runner stores them without a copy. One of features and features8 is NULL.
    int16_t* features
    int8_t* features8
    int64_t features_stride
    int16_t* interim
    int64_t interim_stride
    # Counts the loop adds up when not NULL: per cell (seat, turn position, strategy
    # index, end reason), in that order of nesting with n_players, n_players,
    # n_players, n_reasons values, 4 doubles: seat rows, wins, score sum, shared-victory
    # wins. What a part's tally holds, without another pass over the rows.
    double* tally
    int n_reasons
    # The first value its column's type cannot hold, if any (overflow_row -1: none).
    int64_t overflow_row
    int overflow_column          # index into the features, then the interim scores
    int overflow_value
