"""The unitary.* claims' quick run: the evidence each one rests on, and each counterexample replays
from the JSON result (each claim's verdict is tests/claims/test_verdicts.py's test_verdict[<id>])."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orthoverify.backends import get_backend
from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry
from orthoverify.engine.checks import Check
from tests.claims.claims_common import family_tests

PAPER = "unitary"
quick, test_every_counterexample_replays = family_tests(PAPER)


def test_claims_are_checked_by_independent_methods(quick: Path) -> None:
    data = json.loads(quick.read_text())
    by_id = {c["id"]: c for c in data["claims"]}
    for cid in ("unitary.complex_block", "unitary.rnn_equivalence", "unitary.corollary1", "unitary.building_blocks"):
        methods = {e["method"] for e in by_id[cid]["evidence"]}
        backends = {e["backend"] for e in by_id[cid]["evidence"]}
        assert "symbolic" in methods and "mpmath-50" in backends, cid
        assert any("float32" in b for b in backends), cid


def test_printed_modrelu_indices_fail_for_every_n() -> None:
    """k_n = 0 and k~_n = k~_2n = 0 for every n: the printed 1-based formulas leave the range."""
    from orthoverify.param.unitary import modrelu_real_indices

    for n in range(1, 40):
        idx = {i: (k, kt) for i, k, kt in modrelu_real_indices(n, "printed")}
        assert idx[n][0] == 0 and idx[n][1] == 0 and idx[2 * n][1] == 0
        fixed = modrelu_real_indices(n, "corrected")
        assert all(1 <= k <= 2 * n and 1 <= kt <= n for _, k, kt in fixed)


def _check(claim_id: str, name: str) -> Check:
    """The check ``name`` of registered claim ``claim_id``."""
    claim = next(c for c in get_registry(CLAIM_MODULES) if c.id == claim_id)
    return next(c for c in claim.checks if c.name == name)


def test_lemma1_counterexample_is_a_valid_decomposition() -> None:
    """The refutation's V is unitary and V D V* is the real identity: the hypothesis holds."""
    import sympy

    inputs = {"V_re": [["1", "0"], ["0", "0"]], "V_im": [["0", "0"], ["0", "1"]], "D": ["1", "1"]}
    v = sympy.Matrix([[1, 0], [0, sympy.I]])
    assert v.H * v == sympy.eye(2) and v * v.H == sympy.eye(2)
    m = _check("unitary.lemma1", "converse").replay(inputs, get_backend("sympy"))
    assert m.ratio == float("inf") and "no conjugate column" in (m.value or "")


@pytest.mark.parametrize(
    ("claim", "inputs"),
    [
        (
            ("unitary.lemma1", "converse"),
            {
                "V_re": [['__import__("os").getpid()', "0"], ["0", "0"]],
                "V_im": [["0", "0"], ["0", "1"]],
                "D": ["1", "1"],
            },
        ),
        (
            ("unitary.corollary1_proof", "witness"),
            {"x_re": ['__import__("os").getpid()', "1"], "x_im": ["0", "0"]},
        ),
    ],
)
def test_exact_replays_parse_file_strings_and_never_evaluate_them(
    claim: tuple[str, str], inputs: dict[str, object]
) -> None:
    """A result file is untrusted: a crafted entry is refused by name (it used to be sympified)."""
    from orthoverify.errors import ParseError

    with pytest.raises(ParseError, match="not a decimal, integer or p/q number"):
        _check(*claim).replay(inputs, get_backend("sympy"))
