"""Unitarity and the FFT path are compared with the dense product (and proved from Arb
enclosures); the 7n parameters are counted from what urnn_parameters consumes; O(n log n) is a
growth rate, so flops counted on the counting arithmetic are fitted exactly by a n log2 n + b n + c."""

from __future__ import annotations

from typing import Any

import numpy as np

from orthoverify.backends import Backend
from orthoverify.claims._common import FLOAT_HP, RIGOROUS_SIZES, frobenius, rigorous_check
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._effort import effort
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, PropertyCheck, RunContext
from orthoverify.engine.ratios import Measure, worst
from orthoverify.engine.templates import Tally, count, inexact_sizes, repeated, sampled
from orthoverify.param import unitary as un
from orthoverify.param import unitary_flops as uf


def q_composition(b: Backend, case: Case) -> Measure:
    """W = D3 R2 F^-1 D2 Pi R1 F D1 is unitary; W h factor by factor through the FFT (generic and,
    in float, native) equals the dense product."""
    p = _urnn_params(b, case)
    n = p.n
    w = un.urnn_matrix(p)
    h = kit.complex_input(b, case, "h")
    dense = w @ h.reshape(n, 1)
    out = [kit.unitarity(b, w), kit.cagree(b, un.urnn_apply(p, h.reshape(n, 1)), dense, n)]
    if b.family in ("numpy", "torch"):
        out.append(kit.cagree(b, un.urnn_apply(p, h.reshape(n, 1), fft_path="native"), dense, n))
    return worst(*out)


def _urnn_params(b: Backend, case: Case) -> un.URNNParameters:
    """The uRNN parameters of a case made by :func:`_urnn_case`, on backend ``b``."""
    v1, v2 = (case["v1_re"], case["v1_im"]), (case["v2_re"], case["v2_im"])
    perm = [int(v) for v in case["perm"]]
    return un.urnn_parameters(case["w1"], case["w2"], case["w3"], v1, v2, perm, backend=b)


def _urnn_case(r: dict[str, Any]) -> Case:
    """A case of the uRNN parameters drawn by :func:`~orthoverify.param.unitary.urnn_random`."""
    vs = {f"{k}_{p}": r[k][i] for k in ("v1", "v2") for i, p in enumerate(("re", "im"))}
    return {"w1": r["w1"], "w2": r["w2"], "w3": r["w3"], **vs, "perm": [str(v) for v in r["perm"]]}


def draw(ctx: RunContext, rng: np.random.Generator, n: int) -> Case:
    return {**_urnn_case(un.urnn_random(rng, n)), **kit.gaussian(rng, "h", n)}


def sizes(ctx: RunContext) -> tuple[int, ...]:
    """The profile's sizes, and n = 12 in float (neither a power of two nor small)."""
    ns = inexact_sizes(ctx)
    return (*ns, 12) if ctx.backend.method == "float" else tuple(ns)


def parameter_tally(case: Case) -> list[Tally]:
    """The real scalars urnn_parameters consumes (w1, w2, w3: n each; v1, v2: 2n each) and the
    stated count, against 7n."""
    n = int(case["n"])
    r = un.urnn_random(np.random.default_rng(n), n)
    p = un.urnn_parameters(r["w1"], r["w2"], r["w3"], r["v1"], r["v2"], r["perm"], backend="numpy-float64")
    consumed = sum(int(a.size) for a in (p.w1, p.w2, p.w3, p.v1.re, p.v1.im, p.v2.re, p.v2.im))
    return [("real parameters consumed", 7 * n, consumed), ("urnn_parameter_count", 7 * n, un.urnn_parameter_count(n))]


def fn_nlogn(ctx: RunContext) -> Outcome:
    """Flops of W h (generic FFT) on the counting arithmetic, fitted exactly by a n log2 n + b n + c
    for powers of two, verified on every other counted n; the dense product's count for scale.
    Bespoke: the statement is a growth rate (O(n log n)), not counts to compare one by one."""
    work = effort(ctx)
    ns = [n for n in uf.POW2_SIZES if n <= work.flops_pow2_max_n]
    others = [n for n in uf.NONPOW2_SIZES if n <= work.flops_other_max_n]
    totals, ototals = ([uf.urnn_apply_counts(n, part="per_vector")["total"] for n in s] for s in (ns, others))
    coeffs = uf.fit_nlogn(ns, totals)
    c_other = uf.nlogn_constant(others, ototals)
    return Outcome(
        passed=not uf.check_fit(ns, totals, coeffs) and coeffs[0] > 0,
        cases=len(ns) + len(others),
        worst_ratio=0.0,
        notes=(
            f"per column h: {uf.formula(coeffs)} flops exactly for n = {ns[0]}..{ns[-1]} (powers of two); other n "
            f"(Bluestein) at most {c_other:.1f} n log2 n on n = {others}; dense W h: 8n^2 - 2n"
        ),
        data={
            "fit": [str(c) for c in coeffs],
            "pow2": dict(zip(ns, totals, strict=True)),
            "other": dict(zip(others, ototals, strict=True)),
        },
    )


def enclose_composition(b: Backend, case: Case) -> Any:
    """||W*W - I||_F for W = D3 R2 F^-1 D2 Pi R1 F D1, from the case's exact (binary) parameters:
    the real and imaginary parts of W*W - I, together."""
    w = un.urnn_matrix(_urnn_params(b, case))
    r = un.ct(b, w) @ w - un.ceye(b, w.shape[0])
    return frobenius(b, b.concat([r.re, r.im], axis=0))


cases_composition_rigorous = sampled(
    lambda ctx: RIGOROUS_SIZES, lambda rng, n: _urnn_case(un.urnn_random(rng, n)), per_size=lambda ctx: 1
)
"""Random float64 parameters (exact binary numbers, so exact in Arb) for n = 4, 8, 16."""


CLAIMS = kit.claim(
    id="unitary.composition",
    place=kit.URNN(section="2"),
    expected="verified",
    origin="catalogue",
    summary="the uRNN's W is unitary, has 7n parameters and costs O(n log n)",
    kind="complexity",
    statement="W = D3 R2 F^-1 D2 Pi R1 F D1 is unitary, has 7n real parameters, and W h costs O(n log n)",
    checks=(
        PropertyCheck(
            "float",
            q_composition,
            repeated(sizes, draw),
            FLOAT_HP,
            "max(||W*W - I||, ||W h (FFT) - W h (dense)|| / ||W h||) / (n eps)",
        ),
        count(
            "count",
            grid=lambda ctx: [{"n": str(n)} for n in range(1, 65)],
            tally=parameter_tally,
            backends=("sympy",),
            quantity_name="real parameters - 7n",
            stated="7n",
        ),
        FunctionCheck("measured", fn_nlogn, ("flops",), "measured", "flops of W h", exact=True),
        rigorous_check("rigorous", cases_composition_rigorous, enclose_composition, quantity="||W*W - I||_F"),
    ),
    notes=(
        "Flops are counted by running the generic code (radix-2 FFT; Bluestein for other n) on the counting "
        "arithmetic; cos/sin (phases, twiddles) are free since they do not depend on h. Wall-clock growth for "
        "n = 64..8192 is measured by `orthoverify bench unitary.fft`."
    ),
)
