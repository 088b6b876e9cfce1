"""Targets as people ship them: what a callable or class declares about itself.

A user writes the declaration next to the code::

    from orthoverify.conformance.declare import declare

    @declare(domain=["unit pivot"], batches=True, modes=["vmap", "second_ff"], dtypes=["bfloat16"])
    def my_householder(U): ...

or, for a class, ``@declare(...)`` on the class (its no-argument instance is the target). What is
declared and fails is a defect; a mode, dtype or lifecycle step that is not declared and does not
run is "not applicable". The declaration is attached as ``__orthoverify__``; named domains are
looked up in :data:`DOMAINS` (never evaluated).

``orthoverify.conformance.declare``, the place the README documents, re-exports :func:`declare`;
the module lives here, below every measure, because the target's process reads declarations. A
target named by a string is loaded only in its own process (see :mod:`~orthoverify.isolation.isolate`):
there its declaration is turned into plain data (:func:`declaration_data`), and the verifier rebuilds it
from that data (:func:`declaration_from_data`), checking every field as untrusted input. What is
code (a domain predicate, a second entry point, a right_inverse, a module factory) stays in the
target's process: the verifier holds stand-ins that reach it through that process only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import torch

from orthoverify.errors import InputError, OrthoverifyError

F = TypeVar("F")

Params = Mapping[str, np.ndarray]
"""A parameter point: each parameter of a kind's signature by name, a float64 array (what a
domain predicate reads, and what the kinds draw)."""


class Named(Protocol):
    """A loaded target as far as its declaration is concerned: its name and its callable."""

    @property
    def spec(self) -> str: ...

    @property
    def fn(self) -> Callable[..., Any]: ...


def _diagonal_pm1(p: Params) -> str | None:
    x = next(iter(p.values()))
    d = np.diagonal(np.asarray(x))
    return None if bool(np.all(np.abs(d) == 1.0)) else "the diagonal is not in {-1, +1}"


def _unit_pivot(p: Params) -> str | None:
    x = np.asarray(next(iter(p.values())))
    m = min(x.shape[-2:])
    return None if all(x[j, j] == 1.0 for j in range(m)) else "a pivot x_jj is not 1"


def _nonzero_pivot(p: Params) -> str | None:
    x = np.asarray(next(iter(p.values())))
    m = min(x.shape[-2:])
    return None if all(x[j, j] != 0.0 for j in range(m)) else "a zero pivot x_jj"


def _columns_norm_ge_1(p: Params) -> str | None:
    x = np.asarray(next(iter(p.values())))
    return None if bool(np.all(np.linalg.norm(x, axis=0) >= 1.0)) else "a column has norm < 1"


def _norm_le_1(p: Params) -> str | None:
    x = np.asarray(next(iter(p.values())))
    return None if float(np.max(np.abs(x))) <= 1.0 else "an entry has |x_ij| > 1"


DOMAINS: dict[str, Callable[[Params], str | None]] = {
    "diagonal in {-1,+1}": _diagonal_pm1,
    "unit pivot": _unit_pivot,
    "nonzero pivot": _nonzero_pivot,
    "columns of norm >= 1": _columns_norm_ge_1,
    "entries in [-1, 1]": _norm_le_1,
}
"""Named domains a declaration may use (each reads the first parameter): why a point is outside."""

MODES = ("vmap", "second_ff", "second_fr", "second_rr")
DTYPE_NAMES = ("float16", "bfloat16", "float32", "float64")
LIFECYCLE = ("weight_decay", "state_dict", "dtype_cast", "to_device")
GROUPS = ("O(n)", "SO(n)")
"""The groups a map of a real orthogonal kind may declare it reaches (``group=``)."""


@dataclass(frozen=True)
class Declaration:
    """What a target says it supports. Only what is declared can be a defect when it fails."""

    domain: tuple[str | Callable[[Params], str | None], ...] = ()
    """Named domains (keys of DOMAINS) or predicates returning why a point is outside (None: inside)."""
    batches: bool | None = None
    """True: takes parameters stacked on a leading axis; False: one set at a time."""
    right_inverse: Callable[[torch.Tensor], torch.Tensor] | None = None
    """W -> parameters with f(parameters) = W (for coverage)."""
    also: Callable[..., torch.Tensor] | None = None
    """A second entry point with the kind's signature that must return the same matrix (a flow's
    forward(x) applied to I, say, against its matrix())."""
    also_name: str = "second entry point"
    modes: tuple[str, ...] = ()
    """Differentiation modes and transforms declared supported: vmap, second_ff, second_fr, second_rr."""
    dtypes: tuple[str, ...] = ()
    """Dtypes declared supported beyond float32/float64 (float16, bfloat16); for a module also the casts."""
    module: Callable[[int], torch.nn.Module] | None = None
    """A fresh module of size n from its own initialisation (torch's global generator), for the
    lifecycle checks."""
    weight: Callable[[torch.nn.Module], torch.Tensor] | None = None
    """How to read the module's matrix (default: ``module.weight``)."""
    sigma: tuple[float, float] | None = None
    """The weight's singular values lie in [lo, hi] (instead of: the weight is orthogonal)."""
    lifecycle: tuple[str, ...] = ("weight_decay", "state_dict", "dtype_cast", "to_device")
    """The lifecycle steps the module declares it survives."""
    group: str | None = None
    """The group the map claims (a key of GROUPS): with "SO(n)" every output must have det +1."""

    def domain_check(self) -> Callable[[Params], str | None] | None:
        """One predicate for every declared domain (None when nothing is declared)."""
        if not self.domain:
            return None
        preds = [DOMAINS[d] if isinstance(d, str) else d for d in self.domain]

        def outside(p: Params) -> str | None:
            for pred in preds:
                why = pred(p)
                if why is not None:
                    return why
            return None

        return outside

    def listing(self) -> dict[str, Any]:
        """The declaration as JSON data (for ``validate --list`` and the result)."""
        return {
            "domain": [d if isinstance(d, str) else getattr(d, "__name__", "predicate") for d in self.domain],
            "batches": self.batches,
            "right_inverse": self.right_inverse is not None,
            "second_entry_point": self.also_name if self.also is not None else None,
            "modes": list(self.modes),
            "dtypes": list(self.dtypes),
            "module": self.module is not None,
            "weight_invariant": (
                f"singular values in [{self.sigma[0]:g}, {self.sigma[1]:g}]" if self.sigma else "orthogonal"
            )
            if self.module is not None
            else None,
            "lifecycle": list(self.lifecycle) if self.module is not None else [],
            **({"group": self.group} if self.group is not None else {}),
        }


def make_declaration(
    *,
    domain: Sequence[str | Callable[[Params], str | None]] = (),
    batches: bool | None = None,
    right_inverse: Callable[[torch.Tensor], torch.Tensor] | None = None,
    also: Callable[..., torch.Tensor] | None = None,
    also_name: str = "second entry point",
    modes: Sequence[str] = (),
    dtypes: Sequence[str] = (),
    module: Callable[[int], torch.nn.Module] | None = None,
    weight: Callable[[torch.nn.Module], torch.Tensor] | None = None,
    sigma: tuple[float, float] | None = None,
    lifecycle: Sequence[str] = LIFECYCLE,
    group: str | None = None,
) -> Declaration:
    """A checked :class:`Declaration` (unknown names raise :class:`OrthoverifyError` naming them)."""
    for name, given, known in (
        ("domain", [d for d in domain if isinstance(d, str)], tuple(DOMAINS)),
        ("modes", list(modes), MODES),
        ("dtypes", list(dtypes), DTYPE_NAMES),
        ("lifecycle", list(lifecycle), LIFECYCLE),
    ):
        bad = [g for g in given if g not in known]
        if bad:
            raise OrthoverifyError(f"unknown {name} {bad} in a declaration; choose from {', '.join(known)}")
    if group is not None and group not in GROUPS:
        raise OrthoverifyError(f"unknown group {group!r} in a declaration; choose from {', '.join(GROUPS)}")
    if sigma is not None and not (0.0 <= sigma[0] <= sigma[1]):
        raise OrthoverifyError(f"sigma must be a range 0 <= lo <= hi, got {sigma}")
    return Declaration(
        domain=tuple(domain),
        batches=batches,
        right_inverse=right_inverse,
        also=also,
        also_name=also_name,
        modes=tuple(modes),
        dtypes=tuple(dtypes),
        module=module,
        weight=weight,
        sigma=sigma,
        lifecycle=tuple(lifecycle),
        group=group,
    )


def declare(**kw: Any) -> Callable[[F], F]:
    """Decorator: attach a declaration (see :func:`make_declaration` for the keywords) to a
    callable or class, where ``validate`` finds it."""
    d = make_declaration(**kw)

    def attach(obj: F) -> F:
        obj.__orthoverify__ = d  # type: ignore[attr-defined]
        return obj

    return attach


ADAPTER_DECLARATIONS: dict[str, Declaration] = {}
"""Declarations of built-in adapters, by adapter name (filled by adapters_libs)."""


def declaration_of(target: Named) -> Declaration | None:
    """The declaration of a loaded target: on its callable (or class), else its adapter's."""
    d = getattr(target.fn, "__orthoverify__", None)
    if isinstance(d, Declaration):
        return d
    return ADAPTER_DECLARATIONS.get(target.spec)


# ------------------------------------------------------------------------------ across the process boundary
def _plain(x: Any) -> Any:
    """``x`` as JSON data (strings, numbers, booleans, None, lists of them); anything else as a
    marker naming its type, which the verifier refuses (its repr is never sent)."""
    if x is None or isinstance(x, (str, bool, int, float)):
        return x
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return {"unsupported": type(x).__name__}


def _code(x: Any) -> Any:
    """A field that holds code: whether it is there (true/false); what is not code, as data."""
    return x is not None if x is None or callable(x) else _plain(x)


def declaration_data(target: Named) -> dict[str, Any] | None:
    """The declaration of a target loaded in this process (the target's own) as plain data for the
    verifier: names, numbers and flags; code is named or flagged, never sent. None: no declaration."""
    try:
        d = declaration_of(target)  # a target's attribute lookup is its own code: it may raise anything
        if d is None:
            return None
        dom = d.domain
        named = [x for x in dom if not callable(x)] if isinstance(dom, (list, tuple)) else dom
        preds = [x for x in dom if callable(x)] if isinstance(dom, (list, tuple)) else []
        also_name = d.also_name if callable(d.also) else None
        return {
            "domain": _plain(named),
            "domain_predicates": [_plain(getattr(p, "__name__", "predicate")) for p in preds],
            "batches": _plain(d.batches),
            "right_inverse": _code(d.right_inverse),
            "also": _plain(also_name) if d.also is None or callable(d.also) else _plain(d.also),
            "modes": _plain(d.modes),
            "dtypes": _plain(d.dtypes),
            "module": _code(d.module),
            "weight": _code(d.weight),
            "sigma": _plain(d.sigma),
            "lifecycle": _plain(d.lifecycle),
            "group": _plain(d.group),
        }
    except Exception as exc:  # a forged object: the verifier refuses it with this reason
        return {"unreadable": f"{type(exc).__name__}: {exc}"[:300]}


class InTargetProcess:
    """Stands, in the verifier's process, for code a declaration holds in the target's process (a
    module factory, a weight reader): the scenarios that call it run there (the lifecycle operations of
    :mod:`~orthoverify.isolation.program`), and return the raw weights they produced."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.__name__ = what

    def __call__(self, *_: Any) -> Any:
        raise OrthoverifyError(f"the declared {self.what} is the target's code: it runs only in the target's process")


_LIMIT = 64
"""At most this many names in a list field of a declaration's data."""


def _malformed(name: str, why: str, got: Any) -> InputError:
    shown = json.dumps(got)  # JSON data (decoded, never evaluated): shown, cut short
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    return InputError(f"the target's declaration is malformed: field {name!r} {why}, got {shown}")


def _names_field(data: dict[str, Any], name: str, known: tuple[str, ...] | None) -> tuple[str, ...]:
    v = data.get(name, [])
    if not isinstance(v, list) or len(v) > _LIMIT or not all(isinstance(x, str) and 0 < len(x) <= 200 for x in v):
        raise _malformed(name, f"must be a list of at most {_LIMIT} names", v)
    bad = [x for x in v if known is not None and x not in known]
    if bad:
        raise _malformed(name, f"has unknown name(s) {bad} (choose from {', '.join(known or ())})", v)
    return tuple(v)


def _flag_field(data: dict[str, Any], name: str, *, optional: bool = False) -> bool | None:
    v = data.get(name, None if optional else False)
    if not isinstance(v, bool) and not (optional and v is None):
        raise _malformed(name, "must be true or false" + (" or null" if optional else ""), v)
    return v


def declaration_from_data(
    data: Any,
    predicate: Callable[[int, str], Callable[[Params], str | None]],
    also: Callable[..., torch.Tensor],
    right_inverse: Callable[[torch.Tensor], torch.Tensor],
) -> Declaration:
    """The declaration a target's process sent as data (see :func:`declaration_data`), every field
    checked as untrusted input: a malformed one raises :class:`~orthoverify.errors.InputError`
    naming the field. Code stays where the target runs: ``predicate(i, name)`` stands for its
    i-th domain predicate, ``also`` and ``right_inverse`` for its declared second entry point and
    inverse (each reached through the target's process); a module factory or weight reader is an
    :class:`InTargetProcess` stand-in (the lifecycle scenarios run there)."""
    if not isinstance(data, dict):
        raise _malformed("(the declaration)", "must be a JSON object", data)
    if "unreadable" in data:
        raise InputError(f"the target's declaration cannot be read in its process: {str(data['unreadable'])[:300]}")
    fields = ("domain", "domain_predicates", "batches", "right_inverse", "also", "modes", "dtypes", "module", "weight")
    unknown = sorted(str(k) for k in data if k not in (*fields, "sigma", "lifecycle", "group"))
    if unknown:
        raise _malformed(unknown[0], "is not a field of a declaration", data[unknown[0]])
    domain = _names_field(data, "domain", tuple(DOMAINS))
    preds = _names_field(data, "domain_predicates", None)
    modes = _names_field(data, "modes", MODES)
    dtypes = _names_field(data, "dtypes", DTYPE_NAMES)
    lifecycle = _names_field(data, "lifecycle", LIFECYCLE) if "lifecycle" in data else LIFECYCLE
    batches = _flag_field(data, "batches", optional=True)
    has_inverse, has_module, has_weight = (bool(_flag_field(data, k)) for k in ("right_inverse", "module", "weight"))
    also_name = data.get("also")
    if also_name is not None and not (isinstance(also_name, str) and 0 < len(also_name) <= 200):
        raise _malformed("also", "must be the name of the second entry point (a string) or null", also_name)
    sigma = data.get("sigma")
    if sigma is not None:
        if not (
            isinstance(sigma, list)
            and len(sigma) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in sigma)
            and 0.0 <= sigma[0] <= sigma[1]
        ):
            raise _malformed("sigma", "must be a range [lo, hi] of finite numbers with 0 <= lo <= hi", sigma)
        sigma = (float(sigma[0]), float(sigma[1]))
    group = data.get("group")
    if group is not None and group not in GROUPS:
        raise _malformed("group", f"must be one of {', '.join(GROUPS)} or null", group)
    return make_declaration(
        domain=[*domain, *(predicate(i, name) for i, name in enumerate(preds))],
        batches=batches,
        right_inverse=right_inverse if has_inverse else None,
        also=also if also_name is not None else None,
        also_name=also_name if also_name is not None else "second entry point",
        modes=modes,
        dtypes=dtypes,
        module=InTargetProcess("module factory") if has_module else None,
        weight=InTargetProcess("weight reader") if has_weight else None,
        sigma=sigma,
        lifecycle=lifecycle,
        group=group,
    )


KEYWORDS: dict[str, str] = {
    "domain": f"named domains ({', '.join(DOMAINS)}) or predicates params -> reason | None; points outside are skipped",
    "batches": "True: takes parameters stacked on a leading axis; False: one set at a time",
    "right_inverse": "W -> parameters with f(parameters) = W; coverage goes through it",
    "also": "a second entry point with the kind's signature that must return the same matrix (also_name: its name)",
    "modes": f"declared supported ({', '.join(MODES)}): a failure there is a defect, not 'not applicable'",
    "dtypes": f"declared supported beyond float32/float64 ({', '.join(DTYPE_NAMES[:2])}): adds low_precision, "
    "gradient_<dtype> and jvp_<dtype>",
    "module": "n -> a fresh torch.nn.Module from its own initialisation (lifecycle checks)",
    "weight": "module -> its matrix (default: module.weight)",
    "sigma": "(lo, hi): the weight's singular values lie there (default: the weight is orthogonal)",
    "lifecycle": f"the lifecycle steps the module declares it survives (default: all of {', '.join(LIFECYCLE)})",
    "group": f"the group the map claims ({', '.join(GROUPS)}; real orthogonal kinds): SO(n) adds the det check",
}
"""The keywords of :func:`declare`, each with what it means."""
