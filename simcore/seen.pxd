# What each seat saw of the chance outcomes of the last move: the record behind
# GameState.outcome_key, header-only so a game keeps it in its own C struct.
#
# A game calls seen_move() once at the top of apply(), then seen_one(p, v) for each
# outcome seat p alone sees (a card drawn into its hand) and seen_all(n, v) for each
# one every seat sees (a card turned face up, a die). Nothing is cleared per move: a
# seat's sum counts only while its stamp is the current move, so the batch loop pays
# one increment a move and a few stores a chance event. The sum of mixed values does
# not depend on the order of the outcomes (a hand dealt in another order is the same
# hand); two outcome sets with one sum are one outcome to the search (rare: 30 bits).
from libc.stdint cimport uint32_t
from libc.string cimport memset
from simcore.state cimport MAX_PLAYERS

cdef struct Seen:
    uint32_t move                      # moves applied (and determinizations) so far
    uint32_t stamp[MAX_PLAYERS]        # per seat: 1 + the move its sum belongs to
    uint32_t sum[MAX_PLAYERS]          # per seat: the mixed outcomes it saw in that move


cdef inline void seen_clear(Seen* s) noexcept nogil:
    # A new deal: nothing seen yet (an all-zero record, as memset leaves it, is one too).
    memset(s, 0, sizeof(Seen))


cdef inline void seen_move(Seen* s) noexcept nogil:
    # A move (or a determinization) begins: what was seen before it no longer counts.
    s.move += 1


cdef inline uint32_t seen_mix(uint32_t v) noexcept nogil:
    # A 32-bit finaliser (murmur3's): nearby outcomes land far apart before they are summed.
    v = (v + <uint32_t>0x9E3779B9) * <uint32_t>0x85EBCA6B
    v ^= v >> 13
    v *= <uint32_t>0xC2B2AE35
    return v ^ (v >> 16)


cdef inline void seen_one(Seen* s, int p, uint32_t v) noexcept nogil:
    if s.stamp[p] != s.move + 1:
        s.stamp[p] = s.move + 1
        s.sum[p] = 0
    s.sum[p] += seen_mix(v)


cdef inline void seen_all(Seen* s, int n, uint32_t v) noexcept nogil:
    cdef int p
    for p in range(n):
        seen_one(s, p, v)


cdef inline int seen_fold(uint32_t sum) noexcept nogil:
    # A sum of mixed outcomes as the contract's outcome_key: a positive int below 2**30.
    return 1 + <int>(sum & 0x3FFFFFFE)


cdef inline int seen_key(const Seen* s, int p) noexcept nogil:
    # The contract's outcome_key: 0 if seat p saw nothing in the last move, else what it saw.
    if s.stamp[p] != s.move + 1:
        return 0
    return seen_fold(s.sum[p])
