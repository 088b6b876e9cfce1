"""The check names: a fixed vocabulary, and the names results recorded before it.

A check's name says what kind of evidence it is (which template made it, in which arithmetic),
not what the claim is about: the claim's statement and the check's quantity say that. A name is
a word of :data:`VOCABULARY`, or, where one claim has two checks of the same kind, the word and a
short qualifier after a colon (``float:inverse``). The templates give the word by default.

Results written before the vocabulary carry the old names (144 of them for 219 checks). Each
claim family declares its claims' former names beside its claims (``FORMERLY``, old name -> name
now, per claim id; the registry reads it), so that a recorded counterexample still replays
(:func:`current_name`), and each renamed check keeps the seed its old name gave it
(:func:`seed_name`): the same cases, the same evidence, under the new name. The engine keeps the
vocabulary, no family's names.
"""

from __future__ import annotations

from collections.abc import Mapping

VOCABULARY: Mapping[str, str] = {
    "symbolic": "identities in free symbols that SymPy reduces to zero",
    "exact": "the statement at exact rational points (SymPy)",
    "float": "test ratios over generated float cases (and their 50-digit re-examination)",
    "float_edge": "test ratios on the inputs the computation is fragile at (near-aligned, extreme magnitudes)",
    "all_arithmetics": "one test ratio over cases in SymPy, at 50 digits and in float",
    "high_precision": "a computation at 50 digits only (a certificate)",
    "search": "a Hypothesis search (or an enumerated hunt) for a breaking case",
    "exhaustive": "every instance of a finite set (signs, permutations, branches, indices)",
    "rigorous": "interval (ball) arithmetic that proves a bound",
    "converse": "the 'only if' direction of a characterisation",
    "witness": "hand-built or enumerated cases that break (or certify) the statement",
    "nonexistence": "a symbolic proof that no solution exists (Groebner basis)",
    "symbolic_derivative": "a gradient formula against SymPy's derivative in free symbols",
    "exact_derivative": "a gradient formula against SymPy's exact derivative at rational points",
    "finite_differences": "a gradient formula against central differences at 50 digits",
    "autograd": "a gradient formula against torch autograd through the definition",
    "custom_backward": "a hand-written backward (torch.autograd.Function) against autograd",
    "search_autograd": "a Hypothesis search for the inputs where a formula and autograd disagree most",
    "count": "stated counts (parameters, flops, rows) against counted ones over a grid",
    "line_by_line": "a transcribed proof judged line by line in exact arithmetic",
    "exact_jacobian_rank": "a Jacobian's rank in exact arithmetic",
    "jacobian_rank": "a Jacobian's numerical rank in float",
    "jacobian_rank_50_digits": "a Jacobian's numerical rank at 50 digits",
    "measured": "a measurement (time, flops, drift over many updates)",
    "trajectory": "a recurrent network run over many steps in float",
}
"""Every check-name word, with what a check of that name measures."""


def word(name: str) -> str:
    """The vocabulary word of a check name (the name without its qualifier)."""
    return name.partition(":")[0]


def in_vocabulary(name: str) -> bool:
    """Whether ``name`` is a vocabulary word, or one with a qualifier of lowercase letters and digits."""
    w, colon, qualifier = name.partition(":")
    ok_qualifier = not colon or (qualifier.replace("_", "").isalnum() and qualifier.islower())
    return w in VOCABULARY and ok_qualifier


def current_name(formerly: Mapping[str, str], recorded: str) -> str:
    """The name now of the check that recorded ``recorded`` (an old name or a new one), given its
    claim's table of former names (old name -> name now)."""
    return formerly.get(recorded, recorded)


def seed_name(formerly: Mapping[str, str], check: str) -> str:
    """The name a check's seed is derived from, given its claim's table of former names: its old
    name when it was renamed (so a renamed check draws the cases it drew before), else its name."""
    return next((old for old, new in formerly.items() if new == check), check)
