# cython: language_level=3
"""`heuristic` for Enemy Chocolatier: scores every legal purchase and STOP with named
weights that follow the rulebook's strategy hints, and plays the best.

A purchase is worth (in dollars of today's money, roughly):
- recipe: each ingredient the bot still needs, more as its recipe nears completion
  ("race for the recipe"), and a win outright if it completes the recipe;
- rewards: closing a neighbourhood earns its income, points and abilities; part of that
  value is credited for each house owned on the way. Dollar income is worth more until
  the bot's income reaches income_target, point income more after ("build income, then
  points");
- price: every dollar spent counts against it (less so when the bot is rich), a house
  dearer than the cheapest empty one of its neighbourhood more so ("buy the cheapest
  house"), and so do the points a $5 = 1 Point holder loses by spending;
- blocking: buying into a neighbourhood a rival is filling alone, or a house away from a
  rival with many ingredients ("buy into a rival's neighbourhood", "block the recipe
  win"); a buy-out that does not close the neighbourhood costs extra, as it invites the
  owner to buy back ("would you pay $6 for a $1 house?");
- rain checks: spending one costs rain_spend; STOP with nothing bought earns one, worth
  rain_save ("save rain checks").
The bot reads only its seat's observation: the board, public counters and its own recipe.

What all the purchases of a decision, or of a neighbourhood, share is worked out once:
about 2.7 k instructions a decision at 2 players and 3.9 k at 6 (callgrind, heuristic
games), from 6.1 k and 10.2 k when each purchase was scored from scratch, with the same
choices (tests/games/enemy_chocolatier/test_heuristic_fastpath.py).
"""
from simcore.rng cimport Rng
from simcore.state cimport GameState, MAX_PLAYERS
from simcore.strategy cimport Strategy
from simcore.games.enemy_chocolatier.rules cimport (
    EnemyState, EcObs, EcConfig, STOP, N_ING, N_ABIL, MAX_PRICE,
    AB_ALL_DOLLARS, AB_ALL_POINTS, AB_CASH_POINTS, house_cost,
)

# Weight indices, in the order of WEIGHTS.
cdef enum:
    W_RECIPE
    W_RECIPE_RUSH
    W_AWAY_RECIPE
    W_WIN
    W_INCOME_TARGET
    W_DOLLAR_EARLY
    W_DOLLAR_LATE
    W_POINT_EARLY
    W_POINT_LATE
    W_ABILITY
    W_PROGRESS
    W_COST
    W_RICH
    W_CHEAPEST
    W_CASH_KEEP
    W_BLOCK
    W_BLOCK_RECIPE
    W_BUYOUT
    W_RAIN_SPEND
    W_RAIN_SAVE


cdef extern from *:
    """
    static inline int ech_ctz32(unsigned int x) { return __builtin_ctz(x); }
    """
    int ctz32 "ech_ctz32"(unsigned int x) noexcept nogil


cdef inline double reward(const double* w, const EcObs* o, int seat, int nb, double wd, double wp) noexcept nogil:
    # What closing nb would be worth to `seat`, by its current abilities.
    cdef const EcConfig* c = o.cfg
    cdef double v = 0.0
    cdef int k, cnt
    cdef unsigned int m = c.nb_abil_mask[nb]
    if c.nb_dollars[nb] > 0:
        v += wd * (c.nb_dollars[nb] + o.abil[seat][AB_ALL_DOLLARS])
    if c.nb_points[nb] > 0:
        v += wp * (c.nb_points[nb] + o.abil[seat][AB_ALL_POINTS])
    while m:
        # Its abilities, in the order of ABILITIES.
        k = ctz32(m)
        m &= m - 1
        cnt = c.nb_abil[nb][k]
        v += w[W_ABILITY] * cnt
        if k == AB_ALL_DOLLARS:
            v += wd * o.dollar_nbs[seat] * cnt
        elif k == AB_ALL_POINTS:
            v += wp * o.point_nbs[seat] * cnt
        elif k == AB_CASH_POINTS:
            v += wp * cnt * (o.money[seat] // c.cash_per_point)
    return v


cdef class EnemyHeuristic(Strategy):
    NAME = "heuristic"
    GAMES = ("enemy_chocolatier",)
    DESCRIPTION = ("scores purchases by recipe need, neighbourhood rewards (income first, "
                   "then points), price, blocking value and rain checks")
    WEIGHTS = {
        "recipe": 3.0,          # value of a house of an ingredient still needed
        "recipe_rush": 2.0,     # extra recipe value, times the share of the recipe owned
        "away_recipe": 0.3,     # share of the recipe value of a house bought away (not closing)
        "win": 1000.0,          # value of completing the recipe (winning)
        "income_target": 5.0,   # dollar income per turn aimed for before points
        "dollar_early": 4.0,    # value of $1 income per turn below income_target
        "dollar_late": 1.5,     # ... and once it is reached
        "point_early": 3.0,     # value of 1 point per turn below income_target
        "point_late": 6.0,      # ... and once it is reached
        "ability": 3.0,         # flat value of any ability (on top of its income effects)
        "progress": 0.5,        # share of a neighbourhood's rewards credited per share owned
        "cost": 1.0,            # value of a dollar spent
        "rich": 12.0,           # cash above which each dollar is worth cost x rich / cash
        "cheapest": 1.5,        # per dollar above the cheapest empty house of the neighbourhood
        "cash_keep": 2.0,       # per point of $5 = 1 Point income lost by spending
        "block": 2.0,           # times a rival's share of the neighbourhood and its rewards
        "block_recipe": 2.0,    # buying away from a rival, times his ingredients / a recipe
        "buyout": 3.0,          # extra cost of a buy-out that does not close ("$6 for a $1 house?")
        "rain_spend": 1.0,      # cost of spending a rain check
        "rain_save": 2.0,       # value of earning a rain check (STOP with nothing bought)
    }
    # Where `chocosim tune` searches each weight: (low, high, scale).
    WEIGHT_RANGES = {
        "recipe": (0.0, 10.0, "linear"),
        "recipe_rush": (0.0, 8.0, "linear"),
        "away_recipe": (0.0, 1.0, "linear"),
        "win": (10.0, 10000.0, "log"),
        "income_target": (2.0, 12.0, "linear"),
        **{k: (0.0, 10.0, "linear") for k in ("dollar_early", "dollar_late", "ability")},
        **{k: (0.0, 15.0, "linear") for k in ("point_early", "point_late")},
        "progress": (0.0, 1.0, "linear"),
        "cost": (0.2, 3.0, "linear"),
        "rich": (4.0, 40.0, "log"),
        **{k: (0.0, 6.0, "linear") for k in ("cheapest", "cash_keep", "block", "block_recipe",
                                             "rain_spend", "rain_save")},
        "buyout": (0.0, 10.0, "linear"),
    }

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        # Every purchase is scored by the rule of the module docstring, each float
        # operation in the same order as ever (so the same values to the last bit, ties
        # included). What does not depend on the purchase is worked out once a decision
        # (the rivals' recipe threat) or once a neighbourhood (who owns how much of it,
        # its cheapest empty house, what closing it is worth to this seat, the blocking
        # value): the houses of a neighbourhood are consecutive in the legal list. A
        # rival's holding there is the whole holding when he is the only one holding any.
        cdef EcObs o
        cdef const EcConfig* c
        cdef int i, h, k, nb, q, r, mine, col, price, have_sum, need_sum, size
        cdef int n_players, others, cash_points
        cdef int last_nb = -1
        cdef int held = 0                    # houses of nb owned by anybody
        cdef int held_mine = 0               # ... by this seat
        cdef int sole                        # the one seat holding any there (-1 none, -2 several)
        cdef int cheapest = 0                # printed price of nb's cheapest empty house
        cdef double rival_recipe[MAX_PLAYERS]
        cdef double wd, wp, v, best, share, dollar, cash_keep, recipe, recipe_away
        cdef double closing = 0.0            # reward of closing nb, to this seat
        cdef double blocking = 0.0           # w_block x the blocking value of nb
        cdef bint have_closing = False
        cdef int best_action = STOP
        cdef bint beyond
        (<EnemyState>state).observe(seat, &o)
        c = o.cfg
        n_players = c.n_players
        if (<EnemyState>state).income_dollars(seat) < self.w[W_INCOME_TARGET]:
            wd = self.w[W_DOLLAR_EARLY]
            wp = self.w[W_POINT_EARLY]
        else:
            wd = self.w[W_DOLLAR_LATE]
            wp = self.w[W_POINT_LATE]
        have_sum = 0
        need_sum = 0
        for k in range(N_ING):
            need_sum += o.need[k]
            have_sum += o.ingr[seat][k] if o.ingr[seat][k] < o.need[k] else o.need[k]
        beyond = o.turn_buys >= o.limit
        # A dollar is worth less to a bot holding more than it can usefully spend.
        dollar = self.w[W_COST]
        if o.money[seat] > self.w[W_RICH]:
            dollar *= self.w[W_RICH] / o.money[seat]
        cash_keep = self.w[W_CASH_KEEP] * o.abil[seat][AB_CASH_POINTS]
        cash_points = o.money[seat] // c.cash_per_point
        # The recipe. A house bought away is likely bought back unless the purchase
        # closes the neighbourhood, so its ingredient counts only in part.
        recipe = self.w[W_RECIPE] * (1.0 + self.w[W_RECIPE_RUSH] * have_sum / need_sum)
        recipe_away = recipe * self.w[W_AWAY_RECIPE]
        # A rival's recipe is hidden: his ingredients against the size of a recipe (the
        # bot's own) say how far a recipe win may be.
        for r in range(n_players):
            share = 0.0
            for k in range(N_ING):
                share += o.ingr[r][k]
            rival_recipe[r] = self.w[W_BLOCK_RECIPE] * share / need_sum
        best = self.w[W_RAIN_SAVE] if o.turn_buys == 0 else 0.0
        for i in range(n):
            h = legal[i]
            if h == STOP:
                continue
            nb = c.house_nb[h]
            size = c.nb_len[nb]
            if nb != last_nb:
                last_nb = nb
                held = 0
                held_mine = 0
                sole = -1
                cheapest = MAX_PRICE + 1
                for k in range(c.nb_first[nb], c.nb_first[nb] + size):
                    r = o.owner[k]
                    if r >= 0:
                        held += 1
                        held_mine += r == seat
                        sole = r if sole == -1 or sole == r else -2
                    elif c.price[k] < cheapest:
                        cheapest = c.price[k]
                have_closing = False
                # Blocking: a neighbourhood only one rival holds houses in (he could
                # close it with empty houses alone; the purchase scored does not change
                # who holds houses there), by its rewards to him and the square of his
                # share (near-closed neighbourhoods matter most). Once someone else holds
                # a house there it is blocked already.
                blocking = 0.0
                if sole >= 0 and sole != seat:
                    share = <double>held / size
                    blocking = reward(self.w, &o, sole, nb, wd, wp) * share * share
                blocking = self.w[W_BLOCK] * blocking
            col = c.colour[h]
            q = o.owner[h]
            price = house_cost(c, o.owner, o.abil, h)
            v = -dollar * price
            if beyond:
                v -= self.w[W_RAIN_SPEND]
            if cash_keep != 0.0:
                v -= cash_keep * (cash_points - (o.money[seat] - price) // c.cash_per_point)
            # The neighbourhood after this purchase: houses of this seat and of others.
            mine = held_mine - (q == seat) + 1
            others = held - (q >= 0) - (mine - 1)
            if col < N_ING and o.ingr[seat][col] < o.need[col]:
                if have_sum + 1 == need_sum:
                    v += self.w[W_WIN]
                v += recipe_away if q >= 0 and mine < size else recipe
            if mine == size or others == 0:
                if not have_closing:
                    closing = reward(self.w, &o, seat, nb, wd, wp)
                    have_closing = True
                if mine == size:
                    v += closing
                else:
                    # Progress counts only where no rival holds a house: a contested
                    # neighbourhood closes only through buy-outs.
                    v += self.w[W_PROGRESS] * closing * mine / size
            if q < 0:
                # (The house itself is empty: the cheapest is at most its price.)
                v -= self.w[W_CHEAPEST] * (price - cheapest)
            v += blocking
            if q >= 0:
                if mine < size:
                    # A buy-out that does not close invites the owner to buy back.
                    v -= self.w[W_BUYOUT]
                v += rival_recipe[q]
            if v > best:
                best = v
                best_action = h
        return best_action


STRATEGIES = (EnemyHeuristic,)
