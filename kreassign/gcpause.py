"""Pausing Python's cyclic garbage collector around bulk work. Standard library only."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Suspend the cyclic collector while millions of containers are built and none is freed (reading a
    large JSON document, a cluster snapshot, planning): it would scan them again and again, for no garbage
    (18 s of 80 s at a million partitions, measured). Nested use is fine; the outermost restores it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not gc.get_freeze_count():
                # Everything made during the pause sits in the youngest generation: the first collection
                # after gc.enable() would scan it all (0.5 s at a million partitions). Freezing and thawing
                # moves it to the oldest generation unscanned, where survivors of bulk work belong.
                gc.freeze()
                gc.unfreeze()
            gc.enable()
