"""Which record a build applies: the best one, only when it beats today's default schedule."""
from __future__ import annotations

from schedules.tuning.apply import choose


def entry(records, default=None, verified=None):
    value = {"records": [{"candidate": c, "latency": t, "trace": []} for c, t in records]}
    if default is not None:
        value["default"] = default
    if verified is not None:
        value["verified"] = verified
    return value


def test_best_record_when_faster_than_default():
    choice = choose(entry([("a", 3e-5), ("b", 1e-5), ("c", None)], {"latency": 2e-5, "fingerprint": "f"}), "f")
    assert choice.record["candidate"] == "b"
    assert (choice.default_latency, choice.tuned_latency) == (2e-5, 1e-5)


def test_never_slower_than_default():
    assert choose(entry([("a", 3e-5)], {"latency": 2e-5, "fingerprint": "f"}), "f").record is None
    assert choose(entry([("a", 2e-5)], {"latency": 2e-5, "fingerprint": "f"}), "f").record is None  # ties keep the default


def test_stale_or_missing_baseline_keeps_default():
    fast = [("a", 1e-6)]
    assert "changed" in choose(entry(fast, {"latency": 2e-5, "fingerprint": "old"}), "new").reason
    assert choose(entry(fast, {"latency": 2e-5, "fingerprint": "old"}), "new").record is None
    assert choose(entry(fast), "f").record is None
    assert choose(entry([("a", None)], {"latency": 2e-5, "fingerprint": "f"}), "f").record is None
    assert choose(None, "f").record is None


def test_side_by_side_verification_decides():
    default = {"latency": 2e-5, "fingerprint": "f"}
    slower = {"candidate": "a", "fingerprint": "f", "latency": 2.2e-5, "default_latency": 2.0e-5}
    assert choose(entry([("a", 1e-5)], default, slower), "f").record is None
    faster = {"candidate": "a", "fingerprint": "f", "latency": 1.5e-5, "default_latency": 2.0e-5}
    assert choose(entry([("a", 1e-5)], default, faster), "f").record["candidate"] == "a"
    other = {"candidate": "old-best", "fingerprint": "f", "latency": 9e-5, "default_latency": 2.0e-5}
    assert choose(entry([("a", 1e-5)], default, other), "f").record["candidate"] == "a"  # verifies another record
