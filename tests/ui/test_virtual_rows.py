"""VirtualRows on its own: offsets, exact vs estimated heights, locating rows, anchoring.

Pure and fast (no app): the plan view and the transcript both lay out through it.
"""

from __future__ import annotations

from itertools import accumulate

from hypothesis import given, settings
from hypothesis import strategies as st

from planshell.ui.virtual_rows import Anchor, VirtualRows


def test_offsets_are_the_prefix_sum_of_heights() -> None:
    rows = VirtualRows([3, 1, 4])
    assert list(rows.offsets) == [0, 3, 4, 8]
    assert rows.total == 8
    assert [rows.offset(i) for i in range(4)] == [0, 3, 4, 8]


def test_locate_maps_a_row_to_its_block_and_the_row_inside() -> None:
    rows = VirtualRows([3, 1, 4])
    assert [rows.locate(r) for r in range(8)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (2, 1), (2, 2), (2, 3),
    ]  # fmt: skip
    assert rows.index_at(-5) == 0  # clamped to the first block
    assert rows.index_at(100) == 2  # and to the last


def test_an_empty_list_has_no_anchor_and_locates_to_zero() -> None:
    rows = VirtualRows()
    assert rows.total == 0
    assert rows.index_at(7) == 0
    assert rows.anchor(0) is None
    assert rows.complete


def test_measuring_changes_only_the_rows_below() -> None:
    rows = VirtualRows([2, 2, 2, 2])
    assert rows.total == 8
    rows.measure(2, 5)
    assert list(rows.offsets) == [0, 2, 4, 9, 11]
    assert rows.is_exact(2) and not rows.is_exact(1)


def test_exact_prefix_follows_measurements_in_order_and_invalidation() -> None:
    rows = VirtualRows([1] * 5)
    rows.measure(1, 2)
    assert rows.exact_prefix == 0  # block 0 is still an estimate
    rows.measure(0, 3)
    assert rows.exact_prefix == 2  # 0 and the already exact 1
    rows.invalidate(1)
    assert rows.exact_prefix == 1
    assert not rows.is_exact(1)
    assert rows.height(1) == 2  # the old height stays, as an estimate


def test_a_tag_says_for_what_a_height_is_exact() -> None:
    rows = VirtualRows([1])
    rows.measure(0, 4, tag=7)
    assert rows.is_exact(0, 7)
    assert not rows.is_exact(0, 8)  # the block changed since: stale


def test_insert_and_keep() -> None:
    rows = VirtualRows([1, 2])
    rows.measure(0, 1)
    rows.measure(1, 2)
    rows.insert(1, 5)
    assert list(rows.offsets) == [0, 1, 6, 8]
    assert rows.exact_prefix == 1 and not rows.is_exact(1)
    rows.keep([0, 2])
    assert list(rows.offsets) == [0, 1, 3]
    assert rows.exact_prefix == 2


def test_anchor_keeps_the_row_inside_its_block() -> None:
    rows = VirtualRows([4, 10, 4])
    anchor = rows.anchor(9)
    assert anchor == Anchor(1, 5, 10)
    rows.measure(0, 20)  # a block above grows
    assert rows.row_of(anchor) == 25
    rows.measure(1, 3)  # the anchored block shrinks below the row: its last row
    assert rows.row_of(anchor) == 22


def test_scaled_anchor_keeps_the_fraction_after_a_resize() -> None:
    rows = VirtualRows([4, 10, 4])
    for index, height in enumerate([4, 10, 4]):
        rows.measure(index, height)
    anchor = rows.anchor(9)  # half way down block 1
    rows.rescale(80, 40, lambda index: 1)
    assert list(rows.offsets) == [0, 8, 28, 36]  # measured heights doubled, now estimates
    assert rows.exact_prefix == 0 and not rows.is_exact(0)
    assert rows.scaled_row_of(anchor) == 18


def test_rescale_from_no_width_asks_for_estimates_and_keeps_unmeasured_ones() -> None:
    rows = VirtualRows([4, 9])
    rows.measure(0, 6)
    rows.rescale(0, 50, lambda index: 11 * (index + 1))
    assert [rows.height(0), rows.height(1)] == [11, 9]


# ------------------------------------------------------------------- properties

_op = st.one_of(
    st.tuples(st.just("measure"), st.integers(0, 10_000), st.integers(0, 30)),
    st.tuples(st.just("invalidate"), st.integers(0, 10_000)),
    st.tuples(st.just("insert"), st.integers(0, 10_000), st.integers(0, 30)),
    st.tuples(st.just("keep"), st.lists(st.booleans(), min_size=40, max_size=40)),
    st.tuples(st.just("rescale"), st.integers(0, 200), st.integers(1, 200)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=30), st.lists(_op, max_size=40))
def test_offsets_stay_consistent_with_heights(initial: list[int], ops: list[tuple]) -> None:
    rows = VirtualRows(initial)
    model = [[height, False] for height in initial]  # [height, exact]
    for op in ops:
        kind = op[0]
        if kind == "insert":
            index = op[1] % (len(model) + 1)
            rows.insert(index, op[2])
            model.insert(index, [op[2], False])
        elif kind == "keep":
            kept = [i for i in range(len(model)) if op[1][i % 40]]
            rows.keep(kept)
            model = [model[i] for i in kept]
        elif not model:
            continue
        elif kind == "measure":
            index = op[1] % len(model)
            rows.measure(index, op[2])
            model[index] = [op[2], True]
        elif kind == "invalidate":
            index = op[1] % len(model)
            rows.invalidate(index)
            model[index][1] = False
        else:
            old, new = op[1], op[2]
            rows.rescale(old, new, lambda index: 3)
            for block in model:
                if block[1]:
                    block[0] = max(1, round(block[0] * max(1, old) / new)) if old else 3
                block[1] = False
        # Read a partial offset now and then: later reads must still be right.
        if model:
            rows.offset(op[-1] % (len(model) + 1) if isinstance(op[-1], int) else 0)
    heights = [block[0] for block in model]
    assert [rows.height(i) for i in range(len(rows))] == heights
    assert list(rows.offsets) == [0, *accumulate(heights)]
    prefix = 0
    while prefix < len(model) and model[prefix][1]:
        prefix += 1
    assert rows.exact_prefix == prefix
    assert [rows.is_exact(i) for i in range(len(rows))] == [block[1] for block in model]
    for row in range(rows.total):
        index, inside = rows.locate(row)
        assert rows.offset(index) <= row < rows.offset(index + 1)
        assert inside == row - rows.offset(index)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 20), min_size=1, max_size=25),
    st.integers(0, 10_000),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 20)), max_size=20),
)
def test_the_anchored_block_stays_on_the_top_row(
    heights: list[int], top: int, changes: list[tuple[int, int]]
) -> None:
    rows = VirtualRows(heights)
    top %= rows.total
    anchor = rows.anchor(top)
    assert anchor is not None
    for index, height in changes:  # measurements anywhere, the anchored block's too
        rows.measure(index % len(rows), height)
    kept = rows.row_of(anchor)
    assert rows.locate(kept) == (
        anchor.block,
        min(anchor.inside, rows.height(anchor.block) - 1),
    )
    scaled = rows.scaled_row_of(anchor)
    assert rows.index_at(scaled) == anchor.block
