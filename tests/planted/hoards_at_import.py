"""A target whose module, at import, writes an anonymous shared mapping of 2 x
containment_targets.SHARED_CAP and holds it (issue 26: the memory cap across the target's
processes holds while it loads too). Imported only in a target's process, by a test that runs it
under that cap and expects it to be killed."""

from __future__ import annotations

import mmap
import time

import torch

from tests.planted.containment_targets import SHARED_CAP

_HELD = mmap.mmap(-1, 2 * SHARED_CAP)  # MAP_SHARED | MAP_ANONYMOUS: outside the data segment
for _at in range(0, 2 * SHARED_CAP, 2**20):
    _HELD[_at : _at + 2**20] = b"\x01" * 2**20
time.sleep(60)


def target(u: torch.Tensor) -> torch.Tensor:  # reached only if the cap did not hold
    return u
