"""Garbage collection for an app that repaints many times a second (issue 28).

What start-up built (modules, the engine, the widgets) lives as long as the
app: ``gc.freeze()`` moves it out of the collector's reach, so full
collections stop walking it again and again.

A frame of a streaming reply builds thousands of Textual ``Strip`` objects, and
each keeps caches that refer back to it, so every frame leaves reference cycles
behind. At CPython's default thresholds (700, 10, 10) that meant a young
collection every few dozen strips and a full one about every second, 20–90 ms
each, measured with a ``gc.callbacks`` hook in the tmux stream bench at 1,000
deltas/s; a key typed meanwhile waited. A young generation of 50,000 objects
makes collections rare and still bounded (a few MB of garbage at most). Key echo
at 1,000 deltas/s (``bench/stream.py``, 60 marks per setting pooled from three
interleaved runs, two experiments): p95 78–84 ms at the defaults, 79–89 ms at
10,000, 69 ms at 20,000, 63–67 ms at 50,000. A young collection then takes
longer (20–100 ms seen), but it comes about every 2.5 s instead of many times a
second, and far fewer keys meet one.
"""

from __future__ import annotations

import gc

YOUNG_OBJECTS = 50_000  # allocations (net of frees) between young collections
OLDER_EVERY = 20  # young collections per middle one; full ones as CPython decides (10)


def settle_after_startup() -> None:
    """Freeze what start-up built and make collections rare; call once it is all built."""
    gc.freeze()
    _, _, full = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, OLDER_EVERY, full)
