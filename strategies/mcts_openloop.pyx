# cython: language_level=3
"""`mcts_openloop`: the open-loop search bot `mcts` was until the information-set search
(strategies/mcts.pyx) replaced it, kept for comparison: same weights, same games for the
same spec and seed.

Its tree is keyed by action numbers, whatever they mean in each sampled world (in Fabryka
a hand slot holds another card in each), and an opponent's hidden choice is an edge keyed
by what the searching seat never sees. Each iteration copies the real state into a scratch state and
determinizes it for the bot's seat (`GameState.determinize`: every card it cannot see
and the future of the chance stream are resampled from what it has seen, with the bot's
own stream), then walks one tree of action sequences shared by all determinizations:

- selection: among the children whose action is legal in this determinization, UCB1
  with availability counts (a child's `avail` counts the visits in which it could have
  been chosen: mean reward + c * sqrt(ln avail / visits));
- expansion, with progressive widening: a node visited v times grows a new child only
  while it has fewer than widen * sqrt(v + 1); the new child is the untried move the
  game's heuristic bot picks among the untried ones (`guide`), else one drawn at random,
  so the search looks first at the moves the heuristic rates and widens slowly (without
  this, a decision of ~90 purchases in Enemy Chocolatier spreads 400 iterations so thin
  that the search lost to the heuristic it rolls out with, 33%; with it, 90-98%);
- rollout: to the end of the game by the game's own `heuristic` bot (`rollout=1`, the
  default; a game without one rolls out at random) or by uniform random moves
  (`rollout=0`: far weaker in the longer games, whose random games say little), or for
  at most `depth` moves, then scored by the standings;
- back-propagation: each node adds the reward of the seat that played its action.

Every seat maximises its own result: the reward of a seat is its win share (1, 1/k for a
victory shared by k, 0) plus 0.1 x (n - rank) / (n - 1) at n > 1 players, so that among
lost games a better place still counts a little (a game with one winner and everyone
else second, as Enemy Chocolatier, gives the term to the winner only).

The decision is the root child with most visits. A forced move is returned at once. The
node pool (`nodes`) is allocated once by prepare and reused by every decision; when it
is full the search stops expanding and keeps rolling out from the leaves it reaches.
Budgets are iterations, so a game is the same for the same seed. With `forbid=NAME` the
bot's own moves are restricted in the tree and the rollouts as at the table.

The bot reads the real state only through copy_into + determinize(seat): it never sees
what its seat may not see, provided the game's determinize depends only on the seat's
observation (the information test of tests/strategies/test_mcts.py checks this for every game).

Strength and speed at the default budget (`python scripts/bench.py --search`), measured
when it was `mcts`: one seat against the game's heuristic in the others, seats rotated; win share with its Wilson
95% interval, fair share 1/n; CPU time of one core of the 2-core build machine while
other jobs shared it:

| game | players | games | win share | fair | games/s | iterations/s |
|---|---|---|---|---|---|---|
| fabryka | 2 | 400 | 92.9% (89.9-95.0) | 50% | 216 | 840 k |
| enemy_chocolatier | 2 | 100 | 100% (96.3-100) | 50% | 17 | 81 k |
| enemy_chocolatier | 6 | 96 | 50.0% (40.2-59.8) | 16.7% | 2.2 | 11 k |
| manfredini | 2 | 30 | 96.7% (83.3-99.4) | 50% | 1.25 | 24 k |
| manfredini | 4 | 28 | 85.7% (68.5-94.3) | 25% | 0.5 | 10 k |
| alleycat | 2 | 4 | 100% (51.0-100) | 50% | 0.11 | 3.3 k |
| alleycat | 4 | 4 | 100% (51.0-100) | 25% | 0.06 | 1.7 k |

For overnight runs: `mcts(iterations=1000)`, about 5 times the time; against the default
it won 57.0% +- 4.8 of 400 Fabryka games and 55% +- 11 of 80 Enemy Chocolatier games
(2 players, seats rotated).
"""
from libc.math cimport log, sqrt
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from libc.stdint cimport uint32_t

from simcore.rng cimport Rng, rng_below
from simcore.state cimport GameState, MAX_ACTIONS, MAX_PLAYERS
from simcore.strategy cimport Strategy, drop_component

from simcore.errors import UserError

cdef enum:
    ACTION_IDS = 4096    # actions are ints below this (every bundled game's are < 300)

cdef enum:
    W_ITERATIONS = 0
    W_C = 1
    W_ROLLOUT = 2
    W_DEPTH = 3
    W_NODES = 4

cdef double RANK_WEIGHT = 0.1


cdef struct Node:
    int action          # the action that leads here from the parent
    int player          # the seat that played it
    int first_child     # -1: none
    int next_sibling    # -1: none
    int visits
    int avail           # visits of the parent in which this action was legal
    double reward       # summed rewards of `player`


cdef class OpenLoopMctsStrategy(Strategy):
    NAME = "mcts_openloop"
    GAMES = ("*",)
    # Hundreds to thousands of times slower than the heuristic: `balance` seats it only
    # when asked (--seats), so its default every-bot-against-every-other run stays quick.
    DEFAULT_TABLES = False
    DESCRIPTION = ("open-loop search over determinized copies, tree keyed by action numbers, heuristic "
                   "rollouts, progressive widening; kept for comparison with mcts")
    # Replaced by mcts: `chocosim strategies` lists it with --all only.
    SUPERSEDED_BY = "mcts"
    EXPERT = ("c", "rollout", "depth", "widen", "guide", "nodes")
    # The conformance suite's many games: a small budget, short rollouts, a pool that fills.
    CONFORMANCE_SPEC = "mcts_openloop(iterations=4, rollout=0, depth=10, nodes=8)"
    WEIGHTS = {
        "iterations": 200,    # search iterations per decision (the budget)
        "c": 0.7,             # UCB1 exploration constant (rewards are in [0, 1.1])
        "rollout": 1,         # 1: the game's heuristic bot plays the rollouts; 0: uniform random
        "depth": 0,           # rollout moves before scoring by the standings; 0: to the end
        "widen": 0.5,         # progressive widening: a node visited v times has at most
                              # widen * sqrt(v + 1) children; 0: every legal move at once
        "guide": 1,           # with rollout=1: expand first the untried move the heuristic picks
        "nodes": 100000,      # node pool size (memory: 32 bytes a node)
    }

    cdef Node* pool
    cdef int capacity
    cdef int* path            # node indices of the current iteration's walk
    cdef uint32_t* legal_mark # stamp per action id: legal in the current node
    cdef uint32_t* tried_mark # stamp per action id: a child of the current node has it
    cdef uint32_t stamp
    cdef int iterations, depth
    cdef bint guided
    cdef double c, widen
    cdef GameState scratch
    cdef Strategy rollout_bot  # None: uniform random rollouts
    cdef readonly long long searches  # decisions searched so far (forced ones are not)

    def __init__(self, **weights):
        super().__init__(**weights)
        w = self.weights
        for name, value in w.items():
            if value != value or value in (float("inf"), float("-inf")):
                raise UserError(f"mcts_openloop: weight {name}={value} must be a finite number")
        for name, lo in (("iterations", 1), ("nodes", 2), ("depth", 0)):
            if w[name] < lo or w[name] != int(w[name]) or w[name] > 2**30:
                raise UserError(f"mcts_openloop: weight {name}={w[name]:g} must be a whole number >= {lo}")
        if w["c"] < 0:
            raise UserError(f"mcts_openloop: weight c={w['c']:g} must be >= 0")
        if w["rollout"] not in (0, 1):
            raise UserError(f"mcts_openloop: weight rollout={w['rollout']:g} must be 0 (random) or 1 (heuristic)")
        self.iterations = int(w["iterations"])
        self.depth = int(w["depth"])
        self.c = w["c"]
        self.guided = w["guide"] != 0
        self.widen = w["widen"]
        self.capacity = int(w["nodes"])
        self.pool = <Node*>malloc(self.capacity * sizeof(Node))
        self.path = <int*>malloc(self.capacity * sizeof(int))
        self.legal_mark = <uint32_t*>malloc(ACTION_IDS * sizeof(uint32_t))
        self.tried_mark = <uint32_t*>malloc(ACTION_IDS * sizeof(uint32_t))
        if not (self.pool and self.path and self.legal_mark and self.tried_mark):
            raise MemoryError("mcts_openloop: cannot allocate the node pool")
        memset(self.legal_mark, 0, ACTION_IDS * sizeof(uint32_t))
        memset(self.tried_mark, 0, ACTION_IDS * sizeof(uint32_t))
        self.stamp = 0

    def __dealloc__(self):
        free(self.pool)
        free(self.path)
        free(self.legal_mark)
        free(self.tried_mark)

    cpdef prepare(self, GameState proto):
        if self.scratch is None or type(self.scratch) is not type(proto) or self.scratch.params is not proto.params:
            self.scratch = proto.copy()
            self.rollout_bot = None
            if self.weights["rollout"] == 1:
                self.rollout_bot = _heuristic_for(proto)
        if self.rollout_bot is not None:
            self.rollout_bot.bind(proto)

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef int it, i, k, p, nl, node, child, best, n_tried, used, steps, length, a
        cdef int buf[MAX_ACTIONS]
        cdef int allowed[MAX_ACTIONS]
        cdef int untried[MAX_ACTIONS]
        cdef const int* moves
        cdef double value, best_value
        cdef double reward[MAX_PLAYERS]
        cdef Node* nd
        if n == 1:
            return legal[0]
        if self.scratch is None:
            with gil:
                raise RuntimeError("OpenLoopMctsStrategy.prepare(state) was not called before choose")
        self.searches += 1
        self.pool[0].action = -1
        self.pool[0].player = -1
        self.pool[0].first_child = -1
        self.pool[0].next_sibling = -1
        self.pool[0].visits = 0
        self.pool[0].avail = 0
        self.pool[0].reward = 0.0
        used = 1
        for it in range(self.iterations):
            state.copy_into(self.scratch)
            self.scratch.determinize(seat, rng)
            node = 0
            length = 1
            self.path[0] = 0
            p = self.scratch.current_player()
            # Selection and expansion.
            while p >= 0:
                if node == 0:
                    moves = legal      # the bot's own decision: the list it was given
                    nl = n
                else:
                    nl = self.scratch.legal_actions(buf)
                    moves = buf
                    if p == seat and self.forbid >= 0:
                        nl = drop_component(self.scratch, self.forbid, buf, nl, allowed)
                        moves = allowed
                self.stamp += 1
                if self.stamp == 0:
                    # The stamps wrapped around: forget every old mark.
                    memset(self.legal_mark, 0, ACTION_IDS * sizeof(uint32_t))
                    memset(self.tried_mark, 0, ACTION_IDS * sizeof(uint32_t))
                    self.stamp = 1
                for i in range(nl):
                    if moves[i] >= ACTION_IDS or moves[i] < 0:
                        with gil:
                            raise ValueError(f"mcts_openloop handles actions in [0, {ACTION_IDS}), not {moves[i]}")
                    self.legal_mark[moves[i]] = self.stamp
                n_tried = 0
                best = -1
                best_value = -1.0
                child = self.pool[node].first_child
                while child >= 0:
                    nd = &self.pool[child]
                    if self.legal_mark[nd.action] == self.stamp:
                        self.tried_mark[nd.action] = self.stamp
                        n_tried += 1
                        nd.avail += 1
                        value = nd.reward / nd.visits + self.c * sqrt(log(<double>nd.avail) / nd.visits)
                        if value > best_value:
                            best_value = value
                            best = child
                    child = nd.next_sibling
                # Progressive widening: a node visited v times grows at most
                # widen * sqrt(v + 1) children, in the order expansion picks them.
                if n_tried < nl and (n_tried == 0 or self.widen == 0
                                     or n_tried < self.widen * sqrt(self.pool[node].visits + 1.0)):
                    if used == self.capacity:
                        break          # the pool is full: roll out from here
                    # Expand one untried action: the one the rollout bot would pick among
                    # them (so a node's first children are the moves it rates best), or
                    # one drawn uniformly.
                    k = 0
                    for i in range(nl):
                        if self.tried_mark[moves[i]] != self.stamp:
                            untried[k] = moves[i]
                            k += 1
                    if k == 1:
                        a = untried[0]
                    elif self.rollout_bot is None or not self.guided:
                        a = untried[rng_below(rng, k)]
                    else:
                        a = self.rollout_bot.choose(self.scratch, p, untried, k, rng)
                    nd = &self.pool[used]
                    nd.action = a
                    nd.player = p
                    nd.first_child = -1
                    nd.next_sibling = self.pool[node].first_child
                    nd.visits = 0
                    nd.avail = 1
                    nd.reward = 0.0
                    self.pool[node].first_child = used
                    node = used
                    used += 1
                    self.path[length] = node
                    length += 1
                    p = self.scratch.apply(a)
                    break
                node = best
                self.path[length] = node
                length += 1
                p = self.scratch.apply(self.pool[node].action)
            # Rollout.
            steps = 0
            while p >= 0 and (self.depth == 0 or steps < self.depth):
                nl = self.scratch.legal_actions(buf)
                moves = buf
                if p == seat and self.forbid >= 0:
                    nl = drop_component(self.scratch, self.forbid, buf, nl, allowed)
                    moves = allowed
                if nl == 1:
                    a = moves[0]
                elif self.rollout_bot is None:
                    a = moves[rng_below(rng, nl)]
                else:
                    a = self.rollout_bot.choose(self.scratch, p, moves, nl, rng)
                p = self.scratch.apply(a)
                steps += 1
            rewards(self.scratch, p < 0, reward)
            # Back-propagation: each node scores for the seat that played into it.
            for i in range(1, length):
                nd = &self.pool[self.path[i]]
                nd.visits += 1
                nd.reward += reward[nd.player]
            self.pool[0].visits += 1
        # The most visited action; ties to the one expanded first.
        best = -1
        child = self.pool[0].first_child
        while child >= 0:
            if best < 0 or self.pool[child].visits >= self.pool[best].visits:
                best = child
            child = self.pool[child].next_sibling
        return self.pool[best].action


cdef void rewards(GameState s, bint finished, double* out) noexcept nogil:
    # Each seat's reward: win share plus RANK_WEIGHT x (n - rank) / (n - 1). A rollout
    # cut short is ranked by the standings (equal standings share the rank).
    cdef int scores[MAX_PLAYERS]
    cdef int ranks[MAX_PLAYERS]
    cdef int n = s.n_players, p, q, winners = 0
    if finished:
        s.outcome(scores, ranks)
    else:
        for p in range(n):
            scores[p] = s.standing(p)
        for p in range(n):
            ranks[p] = 1
            for q in range(n):
                ranks[p] += scores[q] > scores[p]
    for p in range(n):
        winners += ranks[p] == 1
    for p in range(n):
        out[p] = (1.0 / winners) if ranks[p] == 1 else 0.0
        if n > 1:
            out[p] += RANK_WEIGHT * (n - ranks[p]) / (n - 1)


def _heuristic_for(GameState proto):
    """The game's own `heuristic` bot (default weights), or None if it has none."""
    import strategies
    from simcore.registry import games
    for name, spec in games().items():
        if spec.state_cls is type(proto):
            cls = strategies.available(name).get("heuristic")
            return None if cls is None else cls()
    return None


STRATEGIES = (OpenLoopMctsStrategy,)
