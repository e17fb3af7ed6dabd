/* The yardstick of the Fabryka speed target: random-vs-random Fabryka Czekolady with the
 * rulebook's numbers written straight in C, with nothing the toolkit adds (no params,
 * no per-seat streams, no results kept beyond the winner). scripts/bench.py compiles
 * it with gcc -O3 and compares the engine against it.
 *
 * usage: fabryka_ref [games]   prints games/s, the share of white-chocolate wins and
 *                              the first seat's win rate (a check that the rules match). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CARDS = 45, REMOVED = 3, HAND = 5, ROUNDS = 4, COLLECT = 5, WHITE = 10, WHITE_TO_WIN = 3 };

/* The deck by kind: biscuits 5, blueberries 6, strawberries 7, almonds 8, green 4,
 * yellow 2, pink 1, pawns 3, meeples 4, dice 2, white 3. */
static const signed char DECK[CARDS] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2,
                                        3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 6, 7, 7, 7,
                                        8, 8, 8, 8, 9, 9, 10, 10, 10};
static const int MAJORITY[4] = {5, 6, 7, 8};
static const int POINTS[11] = {0, 0, 0, 0, 2, 3, 4, -1, -2, -3, 0};

static inline uint64_t wyrand(uint64_t *s) {
    *s += 0xA0761D6478BD642Full;
    __uint128_t r = (__uint128_t)*s * (*s ^ 0xE7037ED1A0B428DBull);
    return (uint64_t)(r >> 64) ^ (uint64_t)r;
}

static inline uint32_t below(uint64_t *s, uint32_t n) {
    return (uint32_t)(((wyrand(s) >> 32) * (uint64_t)n) >> 32);
}

static int score(const int *mine, const int *theirs) {
    int s = 0, sets = mine[0];
    for (int k = 0; k < 4; k++) {
        if (mine[k] > theirs[k]) s += MAJORITY[k];
        if (mine[k] < sets) sets = mine[k];
    }
    s += 5 * sets;
    for (int k = 4; k < 11; k++) s += mine[k] * POINTS[k];
    return s;
}

int main(int argc, char **argv) {
    long n_games = argc > 1 ? atol(argv[1]) : 5000000;
    uint64_t rng = 42;
    long seat0_wins = 0, white_wins = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long g = 0; g < n_games; g++) {
        signed char deck[CARDS], hand[2][HAND], belt[CARDS];
        int hand_len[2], belt_len = 0, collected[2][11], winner = -1;
        memset(collected, 0, sizeof collected);
        memcpy(deck, DECK, CARDS);
        for (int i = CARDS - 1; i > 0; i--) {
            int j = below(&rng, i + 1);
            signed char t = deck[i]; deck[i] = deck[j]; deck[j] = t;
        }
        int next = REMOVED, token = 0;
        belt[belt_len++] = deck[next++];
        belt[belt_len++] = deck[next++];
        for (int r = 0; r < ROUNDS && winner < 0; r++) {
            int has_collected[2] = {0, 0};
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < HAND; i++) hand[p][i] = deck[next++];
                hand_len[p] = HAND;
            }
            for (int turn = 0; turn < 2 * (HAND + 1); turn++) {
                int p = (token + turn) & 1, h = hand_len[p];
                int can_collect = !has_collected[p] && (h == 0 || belt_len > 0);
                int n = h + can_collect;
                int a = n == 1 ? 0 : (int)below(&rng, n);
                if (a == h) {  /* collect the most recent cards */
                    int k = belt_len < COLLECT ? belt_len : COLLECT;
                    for (int i = 0; i < k; i++) collected[p][(int)belt[--belt_len]]++;
                    has_collected[p] = 1;
                    if (collected[p][WHITE] >= WHITE_TO_WIN) { winner = p; break; }
                } else {       /* play card a onto the belt */
                    belt[belt_len++] = hand[p][a];
                    hand[p][a] = hand[p][--hand_len[p]];
                }
            }
            token ^= 1;
        }
        if (winner >= 0) {
            white_wins++;
            seat0_wins += winner == 0;
        } else {
            int s0 = score(collected[0], collected[1]), s1 = score(collected[1], collected[0]);
            seat0_wins += s0 > s1 || (s0 == s1 && collected[0][3] > collected[1][3]);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("%.0f games/s, white chocolate %.4f, seat 0 wins %.4f\n", n_games / dt,
           (double)white_wins / n_games, (double)seat0_wins / n_games);
    return 0;
}
