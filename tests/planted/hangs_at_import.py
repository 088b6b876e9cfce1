"""A target whose module never finishes importing (issue 26: ``--timeout`` covers loading): it
sleeps at import, for good. Imported only in a target's process, by name, by a test that expects
it to be killed."""

from __future__ import annotations

import os
import time

import torch

with open("pids", "a") as f:  # in the working directory: the test's, which the target's process starts in
    f.write(f"{os.getpid()}\n")
while True:
    time.sleep(1.0)


def target(u: torch.Tensor) -> torch.Tensor:  # never reached
    return u
