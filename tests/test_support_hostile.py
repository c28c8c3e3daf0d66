"""The bounds the hostile-input suites hold a sidecar to under attack (`tests/support_hostile.py`):
a starved server fails them, a busy machine's single hiccup in a long attack does not."""

from __future__ import annotations

from tests.support_hostile import STALL_FLOOR, verdict

BASELINE = 0.010  # a normal call's median before the attack: 10 ms
FAST = 0.012
STALL = STALL_FLOOR + 0.05


def test_steady_calls_hold_the_bounds() -> None:
    assert verdict(BASELINE, [FAST] * 1000) is None


def test_one_stall_in_a_long_attack_is_the_machine_not_the_server() -> None:
    assert verdict(BASELINE, [FAST] * 999 + [STALL]) is None


def test_one_stall_in_a_short_attack_fails() -> None:
    message = verdict(BASELINE, [FAST] * 20 + [STALL])
    assert message is not None and message.startswith(f"1 took over {STALL_FLOOR * 1000:.0f} ms")


def test_a_stall_per_attack_request_fails() -> None:
    """A server that one attack request blocks stalls a normal call each time: 2% of them here."""
    message = verdict(BASELINE, ([FAST] * 49 + [STALL]) * 20)
    assert message is not None and message.startswith(f"20 took over {STALL_FLOOR * 1000:.0f} ms")


def test_a_tripled_median_fails() -> None:
    message = verdict(BASELINE, [0.040] * 100)
    assert message is not None and message.startswith("median 40.0 ms")
