"""Benchmark cases of the Householder and svdRNN products (see :mod:`orthoverify.bench.core`).

``householder.forward`` / ``householder.fwd_bwd``: ``C = W X`` with W the product of m
reflections, forward only or forward plus backward of ``<C, G>`` (gradients of U and X). U is
lower trapezoidal, eq. 9's pattern (column j zero above row j): the parametrisation's actual
input. The blocked compact-WY path
(:func:`~orthoverify.param.householder_wy.householder_wy_apply`) runs with ``lower=True``,
which restricts block i's products to the rows it touches and returns a lower triangular
dL/dU; it is timed in turns against three baselines, one row each:

- ``sequential``: Algorithm 1 (:func:`~orthoverify.param.householder_torch.householder_apply`,
  strategy "store"); it takes m <= n - 1, so m = n runs as the first n - 1 reflections after
  the last one (two calls);
- ``householder_product``: ``torch.linalg.householder_product`` on the reflectors of U
  (``v_j = U_j / U_jj``, ``tau_j = 2 / ||v_j||^2``, padded to n columns with tau = 0) and a
  matmul, autograd through both;
- ``dense``: ``W @ X`` with W precomputed (a leaf requiring grad in fwd_bwd).

A fourth row per point times the WY path on the same U taken dense (``lower=False``: every
block over all n rows, the full n x m gradient) against the dense baseline. The WY path runs
as a training loop would: ``validate=False`` (nothing read back to the host) and the block of
:func:`~orthoverify.param.householder_wy.choose_block` for the device (``params["block"]``).

Every row reports the torch operations one call dispatches (``ops``, ``baseline_ops``; views
included, counted by :func:`~orthoverify.bench.timing.op_counts`, the same on every device);
on the CPU the WY row of ``householder.fwd_bwd`` also gives ``extra["ops_cuda_block"]``, the
count with CUDA's block (for n <= 1024). ``householder.blocks`` (run by name) times the WY
forward plus backward for each block size against the dense leaf: the measurement behind
``choose_block``.

Before timing, every baseline's C is checked against the WY path's (test ratio
``||C - C_wy|| / (n eps ||C_wy||) <= 30``), or the case stops: timing a wrong answer says
nothing. Sequential runs only where ``m <= 512`` and ``n m B <= 2^23`` (its Python loop over m
reflections and, for "store", its n (m+1) B saved values make the rest take minutes and
gigabytes), householder_product only for ``n <= 512`` (it forms W in O(n^2 m)); the target
point n = m = 512, B = 32 is measured against all three. Rows the limits leave out are named
in ``extra["not_measured"]``. Peak memory (timing.peak_bytes) is
reported for the WY path and each baseline.

``householder.memory_T``: Algorithm 1 over T time steps (``h_{t+1} = W h_t``, loss at the end),
strategy "recompute" (O(nB) saved per step beyond U) against "store" (O(nmB) per step).

``svd.fwd_bwd``: :func:`~orthoverify.param.householder_wy.svd_wy_apply` against autograd
through the dense ``M_{1,1}(u, v, sigma)`` of :func:`orthoverify.param.svd.m_k1k2` (n
reflections per side), forward plus backward.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import torch

from orthoverify.bench.core import BenchContext, BenchResult, bench_case
from orthoverify.bench.timing import ops_per_call, peak_bytes, take_turns
from orthoverify.errors import OrthoverifyError
from orthoverify.param.householder_torch import Strategy, householder_apply
from orthoverify.param.householder_wy import choose_block, householder_wy_apply, svd_wy_apply
from orthoverify.param.svd import m_k1k2
from orthoverify.tolerance import THRESHOLD

EPS = 2.0**-53  # float64 unit roundoff
DTYPE = torch.float64
SIZES = (64, 256, 512, 1024, 2048)
SIZES_QUICK = (64, 256)
BATCHES = (1, 32, 256)
BATCHES_QUICK = (1, 32)
SEQ_MAX_M = 512
SEQ_MAX_NMB = 2**23
HP_MAX_N = 512
IMPL = "wy lower=True validate=False (blocked compact WY on eq. 9's pattern, block from choose_block)"
IMPL_DENSE_U = "wy lower=False validate=False (blocked compact WY, U taken dense, block from choose_block)"
BASELINES = {
    "sequential": "Algorithm 1 (householder_apply, store)",
    "householder_product": "torch.linalg.householder_product + matmul",
    "dense": "dense W @ X (W precomputed)",
}

Fn = Callable[[], Any]


def grid(quick: bool) -> list[tuple[int, int, int]]:
    """(n, m, B): m in {n/16, n/4, n}; quick: n in {64, 256}, m in {n/16, n}, B in {1, 32}."""
    out = []
    for n in SIZES_QUICK if quick else SIZES:
        for m in (n // 16, n) if quick else (n // 16, n // 4, n):
            for bsz in BATCHES_QUICK if quick else BATCHES:
                out.append((n, m, bsz))
    return out


def inputs(n: int, m: int, bsz: int, device: str, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """U (eq. 9's pattern), X and G = dL/dC, float64, seeded by the sizes."""
    gen = torch.Generator().manual_seed(hash((seed, n, m, bsz)) % 2**31)
    u = torch.randn(n, m, generator=gen, dtype=DTYPE).tril()
    x, g = (torch.randn(n, bsz, generator=gen, dtype=DTYPE) for _ in range(2))
    return u.to(device), x.to(device), g.to(device)


def sequential(u: torch.Tensor, x: torch.Tensor, strategy: Strategy = "store") -> torch.Tensor:
    """Algorithm 1's ``W X``; for m = n the last reflection is applied by a second call."""
    n, m = u.shape
    if m < n:
        return householder_apply(u, x, strategy=strategy)
    return householder_apply(u[:, : n - 1], householder_apply(u[:, n - 1 :], x, strategy=strategy), strategy=strategy)


def hp_product(u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``W X`` through torch.linalg.householder_product: U_j / U_jj has the unit diagonal
    householder_product assumes and gives the same reflection, with tau_j = 2 / ||v_j||^2."""
    n, m = u.shape
    v = u / torch.diagonal(u[:m]).reshape(1, m)
    tau = 2 / (v * v).sum(0)
    if m < n:
        v = torch.cat([v, v.new_zeros(n, n - m)], dim=1)
        tau = torch.cat([tau, tau.new_zeros(n - m)])
    return torch.linalg.householder_product(v, tau) @ x


def check_ratio(c: torch.Tensor, ref: torch.Tensor) -> float:
    """``||c - ref||_F / (n eps ||ref||_F)`` (n = rows)."""
    return float((c - ref).norm() / (ref.shape[0] * EPS * ref.norm()))


def _verify(case: str, params: dict[str, Any], got: dict[str, torch.Tensor], ref: torch.Tensor) -> dict[str, float]:
    ratios = {name: check_ratio(c, ref) for name, c in got.items()}
    bad = {k: v for k, v in ratios.items() if not v <= THRESHOLD}
    if bad:
        raise OrthoverifyError(f"{case} {params}: C disagrees with the WY path (test ratios {bad}); not timed")
    return ratios


def _skips(n: int, m: int, bsz: int) -> dict[str, str]:
    out = {}
    if m > SEQ_MAX_M or n * m * bsz > SEQ_MAX_NMB:
        out["sequential"] = f"not run: m > {SEQ_MAX_M} or n m B > 2^23 (Python loop over m; store keeps n(m+1)B)"
    if n > HP_MAX_N:
        out["householder_product"] = f"not run: n > {HP_MAX_N} (forms W in O(n^2 m))"
    return out


def _clear(*leaves: torch.Tensor) -> Fn:
    """Drop the leaves' gradients (run before a peak-memory measurement, so that freeing the
    last call's gradients does not offset the measured call's allocations)."""

    def run() -> None:
        for t in leaves:
            t.grad = None

    return run


def _step(fn: Callable[..., torch.Tensor], leaves: tuple[torch.Tensor, ...], g: torch.Tensor) -> Fn:
    """One forward + backward of ``<fn(*leaves), g>`` with fresh gradients."""
    clear = _clear(*leaves)

    def run() -> None:
        clear()
        (fn(*leaves) * g).sum().backward()

    return run


def _matmul(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return w @ x


def _wy_lower(u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return householder_wy_apply(u, x, lower=True, validate=False)


def _wy_dense_u(u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return householder_wy_apply(u, x, validate=False)


def _wy_block(block: int) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def fn(u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return householder_wy_apply(u, x, block=block, lower=True, validate=False)

    return fn


OPS_CUDA_MAX_N = 1024
"""On the CPU, the CUDA block's operation count is measured up to this n (a forward plus
backward with one 1024-wide block costs seconds of CPU time beyond)."""


def _no_grad(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> Fn:
    """One forward call with autograd off."""

    def run() -> None:
        with torch.no_grad():
            fn(*args)

    return run


def _householder(case: str, ctx: BenchContext, backward: bool) -> list[BenchResult]:
    rows: list[BenchResult] = []
    reps = 3 if ctx.quick else 5
    for n, m, bsz in grid(ctx.quick):
        params = {"n": n, "m": m, "B": bsz, "dtype": "float64", "block": choose_block(m, ctx.device)}
        u, x, g = inputs(n, m, bsz, ctx.device)
        with torch.no_grad():
            c_wy = _wy_lower(u, x)
            eye = torch.eye(n, dtype=DTYPE, device=ctx.device)
            w = _wy_lower(u, eye)
        skips = _skips(n, m, bsz)
        impls: dict[str, Callable[..., torch.Tensor]] = {
            "sequential": sequential,
            "householder_product": hp_product,
            "dense": lambda _u, xx, w=w: _matmul(w, xx),
        }
        impls = {k: f for k, f in impls.items() if k not in skips}
        with torch.no_grad():
            checked = {k: f(u, x) for k, f in impls.items()}
            ratios = _verify(case, params, {**checked, "wy_dense_u": _wy_dense_u(u, x)}, c_wy)
        fns: dict[str, Fn] = {}
        clear: Fn | None = None  # drops the gradients before a peak measurement
        if backward:
            ul, xl, wl = (t.clone().requires_grad_(True) for t in (u, x, w))
            clear = _clear(ul, xl, wl)
            fns["wy"] = _step(_wy_lower, (ul, xl), g)
            fns["wy_dense_u"] = _step(_wy_dense_u, (ul, xl), g)
            for k, f in impls.items():
                fns[k] = _step(_matmul, (wl, xl), g) if k == "dense" else _step(f, (ul, xl), g)
        else:
            fns["wy"] = _no_grad(_wy_lower, u, x)
            fns["wy_dense_u"] = _no_grad(_wy_dense_u, u, x)
            for k, f in impls.items():
                fns[k] = _no_grad(f, u, x)
        times = take_turns(fns, reps, ctx.budget_s, ctx.device)
        peaks = {k: peak_bytes(f, ctx.device, before=clear) for k, f in fns.items()}
        ops = {k: ops_per_call(f) for k, f in fns.items()}
        cuda_ops: dict[str, int] = {}
        if backward and ctx.device == "cpu" and n <= OPS_CUDA_MAX_N:
            cuda_ops["ops_cuda_block"] = ops_per_call(_step(_wy_block(choose_block(m, "cuda")), (ul, xl), g))
        pairs = [("wy", k) for k in impls] + [("wy_dense_u", "dense")]
        for me, k in pairs:
            rows.append(
                BenchResult(
                    case=case,
                    params=params,
                    impl=IMPL if me == "wy" else IMPL_DENSE_U,
                    baseline=BASELINES[k],
                    seconds=statistics.median(times[me]),
                    baseline_seconds=statistics.median(times[k]),
                    peak_bytes=peaks[me],
                    baseline_peak_bytes=peaks[k],
                    ops=ops[me],
                    baseline_ops=ops[k],
                    extra={
                        **(cuda_ops if me == "wy" else {}),
                        "check_ratio": ratios[k if me == "wy" else me],
                        "runs": len(times[k]),
                        "u_pattern": "lower trapezoidal (eq. 9): tril(randn(n, m))",
                        "lower": me == "wy",
                        **({"not_measured": skips} if skips else {}),
                    },
                )
            )
    return rows


@bench_case(
    "householder.forward",
    "W X by blocked compact WY (U on eq. 9's pattern, lower=True; plus a lower=False row) vs Algorithm 1, "
    "householder_product + matmul and a dense W (forward only)",
)
def householder_forward(ctx: BenchContext) -> list[BenchResult]:
    """One row per (n, m, B) and baseline, each checked against the WY path before timing."""
    return _householder("householder.forward", ctx, backward=False)


@bench_case(
    "householder.fwd_bwd",
    "W X forward + backward (dU, dX) by blocked compact WY (U on eq. 9's pattern, lower=True; plus a "
    "lower=False row) vs Algorithm 1, householder_product + matmul and a dense W leaf",
)
def householder_fwd_bwd(ctx: BenchContext) -> list[BenchResult]:
    """One row per (n, m, B) and baseline, each checked against the WY path before timing."""
    return _householder("householder.fwd_bwd", ctx, backward=True)


BLOCK_SIZES = (16, 24, 32, 64, 128, 256, 512, 1024)
BLOCK_NS = (256, 512, 1024)
BLOCK_NS_QUICK = (128,)


@bench_case(
    "householder.blocks",
    "WY forward + backward (lower=True, validate=False, B = 32) for each block size vs the dense W leaf: "
    "the measurement behind choose_block",
    in_default=False,
)
def householder_blocks(ctx: BenchContext) -> list[BenchResult]:
    """One row per (n = m, block), n in BLOCK_NS (quick: BLOCK_NS_QUICK), blocks up to m, each
    checked against the dense product before timing; all blocks of one n timed in turns."""
    rows: list[BenchResult] = []
    bsz = 32
    for n in BLOCK_NS_QUICK if ctx.quick else BLOCK_NS:
        u, x, g = inputs(n, n, bsz, ctx.device, seed=2)
        with torch.no_grad():
            w = _wy_lower(u, torch.eye(n, dtype=DTYPE, device=ctx.device))
            ref = w @ x
        blocks = [b for b in BLOCK_SIZES if b <= n]
        ratios = {}
        for b in blocks:
            with torch.no_grad():
                ratios[b] = check_ratio(_wy_block(b)(u, x), ref)
        bad = {b: r for b, r in ratios.items() if not r <= THRESHOLD}
        if bad:
            raise OrthoverifyError(f"householder.blocks n={n}: C disagrees with the dense product ({bad}); not timed")
        ul, xl, wl = (t.clone().requires_grad_(True) for t in (u, x, w))
        fns: dict[str, Fn] = {"dense": _step(_matmul, (wl, xl), g)}
        fns.update({f"block {b}": _step(_wy_block(b), (ul, xl), g) for b in blocks})
        times = take_turns(fns, 3 if ctx.quick else 7, ctx.budget_s, ctx.device)
        ops = {k: ops_per_call(f) for k, f in fns.items()}
        for b in blocks:
            me = f"block {b}"
            rows.append(
                BenchResult(
                    case="householder.blocks",
                    params={"n": n, "m": n, "B": bsz, "dtype": "float64", "block": b},
                    impl="wy lower=True validate=False",
                    baseline=BASELINES["dense"],
                    seconds=statistics.median(times[me]),
                    baseline_seconds=statistics.median(times["dense"]),
                    ops=ops[me],
                    baseline_ops=ops["dense"],
                    extra={
                        "check_ratio": ratios[b],
                        "runs": len(times[me]),
                        "chosen": b == choose_block(n, ctx.device),
                    },
                )
            )
    return rows


def _unroll(u: torch.Tensor, h0: torch.Tensor, g: torch.Tensor, steps: int, strategy: Strategy) -> Fn:
    """Forward + backward of ``<h_T, G>`` with ``h_{t+1} = W h_t`` through Algorithm 1."""

    def run() -> None:
        u.grad = None
        h = h0
        for _ in range(steps):
            h = sequential(u, h, strategy)
        (h * g).sum().backward()

    return run


@bench_case(
    "householder.memory_T",
    "Algorithm 1 over T time steps: peak memory and time of the recompute strategy vs store",
)
def householder_memory_t(ctx: BenchContext) -> list[BenchResult]:
    """One row per T: impl "recompute" (O(nB) saved per step), baseline "store" (O(nmB) per step);
    n = m = 256, T in {16, 64} (quick: n = m = 32, T in {4, 16})."""
    n = 32 if ctx.quick else 256
    m, bsz = n, 32
    rows = []
    for steps in (4, 16) if ctx.quick else (16, 64):
        u, h0, g = inputs(n, m, bsz, ctx.device, seed=1)
        u.requires_grad_(True)
        fns = {s: _unroll(u, h0, g, steps, s) for s in ("recompute", "store")}
        times = take_turns(fns, 3, ctx.budget_s, ctx.device)
        peaks = {s: peak_bytes(f, ctx.device, before=_clear(u)) for s, f in fns.items()}
        rows.append(
            BenchResult(
                case="householder.memory_T",
                params={"n": n, "m": m, "B": bsz, "T": steps, "dtype": "float64"},
                impl="Algorithm 1, recompute",
                baseline="Algorithm 1, store",
                seconds=statistics.median(times["recompute"]),
                baseline_seconds=statistics.median(times["store"]),
                peak_bytes=peaks["recompute"],
                baseline_peak_bytes=peaks["store"],
                extra={
                    "store_saved_bytes_model": 8 * steps * n * (m + 1) * bsz,
                    "recompute_saved_bytes_model": 8 * steps * n * bsz,
                    "note": "m = n runs as n - 1 reflections after the last one (Algorithm 1 takes m <= n - 1)",
                },
            )
        )
    return rows


def svd_inputs(
    n: int, bsz: int, device: str
) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor]:
    """[u_1..u_n], [v_1..v_n] (u_j of length j), sigma, X, G."""
    gen = torch.Generator().manual_seed(n * 7 + bsz)
    us = [torch.randn(j, generator=gen, dtype=DTYPE).to(device) for j in range(1, n + 1)]
    vs = [torch.randn(j, generator=gen, dtype=DTYPE).to(device) for j in range(1, n + 1)]
    sigma = (torch.rand(n, generator=gen, dtype=DTYPE) + 0.5).to(device)
    x, g = (torch.randn(n, bsz, generator=gen, dtype=DTYPE).to(device) for _ in range(2))
    return us, vs, sigma, x, g


def _columns(vs: list[torch.Tensor], n: int) -> torch.Tensor:
    """``(x_n | ... | x_1)``, each padded with leading zeros: svd_wy_apply's columns for eq. 3."""
    return torch.stack([torch.cat([v.new_zeros(n - v.shape[0]), v]) for v in reversed(vs)], dim=1)


@bench_case(
    "svd.fwd_bwd",
    "svdRNN U Sigma V' X forward + backward by blocked compact WY vs autograd through the dense svd.m_k1k2",
)
def svd_fwd_bwd(ctx: BenchContext) -> list[BenchResult]:
    """One row per n (n reflections per side, B = 32), checked against the dense product first."""
    rows = []
    bsz = 32
    for n in (64,) if ctx.quick else (64, 256, 512):
        us, vs, sigma, x, g = svd_inputs(n, bsz, ctx.device)
        uu, uv = _columns(us, n), _columns(vs, n)
        with torch.no_grad():
            ratio = check_ratio(m_k1k2(us, vs, sigma) @ x, svd_wy_apply(uu, sigma, uv, x))
        if not ratio <= THRESHOLD:
            raise OrthoverifyError(
                f"svd.fwd_bwd n={n}: the dense product disagrees (test ratio {ratio:.3g}); not timed"
            )
        fast = tuple(t.clone().requires_grad_(True) for t in (uu, sigma, uv, x))
        dense = [t.clone().requires_grad_(True) for t in (*us, *vs, sigma, x)]

        def dense_fn(*leaves: torch.Tensor, n: int = n) -> torch.Tensor:
            return m_k1k2(list(leaves[:n]), list(leaves[n : 2 * n]), leaves[2 * n]) @ leaves[2 * n + 1]

        fns = {"wy": _step(svd_wy_apply, fast, g), "dense": _step(dense_fn, tuple(dense), g)}
        times = take_turns(fns, 3, ctx.budget_s, ctx.device)
        peaks = {k: peak_bytes(f, ctx.device, before=_clear(*fast, *dense)) for k, f in fns.items()}
        rows.append(
            BenchResult(
                case="svd.fwd_bwd",
                params={"n": n, "m1": n, "m2": n, "B": bsz, "dtype": "float64"},
                impl="svd_wy_apply (block from choose_block)",
                baseline="autograd through svd.m_k1k2 (dense)",
                seconds=statistics.median(times["wy"]),
                baseline_seconds=statistics.median(times["dense"]),
                peak_bytes=peaks["wy"],
                baseline_peak_bytes=peaks["dense"],
                extra={"check_ratio": ratio, "runs": len(times["wy"])},
            )
        )
    return rows
