"""Both readings of the printed product (rows and columns) are compared with SymPy's exact
derivative and torch autograd, so that neither escapes; the corrected product, multiplied out as
matrices independently of the backward recursion, also meets 50-digit central differences."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from typing import Any

from orthoverify.backends import Backend
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._effort import effort
from orthoverify.claims.unitary._gradient import CHAIN_RATIO, case_gradients, gradient_gap, run_case, show_vector
from orthoverify.claims.unitary._gradient_cases import exact_case, float_case, schedule
from orthoverify.engine.checks import Case, Check, RunContext
from orthoverify.engine.ratios import Measure, scaled
from orthoverify.engine.reference import central_gradient, fd_eps
from orthoverify.engine.templates import Gradient, judged
from orthoverify.param import unitary_gradients as ug


def chain_measure(b: Backend, case: Case, readings: tuple[ug.Reading, ...]) -> Measure:
    """The products of eq. 3 (each reading) against the true gradient for every t < T (SymPy's
    derivative when exact, autograd on torch, the backward recursion elsewhere: NumPy, and 50/100
    digits when a float failure is confirmed); the claim holds in a reading when every t agrees,
    and the measure is the best reading's."""
    run, g, truth = case_gradients(b, case, exact=True)
    results = []
    for reading in readings:
        got = ug.chain_rule_gradients(run, g, reading)
        diffs = [p - q for p, q in zip(got[:-1], truth[:-1], strict=True)]
        if b.exact:
            bad = next((t for t, d in enumerate(diffs) if not b.is_zero(d)), 0)
            wrong = f"at t = {bad} gives {show_vector(b, got[bad])}, true dC/dh_t = {show_vector(b, truth[bad])}"
            results.append(judged(b.is_zero(diffs[bad]), f"{reading}: holds for every t", f"{reading}: {wrong}"))
        else:
            m = gradient_gap(b, run, g, [*diffs, b.zeros(run.N)])
            results.append(Measure(m.ratio, f"{reading}: relative gap {m.error:.6g}", error=m.error))
    best = min(results, key=lambda m: m.ratio)
    head = f"T = {run.T}, N = {run.N}, {run.activation}: "
    return Measure(best.ratio, head + "; ".join(m.display for m in results), error=best.error)


q_chain_printed = functools.partial(chain_measure, readings=("printed_row", "printed_column"))
q_chain_corrected = functools.partial(chain_measure, readings=("corrected",))


def q_chain_fd(b: Backend, case: Case) -> Measure:
    """The corrected product against central differences of C(h_t) = g' h_T(h_t) at b's precision
    (50 digits: an independent reference that knows no formula)."""
    run = run_case(b, case)
    g = b.check_array(case["g"], name="g", ndim=1)
    got = ug.chain_rule_gradients(run, g, "corrected")
    cost = [functools.partial(lambda t, h: b.sum(g * ug.forward_from(run, t, h)), t) for t in range(run.T)]
    diffs = [got[t] - central_gradient(cost[t], run.hs[t], b) for t in range(run.T)]
    m = gradient_gap(b, run, g, [*diffs, b.zeros(run.N)])
    return scaled(m.error if m.error is not None else math.inf, run.T * run.N, max(b.eps, fd_eps(b)))


HAND_BUILT_CHAIN: dict[str, Any] = {
    "kind": "hand-built rotation",
    "act": "relu",
    "W": [["3/5", "-4/5"], ["4/5", "3/5"]],
    "V": [["0"], ["0"]],
    "xs": [["0"]],
    "h0": ["1", "0"],
    "c": ["0", "-2"],
    "g": ["1", "0"],
}
"""The exact counterexample of the printed claim's notes (T = 1, t = 0: D_1 = diag(1, 0))."""


def cases_chain_exact(ctx: RunContext, *, printed: bool = False) -> Iterator[Case]:
    """The hand-built case, then random rational cases: N = 2 with T = 1, 2 and N = 3 with T = 1
    (the default profile adds N = 3, T = 2 for the corrected product). SymPy differentiates the
    whole composition, whose nested |.| grow quickly with N and T: these sizes keep it to seconds."""
    yield HAND_BUILT_CHAIN
    rng = ctx.rng()
    pairs = [(2, 1), (2, 2), (3, 1)]
    if not printed and effort(ctx).chain_exact_n3_t2:
        pairs.append((3, 2))
    for n, t_len in pairs:
        for kind in ("real", "real-per-step", "general") + (("complex",) if n == 2 else ()):
            yield exact_case(rng, kind, 1 if kind == "complex" else n, t_len)


KINDS = ("real", "complex", "urnn", "real-per-step", "complex-per-step", "general")
CHAIN_KINDS = tuple((k, "modrelu" if k in ("urnn", "complex-per-step") else "relu") for k in KINDS)


def chain_float_cases(ctx: RunContext, *, hp: bool) -> Iterator[Case]:
    """ReLU and modReLU (both bias signs), real, complex, uRNN, per-step and general W; small n, T."""
    rng = ctx.rng()
    ns, steps = ((1, 2, 3), (1, 2, 3)) if hp else ((1, 2, 3, 4), (1, 2, 5, 10))
    for n, (kind, act), t_len, _ in schedule(ns, ctx.profile.cases, CHAIN_KINDS, steps):
        case = float_case(rng, "real" if kind == "general" else kind, n, t_len, act=act, bias_mode="mixed")
        if kind == "general":  # a Gaussian W drawn last, not orthogonal
            case = {**case, "W": rng.standard_normal((n, n)) / math.sqrt(n), "orthogonal": False}
        yield case


PRINTED_EXACT = Gradient("printed product - true gradient (exact)")
CORRECTED_EXACT = Gradient("product - SymPy's exact derivative (exact)")
AUTOGRAD = Gradient(CHAIN_RATIO)
FD_RATIO = "max_t ||product g - central differences|| / (T N max(eps, fd_eps) ||g|| prod ||W|| ||J||)"
CENTRAL_DIFFERENCES = Gradient(FD_RATIO, fd_note="")


def checks(corrected: bool) -> tuple[Check, ...]:
    """The same references for both readings; the corrected product also meets central
    differences at 50 digits (on mpmath only: this quantity differences at b's own precision)."""
    if not corrected:
        return (
            PRINTED_EXACT.exact(q_chain_printed, functools.partial(cases_chain_exact, printed=True)),
            AUTOGRAD.autograd(q_chain_printed, functools.partial(chain_float_cases, hp=False)),
        )
    return (
        CORRECTED_EXACT.exact(q_chain_corrected, cases_chain_exact),
        AUTOGRAD.autograd(q_chain_corrected, functools.partial(chain_float_cases, hp=False)),
        CENTRAL_DIFFERENCES.finite_differences(
            q_chain_fd, functools.partial(chain_float_cases, hp=True), backends=("mpmath",)
        ),
    )


CLAIMS = kit.twins(
    "unitary.chain_rule",
    place=kit.URNN(section="1", equation="3"),
    expected="refuted",
    origin="added",
    summary="eq. 3's chain-rule product for dC/dh_t",
    corrected_summary="the chain rule for dC/dh_t in column form",
    kind="gradient",
    printed=(
        "dC/dh_t = dC/dh_T prod_{k=t}^{T-1} dh_{k+1}/dh_k = dC/dh_T prod_{k=t}^{T-1} D_{k+1} W_k^T with "
        "D_{k+1} = diag(sigma'(z_{k+1})), the product taken in the order written (k = t..T-1, left to right)"
    ),
    corrected=(
        "with dC/dh as a column, dC/dh_t = W_t' D_{t+1}' W_{t+1}' D_{t+2}' ... W_{T-1}' D_T' dC/dh_T, "
        "D_{k+1} the Jacobian of sigma at z_{k+1} (diag(sigma'(z_{k+1})) for a pointwise sigma, where D' = D; "
        "2 x 2 symmetric blocks for modReLU)"
    ),
    checks=checks,
    printed_notes=(
        "dh_{k+1}/dh_k = D_{k+1} W_k (Jacobian, rows = outputs), so the true gradient is, as a row, "
        "g' D_T W_{T-1} ... D_{t+1} W_t and, as a column, W_t' D_{t+1} W_{t+1}' D_{t+2} ... W_{T-1}' D_T g. The "
        "printed product D_{t+1} W_t' D_{t+2} W_{t+1}' ... D_T W_{T-1}' matches neither: read with rows it has "
        "the factors in the reverse order and W_k transposed; read with columns each D_{k+1} stands left of "
        "W_k' instead of right of it (it agrees only where those commute: n = 1, or every unit active with "
        "one shared W). Exact counterexample: T = 1, W = [[3/5, -4/5], [4/5, 3/5]], h_0 = (1, 0), c = (0, -2), "
        "so D_1 = diag(1, 0), g = (1, 0): true dC/dh_0 = W' D_1 g = (3/5, -4/5), row reading (3/5, 4/5), column "
        "reading (3/5, 0). The norm bound (4) is untouched: ||D W'|| = ||W' D|| = ||D|| for orthogonal W, so "
        "this refutation does not affect unitary.gradient_bound. Both readings are checked; a reading holds "
        "when it matches at every t < T."
    ),
    corrected_notes=(
        "h_T depends on h_t through h_T = sigma(W_{T-1} sigma(... sigma(W_t h_t + ...))), so dh_T/dh_t = "
        "D_T W_{T-1} D_{T-1} ... D_{t+1} W_t and dC/dh_t = (dh_T/dh_t)' dC/dh_T. Checked against SymPy's exact "
        "derivative (ReLU, rational orthogonal, unitary-twin, per-step and general W), torch autograd (float32, "
        "float64; ReLU and modReLU with biases of both signs) and 50-digit central differences; the product is "
        "multiplied out as matrices, independently of the backward recursion used by the bound claims."
    ),
)
