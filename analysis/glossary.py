"""The words the reports, the commands and the manual use, each defined once: the
manual's glossary page (docs/reference/glossary.md) is written from these entries
(`python -m analysis.glossary > docs/reference/glossary.md`; a test keeps the page equal
to them), `chocosim help TERM` prints one, and every HTML report ends with the entries of
the words it uses (a report is one self-contained file, so it carries the definitions)."""
from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

__all__ = ["Term", "TERMS", "find", "suggest", "markdown", "used_in", "footer", "with_footer"]


@dataclass(frozen=True)
class Term:
    name: str  # as the glossary heads it
    aliases: tuple[str, ...]  # what `chocosim help` also answers to (lower case)
    pattern: str  # a regular expression (case-insensitive) finding the word in a report's text
    definition: str  # plain text; `code` in backquotes

    @property
    def key(self) -> str:
        """The name `chocosim help` lists: the first alias."""
        return self.aliases[0]


TERMS: tuple[Term, ...] = (
    Term("1st player, 2nd player, …", ("1st player", "2nd player", "player", "position", "turn position", "seat"),
         r"\b\d+(st|nd|rd|th) player\b",
         "Turn positions: the 1st player acts first at the start of the game, the 2nd next, and so on. "
         "The results' `position` column counts from 0 (0 is the 1st player). A seat is where a bot "
         "sits; with the default seating (`rotate`) every bot plays every turn position equally often."),
    Term("fair share", ("fair share", "advantage"), r"\bfair share\b|\bover the fair\b|\bagainst a fair\b",
         "The win rate every turn position would have in a fair game: 1 / players (50% at 2 players). "
         "A position's advantage is its win rate minus the fair share."),
    Term("percentage points and score points", ("percentage points", "score points", "points", "pp"),
         r"\bpercentage points?\b|\bscore points?\b",
         "A difference of win rates is in percentage points: 53.6% against a fair 50.0% is an advantage "
         "of +3.6 percentage points, and `--margin 1` and `--precision 0.5` are in percentage points. "
         "A score bonus is in the game's own score points."),
    Term("mirror match", ("mirror match", "mirror"), r"\bmirror",
         "A run with the same bot in every seat. Its win rates by turn position can only come from turn "
         "order, so balance verdicts are measured in mirror matches. A mirror in which a position almost "
         "never (or almost always) wins is flagged as degenerate play: more likely a bot that fails in "
         "that seat than a fact about the game."),
    Term("rung, ladder", ("rung", "ladder", "skill ladder"), r"\brungs?\b|\bladder\b",
         "A rung is one bot of the skill ladder that `balance` and `skill` climb, from the weakest "
         "(random play) to the strongest (the search bot at growing budgets). A verdict holds for "
         "players of a stated skill: the strongest rung's."),
    Term("meeting", ("meeting", "meetings"), r"\bmeetings?\b",
         "Games between two adjacent rungs, seats alternating, which place the rungs on one rating scale "
         "(Elo, by a Bradley–Terry model). Meetings never enter a position verdict."),
    Term("converged, still moves with skill", ("converged", "moves with skill", "undecided"),
         r"\bconverged?\b|\bconvergence\b|\bmoves? with skill\b|\bmoving with skill\b",
         "A verdict has converged when the rung below the strongest agrees with it within the margin at "
         "every turn position; it still moves with skill when a change between the two is significant "
         "and lies beyond the margin; otherwise it is not yet decided."),
    Term("agreement", ("agreement", "agree"), r"\bagree(ment|ing|s)?\b",
         "The smallest margin within which the two strongest rungs are shown to agree at every turn "
         "position (every 95% interval of their paired change inside it): \"the two strongest rungs "
         "agree within ±2.4 percentage points\". A verdict has converged once the agreement is within "
         "the margin."),
    Term("margin", ("margin", "equivalence margin"), r"\bmargin\b",
         "The equivalence margin (`--margin`, default 1 percentage point): two rates closer than this "
         "count as the same, and a game is balanced when every position's interval lies within it of "
         "the fair share."),
    Term("score bonus (komi)", ("komi", "score bonus", "bonus", "compensation"),
         r"\bkomi\b|\bscore bonus\b|\bcompensation\b",
         "Score points added at the end of the game to a turn position to equalise the positions, as "
         "komi does in Go; the house rule `compensation.points` of every game. A game won during play "
         "rather than on score cannot be balanced by one."),
    Term("knob, fair point", ("knob", "fair point"), r"\bknobs?\b|\bfair point",
         "A knob is a param the game declares as acting on turn order (Fabryka's `collect_count`, Enemy "
         "Chocolatier's `start_money.step`). Its fair point is the value, found by a sweep, at which a "
         "position's advantage changes sign."),
    Term("house rule, param", ("house rule", "param", "rules"), r"\bhouse rules?\b|\bparams?\b",
         "Every number of the rules is a param, with its source: `rulebook`, or `assumed` where the "
         "rulebook does not print it. A house rule changes params (`--set`, `--rules`)."),
    Term("paired comparison (common random numbers)", ("paired", "common random numbers", "crn"),
         r"\bpaired\b|\bcommon random numbers\b|\bcommon seeds\b",
         "Two runs of the same game, table size, seating and seed play game i from the same deal, so a "
         "house rule's effect is measured game by game, with narrower intervals than independent runs "
         "give."),
    Term("95% interval (CI)", ("ci", "interval", "confidence interval"), r"\b95% (CI|interval)",
         "The range that holds the true value in 95% of experiments. Every rate has one (Wilson), every "
         "difference too."),
    Term("q value (BH)", ("q", "q value", "bh", "benjamini-hochberg", "fdr"),
         r"\bq \(BH\)|\bq value|\bq [<=]|Benjamini|\bfalse-discovery",
         "A p value adjusted for testing many things at once (Benjamini–Hochberg, BH): the findings called "
         "significant at q < 0.05 hold at most 5% false discoveries among them."),
    Term("Elo", ("elo", "rating"), r"\bElo\b",
         "A rating scale of playing strength: a bot rated 400 Elo above another has 10 times its odds of "
         "winning a game between the two."),
    Term("grid point", ("grid point", "sweep"), r"\bgrid points?\b",
         "One combination of param values (and lineup) of a sweep; every grid point plays the same game "
         "seeds."),
    Term("confidence sequence", ("confidence sequence", "precision"), r"\bconfidence sequence|--precision",
         "An interval valid at every look at the data, so a run may stop as soon as it is narrow enough "
         "(`--precision`)."),
    Term("run directory, part, tally", ("run directory", "part", "tally"), r"\brun director(y|ies)\b",
         "Where a run keeps its games: a manifest, one part per finished chunk of games and each part's "
         "tally (its sums)."),
    Term("checked build", ("checked build", "checked"), r"\bchecked build\b",
         "chocosim compiled with `CHOCOSIM_CHECKED=1`: the engine asserts every move's legality and every "
         "invariant of the game after it; several times slower, for the tests."),
)


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").replace("–", "-").split())


def find(word: str) -> Term | None:
    """The entry a word names (its name or an alias, any case), or None."""
    w = _normal(word)
    for said in (w, w.removesuffix("s")):  # "rungs" is the entry "rung"
        found = next((t for t in TERMS if said == _normal(t.name) or said in t.aliases), None)
        if found is not None:
            return found
    return None


def suggest(word: str) -> list[str]:
    """Entries' keys close to a word that names none."""
    keys = {a: t.key for t in TERMS for a in t.aliases}
    return list(dict.fromkeys(keys[a] for a in difflib.get_close_matches(_normal(word), list(keys), n=3)))


def markdown() -> str:
    """The manual's glossary page."""
    out = ["# Glossary", "",
           "The words the reports and this manual use, in the sense they use them. `chocosim help TERM` "
           "prints an entry; every HTML report ends with the entries of the words it uses.", ""]
    for t in TERMS:
        out += [f"**{t.name}**", f":   {t.definition}", ""]
    return "\n".join(out)


def _visible(page: str) -> str:
    """A page's words as a reader sees them."""
    page = re.sub(r"<(script|style|svg|footer)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def used_in(page: str) -> list[Term]:
    """The entries whose word appears in an HTML page's visible text, in glossary order."""
    text = _visible(page)
    return [t for t in TERMS if re.search(t.pattern, text, flags=re.I)]


def _html_definition(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def footer(terms: list[Term]) -> str:
    """The report's footer: the definitions of the words it uses and where the rest are."""
    items = "\n".join(f'  <dt style="font-weight:600">{html.escape(t.name)}</dt>'
                      f'<dd style="margin:0 0 .5rem 1.5rem">{_html_definition(t.definition)}</dd>' for t in terms)
    return ('<footer id="glossary">\n<h2>Words used in this report</h2>\n<dl class="glossary">\n'
            f"{items}\n</dl>\n<p class=\"note\">Every term: <code>chocosim help</code>, or the Glossary page of "
            "the manual (<code>docs/reference/glossary.md</code>).</p>\n</footer>\n")


def with_footer(page: str) -> str:
    """A full HTML page with the glossary footer of the words it uses before </body>."""
    at = page.rfind("</body>")
    if at < 0:
        return page
    return page[:at] + footer(used_in(page)) + page[at:]


if __name__ == "__main__":
    print(markdown())
