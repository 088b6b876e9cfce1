"""Every svd.* claim of the catalogue is registered, the quick profile decides each one from its
evidence, and each counterexample replays from the JSON result."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from orthoverify.claims.svd import algorithm1
from orthoverify.param.svd import stack_padded
from orthoverify.tolerance import THRESHOLD
from tests.claims.claims_common import assert_counterexamples_replay, quick_run

PAPER = "svd"


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run(PAPER, tmp_path_factory)


def test_every_counterexample_replays(quick: Path) -> None:
    assert_counterexamples_replay(quick)


def test_theorems_are_checked_by_every_method(quick: Path) -> None:
    data = json.loads(quick.read_text())
    by_id = {c["id"]: c for c in data["claims"]}
    for cid in ("svd.theorem1", "svd.theorem3", "svd.hgrad", "svd.algorithm1.corrected"):
        backends = {e["backend"] for e in by_id[cid]["evidence"]}
        assert "sympy" in backends and "mpmath-50" in backends, cid
        assert any("float32" in b for b in backends), cid


def test_algorithm1_printed_is_wrong_only_in_the_u_gradient() -> None:
    """The refutation names the right culprit: with m1 = 0 (no U loop) the printed algorithm is exact."""
    from orthoverify.backends import get_backend

    b = get_backend("sympy")
    rng = np.random.default_rng(3)
    n = 3
    case = {
        "h": np.array([1, -2, 3], dtype=object),
        "g": np.array([2, 1, -1], dtype=object),
        "U": np.zeros((n, 0)),
        "V": stack_padded([rng.integers(1, 4, size=j).astype(object) for j in (2, 3)], n),
        "m1": 0,
        "m2": 2,
        "s": np.array([1, 2, 3], dtype=object),
    }
    assert algorithm1.derivative("printed").exact(b, case).ratio == 0.0
    case["U"] = stack_padded([np.array([1, 1, 2], dtype=object)], n)
    case["m1"] = 1
    assert algorithm1.derivative("printed").exact(b, case).ratio == float("inf")
    assert algorithm1.derivative("corrected").exact(b, case).ratio == 0.0


def test_exact_replays_parse_file_strings_and_never_evaluate_them() -> None:
    """The exact replays of svd.dimension and svd.theorem5 read a result file's strings through
    the SymPy backend's strict parser: a crafted entry is a ParseError naming the field."""
    from orthoverify.backends import get_backend
    from orthoverify.claims.svd import dimension, theorem5
    from orthoverify.errors import ParseError

    crafted = '__import__("os").getpid()'
    point = ["1/2", "1", "-3/2", "-2", "2/3", "1", "11/10", "23/10"]
    assert dimension.violation_exact(get_backend("sympy"), {"n": "2", "point": point}).ratio == 0.0
    with pytest.raises(ParseError, match="point"):
        dimension.violation_exact(get_backend("sympy"), {"n": "2", "point": [crafted, *point[1:]]})
    instance = {"Y": [["1"]], "A": [["1/10", "1"]], "Sigma": [["1", "0"], ["0", "1"]], "t": 2}
    held = theorem5.violation_exact(get_backend("sympy"), {**instance, "w": "-0.65"})
    assert held.ratio == float("inf")  # the hand-built spurious minimum near w = -0.6505
    with pytest.raises(ParseError, match="w"):
        theorem5.violation_exact(get_backend("sympy"), {**instance, "w": crafted})


def test_theorem5_search_finds_every_exact_critical_point_at_n1() -> None:
    """The n = 2 search's machinery (float64 Newton, refined at 50 digits) finds exactly the real
    critical points that the exact enumeration finds on the hand-built n = 1 instance, each of
    the same kind; on a t = 1 control (R convex) it finds one point, so no candidate."""
    from orthoverify.claims.svd import theorem5
    from orthoverify.param import linear_rnn as lr

    inst = theorem5.HAND_BUILT_1D
    found = lr.find_critical_points(inst["Y"], inst["A"], inst["Sigma"], inst["t"], starts=8, seed=0)
    exact = theorem5.exact_1d(inst)
    assert len(found) == len(exact) == 3
    for e in exact:
        assert any(abs(e.w[0, 0] - f.w[0, 0]) < 1e-40 and e.kind == f.kind for f in found)
    control = lr.find_critical_points([[1.0]], [[0.5]], [[1.0]], 1, starts=4, seed=0)
    assert len(control) == 1


def test_theorem5_violation_is_large_only_at_a_spurious_minimum() -> None:
    """The search's violation measure (test and replay): above the threshold at the hand-built
    spurious minimum measured against the global one; below it with the roles swapped (negative
    gap) and at the local maximum (negative Hessian)."""
    from orthoverify.backends import get_backend
    from orthoverify.claims.svd import theorem5
    from orthoverify.claims.svd.theorem5 import HAND_BUILT_1D, exact_1d, nstr

    hp = get_backend("mpmath")
    low, top, high = sorted(exact_1d(HAND_BUILT_1D), key=lambda p: p.w[0, 0])  # spurious min, max, global min

    def at(w: object, better: object) -> float:
        case = {**HAND_BUILT_1D, "W": [[nstr(w, 45)]], "W_better": [[nstr(better, 45)]]}
        return theorem5.violation_search(hp, case).ratio

    assert (low.kind, top.kind, high.kind) == ("min", "max", "min")
    assert at(low.w[0, 0], high.w[0, 0]) > THRESHOLD
    assert at(high.w[0, 0], low.w[0, 0]) <= THRESHOLD
    assert at(top.w[0, 0], high.w[0, 0]) <= THRESHOLD


def test_exact_measures_refute_planted_wrong_statements(monkeypatch: pytest.MonkeyPatch) -> None:
    """The measures behind the templates can fail: k1 + k2 = n + 2 (inside Theorem 3's range, where
    -I is reached) gives det(M - I) != 0; one column beyond the sharp Lemma 1 differs; a closed form
    off by one at m1 = m2 = n is a wrong count; Table 3's rows fail under the stated configuration."""
    from orthoverify.backends import get_backend
    from orthoverify.claims.svd import lemma1, parameter_count, table3, theorem3_sharp
    from orthoverify.param import svd as sv

    b = get_backend("sympy")
    vec = [np.array([(3 * i + j) % 5 - 2 or 1 for i in range(j)], dtype=object) for j in range(1, 5)]
    v = np.array([2, 1, 1], dtype=object)
    inside = {"n": 3, "k1": 2, "k2": 3, "U": stack_padded(vec[1:3], 3), "V": stack_padded([v], 3)}
    assert theorem3_sharp.violation(b, inside).ratio == float("inf")
    assert theorem3_sharp.violation(b, {"n": 3, "symbolic": "1"}).ratio == 0.0
    assert lemma1.SHARP.measure(b, {"V": stack_padded(vec, 4), "k1": 1, "k2": 3}).ratio == 0.0
    v1, v3 = sv.m_k(vec, 4, backend=b), sv.m_k(vec[2:], 4, backend=b)
    assert not b.is_zero(v1[:, 2] - v3[:, 2])  # column n - k2 + 2 = 3 differs: the range is sharp
    point = {"n": 3, "n_i": 1, "n_o": 1, "m1": 3, "m2": 3}
    assert all(s == c for _, s, c in parameter_count.tally(point))
    count = sv.svdrnn_parameter_count
    monkeypatch.setattr(sv, "svdrnn_parameter_count", lambda *a: count(*a) + 1)
    assert any(s != c for _, s, c in parameter_count.tally(point))
    assert any(s != c for _, s, c in table3.stated({"row": "50words"}))


def test_the_proofs_name_each_place_as_the_claim_declares_it() -> None:
    """A claim's place in the paper has one home, its ``Claim.place``: each entry of proofs/svd.md
    opens with it exactly as ``Claim.where`` renders it (``**Printed (<where>).**``), and a corrected
    twin, whose place is its printed claim's, names none. A planted stray spelling is caught."""
    import re

    from orthoverify.claims import MODULES
    from orthoverify.engine import get_registry

    lead = re.compile(r"\*\*(?:Printed|Statement|Added)(?: \((.*)\))?\.\*\*")
    text = (Path(__file__).resolve().parents[2] / "proofs" / "svd.md").read_text()

    def stray(text: str) -> list[str]:
        out = []
        for c in (c for c in get_registry(MODULES) if c.paper == PAPER):
            head = re.search(rf"^#{{2,3}} {re.escape(c.id)} — .*\n\n", text, re.M)
            assert head is not None, c.id
            m = lead.match(text, head.end())
            if m is None or m.group(1) != (None if c.origin == "corrected" else c.where):
                out.append(c.id)
        return out

    assert stray(text) == []
    assert stray(text.replace("**Printed (Thm 1, App. A.2).**", "**Printed (Thm 1).**")) == ["svd.theorem1"]
