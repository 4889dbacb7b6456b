"""The rack rule in the plan report at a real terminal (a pseudo-terminal rendered by pyte): draining a broker of
the smaller rack, `--generate --strategy balanced` says at 80 and 140 columns which brokers the racks hold away
from the mean and why, every word on the screen (wrapped, never cut)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from tests.terminal.screen import Terminal
from tests.unit.test_rack_limits import uneven_racks_snapshot

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("cols", [80, 140])
def test_the_racks_held_and_why_at_the_terminal(tmp_path, cols):
    plan = tmp_path / "plan.txt"
    terminal = Terminal([str(a) for a in uneven_racks_snapshot(tmp_path)], cols=cols, stdout_to=plan)
    assert terminal.wait(timeout=120) == 0, terminal.text()
    lines = terminal.lines()
    assert all(len(line) <= cols for line in lines)
    words = {word for line in lines for word in line.split()}
    assert {"only", "broker", "left", "rack-a,", "rack-b"} <= words  # whole words: none cut at the edge
    text = " ".join(" ".join(lines).split())
    assert re.search(
        r"Racks: broker 1 holds 12 replicas, above the mean of 8: it is the only broker left in rack rack-a, and "
        r"each partition keeps a replica there\.",
        text,
    ), text
    assert "Racks: brokers 2 and 4 hold 6 replicas each, below the mean of 8: rack rack-b may take only one" in text
    assert "Bytes per broker: what the racks set (above), evened out within each rack." in text
    proposal = json.loads(plan.read_text().splitlines()[4])["partitions"]
    assert Counter(b for p in proposal for b in p["replicas"]) == {1: 12, 2: 6, 4: 6}
