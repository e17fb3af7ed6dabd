# Header-only random numbers for the nogil paths: wyrand (Wang Yi), seeded through
# SplitMix64. One Rng per stream (a game's chance, each bot); there is no global
# generator, so a game depends only on its seed.
#
# Why wyrand: one 64x64->128 multiply per draw and a one-word state, so seeding a game's
# three streams and drawing ~70 numbers costs a few hundred instructions; it passes
# BigCrush and PractRand, and a stream here lasts one game, far below its 2**64 period.
from libc.stdint cimport uint64_t, uint32_t

cdef extern from *:
    """
    static inline uint64_t chocosim_wymix(uint64_t a, uint64_t b) {
        __uint128_t r = (__uint128_t)a * b;
        return (uint64_t)(r >> 64) ^ (uint64_t)r;
    }
    """
    uint64_t wymix "chocosim_wymix"(uint64_t a, uint64_t b) nogil


cdef struct Rng:
    uint64_t s


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += <uint64_t>0x9E3779B97F4A7C15
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EB
    return x ^ (x >> 31)


cdef inline uint64_t game_seed(uint64_t run_seed, uint64_t index) noexcept nogil:
    # The seed of game `index` of a run: a pure function of both, so results do not
    # depend on how the run is chunked or on the number of workers.
    return splitmix64(splitmix64(run_seed) ^ (index * <uint64_t>0xD1B54A32D192ED03))


cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    r.s = splitmix64(seed)


cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    r.s += <uint64_t>0xA0761D6478BD642F
    return wymix(r.s, r.s ^ <uint64_t>0xE7037ED1A0B428DB)


cdef inline uint32_t rng_scale(uint64_t x, uint32_t n) noexcept nogil:
    # A raw draw x made uniform in [0, n) by Lemire's multiply-shift on 32 bits; the bias
    # (< n / 2**32) is far below anything a run of millions of games can detect, and it
    # needs no division.
    return <uint32_t>(((x >> 32) * <uint64_t>n) >> 32)


cdef inline uint32_t rng_below(Rng* r, uint32_t n) noexcept nogil:
    return rng_scale(rng_next(r), n)


cdef inline double rng_uniform(Rng* r) noexcept nogil:
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)


cdef inline void shuffle_i8(Rng* r, signed char* a, int n) noexcept nogil:
    # Fisher-Yates, two indices per 64-bit draw (each from 32 bits, as in rng_below).
    cdef int i = n - 1, j
    cdef uint64_t x
    cdef signed char t
    while i > 0:
        x = rng_next(r)
        j = <int>(((x >> 32) * <uint64_t>(i + 1)) >> 32)
        t = a[i]; a[i] = a[j]; a[j] = t
        i -= 1
        if i > 0:
            j = <int>(((x & <uint64_t>0xFFFFFFFF) * <uint64_t>(i + 1)) >> 32)
            t = a[i]; a[i] = a[j]; a[j] = t
            i -= 1


cdef inline uint64_t bot_seed(uint64_t seed, int seat) noexcept nogil:
    # The bot stream of `seat` in the game of `seed`: never the game's own chance stream.
    return seed ^ (<uint64_t>0x5EED0B075EED0B07 + <uint64_t>seat * <uint64_t>0x9E3779B97F4A7C15)


cdef inline uint64_t seating_seed(uint64_t seed) noexcept nogil:
    return seed ^ <uint64_t>0x5EA7145EA7145EA7


cdef inline void shuffle_unseen_i8(Rng* r, signed char* a, int n) noexcept nogil:
    # Shuffle cards an observer has not seen, for determinize: sorted first, so the deal
    # depends only on which cards are unseen, never on the order they really lie in
    # (which would leak through the shared bot stream). Insertion sort: n is a deck.
    cdef int i = 1, j
    cdef signed char t
    while i < n:
        t = a[i]
        j = i - 1
        while j >= 0 and a[j] > t:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = t
        i += 1
    shuffle_i8(r, a, n)
