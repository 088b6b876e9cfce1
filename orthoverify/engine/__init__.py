"""The theorem-check engine: claims, checks, verdicts, runs, results and replay.

It names no family of claims: callers pass the claims modules to run (``modules``; orthoverify's
own are ``orthoverify.claims.MODULES``) and, to replay a result file of another kind, the
resolvers of its families (``families``)."""

from orthoverify.engine.checks import (
    Case,
    Check,
    FunctionCheck,
    Outcome,
    PropertyCheck,
    RunContext,
    SearchCheck,
    SymbolicCheck,
)
from orthoverify.engine.model import Claim, Counterexample, Evidence, decide
from orthoverify.engine.profiles import PROFILES, Profile, get_profile
from orthoverify.engine.ratios import THRESHOLD, Measure, agreement, residual
from orthoverify.engine.registry import Registry, get_registry
from orthoverify.engine.replay import Replay, replay_counterexample, replay_from_file
from orthoverify.engine.result import load_json, to_json, write_json
from orthoverify.engine.runner import ClaimResult, RunResult, SerialExecutor, run_checks

__all__ = [
    "PROFILES",
    "THRESHOLD",
    "Case",
    "Check",
    "Claim",
    "ClaimResult",
    "Counterexample",
    "Evidence",
    "FunctionCheck",
    "Measure",
    "Outcome",
    "Profile",
    "PropertyCheck",
    "Registry",
    "Replay",
    "RunContext",
    "RunResult",
    "SearchCheck",
    "SerialExecutor",
    "SymbolicCheck",
    "agreement",
    "decide",
    "get_profile",
    "get_registry",
    "load_json",
    "replay_counterexample",
    "replay_from_file",
    "residual",
    "run_checks",
    "to_json",
    "write_json",
]
