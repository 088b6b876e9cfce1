"""The target's process and its containment: everything on the target's side of the boundary.

What runs in the target's process is a minimal, fixed program (:mod:`.program`, with
:mod:`.substitute`): it loads the target (:mod:`.adapters`, :mod:`.build`, :mod:`.declare`),
calls it and torch's AD on it on the tensors the verifier sends, and returns raw values over the
protocol of :mod:`.wire`. The verifier starts, feeds, contains and stops that process
(:mod:`.isolate`, :mod:`.runner`, :mod:`.contain`, :mod:`.calls`).

Nothing here measures: no reference, ratio, allowance, scan or verdict. This package imports
none of orthoverify's measuring layers (engine, claims, conformance, report, bench, command
line), a contract ``lint-imports`` enforces (pyproject.toml: "the target's program imports no
measure"), so that nothing the verifier trusts can be resolved in the target's process.
"""
