"""Write tests/data/expected_verdicts.json (claim id -> verdict) from a result file.

    python tools/expected_verdicts.py [RESULT.json]   (default: reports/check-default.json)

The expected verdicts are the tests' one home for what each claim's evidence says; the tests
check that the committed reference result, the README's claim tables and the proofs' headings
agree with them. Rewrite the file only when a verdict change is intended, and say why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "tests" / "data" / "expected_verdicts.json"


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else ROOT / "reports" / "check-default.json"
    data = json.loads(source.read_text())
    verdicts = {c["id"]: c["verdict"] for c in data["claims"]}
    tmp = TARGET.with_suffix(".tmp")
    tmp.write_text(json.dumps(verdicts, indent=1) + "\n")
    tmp.replace(TARGET)
    print(f"{len(verdicts)} verdicts from {source} -> {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
