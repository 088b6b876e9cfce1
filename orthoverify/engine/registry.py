"""The claim registry: claims collected from modules, selected by id or glob.

A claims module exposes ``CLAIMS``, a list of :class:`~orthoverify.engine.model.Claim` (and may
expose ``PAPER_INFO``, its paper, and ``FORMERLY``, its checks' names before the check-name
vocabulary: claim id -> {old name: name now}). A
registry is named by the modules it imports, so that worker processes can rebuild exactly
the same registry from that tuple of names. The engine names no family of its own: the caller
says which modules to register (orthoverify's command line and pytest plugin pass
``orthoverify.claims.MODULES``).
"""

from __future__ import annotations

import fnmatch
import importlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence

from orthoverify.engine.check_names import current_name, seed_name
from orthoverify.engine.model import Claim, Paper
from orthoverify.errors import RegistryError

EXTRA_ENV = "ORTHOVERIFY_EXTRA_CLAIMS"
"""Environment variable naming extra claims modules (comma-separated) for the command line."""


def with_extra_modules(modules: Sequence[str]) -> tuple[str, ...]:
    """``modules`` plus any named in ``$ORTHOVERIFY_EXTRA_CLAIMS``; those are
    importable from the working directory, as ``validate``'s targets are (and as ``python -m``
    makes them): the working directory goes first on ``sys.path`` (a spawned worker inherits it)."""
    extra = tuple(m.strip() for m in os.environ.get(EXTRA_ENV, "").split(",") if m.strip())
    if extra and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    base = tuple(modules)
    return base + tuple(m for m in extra if m not in base)


class Registry:
    """Claims by id, in registration order."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = tuple(modules)
        self._claims: dict[str, Claim] = {}
        self.papers: dict[str, Paper] = {}
        """The source papers of the registered families, by paper key (``PAPER_INFO`` of each module)."""
        self.formerly: dict[str, Mapping[str, str]] = {}
        """Per claim id, its checks' names before the vocabulary -> names now (``FORMERLY`` of each module)."""
        for name in self.modules:
            try:
                module = importlib.import_module(name)
            except ImportError as exc:
                raise RegistryError(f"cannot import claims module {name}: {exc}") from exc
            claims = getattr(module, "CLAIMS", None)
            if claims is None:
                raise RegistryError(f"claims module {name} has no CLAIMS list")
            for claim in claims:
                self.add(claim)
            paper = getattr(module, "PAPER_INFO", None)
            if isinstance(paper, Paper):
                self.papers.setdefault(paper.key, paper)
            for claim_id, names in (getattr(module, "FORMERLY", None) or {}).items():
                self.formerly[claim_id] = dict(names)
        self._check_formerly()
        for claim in self._claims.values():
            if claim.corrects is not None and claim.corrects not in self._claims:
                raise RegistryError(f"{claim.id} corrects {claim.corrects}, which is not registered")

    def _check_formerly(self) -> None:
        """Every former name belongs to a registered claim and leads to one of its checks, and no
        former name is a check's name now (a new result's names pass through unchanged)."""
        for claim_id, names in self.formerly.items():
            if claim_id not in self._claims:
                raise RegistryError(f"FORMERLY names {claim_id}, which is not registered")
            now = {c.name for c in self._claims[claim_id].checks}
            unknown = sorted(set(names.values()) - now)
            if unknown:
                raise RegistryError(f"FORMERLY of {claim_id} renames checks to {unknown}, which it does not have")
            if set(names) & now:
                raise RegistryError(f"FORMERLY of {claim_id}: {sorted(set(names) & now)} are check names now")
            if len(set(names.values())) != len(names):
                raise RegistryError(f"FORMERLY of {claim_id} gives two old names to one check")

    def current_name(self, claim_id: str, recorded: str) -> str:
        """The name now of the check of ``claim_id`` that recorded ``recorded`` (an old name or a new one)."""
        return current_name(self.formerly.get(claim_id, {}), recorded)

    def seed_name(self, claim_id: str, check: str) -> str:
        """The name the seed of ``claim_id``'s check ``check`` is derived from (its old name when renamed)."""
        return seed_name(self.formerly.get(claim_id, {}), check)

    def add(self, claim: Claim) -> None:
        if claim.id in self._claims:
            raise RegistryError(f"claim id {claim.id} is registered twice")
        self._claims[claim.id] = claim

    def __getitem__(self, claim_id: str) -> Claim:
        try:
            return self._claims[claim_id]
        except KeyError:
            raise RegistryError(f"no claim with id {claim_id!r}") from None

    def __contains__(self, claim_id: object) -> bool:
        return claim_id in self._claims

    def __iter__(self) -> Iterator[Claim]:
        return iter(self._claims.values())

    def __len__(self) -> int:
        return len(self._claims)

    def ids(self) -> list[str]:
        return list(self._claims)

    def select(self, patterns: Sequence[str] | None) -> list[Claim]:
        """Claims whose id matches any pattern (an exact id or a shell glob), in registry order.

        Every pattern must match at least one claim: a typo is an error, not an empty run.
        """
        if not patterns:
            return list(self._claims.values())
        chosen: set[str] = set()
        for pat in patterns:
            hits = [cid for cid in self._claims if cid == pat or fnmatch.fnmatchcase(cid, pat)]
            if not hits:
                raise RegistryError(f"no claim matches {pat!r} (see `orthoverify list`)")
            chosen.update(hits)
        return [c for cid, c in self._claims.items() if cid in chosen]


_CACHE: dict[tuple[str, ...], Registry] = {}


def get_registry(modules: Sequence[str]) -> Registry:
    """The registry for ``modules``, built once per process."""
    key = tuple(modules)
    if key not in _CACHE:
        _CACHE[key] = Registry(key)
    return _CACHE[key]
