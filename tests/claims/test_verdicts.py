"""The golden verdicts, one test per claim: ``test_verdict[svd.theorem5]`` runs the claim's family
on the quick profile (once per session, shared with the family's other tests) and compares the
claim's verdict with the one it declares (``Claim.expected``, the one home of that fact). A
flipped claim fails as its own test, named by its id."""

from __future__ import annotations

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry
from tests.claims.claims_common import assert_verdict, quick_run


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", [pytest.param(c.id, id=c.id) for c in get_registry(CLAIM_MODULES)])
def test_verdict(claim_id: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    claim = get_registry(CLAIM_MODULES)[claim_id]
    assert_verdict(quick_run(claim.paper, tmp_path_factory), claim_id)
