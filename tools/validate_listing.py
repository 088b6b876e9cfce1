"""Write orthoverify/validate_listing.json: the data `orthoverify validate --list` prints, computed
from the code (kinds, checks, adapters, declaration keywords, named domains), so that the command
answers without importing torch. Run after changing a kind, a check's plan or an adapter:

    python tools/validate_listing.py

tests/unit/conformance/test_reach_declare.py fails while the file and the code disagree.
"""

from __future__ import annotations

import json

from orthoverify import _atomic, validate_listing
from orthoverify.conformance import listing_data

if __name__ == "__main__":
    path = _atomic.write_text(validate_listing.DATA_FILE, json.dumps(listing_data(), indent=1) + "\n")
    print(f"wrote {path}")
