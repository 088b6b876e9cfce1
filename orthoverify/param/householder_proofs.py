"""Mhammedi et al. (2017), App. A (proof of Theorem 2) and App. B (derivation of Algorithm 1), line by line.

Every displayed statement is transcribed as exact SymPy matrix algebra twice: as printed, and with the
minimal repair of its typos (:data:`TYPOS`). SymPy matrices refuse ill-typed products, sums and Hadamard
products (``sympy.matrices.exceptions.ShapeError``), so a line that cannot be typed says so instead of
being broadcast into a number. Each :class:`ProofLine` names the key of the reference quantity it should
equal; :func:`theorem2_reference` and :func:`appendix_b_reference` compute those quantities from the
definitions alone (the true derivatives by exact differentiation in a symbol ``eps``), and :func:`judge`
returns ``"ill-typed"``, ``"wrong"`` or ``"equal"``.

Notation of the printed texts: ``'`` transpose, ``o`` Hadamard product, ``Cbar = dL/dC``, ``C~ = T'^-1 U'Cbar``,
``h~ = T^-1 U'h``, ``B = striu(J) + I/2``, ``v_{i,j} = U_{i,j}``, ``[p]`` Iverson bracket; indices are 1-based.
Lines that hold "for 1 <= k <= m" evaluate to the m x 1 column of their values over k.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import sympy
from sympy import ImmutableMatrix, Rational
from sympy.matrices.exceptions import ShapeError as SympyShapeError
from sympy.matrices.immutable import ImmutableDenseMatrix as Mat

from orthoverify.backends.sympy_backend import expr_is_zero
from orthoverify.errors import DomainError, DTypeError, ShapeError, ZeroVectorError

__all__ = [
    "TYPOS",
    "Judgement",
    "ProofLine",
    "Typo",
    "appendix_b_lines",
    "appendix_b_reference",
    "audit",
    "judge",
    "theorem2_proof_lines",
    "theorem2_reference",
]

Verdict = Literal["ill-typed", "wrong", "equal"]


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Typo:
    """One typo of the paper: where it is, the printed fragment and its minimal repair."""

    where: str
    printed: str
    repaired: str
    note: str = ""


@dataclass(frozen=True)
class ProofLine:
    """One displayed statement: its value (``evaluate``) should equal the reference quantity ``expect``.

    ``printed`` is the paper's text; ``repairs`` names the :data:`TYPOS` applied to it (``text`` shows the
    repaired line). ``evaluate`` raises SymPy's ``ShapeError`` when the line is ill-typed.
    """

    label: str
    where: str
    printed: str
    evaluate: Callable[[], Any]
    expect: str = ""
    repairs: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The reference key the value is compared with."""
        return self.expect or self.label

    @property
    def text(self) -> str:
        """The line as evaluated: ``printed`` with its repairs applied."""
        out = self.printed
        for r in self.repairs:
            out = out.replace(TYPOS[r].printed, TYPOS[r].repaired)
        return out


@dataclass(frozen=True)
class Judgement:
    """The verdict on one line: ``ill-typed`` (ShapeError), ``wrong`` (a different value) or ``equal``."""

    label: str
    verdict: Verdict
    detail: str = ""
    value: Any = None
    expected: Any = None


_PA = "App. A, proof of Thm 2"
_PB = "App. B"

TYPOS: dict[str, Typo] = {
    "proof.tr3.cbar": Typo(
        f"{_PA}, 3rd display of Tr(Cbar' dC) (short notations), dh term",
        "Tr((C~' - C~'U')dh)",
        "Tr((Cbar' - C~'U')dh)",
        "C~' is 1 x m, C~'U' is 1 x n: the difference is ill-typed",
    ),
    "proof.tr3.htilde_cbar": Typo(
        f"{_PA}, 3rd display of Tr(Cbar' dC), 2nd term",
        "- Tr(h~C~' dU)",
        "- Tr(h~Cbar' dU)",
        "h~C~' is m x m, dU is n x m",
    ),
    "proof.tr5.ctilde_h": Typo(
        f"{_PA}, 5th display of Tr(Cbar' dC) (after transposing), 3rd term",
        "- Tr(C~'h' dU)",
        "- Tr(C~h' dU)",
        "C~'h' is (1 x m)(1 x n): ill-typed unless m = 1",
    ),
    "proof.tr5.ctilde_htilde": Typo(
        f"{_PA}, 5th display of Tr(Cbar' dC), 4th term",
        "((C~'h~') o B)",
        "((C~h~') o B)",
        "C~'h~' is (1 x m)(1 x m): ill-typed unless m = 1",
    ),
    "proof.tr6.ctilde_h": Typo(
        f"{_PA}, factorised display of Tr(Cbar' dC)",
        "+ C~'h' -",
        "+ C~h' -",
        "as in the 5th display",
    ),
    "proof.tr6.bracket": Typo(
        f"{_PA}, factorised display of Tr(Cbar' dC), bracket",
        "[(h~C~') o B +",
        "[(C~h~') o B +",
        "well-typed but a different value (m >= 2); the 5th display has (C~h~') o B",
    ),
    "proof.ubar.ctilde_htilde": Typo(
        f"{_PA}, final Ubar",
        "(C~'h') o B]",
        "(C~h~') o B]",
        "C~'h' is ill-typed (m >= 2) or 1 x n (m = 1), never m x m",
    ),
    "proof.ubar.cbar_htilde": Typo(
        f"{_PA}, final Ubar",
        "- Cbar'h' -",
        "- Cbar h~' -",
        "Cbar'h' is (1 x n)(1 x n)",
    ),
    "proof.hbar.cbar": Typo(
        f"{_PA}, final hbar",
        "hbar = Cbar' - UC~",
        "hbar = Cbar - UC~",
        "Cbar' is 1 x n, UC~ is n x 1",
    ),
    "appb.eq18.lhs": Typo(
        f"{_PB}, chain (18)-(19): lines after the first",
        "t_{k,k} h~_k + sum_{j=k+1}^m t_{k,j} h~_j =",
        "t_{k,k} h~_k =",
        "the lines after the first have moved sum_{j>k} t_{k,j} h~_j to the right: they equal t_{k,k} h~_k",
    ),
    "appb.eq18.limits": Typo(
        f"{_PB}, eq. 18, second sum",
        "sum_{r=k+1}^m v_{r,k} sum_{j=k+1}^r",
        "sum_{r=k+1}^n v_{r,k} sum_{j=k+1}^{min(r,m)}",
        "exchanging sum_{j=k+1}^m sum_{r=j}^n gives r up to n; the rows r > m are dropped as printed",
    ),
    "appb.eq22.lhs": Typo(
        f"{_PB}, chain (22)-(23): lines after the first",
        "t_{k,k} C~_k + sum_{j=1}^{k-1} t_{j,k} C~_j =",
        "t_{k,k} C~_k =",
        "as for (18): the lines after the first equal t_{k,k} C~_k",
    ),
    "appb.dldu_col.g": Typo(
        f"{_PB}, closing column formula",
        "sum_{j=1}^{k-1} C~_j U_{*,j}",
        "sum_{j=1}^{k} C~_j U_{*,j}",
        "the elementwise formula just above has sum_{j=1}^k; Alg. 1 updates g (line 13) before line 14",
    ),
}


# --------------------------------------------------------------------------- helpers
def _mat(x: Any, name: str) -> Mat:
    if not isinstance(x, sympy.MatrixBase):
        raise ShapeError(f"{name} must be a SymPy Matrix, got {type(x).__name__}")
    if any(sympy.sympify(e).has(sympy.Float) for e in x):
        raise DTypeError(f"{name} has Float entries: the transcriptions are compared exactly (use Rational)")
    return ImmutableMatrix(x)


def _inputs(u: Any, h: Any, cbar: Any, du: Any = None, dh: Any = None) -> tuple[Mat, Mat, Mat, Mat, Mat]:
    """Checked immutable copies: U n x m (1 <= m <= n-1, nonzero columns), h, Cbar, dh n x 1, dU n x m."""
    uu = _mat(u, "U")
    n, m = uu.shape
    if not 1 <= m <= n - 1:
        raise DomainError(f"U is {n} x {m}: Theorem 2 needs 1 <= m <= n - 1")
    for j in range(m):
        if uu[:, j].is_zero_matrix:
            raise ZeroVectorError(f"column {j + 1} of U is zero: T = B o (U'U) is singular")
    out = [uu]
    for name, x, shape in (("h", h, (n, 1)), ("Cbar", cbar, (n, 1)), ("dU", du, (n, m)), ("dh", dh, (n, 1))):
        if x is None:
            out.append(sympy.zeros(*shape).as_immutable())
            continue
        xx = _mat(x, name)
        if xx.shape != shape:
            raise ShapeError(f"{name} must be {shape[0]} x {shape[1]}, got {xx.shape[0]} x {xx.shape[1]}")
        out.append(xx)
    return out[0], out[1], out[2], out[3], out[4]


def _eq9(u: Mat) -> None:
    m = u.shape[1]
    for j in range(m):
        for i in range(j):
            if u[i, j] != 0:
                raise DomainError(f"U[{i + 1},{j + 1}] = {u[i, j]} but eq. 9 needs column j zero above row j")


def _t_def(u: Mat) -> Mat:
    """``T = striu(U'U) + diag(U'U)/2`` (eq. 12), entry by entry."""
    g = u.T * u
    m = g.shape[0]
    return Mat(m, m, lambda i, j: g[i, j] if i < j else (g[i, j] / 2 if i == j else 0))


def _bmat(m: int) -> Mat:
    """``B = striu(J_m) + I_m / 2``."""
    return Mat(m, m, lambda i, j: 1 if i < j else (Rational(1, 2) if i == j else 0))


def _s(x: Any) -> Any:
    """The entry of a 1 x 1 matrix (the paper's scalars ``U'_{*,k} U_{*,k}`` and the like)."""
    if isinstance(x, sympy.MatrixBase):
        if x.shape != (1, 1):
            raise SympyShapeError(f"a {x.shape[0]} x {x.shape[1]} matrix used as a scalar")
        return x[0, 0]
    return x


def _plus(a: Callable[[], Any], b: Callable[[], Any]) -> Callable[[], Any]:
    return lambda: a() + b()


def _tr(x: Any) -> Any:
    return x.trace()


def _htilde(u: Mat, h: Mat) -> Mat:
    return _t_def(u).upper_triangular_solve(u.T * h)


def _ctilde(u: Mat, cbar: Mat) -> Mat:
    return _t_def(u).T.lower_triangular_solve(u.T * cbar)


def _c_def(u: Any, h: Any) -> Any:
    """``C = (I - U T^-1 U') h`` from the definitions (works with entries in ``eps``)."""
    return h - u * _t_def(u).upper_triangular_solve(u.T * h)


def _directional(f: Callable[[Any, Any], Any], u: Mat, h: Mat, du: Mat, dh: Mat) -> Mat:
    """``d/d eps f(U + eps dU, h + eps dh)`` at eps = 0, exactly."""
    eps = sympy.Dummy("eps")
    val = f(u + eps * du, h + eps * dh)
    return Mat(val.diff(eps).subs(eps, 0).applyfunc(sympy.cancel))


@functools.lru_cache(maxsize=64)
def _true_gradients(u: Mat, h: Mat, cbar: Mat) -> tuple[Mat, Mat]:
    """``(dL/dU, dL/dh)`` for ``L = Cbar'C``, one exact directional derivative per entry (cached)."""
    n, m = u.shape
    zu, zh = sympy.zeros(n, m), sympy.zeros(n, 1)
    gu = sympy.zeros(n, m)
    for i in range(n):
        for j in range(m):
            e = sympy.zeros(n, m)
            e[i, j] = 1
            gu[i, j] = _s(cbar.T * _directional(_c_def, u, h, Mat(e), Mat(zh)))
    gh = sympy.zeros(n, 1)
    for i in range(n):
        e = sympy.zeros(n, 1)
        e[i] = 1
        gh[i] = _s(cbar.T * _directional(_c_def, u, h, Mat(zu), Mat(e)))
    return Mat(gu), Mat(gh)


def _active(corrected: bool, repairs: Iterable[str] | None, prefix: str) -> frozenset[str]:
    ids = {t for t in TYPOS if t.startswith(prefix)}
    if corrected and repairs is not None:
        raise ValueError("pass either corrected=True or a subset of repairs, not both")
    chosen = ids if corrected else set(repairs or ())
    unknown = chosen - ids
    if unknown:
        raise ValueError(f"unknown repairs {sorted(unknown)}; known: {sorted(ids)}")
    return frozenset(chosen)


# --------------------------------------------------------------------------- judging
def _equal(a: Any, b: Any) -> tuple[bool, str]:
    a_mat, b_mat = isinstance(a, sympy.MatrixBase), isinstance(b, sympy.MatrixBase)
    if a_mat != b_mat:
        return False, "a matrix where a scalar is expected, or the reverse"
    if a_mat:
        if a.shape != b.shape:
            return False, f"shape {a.shape} where {b.shape} is expected"
        bad = [(i, j) for i in range(a.rows) for j in range(a.cols) if not expr_is_zero(a[i, j] - b[i, j])]
        return (not bad), (f"differs at (1-based) {[(i + 1, j + 1) for i, j in bad]}" if bad else "")
    ok = expr_is_zero(sympy.sympify(a) - sympy.sympify(b))
    return ok, ("" if ok else f"{a} != {b}")


def judge(line: ProofLine, reference: Mapping[str, Any]) -> Judgement:
    """Evaluate ``line`` and compare it exactly with ``reference[line.key]``."""
    expected = reference[line.key]
    try:
        value = line.evaluate()
    except SympyShapeError as e:
        return Judgement(line.label, "ill-typed", str(e), None, expected)
    ok, detail = _equal(value, expected)
    return Judgement(line.label, "equal" if ok else "wrong", detail, value, expected)


def audit(lines: Iterable[ProofLine], reference: Mapping[str, Any]) -> dict[str, Verdict]:
    """``{label: verdict}`` for every line."""
    return {ln.label: judge(ln, reference).verdict for ln in lines}


# --------------------------------------------------------------------------- App. A
def theorem2_reference(u: Any, h: Any, cbar: Any, du: Any, dh: Any) -> dict[str, Any]:
    """The true quantities of the proof of Theorem 2, from the definitions only.

    ``dc``, ``dt`` are directional derivatives of ``C = (I - U T^-1 U')h`` and of ``T`` (eq. 12) along
    ``(dU, dh)``; ``dl_du``, ``dl_dh`` the gradients of ``L = Cbar'C`` entry by entry; ``tr_cbar_dc =
    Cbar'dC`` and its split ``tr_hbar_dh + tr_ubar_du``; ``trace_hadamard``, ``trace_transpose`` the
    left-hand sides of the two trace identities at the proof's instances.
    """
    uu, hh, cb, dd, dhh = _inputs(u, h, cbar, du, dh)
    dc = _directional(_c_def, uu, hh, dd, dhh)
    dt = _directional(lambda a, _b: _t_def(a), uu, hh, dd, dhh)
    gu, gh = _true_gradients(uu, hh, cb)
    ht, ct = _htilde(uu, hh), _ctilde(uu, cb)
    x = dd.T * uu + uu.T * dd
    return {
        "t": _t_def(uu),
        "c": _c_def(uu, hh),
        "dc": dc,
        "dt": dt,
        "tr_cbar_dc": _s(cb.T * dc),
        "tr_hbar_dh": _s(gh.T * dhh),
        "tr_ubar_du": _tr(gu.T * dd),
        "dl_du": gu,
        "dl_dh": gh,
        "trace_hadamard": _tr(ht * ct.T * _bmat(uu.shape[1]).multiply_elementwise(x)),
        "trace_transpose": _tr(hh * ct.T * dd.T),
    }


def theorem2_proof_lines(
    u: Any, h: Any, cbar: Any, du: Any, dh: Any, *, corrected: bool, repairs: Collection[str] | None = None
) -> list[ProofLine]:
    """The displayed statements of the proof of Theorem 2 (App. A), in order.

    ``corrected=True`` applies every ``proof.*`` repair of :data:`TYPOS`; ``repairs`` applies only those
    given (to show each one is needed). Compare with :func:`theorem2_reference` through :func:`judge`.
    """
    uu, hh, cb, dd, dhh = _inputs(u, h, cbar, du, dh)
    fix = _active(corrected, repairs, "proof.")
    n, m = uu.shape
    eye = sympy.eye(n)
    bm = _bmat(m)
    t = _t_def(uu)
    ti = t.inv()
    ht = ti * uu.T * hh  # h~
    ct = ti.T * uu.T * cb  # C~
    x = dd.T * uu + uu.T * dd  # dU'U + U'dU

    def pick(typo: str, printed: Callable[[], Any], repaired: Callable[[], Any]) -> Any:
        return repaired() if typo in fix else printed()

    def had(a: Any, b: Any) -> Any:
        return a.multiply_elementwise(b)

    # each display of Tr(Cbar' dC): its dh term and its dU terms, evaluated separately
    def dh_cbar() -> Any:  # displays 1 and 2
        return _tr(cb.T * (eye - uu * ti * uu.T) * dhh)

    def dh_split() -> Any:  # displays 4 to 6
        return _tr((cb.T - ct.T * uu.T) * dhh)

    def du1() -> Any:
        return (
            -_tr(cb.T * dd * ti * uu.T * hh)
            - _tr(cb.T * uu * ti * dd.T * hh)
            + _tr(cb.T * uu * ti * had(bm, x) * ti * uu.T * hh)
        )

    def du2() -> Any:
        return (
            -_tr(ti * uu.T * hh * cb.T * dd)
            - _tr(hh * cb.T * uu * ti * dd.T)
            + _tr(ti * uu.T * hh * cb.T * uu * ti * had(bm, x))
        )

    def dh3() -> Any:
        return _tr((pick("proof.tr3.cbar", lambda: ct.T, lambda: cb.T) - ct.T * uu.T) * dhh)

    def du3() -> Any:
        second = pick("proof.tr3.htilde_cbar", lambda: ht * ct.T * dd, lambda: ht * cb.T * dd)
        return -_tr(second) - _tr(hh * ct.T * dd.T) + _tr(ht * ct.T * had(bm, x))

    def du4() -> Any:
        return (
            -_tr(ht * cb.T * dd)
            - _tr(hh * ct.T * dd.T)
            + _tr(had(ht * ct.T, bm.T) * dd.T * uu)
            + _tr(had(ht * ct.T, bm.T) * uu.T * dd)
        )

    def du5() -> Any:
        third = pick("proof.tr5.ctilde_h", lambda: ct.T * hh.T * dd, lambda: ct * hh.T * dd)
        fourth = pick("proof.tr5.ctilde_htilde", lambda: ct.T * ht.T, lambda: ct * ht.T)
        return (
            -_tr(ht * cb.T * dd) - _tr(third) + _tr(had(fourth, bm) * uu.T * dd) + _tr(had(ht * ct.T, bm.T) * uu.T * dd)
        )

    def du6() -> Any:
        ch = pick("proof.tr6.ctilde_h", lambda: ct.T * hh.T, lambda: ct * hh.T)
        br = pick("proof.tr6.bracket", lambda: ht * ct.T, lambda: ct * ht.T)
        return -_tr((ht * cb.T + ch - (had(br, bm) + had(ht * ct.T, bm.T)) * uu.T) * dd)

    def ubar() -> Any:
        s = pick("proof.ubar.ctilde_htilde", lambda: ct.T * hh.T, lambda: ct * ht.T)
        v = pick("proof.ubar.cbar_htilde", lambda: cb.T * hh.T, lambda: cb * ht.T)
        return uu * (had(ht * ct.T, bm.T) + had(s, bm)) - v - hh * ct.T

    def hbar() -> Any:
        return pick("proof.hbar.cbar", lambda: cb.T, lambda: cb) - uu * ct

    def lemma1() -> Any:
        gu, gh = _true_gradients(uu, hh, cb)  # Abar, Bbar by their definitions [dC/dA]' dL/dC
        return _tr(gu.T * dd) + _tr(gh.T * dhh)

    lines: list[ProofLine] = [
        ProofLine(
            "proof.lemma1",
            "App. A, Lemma 1 (A = U, B = h)",
            "Tr(Cbar' dC) = Tr(Abar' dA) + Tr(Bbar' dB)",
            lemma1,
            "tr_cbar_dc",
        ),
        ProofLine("proof.eq16", f"{_PA}, eq. 16", "T = B o (U'U)", lambda: had(bm, uu.T * uu), "t"),
        ProofLine(
            "proof.dc",
            f"{_PA}, perturbation of C",
            "dC = (I - UT^-1U')dh - dU T^-1 U'h - U T^-1 dU'h + U T^-1 dT T^-1 U'h",
            lambda: (
                (eye - uu * ti * uu.T) * dhh
                - dd * ti * uu.T * hh
                - uu * ti * dd.T * hh
                + uu * ti * had(bm, x) * ti * uu.T * hh
            ),
            "dc",
        ),
        ProofLine("proof.dt", f"{_PA}, perturbation of T", "dT = B o (dU'U + U'dU)", lambda: had(bm, x), "dt"),
    ]
    Part = Callable[[], Any]
    displays: list[tuple[str, str, str, str, Part, Part, tuple[str, ...]]] = [
        (
            "proof.tr1",
            "1st display of Tr(Cbar' dC) (dT substituted)",
            "Tr(Cbar'(I - UT^-1U')dh)",
            "- Tr(Cbar' dU T^-1U'h) - Tr(Cbar' U T^-1 dU'h) + Tr(Cbar' U T^-1 (B o (dU'U + U'dU)) T^-1 U'h)",
            dh_cbar,
            du1,
            (),
        ),
        (
            "proof.tr2",
            "2nd display of Tr(Cbar' dC) (cyclic permutations)",
            "Tr(Cbar'(I - UT^-1U')dh)",
            "- Tr(T^-1U'h Cbar' dU) - Tr(h Cbar' U T^-1 dU') + Tr(T^-1U'h Cbar' U T^-1 (B o (dU'U + U'dU)))",
            dh_cbar,
            du2,
            (),
        ),
        (
            "proof.tr3",
            "3rd display of Tr(Cbar' dC) (short notations C~, h~)",
            "Tr((C~' - C~'U')dh)",
            "- Tr(h~C~' dU) - Tr(hC~' dU') + Tr(h~C~'(B o (dU'U + U'dU)))",
            dh3,
            du3,
            ("proof.tr3.cbar", "proof.tr3.htilde_cbar"),
        ),
        (
            "proof.tr4",
            "4th display of Tr(Cbar' dC) (trace identities applied)",
            "Tr((Cbar' - C~'U')dh)",
            "- Tr(h~Cbar' dU) - Tr(hC~' dU') + Tr((h~C~' o B') dU'U) + Tr((h~C~' o B') U'dU)",
            dh_split,
            du4,
            (),
        ),
        (
            "proof.tr5",
            "5th display of Tr(Cbar' dC) (3rd and 4th terms transposed)",
            "Tr((Cbar' - C~'U')dh)",
            "- Tr(h~Cbar' dU) - Tr(C~'h' dU) + Tr(((C~'h~') o B) U'dU) + Tr(((h~C~') o B') U'dU)",
            dh_split,
            du5,
            ("proof.tr5.ctilde_h", "proof.tr5.ctilde_htilde"),
        ),
        (
            "proof.tr6",
            "6th display of Tr(Cbar' dC) (factorised by dU)",
            "Tr((Cbar' - C~'U')dh)",
            "- Tr((h~Cbar' + C~'h' - [(h~C~') o B + (h~C~') o B']U')dU)",
            dh_split,
            du6,
            ("proof.tr6.ctilde_h", "proof.tr6.bracket"),
        ),
    ]
    for label, where, dh_text, du_text, dh_fn, du_fn, typos in displays:
        on = tuple(r for r in typos if r in fix)
        lines += [
            ProofLine(
                label,
                f"{_PA}, {where}",
                f"Tr(Cbar' dC) = {dh_text} {du_text}",
                _plus(dh_fn, du_fn),
                "tr_cbar_dc",
                on,
            ),
            ProofLine(
                f"{label}.dh",
                f"{_PA}, {where}, dh term",
                dh_text,
                dh_fn,
                "tr_hbar_dh",
                tuple(r for r in on if TYPOS[r].printed in dh_text),
            ),
            ProofLine(
                f"{label}.du",
                f"{_PA}, {where}, dU terms",
                du_text,
                du_fn,
                "tr_ubar_du",
                tuple(r for r in on if TYPOS[r].printed in du_text),
            ),
        ]
        if label == "proof.tr3":  # the two trace identities, displayed between the 3rd and 4th forms
            lines += [
                ProofLine(
                    "proof.trace_transpose",
                    f"{_PA}, trace identity (at A = hC~'dU')",
                    "Tr(A') = Tr(A)",
                    lambda: _tr((hh * ct.T * dd.T).T),
                    "trace_transpose",
                ),
                ProofLine(
                    "proof.trace_hadamard",
                    f"{_PA}, trace identity (at A = h~C~', B = B, C = dU'U + U'dU)",
                    "Tr(A(B o C)) = Tr((A o B')C)",
                    lambda: _tr(had(ht * ct.T, bm.T) * x),
                    "trace_hadamard",
                ),
            ]
    lines.append(
        ProofLine(
            "proof.ubar",
            f"{_PA}, conclusion (Lemma 1)",
            "Ubar = U[(h~C~') o B' + (C~'h') o B] - Cbar'h' - hC~'",
            ubar,
            "dl_du",
            tuple(r for r in ("proof.ubar.ctilde_htilde", "proof.ubar.cbar_htilde") if r in fix),
        )
    )
    lines.append(
        ProofLine(
            "proof.hbar",
            f"{_PA}, conclusion (Lemma 1)",
            "hbar = Cbar' - UC~",
            hbar,
            "dl_dh",
            tuple(r for r in ("proof.hbar.cbar",) if r in fix),
        )
    )
    return lines


# --------------------------------------------------------------------------- App. B
def appendix_b_reference(u: Any, h: Any, cbar: Any) -> dict[str, Any]:
    """The true quantities of App. B (U with the eq. 9 shape), from the definitions only.

    ``t`` (eq. 12), ``htilde = T^-1 U'h``, ``ctilde = T'^-1 U'Cbar``, ``t_htilde = T h~`` and ``tt_ctilde =
    T'C~`` (the rows of the triangular systems), ``tkk_htilde``/``tkk_ctilde`` (their diagonal parts), ``tkk``,
    ``hmat`` (``H_{*,k} := h - sum_{j>=k} U_{*,j} h~_j``, k = 1..m+1), ``wh = W h`` with W the product of the
    reflections (eq. 8), and the true gradients ``dl_du``, ``dl_dh`` of ``L = Cbar'C``.
    """
    uu, hh, cb, _, _ = _inputs(u, h, cbar)
    _eq9(uu)
    n, m = uu.shape
    t = _t_def(uu)
    ht, ct = _htilde(uu, hh), _ctilde(uu, cb)
    tkk = Mat(m, 1, lambda k, _: t[k, k])
    hmat = Mat(n, m + 1, lambda i, k: hh[i] - sum((uu[i, j] * ht[j] for j in range(k, m)), sympy.Integer(0)))
    w = sympy.eye(n)
    for j in range(m):
        col = uu[:, j]
        w = w * (sympy.eye(n) - 2 * col * col.T / _s(col.T * col))
    gu, gh = _true_gradients(uu, hh, cb)
    return {
        "t": t,
        "htilde": ht,
        "ctilde": ct,
        "t_htilde": t * ht,
        "tt_ctilde": t.T * ct,
        "tkk": tkk,
        "tkk_htilde": Mat(tkk.multiply_elementwise(ht)),
        "tkk_ctilde": Mat(tkk.multiply_elementwise(ct)),
        "hmat": hmat,
        "wh": Mat(w * hh),
        "dl_dh": gh,
        "dl_du": gu,
    }


def appendix_b_lines(
    u: Any, h: Any, cbar: Any, *, corrected: bool, repairs: Collection[str] | None = None
) -> list[ProofLine]:
    """The displayed statements of App. B (the derivation of Algorithm 1), in order.

    U must have the eq. 9 shape. ``corrected``/``repairs`` as in :func:`theorem2_proof_lines`, over the
    ``appb.*`` typos. Compare with :func:`appendix_b_reference` through :func:`judge`.
    """
    uu, hh, cb, _, _ = _inputs(u, h, cbar)
    _eq9(uu)
    fix = _active(corrected, repairs, "appb.")
    n, m = uu.shape
    zero = sympy.Integer(0)
    t = _t_def(uu)
    ht, ct = _htilde(uu, hh), _ctilde(uu, cb)
    bm = _bmat(m)

    def v(i: int, j: int) -> Any:  # v_{i,j}, 1-based
        return uu[i - 1, j - 1]

    def col(j: int) -> Mat:  # U_{*,j}, 1-based
        return uu[:, j - 1]

    def hk(j: int) -> Any:  # h~_j
        return ht[j - 1]

    def ck(j: int) -> Any:  # C~_j
        return ct[j - 1]

    def iv(p: bool) -> int:  # Iverson bracket
        return 1 if p else 0

    def over_k(f: Callable[[int], Any]) -> Mat:
        return Mat([[f(k)] for k in range(1, m + 1)])

    def ssum(it: Iterable[Any]) -> Any:
        return sum(it, zero)

    def vsum(it: Iterable[Any]) -> Any:
        return sum(it, sympy.zeros(n, 1))

    def hcol(k: int) -> Any:  # H_{*,k} := h - sum_{j=k}^m U_{*,j} h~_j
        return hh - vsum(col(j) * hk(j) for j in range(k, m + 1))

    def tij() -> Mat:
        def entry(i: int, j: int) -> Any:  # 1-based i, j
            return iv(i <= j) * ssum(v(k, i) * v(k, j) for k in range(j, n + 1)) / (1 + iv(i == j))

        return Mat(m, m, lambda i, j: entry(i + 1, j + 1))

    def eq18() -> Mat:
        if "appb.eq18.limits" in fix:
            inner = [(r, min(r, m)) for r in range(1, n + 1)]
        else:
            inner = [(r, r) for r in range(1, m + 1)]
        return over_k(
            lambda k: (
                ssum(v(r, k) * hh[r - 1] for r in range(k, n + 1))
                - ssum(v(r, k) * ssum(v(r, j) * hk(j) for j in range(k + 1, top + 1)) for r, top in inner if r >= k + 1)
            )
        )

    def eq20_21() -> tuple[Mat, Mat]:
        big_h: list[Any] = [None] * (m + 2)
        htil: list[Any] = [None] * (m + 1)
        big_h[m + 1] = hh
        for k in range(m, 0, -1):
            htil[k] = 2 / _s(col(k).T * col(k)) * _s(col(k).T * big_h[k + 1])  # (20)
            big_h[k] = big_h[k + 1] - htil[k] * col(k)  # (21)
        return Mat(htil[1:]), Mat.hstack(*big_h[1:])

    def ctilde_rec() -> Mat:
        out: list[Any] = []
        for k in range(1, m + 1):
            g = cb - vsum(col(j) * out[j - 1] for j in range(1, k))
            out.append(2 / _s(col(k).T * col(k)) * _s(col(k).T * g))
        return Mat(out)

    def dldu(entry: Callable[[int, int], Any]) -> Mat:
        return Mat(n, m, lambda i, k: entry(i + 1, k + 1))

    hc, ch = ht * ct.T, ct * ht.T

    def e1(i: int, k: int) -> Any:
        return (
            -cb[i - 1] * hk(k)
            - hh[i - 1] * ck(k)
            + ssum(
                v(i, j) * (hc.multiply_elementwise(bm.T)[j - 1, k - 1] + ch.multiply_elementwise(bm)[j - 1, k - 1])
                for j in range(1, m + 1)
            )
        )

    def e2(i: int, k: int) -> Any:
        return (
            -cb[i - 1] * hk(k)
            - hh[i - 1] * ck(k)
            + ssum(
                v(i, j)
                * (
                    hk(j) * ck(k) * Rational(iv(k <= j), 1 + iv(j == k))
                    + ck(j) * hk(k) * Rational(iv(j <= k), 1 + iv(j == k))
                )
                for j in range(1, m + 1)
            )
        )

    def e3(i: int, k: int) -> Any:
        return (
            -cb[i - 1] * hk(k)
            - hh[i - 1] * ck(k)
            + ssum(v(i, j) * (hk(j) * ck(k) * iv(k < j) + ck(j) * hk(k) * iv(j <= k)) for j in range(1, m + 1))
        )

    def e4(i: int, k: int) -> Any:
        return ck(k) * (ssum(v(i, j) * hk(j) for j in range(k + 1, m + 1)) - hh[i - 1]) + hk(k) * (
            ssum(v(i, j) * ck(j) for j in range(1, k + 1)) - cb[i - 1]
        )

    def closing() -> Mat:
        top = (lambda k: k) if "appb.dldu_col.g" in fix else (lambda k: k - 1)
        cols = []
        for k in range(1, m + 1):
            g = cb - vsum(ck(j) * col(j) for j in range(1, top(k) + 1))
            cols.append(-ck(k) * hcol(k + 1) - hk(k) * g)
        return Mat.hstack(*cols)

    lhs18 = "appb.eq18.lhs" in fix
    lhs22 = "appb.eq22.lhs" in fix
    key18 = "tkk_htilde" if lhs18 else "t_htilde"
    key22 = "tkk_ctilde" if lhs22 else "tt_ctilde"
    r18 = ("appb.eq18.lhs",) if lhs18 else ()
    r22 = ("appb.eq22.lhs",) if lhs22 else ()
    l18 = "t_{k,k} h~_k + sum_{j=k+1}^m t_{k,j} h~_j = "
    l22 = "t_{k,k} C~_k + sum_{j=1}^{k-1} t_{j,k} C~_j = "
    dl = "[dL/dU]_{i,k} = -[dL/dC]_i h~_k - h_i C~_k + sum_{j=1}^m v_{i,j} "
    return [
        ProofLine(
            "appb.tij",
            f"{_PB}, elements of T",
            "t_{i,j} = [i <= j] sum_{k=j}^n v_{k,i} v_{k,j} / (1 + delta_{i,j})",
            tij,
            "t",
        ),
        ProofLine(
            "appb.eq18_row",
            f"{_PB}, row k of T h~ = U'h, 1st line",
            l18 + "sum_{j=k}^n v_{j,k} h_j",
            lambda: over_k(lambda k: ssum(v(j, k) * hh[j - 1] for j in range(k, n + 1))),
            "t_htilde",
        ),
        ProofLine(
            "appb.eq18_b",
            f"{_PB}, row k of T h~ = U'h, 2nd line",
            l18 + "sum_{j=k}^n v_{j,k} h_j - sum_{j=k+1}^m sum_{r=j}^n v_{r,k} v_{r,j} h~_j",
            lambda: over_k(
                lambda k: (
                    ssum(v(j, k) * hh[j - 1] for j in range(k, n + 1))
                    - ssum(ssum(v(r, k) * v(r, j) * hk(j) for r in range(j, n + 1)) for j in range(k + 1, m + 1))
                )
            ),
            key18,
            r18,
        ),
        ProofLine(
            "appb.eq18",
            f"{_PB}, eq. 18",
            l18 + "sum_{r=k}^n v_{r,k} h_r - sum_{r=k+1}^m v_{r,k} sum_{j=k+1}^r v_{r,j} h~_j",
            eq18,
            key18,
            r18 + tuple(r for r in ("appb.eq18.limits",) if r in fix),
        ),
        ProofLine(
            "appb.eq19",
            f"{_PB}, eq. 19",
            l18 + "U'_{*,k}(h - sum_{j=k+1}^m U_{*,j} h~_j)",
            lambda: over_k(lambda k: _s(col(k).T * (hh - vsum(col(j) * hk(j) for j in range(k + 1, m + 1))))),
            key18,
            r18,
        ),
        ProofLine(
            "appb.tkk",
            f"{_PB}, text before eq. 20",
            "t_{k,k} = U'_{*,k} U_{*,k} / 2",
            lambda: over_k(lambda k: _s(col(k).T * col(k)) / 2),
            "tkk",
        ),
        ProofLine(
            "appb.eq20",
            f"{_PB}, eq. 20 (run from H_{{*,m+1}} = h, k = m..1, with eq. 21)",
            "h~_k = 2 / (U'_{*,k} U_{*,k}) U'_{*,k} H_{*,k+1}",
            lambda: eq20_21()[0],
            "htilde",
        ),
        ProofLine(
            "appb.eq21",
            f"{_PB}, eq. 21 (the same recursion; columns H_{{*,1}} .. H_{{*,m+1}})",
            "H_{*,k} = H_{*,k+1} - h~_k U_{*,k}",
            lambda: eq20_21()[1],
            "hmat",
        ),
        ProofLine(
            "appb.h1_sum",
            f"{_PB}, text after eq. 21",
            "H_{*,1} = h - sum_{j=1}^m U_{*,j} [T^-1 U'h]_j = Wh",
            lambda: hh - vsum(col(j) * (t.inv() * uu.T * hh)[j - 1] for j in range(1, m + 1)),
            "wh",
        ),
        ProofLine(
            "appb.h1_wy",
            f"{_PB}, text after eq. 21",
            "H_{*,1} = h - U T^-1 U'h = Wh",
            lambda: hh - uu * t.inv() * uu.T * hh,
            "wh",
        ),
        ProofLine(
            "appb.eq22_row",
            f"{_PB}, row k of T'C~ = U'dL/dC, 1st line",
            l22 + "sum_{j=k}^n v_{j,k} [dL/dC]_j",
            lambda: over_k(lambda k: ssum(v(j, k) * cb[j - 1] for j in range(k, n + 1))),
            "tt_ctilde",
        ),
        ProofLine(
            "appb.eq22",
            f"{_PB}, eq. 22",
            l22 + "sum_{j=1}^n v_{j,k} [dL/dC]_j - sum_{j=1}^{k-1} sum_{r=k}^n v_{r,j} v_{r,k} C~_j",
            lambda: over_k(
                lambda k: (
                    ssum(v(j, k) * cb[j - 1] for j in range(1, n + 1))
                    - ssum(ssum(v(r, j) * v(r, k) * ck(j) for r in range(k, n + 1)) for j in range(1, k))
                )
            ),
            key22,
            r22,
        ),
        ProofLine(
            "appb.eq23",
            f"{_PB}, eq. 23",
            l22 + "sum_{r=1}^n v_{r,k} [dL/dC]_r - sum_{r=1}^n v_{r,k} sum_{j=1}^{k-1} v_{r,j} C~_j",
            lambda: over_k(
                lambda k: (
                    ssum(v(r, k) * cb[r - 1] for r in range(1, n + 1))
                    - ssum(v(r, k) * ssum(v(r, j) * ck(j) for j in range(1, k)) for r in range(1, n + 1))
                )
            ),
            key22,
            r22,
        ),
        ProofLine(
            "appb.eq23_b",
            f"{_PB}, line after eq. 23",
            l22 + "U'_{*,k}(dL/dC - sum_{j=1}^{k-1} U_{*,j} C~_j)",
            lambda: over_k(lambda k: _s(col(k).T * (cb - vsum(col(j) * ck(j) for j in range(1, k))))),
            key22,
            r22,
        ),
        ProofLine(
            "appb.ctilde",
            f"{_PB}, text after eq. 23 (run for k = 1..m)",
            "g := dL/dC - sum_{j=1}^{k-1} U_{*,j} C~_j, C~_k = 2 / (U'_{*,k} U_{*,k}) U'_{*,k} g",
            ctilde_rec,
            "ctilde",
        ),
        ProofLine(
            "appb.g_sum",
            f"{_PB}, text after eq. 23",
            "g = dL/dC - sum_{j=1}^m U_{*,j} C~_j = dL/dh",
            lambda: cb - vsum(col(j) * ck(j) for j in range(1, m + 1)),
            "dl_dh",
        ),
        ProofLine(
            "appb.g_uc",
            f"{_PB}, text after eq. 23",
            "g = dL/dC - U C~ = dL/dh",
            lambda: cb - uu * ct,
            "dl_dh",
        ),
        ProofLine(
            "appb.dldu_1",
            f"{_PB}, [dL/dU]_(i,k) from eq. 14, 1st line",
            dl + "(((h~C~') o B')_{j,k} + ((C~h~') o B)_{j,k})",
            lambda: dldu(e1),
            "dl_du",
        ),
        ProofLine(
            "appb.dldu_2",
            f"{_PB}, [dL/dU]_(i,k), 2nd line",
            dl + "(h~_j C~_k [k <= j] / (1 + delta_{j,k}) + C~_j h~_k [j <= k] / (1 + delta_{j,k}))",
            lambda: dldu(e2),
            "dl_du",
        ),
        ProofLine(
            "appb.dldu_3",
            f"{_PB}, [dL/dU]_(i,k), 3rd line",
            dl + "(h~_j C~_k [k < j] + C~_j h~_k [j <= k])",
            lambda: dldu(e3),
            "dl_du",
        ),
        ProofLine(
            "appb.dldu_4",
            f"{_PB}, [dL/dU]_(i,k), 4th line",
            "[dL/dU]_{i,k} = C~_k (sum_{j=k+1}^m v_{i,j} h~_j - h_i) + h~_k (sum_{j=1}^k v_{i,j} C~_j - [dL/dC]_i)",
            lambda: dldu(e4),
            "dl_du",
        ),
        ProofLine(
            "appb.dldu_col",
            f"{_PB}, closing column formula (lines 14, 18 of Alg. 1)",
            "[dL/dU]_{*,k} = -C~_k H_{*,k+1} - h~_k g, g = dL/dC - sum_{j=1}^{k-1} C~_j U_{*,j}",
            closing,
            "dl_du",
            tuple(r for r in ("appb.dldu_col.g",) if r in fix),
        ),
    ]
