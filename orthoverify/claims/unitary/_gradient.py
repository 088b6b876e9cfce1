"""The gradient vocabulary of the Sec. 1 claims of Arjovsky et al. (unitary.gradient_bound*,
unitary.chain_rule*): a recorded case's forward pass and its gradients dC/dh_t (torch autograd or
the backward recursion of :mod:`orthoverify.param.unitary_gradients`), the test ratio of the bound
of eq. 5, autograd against the backward recursion, and the recorded uRNN trajectory a report plots."""

from __future__ import annotations

import math
from typing import Any

import mpmath
import sympy

from orthoverify.backends import Array, Backend, Scalar
from orthoverify.claims.unitary._gradient_cases import representative_case, search_strategy
from orthoverify.engine.checks import Case, Check, FunctionCheck, Outcome, PropertyCheck, RunContext
from orthoverify.engine.ratios import THRESHOLD, Measure, scaled
from orthoverify.engine.templates import Cases, Gradient, judged, witness
from orthoverify.errors import DomainError
from orthoverify.param import unitary_gradients as ug

GRADIENT_SEARCH = ("torch-float64",)
"""Where the gradient searches run: torch autograd in float64."""

BOUND_RATIO = "(max_t<T ||dC/dh_t|| / ||dC/dh_T|| - 1)_+ / (T N eps)"
AGREE_RATIO = "max_t ||autograd - backward|| / (T N eps ||g|| prod_k ||W_k|| ||J_k+1||)"
CHAIN_RATIO = "min over readings of max_t ||product g - dC/dh_t|| / (T N eps ||g|| prod_k ||W_k|| ||J_k+1||)"

RATIO_NOTE = (
    "Test ratio (r - 1)_+ / (T N eps), r = max_{t<T} ||dC/dh_t|| / ||dC/dh_T||, N the state size (2n on a "
    "twin), eps the unit roundoff: in exact arithmetic r <= 1; the computed backward pass applies T factors "
    "W_k' D_{k+1}, each with relative rounding error at most about N eps (a length-N dot product per entry) and "
    "each W_k orthogonal to about N eps (it is polished to the working precision first, so that a float64 W "
    "carried to 50 digits is orthogonal there too), so rounding alone can raise r above 1 by at most a small "
    "multiple of T N eps; a ratio above 30 cannot be rounding. The cases where eq. 5 holds with equality (every "
    "unit active, D = I; modReLU with b = 0) show the rounding actually seen."
)


def _truthy(v: Any) -> bool:
    return v is True or str(v).lower() in ("true", "1")


def run_case(b: Backend, case: Case, *, track: bool = False) -> ug.Unrolled:
    """The forward pass of a recorded case in b's arithmetic (W polished there when orthogonal)."""
    act = str(case.get("act", "relu"))
    return ug.unroll(
        case["W"],
        case["V"],
        case["xs"],
        case["h0"],
        c=case["c"],
        activation=act,  # type: ignore[arg-type]
        bias=case.get("bias") if act == "modrelu" else None,
        backend=b,
        orthogonal=_truthy(case.get("orthogonal", True)),
        track=track,
    )


def case_gradients(b: Backend, case: Case, *, exact: bool = False) -> tuple[ug.Unrolled, Array, list[Array]]:
    """(run, g, every dC/dh_t): torch autograd on torch, SymPy's derivative on an exact backend
    when ``exact``, the backward recursion elsewhere."""
    run = run_case(b, case, track=b.family == "torch")
    g = b.check_array(case["g"], name="g", ndim=1)
    if b.family == "torch":
        return run, g, ug.autograd_gradients(run, g)
    return run, g, ug.exact_gradients(run, g) if exact and b.exact else ug.backward(run, g)


def show(b: Backend, x: Scalar, digits: int = 20) -> str:
    """A scalar for a counterexample's display: every digit that matters at b's precision."""
    if b.exact:
        return str(x)
    if b.family == "mpmath":
        return str(mpmath.nstr(x, digits))
    return f"{b.to_float(x):.17g}"


def show_vector(b: Backend, x: Array) -> str:
    return "(" + ", ".join(show(b, v, 12) for v in x.reshape(-1)) + ")"


def bound_measure(b: Backend, run: ug.Unrolled, grads: list[Array]) -> Measure:
    """max_t<T ||dC/dh_t|| / ||dC/dh_T|| = r against 1: ratio ``(r - 1)_+ / (T N eps)``, error r - 1
    (exact: r^2 <= 1 decided exactly)."""
    t_len, n = run.T, run.N
    sizes = [b.sum(d * d) for d in grads] if b.exact else ug.gradient_norms(b, grads)
    top = sizes[-1]
    if b.is_zero(top):
        raise DomainError("dC/dh_T = g is zero: the ratio of eq. 5 is undefined")
    if b.exact:  # squared norms
        best = 0
        for t in range(1, t_len):
            if b.positive(sizes[t] - sizes[best]):
                best = t
        r2 = sympy.expand(sizes[best] / top)
        desc = f"max_t<T ||dC/dh_t||^2 / ||dC/dh_T||^2 = {r2} at t = {best} (T = {t_len}, N = {n})"
        return judged(not b.positive(sizes[best] - top), desc)
    excess = [nr / top - 1 for nr in sizes[:-1]]
    worst_t = max(range(t_len), key=lambda t: b.to_float(excess[t]))
    e = excess[worst_t]
    err = b.to_float(e)
    desc = (
        f"max_t<T ||dC/dh_t|| / ||dC/dh_T|| = {show(b, e + 1)} (r - 1 = {show(b, e, 6)}) at t = {worst_t} "
        f"(T = {t_len}, N = {n})"
    )
    ratio = max(err, 0.0) / (t_len * n * b.eps) if math.isfinite(err) else math.inf
    return Measure(ratio, desc, error=err)


def q_bound(b: Backend, case: Case) -> Measure:
    """The bound of eq. 5 on one case (torch: autograd; elsewhere the backward recursion)."""
    run, _, grads = case_gradients(b, case)
    return bound_measure(b, run, grads)


def q_bound_search(b: Backend, case: Case) -> Measure:
    """:func:`q_bound`, with a drawn case outside the claim's domain (modReLU at z = 0 with b > 0,
    where it has no derivative) scored 0 rather than crashing the search."""
    try:
        return q_bound(b, case)
    except DomainError as exc:
        return Measure(0.0, f"outside the domain: {exc}", error=0.0)


def q_autograd(b: Backend, case: Case) -> Measure:
    """Torch autograd against the backward recursion on the same forward pass, every t."""
    if b.family != "torch":
        return Measure(0.0, f"autograd runs only on torch, not {b.name}: nothing to compare", error=0.0)
    run, g, auto = case_gradients(b, case)
    rec = ug.backward(run, g)
    return gradient_gap(b, run, g, [a - r for a, r in zip(auto, rec, strict=True)])


def gradient_gap(b: Backend, run: ug.Unrolled, g: Array, diffs: list[Array]) -> Measure:
    """max_t ||diff_t|| / scale_t over T N eps, scale_t = ||g|| prod ||W_k|| ||J_k+1|| (what the
    backward pass may reach); where scale_t = 0 the difference must vanish."""
    scales = ug.gradient_scales(run, g)
    err = 0.0
    for d, s in zip(diffs, scales, strict=True):
        nd = b.to_float(b.norm(d))
        if s > 0:
            err = max(err, nd / s)
        elif nd != 0:
            err = math.inf
    return scaled(err, run.T * run.N, b.eps)


def bound_check(name: str, cases: Cases, backends: tuple[str, ...]) -> PropertyCheck:
    """The bound of eq. 5 on generated cases: :func:`q_bound` measures, the check decides."""
    return PropertyCheck(name, q_bound, cases, backends, BOUND_RATIO)


def bound_search(act: str, bias_lo: float, bias_hi: float) -> Check:
    """A witness search (Hypothesis, steered by :func:`q_bound_search`) for a case that breaks
    eq. 5 with activation ``act`` and biases in [bias_lo, bias_hi]."""
    return witness(
        "search",
        q_bound_search,
        strategy=search_strategy(act, bias_lo, bias_hi),
        backends=GRADIENT_SEARCH,
        quantity_name=BOUND_RATIO,
    )


AUTOGRAD = Gradient(AGREE_RATIO)
"""The backward recursion of eq. 4 against torch autograd (its independent reference)."""


def autograd_check(cases: Cases) -> PropertyCheck:
    """Torch autograd against the backward recursion on ``cases``."""
    return AUTOGRAD.autograd(q_autograd, cases, name="custom_backward")


def trajectory_check(act: str, bias_mode: str, n: int) -> FunctionCheck:
    """The check that records ||dC/dh_t|| against t for one uRNN run (a report's plot). Bespoke:
    one recorded run whose trajectory (autograd and the backward recursion) is the evidence; its
    ratios are the templates' (:func:`bound_measure`, :func:`q_autograd`) against the threshold."""

    def fn(ctx: RunContext) -> Outcome:
        b = ctx.backend
        case = representative_case(act, bias_mode, n)
        run, g, auto = case_gradients(b, case)
        rec = ug.backward(run, g)
        m = bound_measure(b, run, auto)
        m_rec = bound_measure(b, run, rec)
        agree = q_autograd(b, case)
        data = {
            "description": (
                f"uRNN W (Sec. 2, seed 2016), n = {n} complex units (N = {run.N}), T = {run.T}, {act}"
                + (f", biases {bias_mode}" if act == "modrelu" else "")
            ),
            "t": list(range(run.T + 1)),
            "grad_norm_autograd": [b.to_float(x) for x in ug.gradient_norms(b, auto)],
            "grad_norm_backward": [b.to_float(x) for x in ug.gradient_norms(b, rec)],
            "bound": b.to_float(b.norm(g)),
        }
        worst = max(m.ratio, m_rec.ratio)
        notes = f"{m.display}; backward recursion: {m_rec.display}; autograd vs backward ratio {agree.ratio:.3g}"
        ok = worst <= THRESHOLD and agree.ratio <= THRESHOLD
        failure = (case, m) if m.ratio > THRESHOLD else None
        return Outcome(ok, 1, worst_ratio=worst, failure=failure, notes=notes, data=data)

    return FunctionCheck(
        "trajectory", fn, ("torch-float64",), "float", BOUND_RATIO, replay_fn=lambda inputs, b: q_bound(b, inputs)
    )
