"""Theorem 2's proof transcribed as exact SymPy matrix algebra (an ill-typed product raises
instead of broadcasting) and audited display by display against exact directional derivatives."""

from __future__ import annotations

from orthoverify.claims.householder import twins
from orthoverify.claims.householder._shared import audited_proof
from orthoverify.engine.checks import Check
from orthoverify.engine.model import Claim, Place
from orthoverify.param.householder_proofs import theorem2_proof_lines, theorem2_reference

PROOF_NOTES = (
    "Each display is transcribed as exact SymPy matrix algebra (orthoverify.param.householder_proofs), so an "
    "ill-typed product or sum raises instead of broadcasting, and compared with the truth computed from the "
    "definitions (exact directional derivatives). Lines ending .dh/.du compare the dh and dU parts of a trace "
    "separately. The text is an extraction from the PDF: bar/tilde swaps may be extraction artefacts, the "
    "misplaced transposes repeat across three displays and look like the authors' own."
)


def checks(corrected: bool) -> tuple[Check, ...]:
    keys = ("U", "h", "c", "dU", "dh")
    return (audited_proof(theorem2_proof_lines, theorem2_reference, keys, corrected=corrected),)


CLAIMS: list[Claim] = twins(
    "householder.theorem2_proof",
    place=Place(theorem="2", appendix="A", note="its proof"),
    expected="refuted",
    origin="added",
    summary="the displays of Theorem 2's proof hold as printed",
    corrected_summary="the displays of Theorem 2's proof with their transposes restored",
    kind="gradient",
    printed=(
        "The chain of displays in the proof of Theorem 2, ending in U_bar = U[(h~C~') o B' + (C~'h') o B] - "
        "C_bar'h' - hC~', h_bar = C_bar' - UC~, holds line by line"
    ),
    corrected=(
        "With C~' -> C_bar' and h~C~' -> h~C_bar' in the 3rd display, C~'h' -> C~h' and C~'h~' -> C~h~' in the "
        "5th and 6th, the bracket [(C~h~') o B + (h~C~') o B'] in the 6th, and the conclusion U_bar = "
        "U[(h~C~') o B' + (C~h~') o B] - C_bar h~' - hC~', h_bar = C_bar - UC~ (eqs. 14-15), every line holds"
    ),
    checks=checks,
    notes=PROOF_NOTES,
    printed_notes="Eqs. 14-15 in the theorem itself are right (householder.theorem2).",
)
