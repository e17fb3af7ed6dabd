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
"""
from simcore.rng cimport Rng
from simcore.state cimport GameState, MAX_PLAYERS
from simcore.strategy cimport Strategy
from simcore.games.enemy_chocolatier.rules cimport (
    EnemyState, EcObs, EcConfig, STOP, N_ING, N_ABIL,
    AB_ALL_DOLLARS, AB_ALL_POINTS, AB_CASH_POINTS,
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

    cdef double reward(self, const EcObs* o, int seat, int nb, double wd, double wp) noexcept nogil:
        # What closing nb would be worth to `seat`, by its current abilities.
        cdef const EcConfig* c = o.cfg
        cdef double v = 0.0
        cdef int k, cnt
        if c.nb_dollars[nb] > 0:
            v += wd * (c.nb_dollars[nb] + o.abil[seat][AB_ALL_DOLLARS])
        if c.nb_points[nb] > 0:
            v += wp * (c.nb_points[nb] + o.abil[seat][AB_ALL_POINTS])
        for k in range(N_ABIL):
            cnt = c.nb_abil[nb][k]
            if cnt == 0:
                continue
            v += self.w[W_ABILITY] * cnt
            if k == AB_ALL_DOLLARS:
                v += wd * o.dollar_nbs[seat] * cnt
            elif k == AB_ALL_POINTS:
                v += wp * o.point_nbs[seat] * cnt
            elif k == AB_CASH_POINTS:
                v += wp * cnt * (o.money[seat] // c.cash_per_point)
        return v

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef EcObs o
        cdef const EcConfig* c
        cdef int i, h, k, nb, q, r, mine, first, last, col, price, cheapest, have_sum, need_sum
        cdef int n_players, sole, money_after, others
        cdef int counts[MAX_PLAYERS]
        cdef double wd, wp, v, best, share, frac, dollar
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
        best = self.w[W_RAIN_SAVE] if o.turn_buys == 0 else 0.0
        for i in range(n):
            h = legal[i]
            if h == STOP:
                continue
            nb = c.house_nb[h]
            col = c.colour[h]
            q = o.owner[h]
            price = (<EnemyState>state).cost(seat, h)
            v = -dollar * price
            if beyond:
                v -= self.w[W_RAIN_SPEND]
            money_after = o.money[seat] - price
            v -= (self.w[W_CASH_KEEP] * o.abil[seat][AB_CASH_POINTS]
                  * (o.money[seat] // c.cash_per_point - money_after // c.cash_per_point))
            # The neighbourhood: who owns what after this purchase, the cheapest empty house.
            first = c.nb_first[nb]
            last = first + c.nb_len[nb]
            for r in range(n_players):
                counts[r] = 0
            cheapest = price
            for k in range(first, last):
                if k == h:
                    continue
                if o.owner[k] >= 0:
                    counts[o.owner[k]] += 1
                elif c.price[k] < cheapest:
                    cheapest = c.price[k]
            mine = counts[seat] + 1
            others = 0
            for r in range(n_players):
                if r != seat:
                    others += counts[r]
            # The recipe. A house bought away is likely bought back unless the purchase
            # closes the neighbourhood, so its ingredient counts only in part.
            if col < N_ING and o.ingr[seat][col] < o.need[col]:
                if have_sum + 1 == need_sum:
                    v += self.w[W_WIN]
                share = self.w[W_RECIPE] * (1.0 + self.w[W_RECIPE_RUSH] * have_sum / need_sum)
                if q >= 0 and mine < c.nb_len[nb]:
                    share *= self.w[W_AWAY_RECIPE]
                v += share
            if mine == c.nb_len[nb]:
                v += self.reward(&o, seat, nb, wd, wp)
            elif others == 0:
                # Progress counts only where no rival holds a house: a contested
                # neighbourhood closes only through buy-outs.
                v += self.w[W_PROGRESS] * self.reward(&o, seat, nb, wd, wp) * mine / c.nb_len[nb]
            if q < 0:
                v -= self.w[W_CHEAPEST] * (price - cheapest)
            # Blocking: a neighbourhood only one rival holds houses in (he could close it
            # with empty houses alone), by its rewards to him and the square of his share
            # (near-closed neighbourhoods matter most). Once someone else holds a house
            # there it is blocked already.
            frac = 0.0
            sole = -1
            for r in range(n_players):
                k = counts[r] + (1 if r == q else 0)
                if k > 0:
                    sole = r if sole == -1 else -2
            if sole >= 0 and sole != seat:
                share = <double>(counts[sole] + (1 if sole == q else 0)) / c.nb_len[nb]
                frac = self.reward(&o, sole, nb, wd, wp) * share * share
            v += self.w[W_BLOCK] * frac
            if q >= 0 and mine < c.nb_len[nb]:
                v -= self.w[W_BUYOUT]
            if q >= 0:
                # His recipe is hidden: his ingredients against the size of a recipe
                # (the bot's own) say how far a recipe win may be.
                share = 0.0
                for k in range(N_ING):
                    share += o.ingr[q][k]
                v += self.w[W_BLOCK_RECIPE] * share / need_sum
            if v > best:
                best = v
                best_action = h
        return best_action


STRATEGIES = (EnemyHeuristic,)
