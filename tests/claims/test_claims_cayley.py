"""The cayley.* claims' quick run: the evidence each one rests on, and each counterexample replays
from the JSON result (each claim's verdict is tests/claims/test_verdicts.py's test_verdict[<id>])."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import replay_from_file
from orthoverify.tolerance import THRESHOLD
from tests.claims.claims_common import assert_rerun_identical, expected_verdicts, quick_run

EXPECTED = expected_verdicts("cayley")


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run("cayley", tmp_path_factory)


def test_theorem3_1_evidence_covers_every_method(quick: Path) -> None:
    data = json.loads(quick.read_text())
    (claim,) = [c for c in data["claims"] if c["id"] == "cayley.theorem3_1"]
    checks = {(e["check"], e["backend"]) for e in claim["evidence"]}
    assert ("exhaustive", "mpmath-50") in checks
    assert ("high_precision", "mpmath-50") in checks
    assert ("float", "numpy-float64") in checks
    assert ("exact", "sympy") in checks
    assert any(e["method"] == "search" for e in claim["evidence"])


def test_drift_verdict_states_what_was_measured(quick: Path) -> None:
    data = json.loads(quick.read_text())
    (claim,) = [c for c in data["claims"] if c["id"] == "cayley.orthogonality_drift"]
    assert {e["backend"] for e in claim["evidence"]} == {"numpy-float32", "numpy-float64"}
    for e in claim["evidence"]:
        assert "10000 steps" in e["notes"] and "multiplicative/additive" in e["notes"]
        assert e["data"]["step"][-1] == 10000
        assert max(e["data"]["additive"]) <= THRESHOLD < e["data"]["multiplicative"][-1]


def test_every_counterexample_replays(quick: Path) -> None:
    data = json.loads(quick.read_text())
    refuted = [c for c in data["claims"] if c["verdict"] == "refuted"]
    assert {c["id"] for c in refuted} == {k for k, v in EXPECTED.items() if v == "refuted"}
    for c in refuted:
        assert c["counterexample"]["precision_digits"] == "exact"
        rep = replay_from_file(quick, c["id"], modules=CLAIM_MODULES)
        assert rep.reproduced, c["id"]


def test_init_counterexample_is_the_split_block(quick: Path) -> None:
    data = json.loads(quick.read_text())
    (claim,) = [c for c in data["claims"] if c["id"] == "cayley.init"]
    cx = claim["counterexample"]
    assert cx["inputs"]["n"] == "2" and cx["inputs"]["D"] in (["-1", "1"], ["1", "-1"])
    assert "(lam - 1)*(lam + 1)" in cx["value"]


def test_same_seed_same_results(quick: Path) -> None:
    # theorem3_1 (8 s of the quick run) is run twice with one seed, serial and pooled, and compared digit
    # for digit by tests/unit/engine/test_executors.py
    assert_rerun_identical(quick, ["cayley.three_layers", "cayley.bijection", "cayley.init"])


def test_init_replays_parse_file_strings_and_never_evaluate_them() -> None:
    """A result file is untrusted: the replays of cayley.init and its correction parse s_j through
    the SymPy backend's strict parser, so a crafted entry is refused by name; valid input replays."""
    from orthoverify.backends import get_backend
    from orthoverify.claims.cayley import init
    from orthoverify.errors import ParseError

    crafted = {"n": "2", "s": ['__import__("os").getpid()'], "D": ["-1", "1"]}
    sympy_backend = get_backend("sympy")
    for corrected in (False, True):
        with pytest.raises(ParseError, match="not a decimal, integer or p/q number"):
            init.reflection(sympy_backend, crafted, corrected=corrected)
    split_block = {"n": "2", "s": ["1/2"], "D": ["-1", "1"]}
    assert init.reflection(sympy_backend, split_block, corrected=False).ratio == math.inf
    assert init.reflection(sympy_backend, split_block, corrected=True).ratio == 0.0


def test_modrelu_audit_at_zero_can_fail() -> None:
    """The audit of z = 0 holds for b = 1/2 and names the wrong lines for b = -1/2 (where eq. 3 is
    defined at 0: 0, since |0| + b < 0)."""
    from orthoverify.backends import get_backend
    from orthoverify.claims.cayley import modrelu_real

    sympy_backend = get_backend("sympy")
    assert all(holds for _, holds in modrelu_real.at_zero(sympy_backend, {"b": "1/2"}))
    wrong = [text for text, holds in modrelu_real.at_zero(sympy_backend, {"b": "-1/2"}) if not holds]
    assert wrong == ["b = -1/2: eq. 3 is undefined at z = 0"]


def test_example_2x2_measure_refutes_another_w() -> None:
    """The printed example's measure holds for c = -0.99999 and refutes c = -0.9999 (a_12 = sqrt(19999)
    = 141.42..., not the printed 447.212) in exact and float arithmetic."""
    from orthoverify.backends import get_backend
    from orthoverify.claims.cayley import example_2x2

    for name in ("sympy", "numpy-float64", "mpmath"):
        b = get_backend(name)
        assert example_2x2.printed_parameter(b, {"c": "-0.99999"}).ratio <= THRESHOLD
        wrong = example_2x2.printed_parameter(b, {"c": "-0.9999"})
        assert wrong.ratio == math.inf and "a_12 rounds to 447.212" in wrong.display


def test_bijection_minus_one_measure_catches_a_planted_inverse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exhaustive check's measure holds for the real inverse map on W = -I and W = I, and
    flags a planted inverse that answers for W = -I (which has the eigenvalue -1)."""
    import numpy as np

    from orthoverify.backends import get_backend
    from orthoverify.claims.cayley import bijection

    b = get_backend("sympy")
    for w in (-np.eye(2), np.eye(2)):
        assert bijection.minus_one_excluded(b, {"W": w}).ratio == 0.0
    monkeypatch.setattr(bijection.cy, "inverse_cayley", lambda w, backend: np.zeros((2, 2), dtype=object))
    assert bijection.minus_one_excluded(b, {"W": -np.eye(2)}).ratio == math.inf

