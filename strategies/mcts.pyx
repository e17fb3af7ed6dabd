# cython: language_level=3
"""`mcts`: Information Set Monte Carlo Tree Search for any game, hidden information included.

Multiple-observer ISMCTS (Cowling, Powley and Whitehouse, "Information Set Monte Carlo
Tree Search", IEEE TCIAIG 2012): one tree per seat, each keyed by what that seat sees of
every move (`GameState.action_key`: in Fabryka the kind of card played, not its hand
slot; in Manfredini another seat's Break Room pick is one move to the others). Each
iteration copies the real state into a scratch state and determinizes it for the bot's
seat (`GameState.determinize`: every card it cannot see and the future of the chance
stream resampled from what it has seen, with the bot's own stream), then walks all the
trees at once, one move at a time:

- the seat to move chooses in its own tree, among the children whose key is legal in
  this world: UCB1 with availability counts (a child's `avail` counts the visits in
  which it could have been chosen: mean reward + c * sqrt(ln avail / visits)); so an
  opponent decides from what it sees of the moves, not from what the bot sees; with
  `bias` > 0 (progressive bias, Chaslot et al., "Progressive strategies for Monte-Carlo
  tree search", 2008), a move the guide picked when it was expanded scores
  bias / (visits + 1) more, so the heuristic's choice holds while its visits are few;
- expansion, with progressive widening: a node visited v times grows a new child only
  while it has fewer than widen * sqrt(v + 1); the new child is the untried move the
  game's heuristic bot picks among the untried ones (`guide`; a pick named by another
  action of the same key counts as that move; a heuristic that names a move already in
  the tree, as Fabryka's does after a node's first child, leaves it to one drawn
  uniformly), or, in a share `explore` of the expansions after a node's first, one drawn
  uniformly: the widening reaches every move as the budget grows, and not only in the
  heuristic's order;
- every other seat's tree follows the move by the key that seat sees of it;
- with `opponents=1` (Enemy Chocolatier's default at 6 players), every other seat plays
  in the trees the move the guide picks for it in the world at hand, an opponent model
  in place of its own statistics: its node is followed, or added, and the walk goes on
  to the bot's next decision, so the iterations go to the bot's own moves (at 6 players
  five moves in six are another seat's);
- rollout: by the game's own `heuristic` bot (`rollout=1`, by default but in Fabryka; a
  game without one rolls out at random), uniformly at random (`rollout=0`, Fabryka's
  default) or by MAST (`rollout=2`), to the end of the game or for at
  most `depth` moves, then scored by the heuristic's evaluation of each seat's position
  (`Strategy.evaluate`, random rollouts too; the logistic of its lead over the best
  other at `scale`) or, without one, by the standings (`GameState.standing`: by rank,
  or the logistic of the standing's lead at `scale` > 0); the weights at -1 take the
  game's own values (GAME_DEFAULTS); every game rolls out to the end by default but
  Alley Cat at 2-4 players (80 moves);
- the heuristic that guides and rolls out has its default weights, or (`tuned=1`, by
  default in Fabryka) the tuned weights the package ships for the game;
- back-propagation: in every tree, each node of the walk adds the reward of the seat
  that played its move.

Chance is a node in each seat's tree where that seat saw it: after a move, every tree
goes down to a chance child named by what its seat saw of the move's chance outcomes
(`GameState.outcome_key`: the cards dealt into its own hand, a display dealt face up,
the die, an order another seat took face up), and the seat's next decisions hang below
it. So a later decision depends only on the moves before it and the outcomes as its
seat saw them, never on another seat's private draw (that seat's tree splits by it, the
others' do not). Each iteration's world fixes the outcomes; a chance child is never
chosen, only followed. A move illegal in a world (a card not dealt there) is simply not
available in it. Chance widening (`chance`, default 1): a move node visited v times
keys at most chance * sqrt(v + 1) outcomes; the others share the decisions right below
the move (as every outcome did before chance nodes), so a die's eight faces soon have
nodes of their own while a deal's thousands of hands mostly share theirs, and a larger
budget splits more. `chance=0` keeps chance out of the trees.

Chance nodes against none (chance=0), default budgets, 2 players, seats rotated (win
share, Wilson 95% interval, games): Fabryka 50.5% (48.4-52.7) of 2,000, Manfredini 50.7%
(45.9-55.6) of 400. With every outcome its own node (chance=10**6): Fabryka 48.5%
(46.3-50.7) of 2,000 and 49.5% (45.5-53.5) of 600 at 800 iterations, Manfredini 51.0%
(46.1-55.9) of 400, Alley Cat 56.2% (45.3-66.6) of 80, and against Fabryka's tuned
heuristic 74.3% of 2,000 where the widened trees win 76.1%: hence the widening (these
Fabryka figures with the default heuristic guiding, before `tuned`).

Every seat maximises its own result: the reward of a seat is its win share (1, 1/k for a
victory shared by k, 0) plus 0.1 x (n - rank) / (n - 1) at n > 1 players.

The decision is the most visited move of the bot's own tree (of the moves with that
key, the first in the legal list). A forced move is returned at once. The node pool
(`nodes`) is allocated once and reused by every decision; when it cannot hold one more
node per seat the walk stops and the iteration rolls out from where it is.

A search stops early (`stop=1`, the default) once the most visited of the bot's legal
moves leads every other by more than the iterations left: no run of them could change
the decision, so it is the decision of the whole budget from the same tree and bot
stream (tests/strategies/test_mcts.py checks it in fresh searches at the smallest and
largest table of every game), for less CPU. What differs afterwards is the bot's
stream and, with tree reuse, the subtree kept for its next decision (fewer visits, so
that search runs more new iterations). In Fabryka at 2 players, against the heuristic,
a search then runs 2,247 of the default 2,752 iterations on average (-18%), and 327 of
390 (-16%; about the budget that costs what 1b60c88's search did). At the CPU of the
budget spent whole, the bot that stops runs 3,500 iterations and wins 50.5%
(49.2-51.8) of 2,000 deals against it (each deal twice, seats swapped): at the default
budget more iterations buy little (5,504 against 2,752 won 53.7%). `stop` below 1 bets
that the runner-up gains no more than that share of the iterations left (it may change
a decision): at 0.5 the bot runs 289 of those 390 iterations.

Tree reuse (`reuse=1`): when the bot's chosen move leaves it to move again (a turn of
several small decisions), the next search starts from each seat's subtree of that move
and runs at most what the budget lacks beyond the visits kept (at least a quarter of it
new, unless it stops early), so a budget is the root's visits. The bot's own tree goes
on below the outcome its move showed it (the real state's outcome_key for its seat: the
die it rolled, the cards it drew), so only the visits of worlds with that outcome are kept; the other seats'
trees go on from the move itself, since what they saw of it is theirs (their next
decisions hang directly below it, chance children left aside). The bot knows its
successor by playing its move on a copy of the real state (`after`) and comparing seat
to move, standings and legal list at the next call; nothing of that copy reaches a
decision. Any other call (another game, a forced move between, a Python caller asking
about another position) searches afresh. Budgets are
iterations, so a game is the same for the same seed. With `forbid=NAME` the bot's own
moves are restricted in the tree and the rollouts as at the table.

Unless it peeks, the bot reads the real state only through copy_into + determinize(seat)
and the keys of the moves legal at its own decision: it never sees what its seat may not
see, provided the game's determinize and action_key depend only on the seat's
observation (the information tests of tests/strategies/test_mcts.py check this for every game).

`peek=1` is not a fair player: it searches the real state itself (no determinize), every
hidden card and the future deals seen, and every tree follows a move by its mover's key
(another seat's hidden pick told apart). It is a reference for how much a game leaves to
search: traced beside the fair bot, it tells whether a flat skill trace is the game's or
the bot's (the information tests catch it).

`peek=2`, the root-only oracle, searches the real state too but keys every tree by what
its seat sees, as the fair bot does: the bot's seat knows every hidden card (and the
chance stream's future, which the state holds), the others' trees do not tell apart what
their seats cannot see. It measures what inferring the hidden cards from the opponents'
choices could buy at best. Against the fair bot at the default budget, 2 players, each
deal played twice with seats swapped (share per deal, 95% interval over deals): Fabryka
44.9% (43.4-46.4) of 2,000 deals, Enemy Chocolatier 48.3% (46.5-50.1) of 1,000. Seeing
more wins nothing: every iteration plays the one real world, so the opponents' trees
learn from it alone too (in the bot's model they answer as if they knew its hand and the
deck), as the full oracle's do. Hence no weighting of the sampled worlds by what the
opponents' choices reveal: it would only move the worlds toward the real one.

Where an iteration's time goes (callgrind, instructions, Fabryka at 2 players, 3 games
against the heuristic, 12,000 iterations; Enemy Chocolatier 1 game): in Fabryka 12.7 k
instructions an iteration, 46% of them the heuristic's moves (16 an iteration, the
guide's at expansion included), 13% applying moves, 7% determinize, 5% legal moves, 3%
action keys, 1.5% each the copy and the scoring; the tree walk itself the rest. In Enemy
Chocolatier 107 k an iteration, 81% of them the heuristic's moves (4.6 k instructions
each). Working the bot's own keys out once a decision and looking log(avail) up cut
Fabryka's by 4% (the same decisions, move for move). Then (6 games against the
heuristic, 23,400 iterations) Fabryka's heuristic keeping each seat's play values until a
collection changes (6 decisions in 10 find them kept) and picking its card in one pass
(364 to 312 instructions a move), and the walk calling its key and child lookups
directly (a final class, 2.9 k to 2.6 k an iteration) cut an iteration from 13.4 k to
12.1 k instructions (-10%: the heuristic 46%, the rules 31%, the walk 22%), the same
decisions, move for move (test_the_search_plays_the_recorded_games); CPU per decision on
the loaded machine, 3 rounds of 300 games against the heuristic, 0.460 (0.450-0.488) ms
before, 0.449 (0.411-0.464) after. In Enemy Chocolatier (1 game, 4,465 iterations) the
walk went from 5.7 k to 4.1 k of an iteration's 99.8 k and 98.3 k instructions (5.7% to
4.2%; the heuristic 75%, the rules 17%); in Manfredini (2 games, 3,720 iterations) from 5.8 k
to 5.4 k of 326 k (1.8% to 1.7%; the heuristic 87%). Then the games' heuristics came to
work out what a decision's candidates share once, the same floats and moves: an Enemy
Chocolatier iteration 61.6 k instructions at 2 players (the heuristic 69%, 2.1 k a move)
and 366 k at 6 (841 k before), Manfredini's 110 k at 2 players (the heuristic 67%), and
an Alley Cat search decision 10% fewer (25.5 M at 2 players). What is left is the games' and the
heuristics' own code, or fewer or cheaper rollout moves, and neither paid in Enemy
Chocolatier at equal CPU time (each deal played twice with seats swapped against the
default, the budget scaled by the CPU a decision measured against the heuristic, medians
of 2-3 rounds of 4 games: 3.58-3.82 ms by default). Rollouts cut short and scored by the
standings' lead: depth=10, scale=100 (1.85 ms) at 387 iterations won 24.0% (15.0-33.0),
depth=16 (2.48 ms) at 288 iterations 44.0% (33.7-54.3); random rollouts (1.47 ms) at 519
iterations 30.0% (21.6-38.4); 50 deals each, stopped there. Fabryka's rollouts are short
(1.92 against 1.58 us an iteration at depth=8), not worth cutting. The search's own
settings at the same budget (same CPU), Fabryka, deals played twice with seats swapped
against the default: bias=1 49.5% (47.5-51.6) of 1,000 deals, c=0.5 48.7% (44.2-53.3) of
200, c=1 48.3% (46.3-50.3) of 1,000, widen=1 48.8% (46.7-50.9) of 1,000; in Enemy
Chocolatier bias=1 50.3% (48.3-52.3) of 800: the defaults stay.

Spending a CPU second better, Fabryka at 2 players, each candidate at the budget that
costs what the default's 200 iterations do (scaled by the two bots' CPU a decision
against the heuristic, medians of 3 rounds of 200-300 games on the loaded machine), each
deal played with it in each seat against the default (the share per deal, 95% interval
over deals). Another seat's decisions hung below its own hand (`hands=1`, 0.462 against
0.418 ms, 181 iterations): 48.6% (47.2-50.1) of 2,000 deals. MAST rollouts (`rollout=2`,
the tuned heuristic still guiding the expansions; 0.30-0.39 against 0.41-0.48 ms,
232-299 iterations), 600 deals each, by `epsilon`: 0.02 42.4% (39.8-45.0), 0.1 46.3%
(43.6-49.0), 0.3 49.1% (46.3-51.9), 0.5 51.6% (48.8-54.3), 0.7 52.9% (50.2-55.6), 0.9
51.8% (49.2-54.4), 1 52.5% (49.8-55.1): the more random the rollouts, the better, so
MAST learns nothing that pays for its keys; at 2,000 fresh deals MAST 0.7 (0.360 against
0.472 ms, 262 iterations) won 52.1% (50.7-53.6), and uniform random rollouts
(`rollout=0`, 0.273 against 0.468 ms, 344 iterations) 53.7% (52.2-55.1): the guide's
tree needs many cheap rollouts more than a few good ones. Hence Fabryka's default,
random rollouts at 344 iterations (GAME_DEFAULTS); the bot of the figures above and in
the tables below is `mcts(rollout=1, iterations=200)`. Against the heuristics it plays
otherwise (600 games each, seats rotated): 98.3% (97.0-99.1) against the default one
where the former won 96.2% (94.3-97.4), but 86.3% (83.4-88.9) against the tuned one,
where the former won 91.2% (88.7-93.3). In Enemy Chocolatier, whose
rollouts are its heuristic's strength, MAST 0.7 (1.80 against 3.77 ms, 419 iterations)
won 29.0% (24.4-33.6) of 150 deals, and random rollouts (1.44 against 3.60 ms, 501
iterations) 26.0% (21.4-30.6): its rollouts stay the heuristic's. MAST and `hands` stay
settings.

With the random rollouts, the search's settings at the same budget against Fabryka's
default (deals played twice with seats swapped, 95% interval over deals), none kept:
c=0.5 51.1% (49.0-53.2) and c=1 49.2% (47.2-51.3) of 1,000; bias=1 49.5% (47.5-51.6) of
1,000; widen 0.2 48.2% (46.8-49.7), 0.3 50.6% (49.1-52.0), 0.4 50.7% (49.2-52.1) of 2,000,
0.35 51.0% (49.3-52.6), 0.7 46.7% (45.0-48.4) of 1,500, 1 49.2% (47.2-51.3) of 1,000;
explore 0 49.6% (47.9-51.3) and 0.5 50.3% (48.6-51.9), chance=2 50.1% (48.6-51.6),
tuned=0 45.7% (44.0-47.4), of 1,500. Rollouts cut short and scored by the logistic of
the standings' lead, at the budget of equal CPU: depth 16 and scale 8 49.0% (47.0-51.1),
scale 12 50.2% (48.2-52.3), depth 20 and scale 8 51.7% (49.6-53.7), depth 12 and scale 10
46.9% (44.9-49.0) of 1,000; depth 6 42.3% and 41.5% of 600. A finished rollout's reward
with the score margin added (w x tanh(lead / s), w 0.1-0.3, s 5-15) 49.2-50.5% of 1,500
(not built). The default sits on a plateau of its settings.

Keeping a bot's tree across the other seats' moves (not only its own) was built and
measured, and does not pay: an engine hook told each watching bot every move as its seat
saw it (the move's key before it, the outcome's key after), and the bot followed its own
tree down them to its next decision (the other seats' trees restarted: their nodes below
their own moves hang on draws the bot is never told). In Fabryka at 2 players the kept
tree carried 8.9% of the budget (the bot's move holds 58% of the root's visits, the
other seat's actual reply below it 12% of them), and at equal CPU time the bot won 50.0%
(49.0-51.0) of 4,000 deals each played twice with seats swapped against the default. So
neither the hook nor the setting is part of the engine.

At the default budget of then (the budgets are set by table size since: GAME_DEFAULTS),
2 players, seats rotated (win share, Wilson 95% interval, games;
the figures counted in deals are per deal, each deal played twice with seats swapped):

| game | iterations | vs heuristic | vs tuned heuristic | vs mcts_openloop |
|---|---|---|---|---|
| fabryka | 200 | 97.5% (96.4-98.3), 1,000 | 91.1% (89.7-92.2), 2,000 | 78.2% (76.5-80.0), 1,000 deals |
| enemy_chocolatier | 200 | 97.5% (94.3-98.9), 200 | 95.0% (91.0-97.3), 200 | 52.2% (48.9-55.4), 300 deals |
| manfredini | 35 | 89.8% (84.8-93.2), 200 | - | - |
| alleycat | 30 | 91.7% (81.9-96.4), 60 | - | - |

Doubling the budget, each deal played twice with seats swapped (the share per deal, 95%
interval over deals):

| game | deals | 400 vs 200 | 800 vs 400 | 1,600 vs 800 |
|---|---|---|---|---|
| fabryka | 3,000 | 58.3% (57.2-59.4) | 56.9% (55.8-58.0) | 55.2% (54.2-56.3) |
| fabryka, tuned=0 (before the twin fix) | 3,000 | 54.4% (53.3-55.5) | 54.8% (53.6-55.9) | 55.2% (54.1-56.3) |
| fabryka, peek=1 | 1,000 | 59.4% (57.5-61.3) | 60.7% (58.7-62.6) | 61.2% (59.3-63.0) |
| enemy_chocolatier | 300; 1,000; 1,000 | 59.2% (55.8-62.5) | 50.8% (48.9-52.8) | 52.2% (50.2-54.3) |
| enemy_chocolatier, peek=1 | 1,000 | 52.5% (50.9-54.2) | 50.1% (48.4-51.9) | 54.1% (52.4-55.9) |

In Fabryka the tuned heuristic's guidance made each doubling pay more (and the bot at
200 iterations win 59.8% (57.7-61.8) of 1,000 deals against the default guide's):
58%, 57% and 55%. The oracle, which sees the other hand and the deals to come, gains
a little more from each (59%, 61%, 61%), though at 200 iterations it is the weaker
(43.5% (41.4-45.5) of 1,000 deals against the fair bot; its trees take the opponent
to see everything too). In Enemy Chocolatier the start player wins 70-79% of
games between these bots, so most deals split one game each whatever the budget (of the
deals one bot won twice, the doubled budget won 85 of 115, 202 of 387 and 239 of 433);
past 400 iterations a doubling pays a point or two, and the oracle, which sees every
hidden recipe, gains about as little (52.5%, 50.1%, 54.1%; at 200 iterations 48.5%
(46.7-50.3) of 1,000 deals against the fair bot): who starts decides most games, and
little is left for more search to find.

Searching instead a few sampled worlds, each with trees of its own, and pooling the root
visits (perfect-information Monte Carlo, a prototype) played far worse in Fabryka: with
4 worlds at 200 iterations it won 29.3% (25.8-32.9) of 300 deals against this bot, and
at 1,600 iterations still 46.0% (41.3-50.7) of 200. A search of one sampled world is
misled by it; the oracle's one world is the true one.

The former open-loop bot stays as `mcts_openloop` (strategies/mcts_openloop.pyx).
"""
cimport cython
from libc.math cimport exp, log, sqrt
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from libc.stdint cimport uint32_t, uint64_t

from simcore.rng cimport Rng, rng_below, rng_uniform
from simcore.state cimport GameState, MAX_ACTIONS, MAX_PLAYERS
from simcore.strategy cimport Strategy, drop_component
from strategies.mcts_openloop cimport rewards

from simcore.errors import UserError

cdef enum:
    KEY_IDS = 4096    # action keys are ints below this
    LOG_TABLE = 4096  # log(avail) looked up below this
    MAX_PLAYED = 65536  # MAST learns from at most this many moves of an iteration

# The weights set to -1 (the defaults of depth, scale, explore, tuned, rollout and opponents) and a budget the spec
# does not name take these values,
# by game (measured at 2 players; see the games' READMEs). Enemy Chocolatier's ~90
# purchases a decision leave random expansions little to find (the bot won 39.7% [34.3,
# 45.3] of 300 games against the former one with them, 51.7% [46.0, 57.3] without),
# Fabryka's few cards a lot (70.1% against none, 1,000 games, before the guide's picks
# of moves already in the tree fell back to random ones; since then Fabryka's later
# children are drawn uniformly whatever `explore`: explore=0 won 49.4% [47.5, 51.3] of
# 1,000 seat-swapped deals against the default). A spec that names no budget gets the
# budget of its game and table size (`iterations`), set by the search's doubling curve
# (scripts/budget_curve.py; the rule and the curves are in the skill guide, "The search
# bot's default budget"): the smallest budget from which no doubling wins 55% of its
# pairs of seats against the budget below, within what a ladder affords. Alley Cat at
# 1 player keeps 120 iterations rolled out to the end (a curve is measured head to head,
# and a solo rollout cut short has no lead to be scored by). Manfredini's search is
# cheapened by fewer iterations, not shorter rollouts (at 35 iterations, rolled out to
# the end, against the heuristic, 2 players: 93.5% [89.2, 96.2] of 200 games); cut off
# at 32 moves and scored by the heuristic's evaluation (200 iterations, at about twice
# the cost) 84.5% [78.8, 88.9] of 200, and 22.5% of 80 games against full rollouts.
# Alley Cat's rollouts stop after 80 moves at 2-4 players, each seat scored by the
# heuristic's value of its position (the logistic of its lead at scale 30): an iteration
# costs about 2.6 times less, and 240 of them won 67.0% [61.1, 72.9] of 100 seat-swapped
# deals against 120 rolled out to the end, at about the same CPU (scaled from one mirror
# game, not timed there; at 40 moves and 480 iterations: 54.0% [47.1, 60.9]). Cut off
# at 8 moves it had beaten the heuristic only 65-75% of 80 games at every scale (3-60)
# and c (0.3, 0.7) tried, at 12 or 16 no better.
# Fabryka's search is guided by its tuned heuristic (`tuned`): 59.8% [57.7, 61.8] of
# 1,000 seat-swapped deals against the default heuristic's, and each doubling of the
# budget pays more (see the table below); Enemy Chocolatier's is not (45.8% [42.4, 49.2]
# of 300 deals with it, before the guide's twin fix, which changes nothing there).
# Fabryka's rollouts are uniformly random: at the budget (344 iterations) that costs
# what 200 with the heuristic's rollouts did, 53.7% [52.2, 55.1] of 2,000 deals against
# that bot (see the docstring); in Enemy Chocolatier random rollouts lose.
# Enemy Chocolatier at 6 players plays the other seats by the heuristic in its trees
# (`opponents`): at 1b60c88's CPU (493 iterations) 55.8% [54.2, 57.3] of 2,000
# seat-swapped deals against that search, where searching every seat's moves won 47.9%
# [45.7, 50.0] of 1,000, and against that search at 503 iterations 56.5% [54.9, 58.0]
# of 2,000; at the default budget (25) even with the search without it
# (49.5% [48.2, 50.8] of 2,000). At 4 players 52.9% [49.7, 56.1] of 400: not decided.
GAME_DEFAULTS = {
    "alleycat": {"scale": 30.0, "depth": {1: 0, 2: 80, 3: 80, 4: 80}, "iterations": {1: 120, 2: 480, 3: 60, 4: 30}},
    "manfredini": {"scale": 4.0, "iterations": {2: 4480, 3: 9, 4: 9}},
    "enemy_chocolatier": {"explore": 0.0, "iterations": {2: 400, 3: 100, 4: 25, 5: 25, 6: 25},
                          "opponents": {2: 0, 3: 0, 4: 0, 5: 0, 6: 1}},
    "fabryka": {"tuned": 1, "rollout": 0, "iterations": {2: 2752}},
}
# Elsewhere: rollouts to the end, and this share of expansions drawn at random.
EXPLORE = 0.25


cdef struct Node:
    int key             # what the tree's seat saw of the move that leads here (>= 0), or,
                        # for a chance node, -1 - the outcome it saw right after (< -1)
    int player          # the seat that played it (a chance node: the tree's seat)
    int first_child     # -1: none
    int next_sibling    # -1: none
    int visits
    int avail           # visits of the parent in which this move was legal
    float prior         # 1: the guide picked this move when it was expanded; else 0
    double reward       # summed rewards of `player`


@cython.final
cdef class MctsStrategy(Strategy):
    NAME = "mcts"
    GAMES = ("*",)
    # Runs written before `tuned` existed were played with the default heuristic, before
    # `stop` with every budget spent, and before `opponents` with every seat by its tree.
    WEIGHTS_BEFORE = {"tuned": 0, "stop": 0, "opponents": 0}
    # Hundreds to thousands of times slower than the heuristic: `balance` seats it only
    # when asked (--seats), so its default every-bot-against-every-other run stays quick.
    DEFAULT_TABLES = False
    DESCRIPTION = ("information-set Monte Carlo tree search (MO-ISMCTS: a tree per seat keyed by what it "
                   "sees of each move) over determinized copies, heuristic rollouts, progressive "
                   "widening; each seat maximises its own win share")
    # The conformance suite's many games: a small budget, short rollouts, a pool that fills,
    # and every legal move expanded at once (widening at 4 iterations would never grow past
    # the heuristic's first choice, so the suite would check only the heuristic's games).
    CONFORMANCE_SPEC = "mcts(iterations=4, rollout=0, depth=10, nodes=16, widen=0)"
    # Settings for those who study the search itself: `chocosim strategies` lists them with --all.
    EXPERT = ("c", "rollout", "epsilon", "depth", "scale", "widen", "guide", "explore", "nodes", "chance", "peek",
              "bias", "tuned", "reuse", "hands", "stop", "opponents")
    WEIGHTS = {
        "iterations": 200,    # search iterations per decision (the budget); unnamed in the
                              # spec: the game's (GAME_DEFAULTS), else this
        "c": 0.7,             # UCB1 exploration constant (rewards are in [0, 1.1])
        "rollout": -1,        # 1: the game's heuristic bot plays the rollouts; 0: uniform random;
                              # -1: the game's (GAME_DEFAULTS), else 1; 2: MAST, the move whose key (as its mover sees it) scored its
                              # mover best on average in this search's iterations so far
                              # (unplayed keys first), or in a share `epsilon` of the moves
                              # one drawn uniformly
        "epsilon": 0.1,       # MAST's (rollout=2) share of moves drawn uniformly
        "depth": -1,          # rollout moves before scoring the position; 0: to the end;
                              # -1: the game's (GAME_DEFAULTS, by table size), else to the end
        "scale": -1,          # a cut-off rollout with the heuristic's evaluation (Strategy.evaluate;
                              # a game whose heuristic has none: its standings): reward by the
                              # logistic of the lead over this scale; 0: by rank;
                              # -1: the game's (GAME_DEFAULTS), else by rank
        "widen": 0.5,         # progressive widening: a node visited v times has at most
                              # widen * sqrt(v + 1) children; 0: every legal move at once
        "guide": 1,           # 1: expand first the untried move the game's heuristic picks
        "explore": -1,        # share of a node's later expansions drawn uniformly, not guided;
                              # -1: the game's (GAME_DEFAULTS), else EXPLORE
        "nodes": 100000,      # node pool size (memory: 40 bytes a node)
        "chance": 1,          # chance widening: a seat's later decisions hang below the chance
                              # outcome it saw of a move (its draw, a card turned up, the die)
                              # while the move's node, visited v times, has fewer than
                              # chance * sqrt(v + 1) outcomes; the others share the decisions
                              # right below the move; 0: no tree is keyed by chance
        "peek": 0,            # 1: search the real state itself, every hidden card and the
                              # chance stream's future seen: not a fair player, an oracle to
                              # measure how much a game leaves to skill (the information
                              # tests catch it); 2: the real state too, but every tree keyed
                              # by what its seat sees (the bot's own seat an oracle, the
                              # others deciding from their own view); 0: determinized worlds
        "bias": 0,            # progressive bias: a move the guide picked scores bias / (visits
                              # + 1) more in selection; 0: none
        "tuned": -1,          # 1: the guide and the rollouts are the heuristic with the tuned
                              # weights the package ships for the game (heuristic(weights=tuned));
                              # 0: with its default weights; -1: the game's (GAME_DEFAULTS), else 0
        "hands": 0,           # > 0: another seat decides in its own tree below what it holds
                              # (the set of its moves' keys as it sees them), while its node,
                              # visited v times, splits into fewer than hands * sqrt(v + 1)
                              # holdings (as `chance` widens outcomes); 0: it decides as if it
                              # did not know its own hand
        "opponents": -1,      # 1: in the trees, every other seat plays the move the guide (the
                              # game's heuristic) picks for it in the world at hand, and the walk
                              # goes on to the bot's next decision; 0: each seat chooses by its
                              # own tree's statistics; -1: the game's (GAME_DEFAULTS, by table
                              # size; 0 without the guide), else 0
        "stop": 1,            # a search ends once the most visited move leads every other by
                              # more than stop x the iterations left: 1, when no other can
                              # overtake it (the same decision, less CPU); below 1, sooner
                              # (a bet that the runner-up gains no more than that share); 0: never
        "reuse": 1,           # 1: a decision that follows the bot's own move keeps that move's
                              # subtrees and tops the root up to at most `iterations` visits (at
                              # least a quarter of them new, unless it stops early); 0: every
                              # decision searches afresh
    }

    cdef Node* pool
    cdef int capacity
    cdef int* path             # path[depth * MAX_PLAYERS + tree]: node indices of the walk
    cdef uint32_t* legal_mark  # stamp per key: legal for the seat to move
    cdef uint32_t* tried_mark  # stamp per key: a child of the current node has it
    cdef int* rep              # per key: the first legal action with it
    cdef double logs[LOG_TABLE]  # logs[i] = log(i): selection's log(avail), looked up
    cdef uint32_t stamp
    cdef int iterations, depth, depth_weight, tuned_weight, rollout_weight
    cdef double scale, scale_weight
    cdef bint guided
    cdef double c, widen, explore, explore_weight
    cdef GameState scratch
    # Tree reuse: `after` is the real state after the bot's last move (copy + apply), kept
    # only to recognise the next call as its direct successor; `next_root` the subtrees
    # of that move, one a seat; `used` the pool in use.
    cdef GameState after
    cdef bint reusable, reuse, peek
    cdef double stop
    cdef uint32_t* own_mark    # stamp per key: legal for the bot at the root of its search
    cdef bint mover_keys       # every tree follows a move by its mover's key (peek=1)
    cdef double bias
    cdef double chance, hands
    cdef bint opponents
    cdef int opponents_weight
    # MAST (rollout=2): per seat and key, the summed rewards and plays of this search;
    # `played` the (seat, key) cells of the iteration's moves.
    cdef bint mast
    cdef double epsilon
    cdef double* mast_sum
    cdef int* mast_n
    cdef int* played
    cdef int last_seat, used
    cdef int root[MAX_PLAYERS]
    cdef int next_root[MAX_PLAYERS]
    cdef readonly long long reused    # searches that started from a kept subtree
    cdef readonly long long walks     # iterations run, in all searches
    cdef bint own_budget              # the spec names `iterations`: no game default
    cdef Strategy rollout_bot  # None: uniform random rollouts
    cdef Strategy guide_bot    # picks the expansions; None: drawn uniformly
    cdef Strategy evaluator    # values the positions of cut-off rollouts; None: by standings
    cdef readonly long long searches  # decisions searched so far (forced ones are not)

    def __init__(self, **weights):
        self.own_budget = "iterations" in weights
        super().__init__(**weights)
        w = self.weights
        for name, value in w.items():
            if value != value or value in (float("inf"), float("-inf")):
                raise UserError(f"mcts: weight {name}={value} must be a finite number")
        # The pool holds the seats' roots and a move of each at the least.
        for name, lo in (("iterations", 1), ("nodes", 2 * MAX_PLAYERS), ("depth", -1)):
            if w[name] < lo or w[name] != int(w[name]) or w[name] > 2**30:
                raise UserError(f"mcts: weight {name}={w[name]:g} must be a whole number >= {lo}")
        if w["c"] < 0:
            raise UserError(f"mcts: weight c={w['c']:g} must be >= 0")
        if w["rollout"] not in (-1, 0, 1, 2):
            raise UserError(f"mcts: weight rollout={w['rollout']:g} must be 0 (random), 1 (heuristic), 2 (MAST) "
                            "or -1 (the game's)")
        if not 0 <= w["epsilon"] <= 1:
            raise UserError(f"mcts: weight epsilon={w['epsilon']:g} must be in [0, 1]")
        if not (0 <= w["explore"] <= 1 or w["explore"] == -1):
            raise UserError(f"mcts: weight explore={w['explore']:g} must be in [0, 1], or -1 for the game's")
        if w["scale"] < 0 and w["scale"] != -1:
            raise UserError(f"mcts: weight scale={w['scale']:g} must be >= 0, or -1 for the game's")
        if w["chance"] < 0:
            raise UserError(f"mcts: weight chance={w['chance']:g} must be >= 0")
        if w["tuned"] not in (-1, 0, 1):
            raise UserError(f"mcts: weight tuned={w['tuned']:g} must be 0 (default heuristic), 1 (tuned) "
                            "or -1 (the game's)")
        if w["reuse"] not in (0, 1):
            raise UserError(f"mcts: weight reuse={w['reuse']:g} must be 0 or 1")
        if w["peek"] not in (0, 1, 2):
            raise UserError(f"mcts: weight peek={w['peek']:g} must be 0 (fair), 1 (oracle) or 2 (root-only oracle)")
        if w["bias"] < 0:
            raise UserError(f"mcts: weight bias={w['bias']:g} must be >= 0")
        if not 0 <= w["stop"] <= 1:
            raise UserError(f"mcts: weight stop={w['stop']:g} must be between 0 (never) and 1 (when no other move can overtake)")
        if w["opponents"] not in (-1, 0, 1):
            raise UserError(f"mcts: weight opponents={w['opponents']:g} must be 0 (their own trees), 1 (the guide) "
                            "or -1 (the game's)")
        if w["opponents"] == 1 and w["guide"] == 0:
            raise UserError("mcts: weight opponents=1 plays the other seats by the guide, which guide=0 turns off")
        if w["hands"] < 0:
            raise UserError(f"mcts: weight hands={w['hands']:g} must be >= 0")
        if w["widen"] < 0:
            raise UserError(f"mcts: weight widen={w['widen']:g} must be >= 0")
        self.iterations = int(w["iterations"])
        self.depth_weight = int(w["depth"])
        self.tuned_weight = int(w["tuned"])
        self.depth = max(self.depth_weight, 0)
        self.scale_weight = w["scale"]
        self.scale = max(self.scale_weight, 0.0)
        self.c = w["c"]
        self.guided = w["guide"] != 0
        self.widen = w["widen"]
        self.explore_weight = w["explore"]
        self.explore = max(self.explore_weight, 0.0)
        self.capacity = int(w["nodes"])
        self.reuse = w["reuse"] != 0
        self.stop = w["stop"]
        self.peek = w["peek"] != 0
        self.mover_keys = w["peek"] == 1
        self.bias = w["bias"]
        self.chance = w["chance"]
        self.hands = w["hands"]
        self.opponents_weight = int(w["opponents"])
        self.opponents = self.opponents_weight == 1
        self.rollout_weight = int(w["rollout"])
        self.epsilon = w["epsilon"]
        self.reusable = False
        self.pool = <Node*>malloc(self.capacity * sizeof(Node))
        self.path = <int*>malloc(self.capacity * MAX_PLAYERS * sizeof(int))
        self.legal_mark = <uint32_t*>malloc(KEY_IDS * sizeof(uint32_t))
        self.tried_mark = <uint32_t*>malloc(KEY_IDS * sizeof(uint32_t))
        self.rep = <int*>malloc(KEY_IDS * sizeof(int))
        self.own_mark = <uint32_t*>malloc(KEY_IDS * sizeof(uint32_t))
        self.mast_sum = <double*>malloc(MAX_PLAYERS * KEY_IDS * sizeof(double))
        self.mast_n = <int*>malloc(MAX_PLAYERS * KEY_IDS * sizeof(int))
        self.played = <int*>malloc(MAX_PLAYED * sizeof(int))
        if not (self.pool and self.path and self.legal_mark and self.tried_mark and self.rep
                and self.mast_sum and self.mast_n and self.played and self.own_mark):
            raise MemoryError("mcts: cannot allocate the node pool")
        memset(self.legal_mark, 0, KEY_IDS * sizeof(uint32_t))
        memset(self.tried_mark, 0, KEY_IDS * sizeof(uint32_t))
        memset(self.own_mark, 0, KEY_IDS * sizeof(uint32_t))
        self.stamp = 0
        for i in range(1, LOG_TABLE):
            self.logs[i] = log(<double>i)
        self.logs[0] = 0.0

    def __dealloc__(self):
        free(self.pool)
        free(self.path)
        free(self.legal_mark)
        free(self.tried_mark)
        free(self.rep)
        free(self.own_mark)
        free(self.mast_sum)
        free(self.mast_n)
        free(self.played)

    cpdef prepare(self, GameState proto):
        if self.scratch is None or type(self.scratch) is not type(proto) or self.scratch.params is not proto.params:
            game = _game_name(proto)
            own = GAME_DEFAULTS.get(game, {})
            tuned = own.get("tuned", 0) if self.tuned_weight < 0 else self.tuned_weight
            # What may refuse this game comes first: a refused bind leaves the bot as it was.
            guide = _heuristic_for(game, tuned) if self.guided else None
            rollout = own.get("rollout", 1) if self.rollout_weight < 0 else self.rollout_weight
            self.rollout_bot = guide if rollout == 1 and self.guided else (
                _heuristic_for(game, tuned) if rollout == 1 else None)
            self.mast = rollout == 2
            self.guide_bot = guide
            self.scratch = proto.copy()
            self.after = proto.copy()
            # The manifest records the heuristic in use, as it does the budget.
            self.weights["tuned"] = float(tuned)
            self.weights["rollout"] = float(rollout)
            if not self.own_budget:
                self.iterations = self.default_budget(game, proto.n_players)
                # Readers of the budget (manifests, bench's iterations/s) see the one in use.
                self.weights["iterations"] = float(self.iterations)
            if self.depth_weight < 0:
                self.depth = _for_table(own.get("depth", 0), proto.n_players, 0)
                # A game's own cut-off is recorded, as the budget is: a run played before
                # the game had one (-1 then meant to the end) is not resumed with it.
                self.weights["depth"] = float(self.depth) if self.depth > 0 else -1.0
            if self.opponents_weight < 0:
                self.opponents = _for_table(own.get("opponents", 0), proto.n_players, 0) == 1 and self.guided
                # Recorded as the budget is: a run played before the model is not resumed with it.
                self.weights["opponents"] = float(self.opponents)
            if self.scale_weight < 0:
                self.scale = own.get("scale", 0.0)
            if self.explore_weight < 0:
                self.explore = own.get("explore", EXPLORE)
            # Random rollouts cut short are valued by the heuristic too, where it can.
            self.evaluator = None
            for bot in (self.rollout_bot, self.guide_bot, _heuristic_for(game)):
                if bot is not None and bot.evaluates(proto):
                    self.evaluator = bot
                    break
        self.reusable = False
        for bot in {id(b): b for b in (self.guide_bot, self.rollout_bot, self.evaluator)
                    if b is not None}.values():
            bot.bind(proto)

    @classmethod
    def default_budget(cls, game, players):
        """The iterations of `mcts` in `game` at `players` when the spec names none."""
        budget = GAME_DEFAULTS.get(game, {}).get("iterations", cls.WEIGHTS["iterations"])
        # A budget set by table size (scripts/budget_curve.py) names each size measured.
        return _for_table(budget, players, cls.WEIGHTS["iterations"])

    @classmethod
    def game_defaults(cls, game):
        """The weights whose default in `game` differs from WEIGHTS', for listings: a
        value by table size reads "35 (2 players), 20 (3 players)"."""
        own = dict(GAME_DEFAULTS.get(game, {}))
        for name, value in own.items():
            if isinstance(value, dict):
                own[name] = ", ".join(f"{v} ({n} player{'s' * (n != 1)})" for n, v in sorted(value.items()))
        return own

    cdef inline uint32_t next_stamp(self) noexcept nogil:
        self.stamp += 1
        if self.stamp == 0:
            # The stamps wrapped around: forget every old mark.
            memset(self.legal_mark, 0, KEY_IDS * sizeof(uint32_t))
            memset(self.tried_mark, 0, KEY_IDS * sizeof(uint32_t))
            memset(self.own_mark, 0, KEY_IDS * sizeof(uint32_t))
            self.stamp = 1
        return self.stamp

    cdef inline int key(self, GameState st, int action, int observer) except -1 nogil:
        cdef int k = st.action_key(action, observer)
        if k < 0 or k >= KEY_IDS:
            bad_key(k)
            return -1
        return k

    cdef inline int follow(self, int* cur, int q, int node) noexcept nogil:
        # Tree q's walk goes down to `node`.
        cur[q] += 1
        self.path[cur[q] * MAX_PLAYERS + q] = node
        return node

    cdef inline int child_with(self, int node, int key, int player, int* used) noexcept nogil:
        # The child of `node` with `key` played by `player`, created if there is none.
        # (Where seats' turns differ between worlds, two seats' moves under one node may
        # share a key: each is its own child, credited to its own seat.)
        cdef int child = self.pool[node].first_child
        cdef Node* nd
        while child >= 0:
            if self.pool[child].key == key and self.pool[child].player == player:
                return child
            child = self.pool[child].next_sibling
        child = used[0]
        used[0] += 1
        nd = &self.pool[child]
        nd.key = key
        nd.player = player
        nd.first_child = -1
        nd.next_sibling = self.pool[node].first_child
        nd.visits = 0
        nd.avail = 0
        nd.prior = 0.0
        nd.reward = 0.0
        self.pool[node].first_child = child
        return child

    cdef bint settled(self, int seat, uint32_t own, double lead) noexcept nogil:
        """Whether the most visited of the bot's legal root moves leads every other by
        more than `lead` visits (the iterations left: no search of that many more could
        choose otherwise)."""
        cdef int first = 0, second = 0, child = self.pool[self.root[seat]].first_child
        cdef Node* nd
        while child >= 0:
            nd = &self.pool[child]
            if nd.key >= 0 and nd.player == seat and self.own_mark[nd.key] == own:
                if nd.visits > first:
                    second = first
                    first = nd.visits
                elif nd.visits > second:
                    second = nd.visits
            child = nd.next_sibling
        return first > second + lead

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef int it, i, k, p, q, nl, nk, node, child, best, n_tried, used, steps, a, key, todo, left
        cdef int n_played = 0
        # (Locals: the walk's stores through self would make the compiler read them again.)
        cdef bint split_hands = self.hands > 0
        cdef bint modelled = self.opponents
        cdef bint mast = self.mast
        # A rollout of uniformly random moves for every seat is the game's play_out.
        cdef bint uniform_rollout = self.rollout_bot is None and not mast and self.forbid < 0
        cdef int nt = state.n_players
        cdef int cur[MAX_PLAYERS]   # each tree's depth in the walk (chance nodes count)
        cdef bint first
        cdef int buf[MAX_ACTIONS]
        cdef int allowed[MAX_ACTIONS]
        cdef int untried[MAX_ACTIONS]
        cdef int keys[MAX_ACTIONS]
        cdef int root_keys[MAX_ACTIONS]
        cdef const int* moves
        cdef double value, best_value
        cdef double reward[MAX_PLAYERS]
        cdef bint expanded, picked
        cdef uint32_t st, own
        cdef uint64_t held
        cdef Node* nd
        if n == 1:
            self.reusable = False
            return legal[0]
        if self.scratch is None:
            with gil:
                raise RuntimeError("MctsStrategy.prepare(state) was not called before choose")
        self.searches += 1
        todo = self.iterations
        if self.reusable and seat == self.last_seat and self.successor(state, seat, legal, n):
            # The bot's own last move led here: its subtrees already hold the visits of
            # the worlds searched then (a prior for this search), so fewer new ones do.
            self.reused += 1
            for q in range(nt):
                self.root[q] = self.next_root[q]
            # The bot's tree goes on below the outcome its move showed it (the real state's:
            # its own draw, a card turned up...). The other seats' outcomes are theirs:
            # their trees go on from the move, their decisions below it directly.
            k = state.outcome_key(seat) if self.chance > 0 else 0
            if k != 0:
                child = self.widened_child(self.root[seat], k, seat, self.chance, &self.used)
                if child >= 0:
                    self.root[seat] = child
            used = self.used
            todo = max(self.iterations - self.pool[self.root[seat]].visits, self.iterations // 4, 1)
        else:
            # A fresh pool: nodes 0..nt-1 are the roots of the seats' trees.
            for q in range(nt):
                nd = &self.pool[q]
                nd.key = -1
                nd.player = -1
                nd.first_child = -1
                nd.next_sibling = -1
                nd.visits = 0
                nd.avail = 0
                nd.prior = 0.0
                nd.reward = 0.0
                self.root[q] = q
            used = nt
        self.reusable = False
        self.walks += todo
        for q in range(nt):
            self.path[q] = self.root[q]
        own = self.next_stamp()
        for i in range(n):
            root_keys[i] = self.key(state, legal[i], seat)
            self.own_mark[root_keys[i]] = own
        if mast:
            memset(self.mast_sum, 0, nt * KEY_IDS * sizeof(double))
            memset(self.mast_n, 0, nt * KEY_IDS * sizeof(int))
        for it in range(todo):
            n_played = 0
            state.copy_into(self.scratch)
            if not self.peek:
                self.scratch.determinize(seat, rng)
            for q in range(nt):
                cur[q] = 0
            first = True
            p = self.scratch.current_player()
            # Selection and expansion, every tree in step.
            while p >= 0 and used + nt <= self.capacity:
                if first:
                    moves = legal      # the bot's own decision: the list it was given
                    nl = n
                else:
                    nl = self.scratch.legal_actions(buf)
                    moves = buf
                    if p == seat and self.forbid >= 0:
                        nl = drop_component(self.scratch, self.forbid, buf, nl, allowed)
                        moves = allowed
                if modelled and p != seat:
                    # Another seat plays the guide's move (the opponent model): its node is
                    # followed or added, and the walk goes on to the bot's next decision.
                    # (A forced move is not asked, as at the table.)
                    a = moves[0] if nl == 1 else self.guide_bot.choose(self.scratch, p, moves, nl, rng)
                    child = self.child_with(self.path[cur[p] * MAX_PLAYERS + p], self.key(self.scratch, a, p), p, &used)
                    expanded = False
                else:
                    # The moves as the seat to move sees them: one representative action a key.
                    st = self.next_stamp()
                    nk = 0
                    for i in range(nl):
                        # (The bot's own keys are the same in every world: worked out once.)
                        key = root_keys[i] if first else self.key(self.scratch, moves[i], p)
                        keys[i] = key
                        if self.legal_mark[key] != st:
                            self.legal_mark[key] = st
                            self.rep[key] = moves[i]
                            nk += 1
                    node = self.path[cur[p] * MAX_PLAYERS + p]
                    if split_hands and p != seat and used + nt < self.capacity:
                        # Another seat chooses knowing its own hand: its decisions hang below
                        # what it holds in this world, as its moves' keys show it.
                        held = 0
                        for i in range(nl):
                            if self.rep[keys[i]] == moves[i]:   # each key once
                                held += mix_key(keys[i])
                        child = self.widened_child(node, 1 + <int>(held % 0x3fffffff), p, self.hands, &used)
                        if child >= 0:
                            node = self.follow(cur, p, child)
                    n_tried = 0
                    best = -1
                    best_value = -1.0
                    child = self.pool[node].first_child
                    while child >= 0:
                        nd = &self.pool[child]
                        # (A node where seats' turns differ between worlds keeps the
                        # others' children too: only the mover's count; chance children
                        # are never chosen.)
                        if nd.key >= 0 and self.legal_mark[nd.key] == st and nd.player == p:
                            self.tried_mark[nd.key] = st
                            n_tried += 1
                            nd.avail += 1
                            value = nd.reward / nd.visits + self.c * sqrt(
                                (self.logs[nd.avail] if nd.avail < LOG_TABLE else log(<double>nd.avail)) / nd.visits)
                            if self.bias > 0:
                                value += self.bias * nd.prior / (nd.visits + 1)
                            if value > best_value:
                                best_value = value
                                best = child
                        child = nd.next_sibling
                    expanded = False
                    if n_tried < nk and (n_tried == 0 or self.widen == 0
                                         or n_tried < self.widen * sqrt(self.pool[node].visits + 1.0)):
                        # Expand one untried move: the one the guide picks among them (so a
                        # node's first children are the moves it rates best), or one drawn
                        # uniformly.
                        k = 0
                        for i in range(nl):
                            if self.tried_mark[keys[i]] != st:
                                self.tried_mark[keys[i]] = st
                                untried[k] = moves[i]
                                k += 1
                        picked = False
                        if k == 1:
                            a = untried[0]
                        elif (self.guide_bot is None
                              or (n_tried > 0 and self.explore > 0 and rng_uniform(rng) < self.explore)):
                            a = untried[rng_below(rng, k)]
                        else:
                            a = self.guide_bot.choose(self.scratch, p, untried, k, rng)
                            # A heuristic may answer with a move outside the list it was
                            # given (Enemy Chocolatier's stops when no purchase pays; Fabryka's
                            # ranks the whole hand, so it names a card already in the tree,
                            # or the twin of the card listed): a legal move stands for the
                            # move listed for its key (rep), and one not untried for one
                            # drawn uniformly (a move already in the tree would expand
                            # nothing, every time).
                            i = 0
                            while i < nl and moves[i] != a:
                                i += 1
                            if i < nl:
                                a = self.rep[keys[i]]
                            i = 0
                            while i < k and untried[i] != a:
                                i += 1
                            if i == k:
                                a = untried[rng_below(rng, k)]
                            else:
                                picked = True
                        child = self.child_with(node, self.key(self.scratch, a, p), p, &used)
                        self.pool[child].avail = 1
                        self.pool[child].prior = picked
                        expanded = True
                    if not expanded:
                        child = best
                        a = self.rep[self.pool[child].key]
                if mast and n_played < MAX_PLAYED:
                    self.played[n_played] = p * KEY_IDS + self.pool[child].key
                    n_played += 1
                # Every tree follows the move by what its seat sees of it.
                for q in range(nt):
                    if q == p:
                        self.follow(cur, q, child)
                    else:
                        # (The oracle tells apart in every tree what the mover knows it did.)
                        self.follow(cur, q, self.child_with(
                            self.path[cur[q] * MAX_PLAYERS + q],
                            self.key(self.scratch, a, p if self.mover_keys else q), p, &used))
                first = False
                p = self.scratch.apply(a)
                if expanded or used + nt > self.capacity:
                    break
                if self.chance == 0:
                    continue
                # Then by the outcome its seat saw of the move's chance, if it saw one:
                # its next decisions hang below that outcome, and only below what it saw
                # (another seat's private draw leaves its tree as it is).
                for q in range(nt):
                    k = self.scratch.outcome_key(q)
                    if k != 0:
                        child = self.widened_child(self.path[cur[q] * MAX_PLAYERS + q], k, q, self.chance, &used)
                        if child >= 0:
                            self.follow(cur, q, child)
            # Rollout.
            if uniform_rollout:
                # The game's own loop: these draws, its legal lists and moves inlined.
                p = self.scratch.play_out(rng, self.depth)
            else:
                steps = 0
                while p >= 0 and (self.depth == 0 or steps < self.depth):
                    nl = self.scratch.legal_actions(buf)
                    moves = buf
                    if p == seat and self.forbid >= 0:
                        nl = drop_component(self.scratch, self.forbid, buf, nl, allowed)
                        moves = allowed
                    if nl == 1:
                        a = moves[0]
                    elif self.rollout_bot is not None:
                        a = self.rollout_bot.choose(self.scratch, p, moves, nl, rng)
                    elif mast:
                        a = self.mast_move(p, moves, nl, rng, &n_played)
                    else:
                        a = moves[rng_below(rng, nl)]
                    p = self.scratch.apply(a)
                    steps += 1
            if p >= 0 and (self.evaluator is not None or self.scale > 0):
                value_rewards(self.scratch, self.evaluator, self.scale, reward)
            else:
                rewards(self.scratch, p < 0, reward)
            for i in range(n_played):
                self.mast_sum[self.played[i]] += reward[self.played[i] // KEY_IDS]
                self.mast_n[self.played[i]] += 1
            # Back-propagation: in every tree, each node scores for the seat that moved
            # (a chance node's visits count for the widening of the decisions below it).
            for q in range(nt):
                for i in range(1, cur[q] + 1):
                    nd = &self.pool[self.path[i * MAX_PLAYERS + q]]
                    nd.visits += 1
                    nd.reward += reward[nd.player]
            for q in range(nt):
                self.pool[self.root[q]].visits += 1
            left = todo - 1 - it
            # (The root's visits bound the leader's: most iterations skip the scan.)
            if (self.stop > 0 and self.pool[self.root[seat]].visits > self.stop * left
                    and self.settled(seat, own, self.stop * left)):
                self.walks -= left
                break
        # The most visited move of the bot's own tree; ties to the one expanded first. (A
        # kept subtree may also hold moves of other worlds: only the legal ones count.)
        # (A fresh stamp, not `own`: the stamps may have wrapped during the search.)
        st = self.next_stamp()
        for i in range(n):
            self.legal_mark[root_keys[i]] = st
        best = -1
        child = self.pool[self.root[seat]].first_child
        while child >= 0:
            nd = &self.pool[child]
            if nd.key >= 0 and nd.player == seat and self.legal_mark[nd.key] == st and nd.visits > 0 and (
                    best < 0 or nd.visits >= self.pool[best].visits):
                best = child
            child = nd.next_sibling
        # (best >= 0: every search expands a legal root move in its first iteration, as
        # the pool holds two nodes a seat and a kept tree at most half of it.)
        a = -1
        for i in range(n):
            if root_keys[i] == self.pool[best].key:
                a = legal[i]
                break
        if a < 0:
            with gil:
                raise RuntimeError("mcts: the chosen move is not in the legal list")
        if self.reuse and used < self.capacity // 2:
            self.keep(state, seat, a, used)
        return a

    cdef int mast_move(self, int p, const int* moves, int nl, Rng* rng, int* n_played) except -1 nogil:
        # MAST's rollout move for seat p: the legal move whose key scored p best so far
        # (a key p never played first: 2 beats any mean reward), or with probability
        # epsilon one drawn uniformly; its key joins the iteration's moves.
        cdef int i, key, best = 0, best_key = -1
        cdef int* cell_n = self.mast_n + p * KEY_IDS
        cdef double* cell_sum = self.mast_sum + p * KEY_IDS
        cdef double value, best_value = -1.0
        if self.epsilon > 0 and rng_uniform(rng) < self.epsilon:
            best = rng_below(rng, nl)
            best_key = self.key(self.scratch, moves[best], p)
        else:
            for i in range(nl):
                key = self.key(self.scratch, moves[i], p)
                value = cell_sum[key] / cell_n[key] if cell_n[key] > 0 else 2.0
                if value > best_value:
                    best_value = value
                    best = i
                    best_key = key
        if n_played[0] < MAX_PLAYED:
            self.played[n_played[0]] = p * KEY_IDS + best_key
            n_played[0] += 1
        return moves[best]

    cdef int keep(self, GameState state, int seat, int a, int used) except -1 nogil:
        # Keep each seat's subtree of the move `a` about to be played, for the next
        # decision if it is the bot's own again (`after`'s seat to move: the real game's).
        cdef int q, child, key
        for q in range(state.n_players):
            key = self.key(state, a, seat if self.mover_keys else q)
            child = self.pool[self.root[q]].first_child
            while child >= 0 and (self.pool[child].key != key or self.pool[child].player != seat):
                child = self.pool[child].next_sibling
            if child < 0:
                return 0
            self.next_root[q] = child
        state.copy_into(self.after)
        if self.after.apply(a) != seat:
            return 0
        self.used = used
        self.last_seat = seat
        self.reusable = True
        return 0

    cdef int widened_child(self, int node, int outcome, int seat, double width, int* used) noexcept nogil:
        # The chance child of `node` for `outcome` in `seat`'s tree; created if there is
        # none while the node has fewer than width * sqrt(visits + 1) (an outcome met
        # again and again, as a die's, soon has its own; most of a deal's thousands of
        # hands share the node's own children), else -1.
        cdef int child = self.pool[node].first_child
        cdef int n = 0
        cdef int key = -1 - outcome
        while child >= 0:
            if self.pool[child].key == key:
                return child
            n += self.pool[child].key < -1
            child = self.pool[child].next_sibling
        if n >= width * sqrt(self.pool[node].visits + 1.0):
            return -1
        return self.child_with(node, key, seat, used)

    cdef bint successor(self, GameState state, int seat, const int* legal, int n) noexcept nogil:
        # Whether `state` is `after` as far as the bot can tell: the same seat to move,
        # standings and legal list (a Python-level caller may ask about any position; the
        # batch loop's next call after a move that leaves the bot to move is its successor).
        cdef int buf[MAX_ACTIONS]
        cdef int allowed[MAX_ACTIONS]
        cdef const int* moves = buf
        cdef int i, q, m
        if self.after.current_player() != seat or state.n_players != self.after.n_players:
            return False
        for q in range(state.n_players):
            if state.standing(q) != self.after.standing(q):
                return False
        m = self.after.legal_actions(buf)
        if self.forbid >= 0:
            m = drop_component(self.after, self.forbid, buf, m, allowed)
            moves = allowed
        if m != n:
            return False
        for i in range(n):
            if moves[i] != legal[i]:
                return False
        return True


    def root_children(self, int seat):
        """After a search: the moves of `seat`'s tree root as (key, visits, mean reward,
        avail), most recently expanded first (tests, inspection)."""
        out = []
        child = self.pool[self.root[seat]].first_child
        while child >= 0:
            nd = &self.pool[child]
            out.append((nd.key, nd.visits, nd.reward / nd.visits if nd.visits else 0.0, nd.avail))
            child = nd.next_sibling
        return out

    def tree(self, int seat):
        """After a search: `seat`'s tree, depth first from its root, as rows (depth, key,
        player, visits, parent row or -1); a chance node's key is -1 - the outcome its
        seat saw (tests, inspection)."""
        cdef Node* nd
        cdef int node, child
        rows = []
        stack = [(self.root[seat], 0, -1)]
        while stack:
            node, depth, parent = stack.pop()
            nd = &self.pool[node]
            rows.append((depth, nd.key, nd.player, nd.visits, parent))
            me = len(rows) - 1
            child = nd.first_child
            while child >= 0:
                stack.append((child, depth + 1, me))
                child = self.pool[child].next_sibling
        return rows


cdef inline uint64_t mix_key(int key) noexcept nogil:
    # A key spread over 64 bits (splitmix64's finalizer): summed over a set of keys, a
    # hash of the set whatever its order.
    cdef uint64_t z = <uint64_t>key * 0x9e3779b97f4a7c15ULL
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL
    return z ^ (z >> 31)


cdef int bad_key(int k) except -1 nogil:
    # Out of line: a block that takes the GIL would keep MctsStrategy.key from inlining.
    with gil:
        raise ValueError(f"mcts handles action keys in [0, {KEY_IDS}), not {k}")


cdef void value_rewards(GameState s, Strategy bot, double scale, double* out) noexcept nogil:
    # A rollout cut short, scored by the bot's evaluation of each seat's position (no
    # bot: by the game's standings): with
    # scale > 0, each seat's reward is 1.1 / (1 + exp(-(its value - the best other's) /
    # scale)), so that a lead counts by its size (a rank at a cut-off says little in a
    # long game); with scale 0, the seats are ranked as a finished game's are.
    cdef double v[MAX_PLAYERS]
    cdef int ranks[MAX_PLAYERS]
    cdef int n = s.n_players, p, q, winners = 0
    cdef double other
    for p in range(n):
        v[p] = bot.evaluate(s, p) if bot is not None else s.standing(p)
    if scale > 0 and n > 1:
        for p in range(n):
            other = -1e300
            for q in range(n):
                if q != p and v[q] > other:
                    other = v[q]
            out[p] = 1.1 / (1.0 + exp(-(v[p] - other) / scale))
        return
    for p in range(n):
        ranks[p] = 1
        for q in range(n):
            ranks[p] += v[q] > v[p]
    for p in range(n):
        winners += ranks[p] == 1
    for p in range(n):
        out[p] = (1.0 / winners) if ranks[p] == 1 else 0.0
        if n > 1:
            out[p] += 0.1 * (n - ranks[p]) / (n - 1)


def _game_name(GameState proto):
    from simcore.registry import games
    for name, spec in games().items():
        if spec.state_cls is type(proto):
            return name
    return None


def _for_table(value, players, missing):
    """A GAME_DEFAULTS value, or, when it is set by table size, its value at `players`
    (`missing` for a size it does not name)."""
    return value.get(players, missing) if isinstance(value, dict) else value


def _heuristic_for(game, tuned=False):
    """The game's own `heuristic` bot (default weights, or the tuned ones it ships), or
    None if it has none."""
    import strategies
    if game is None:
        return None
    if tuned:
        if "tuned" not in strategies.bundled_weights(game, "heuristic"):
            raise UserError(f"mcts: weight tuned=1: no tuned heuristic weights are shipped for {game}")
        return strategies.build(game, "heuristic(weights=tuned)")
    cls = strategies.available(game).get("heuristic")
    return None if cls is None else cls()


STRATEGIES = (MctsStrategy,)
