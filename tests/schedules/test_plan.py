"""The memory plan: buffers with overlapping lifetimes never share bytes; reuse makes the arena small."""
from __future__ import annotations

import numpy as np

from schedules.plan import ALIGNMENT, KernelPlan, Value, assign_offsets


def _chain(sizes):
    plan = KernelPlan()
    values = [Value("input", 0, (4,), "float32")]
    for i, size in enumerate(sizes):
        plan.buffers.append(Value("buffer", i, (size,), "float32"))
        plan.steps.append({"kernel": f"k{i}", "args": [values[-1], plan.buffers[-1]]})
        values.append(plan.buffers[-1])
    return plan


def test_chain_reuses_memory():
    plan = _chain([1000, 2000, 1000, 2000, 1000])
    offsets, arena, total = assign_offsets(plan, exclude=set())
    assert total == sum(-(-s * 4 // ALIGNMENT) * ALIGNMENT for s in [1000, 2000, 1000, 2000, 1000])
    aligned = lambda n: -(-n // ALIGNMENT) * ALIGNMENT  # noqa: E731
    assert arena == aligned(4000) + aligned(8000)  # only two consecutive buffers are ever alive together
    assert all(o % ALIGNMENT == 0 for o in offsets.values())


def test_live_buffers_never_overlap():
    rng = np.random.default_rng(0)
    plan = KernelPlan()
    for i in range(30):
        plan.buffers.append(Value("buffer", i, (int(rng.integers(1, 500)),), "float32"))
    for step in range(40):
        args = [plan.buffers[int(j)] for j in rng.choice(30, size=3, replace=False)]
        plan.steps.append({"kernel": f"k{step}", "args": args})
    offsets, arena, _ = assign_offsets(plan, exclude={0})
    assert 0 not in offsets
    spans = {}
    for index, step in enumerate(plan.steps):
        for arg in step["args"]:
            first, last = spans.get(arg.index, (index, index))
            spans[arg.index] = (min(first, index), max(last, index))
    for a in offsets:
        for b in offsets:
            if a >= b:
                continue
            live_together = not (spans[a][1] < spans[b][0] or spans[b][1] < spans[a][0])
            a_end = offsets[a] + plan.buffers[a].shape[0] * 4
            b_end = offsets[b] + plan.buffers[b].shape[0] * 4
            if live_together:
                assert a_end <= offsets[b] or b_end <= offsets[a], (a, b)
            assert max(a_end, b_end) <= arena
