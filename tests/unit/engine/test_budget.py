"""The context budget: token estimates, budget checks and compaction that keeps the task."""

from __future__ import annotations

from typing import Any

import pytest

from signoff.budget import (
    DEFAULT_NUDGE,
    Budget,
    compact,
    estimate_tokens,
    is_omission_note,
    omission_note,
)
from signoff.events import BudgetCheck, dump
from signoff.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

SYSTEM = "You help customers."  # 19 characters: 5 tokens


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def said(text: str) -> AssistantMessage:
    return AssistantMessage(content=text)


def calls(*ids: str, text: str = "") -> AssistantMessage:
    return AssistantMessage(
        content=text, tool_calls=tuple(ToolCall(id=i, name="lookup", args={"id": i}) for i in ids)
    )


def result(call_id: str, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="lookup", content=text)


# --- estimate_tokens -------------------------------------------------------------


def test_the_estimate_is_a_quarter_of_the_characters_plus_overhead() -> None:
    assert estimate_tokens("", []) == 0
    assert estimate_tokens("abcd", []) == 1
    assert estimate_tokens("abcde", []) == 2
    # Four tokens of overhead per message, then ceil(chars / 4) of its own.
    assert estimate_tokens("", [user("12345678")]) == 4 + 2
    assert estimate_tokens("", [user("")]) == 4


def test_the_estimate_counts_tool_call_names_and_json_args() -> None:
    message = AssistantMessage(
        content="ab", tool_calls=(ToolCall(id="c1", name="lookup", args={"orderId": "A-1"}),)
    )
    # "ab" + "lookup" + '{"orderId":"A-1"}' = 2 + 6 + 17 = 25 characters -> 7 tokens.
    assert estimate_tokens("", [message]) == 4 + 7
    assert estimate_tokens("", [result("c1", "12345678")]) == 4 + 4  # content + tool name


def test_the_estimate_is_additive_and_deterministic() -> None:
    history: list[Message] = [user("hello there"), calls("c1"), result("c1"), said("done")]

    total = estimate_tokens(SYSTEM, history)

    assert total == estimate_tokens(SYSTEM, history)
    assert total == estimate_tokens(SYSTEM, []) + sum(estimate_tokens("", [m]) for m in history)


# --- Budget.check ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("used", "action", "ratio", "nudge"),
    [
        (0, "ok", 0.0, None),
        (799, "ok", 0.799, None),
        (800, "nudge", 0.8, DEFAULT_NUDGE),
        (999, "nudge", 0.999, DEFAULT_NUDGE),
        (1000, "over_hard_limit", 1.0, None),
        (2500, "over_hard_limit", 2.5, None),
    ],
)
def test_check_picks_the_action_by_ratio(
    used: int, action: str, ratio: float, nudge: str | None
) -> None:
    assert Budget(tokens=1000).check(used) == BudgetCheck(
        action=action,
        used_tokens=used,
        budget_tokens=1000,
        ratio=ratio,
        nudge=nudge,
    )


def test_check_rounds_the_ratio_and_uses_custom_thresholds_and_text() -> None:
    budget = Budget(tokens=3, nudge_at=0.3, hard_at=0.9, nudge_text="Wrap up.")

    assert budget.check(1).ratio == 0.333333
    assert budget.check(1).nudge == "Wrap up."
    assert budget.check(2).action == "nudge"
    assert budget.check(3).action == "over_hard_limit"


def test_check_gives_the_wire_event() -> None:
    assert dump(Budget(tokens=8000).check(2)) == {
        "type": "budget:check",
        "action": "ok",
        "usedTokens": 2,
        "budgetTokens": 8000,
        "ratio": 0.00025,
    }


def test_the_default_nudge_asks_to_finish_concisely() -> None:
    assert "concise" in DEFAULT_NUDGE


@pytest.mark.parametrize(
    "settings",
    [{"tokens": 0}, {"tokens": 10, "nudge_at": 0}, {"tokens": 10, "nudge_at": 0.9, "hard_at": 0.5}],
)
def test_a_nonsensical_budget_is_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Budget(**settings)


# --- compact (tests/unit/engine/test_compaction_rules.py renders the results for every provider) --


def test_a_history_that_fits_is_returned_unchanged() -> None:
    history: list[Message] = [user("hi"), said("hello")]

    assert compact(history, system=SYSTEM, target_tokens=estimate_tokens(SYSTEM, history)) == (
        history
    )


def test_the_oldest_messages_are_dropped_behind_a_note_after_the_task() -> None:
    task = user("refund A-1")
    history: list[Message] = [task, said("x" * 400), said("y" * 400), said("Done.")]

    compacted = compact(history, system=SYSTEM, target_tokens=60)

    assert compacted == [task, omission_note(2), said("Done.")]
    assert compacted[1] == user("[2 earlier messages were omitted to fit the context budget]")
    assert estimate_tokens(SYSTEM, compacted) <= 60


def test_the_first_and_the_newest_user_message_both_stay() -> None:
    first, newest = user("refund A-1"), user("and A-2, please")
    history: list[Message] = [first, said("x" * 400), newest, said("y" * 400), said("Done.")]

    compacted = compact(history, system=SYSTEM, target_tokens=60)

    assert compacted == [first, omission_note(1), newest, omission_note(1), said("Done.")]


def test_the_note_is_singular_for_one_message() -> None:
    assert omission_note(1).content == "[1 earlier message was omitted to fit the context budget]"
    assert is_omission_note(omission_note(1)) and is_omission_note(omission_note(7))
    assert not is_omission_note(user("[1 earlier message]"))


def test_a_tool_call_is_never_separated_from_its_results() -> None:
    history: list[Message] = [
        user("look up A-1 and A-2"),
        calls("c1", "c2", text="Looking."),
        result("c1", "x" * 200),
        result("c2", "short"),
        said("Both found."),
    ]
    # Only the last result and the final answer would fit; the cut must go past the
    # whole call instead of keeping a result without its call.
    compacted = compact(history, system=SYSTEM, target_tokens=40)

    assert compacted == [history[0], omission_note(3), said("Both found.")]


def test_a_result_that_comes_late_still_holds_on_to_its_call() -> None:
    history: list[Message] = [
        user("a" * 40),
        calls("c1", text="b" * 200),
        said("one moment"),
        result("c1", "shipped"),
        said("It shipped."),
    ]
    # Cutting at "one moment" would fit, but would keep c1's result without its call.
    target = estimate_tokens(SYSTEM, [history[0], omission_note(1), *history[2:]])

    compacted = compact(history, system=SYSTEM, target_tokens=target)

    assert compacted == [history[0], omission_note(3), said("It shipped.")]


def test_the_longest_tail_that_fits_is_kept() -> None:
    history: list[Message] = [
        user("a" * 300),
        said("b" * 300),
        said("c" * 300),
        calls("c1"),
        result("c1"),
        said("Refunded."),
    ]
    target = estimate_tokens(SYSTEM, [history[0], omission_note(2), *history[3:]])

    compacted = compact(history, system=SYSTEM, target_tokens=target)

    assert compacted == [history[0], omission_note(2), *history[3:]]


def test_when_nothing_fits_the_newest_complete_unit_is_kept() -> None:
    history: list[Message] = [
        user("question"),
        said("a" * 40),
        calls("c1"),
        result("c1", "z" * 1000),
    ]

    compacted = compact(history, system=SYSTEM, target_tokens=10)

    assert compacted == [user("question"), omission_note(1), calls("c1"), result("c1", "z" * 1000)]


def test_a_single_unit_over_target_is_returned_as_is() -> None:
    history: list[Message] = [user("question"), calls("c1"), result("c1", "z" * 1000)]

    assert compact(history, system=SYSTEM, target_tokens=10) == history


def test_compacting_again_makes_progress_and_counts_every_omission() -> None:
    history: list[Message] = [user("u" * 40), said("a" * 100), said("b" * 100), said("done")]

    once = compact(history, system=SYSTEM, target_tokens=75)
    twice = compact(once, system=SYSTEM, target_tokens=50)

    assert once == [history[0], omission_note(1), said("b" * 100), said("done")]
    assert twice == [history[0], omission_note(2), said("done")]
    assert estimate_tokens(SYSTEM, twice) <= 50


def test_a_leading_orphan_result_is_dropped_first() -> None:
    history: list[Message] = [result("gone", "r" * 100), user("hello"), said("hi")]

    compacted = compact(history, system=SYSTEM, target_tokens=40)

    assert compacted == [omission_note(1), user("hello"), said("hi")]


def test_the_input_is_not_modified() -> None:
    history: list[Message] = [user("u" * 100), said("a" * 100), said("done")]
    before = list(history)

    compact(history, system=SYSTEM, target_tokens=5)

    assert history == before
