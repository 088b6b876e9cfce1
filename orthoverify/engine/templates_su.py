"""Claim templates added for the svd and unitary families (issue 29), in their own module so that
:mod:`orthoverify.engine.templates` stays one file of the shared vocabulary.

* :func:`symbolic_identities`: identities in free symbols at each of the profile's symbolic sizes,
  the loop over sizes and the exact backend owned by the engine, the claim writing one size's
  identities.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from orthoverify.backends import Backend, get_backend
from orthoverify.engine.checks import Identity, RunContext, SymbolicCheck

SizeIdentities = Callable[[Backend, int], Iterable[Identity]]
"""One size's identities on SymPy's exact backend: (label, expression that must vanish) each."""


def symbolic_identities(
    name: str,
    identities: SizeIdentities,
    *,
    size: str = "n",
    sizes: Callable[[RunContext], Sequence[int]] = lambda ctx: ctx.profile.symbolic_sizes,
    quantity_name: str = "exact difference",
) -> SymbolicCheck:
    """A :class:`~orthoverify.engine.checks.SymbolicCheck` of ``identities(b, n)`` for each n of
    ``sizes`` (the profile's symbolic sizes by default), each label prefixed ``"{size}={n}: "``
    so that a failure names the size it was found at."""

    def build(ctx: RunContext) -> Iterator[Identity]:
        b = get_backend("sympy")
        for n in sizes(ctx):
            for label, expr in identities(b, n):
                yield f"{size}={n}: {label}", expr

    return SymbolicCheck(name, build, quantity_name)
