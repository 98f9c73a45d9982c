"""The template's alarms watch what the code emits: ``NotificationsFailed`` as the
notifier flushes it (Embedded Metric Format), and the notify queue's dead letters."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.aws import Tag, load_template


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    resources: dict[str, Any] = load_template()["Resources"]
    return resources


def emitted_failure_metric(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The EMF document the notifier writes for one permanent failure."""
    from signoff.telemetry import metrics, notification_failed

    capsys.readouterr()
    notification_failed("hooks", "p1", "401 Unauthorized", retry_at=1000.0)
    metrics.flush_metrics()
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    # the log line is JSON too; the metric document is the one with EMF's "_aws"
    [document] = [line for line in lines if "_aws" in line]
    return dict(document)


def test_the_notifications_failed_alarm_watches_the_metric_the_notifier_emits(
    resources: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    emitted = emitted_failure_metric(capsys)
    [directive] = emitted["_aws"]["CloudWatchMetrics"]
    dimensions = {name: emitted[name] for [*names] in directive["Dimensions"] for name in names}
    assert emitted["NotificationsFailed"] in ([1.0], 1.0)

    alarm = resources["NotificationsFailedAlarm"]["Properties"]
    assert alarm["Namespace"] == directive["Namespace"]
    assert alarm["MetricName"] == "NotificationsFailed"
    assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == dimensions
    # the first failure alarms: fixed before the slow retry, the row heals by itself
    assert (alarm["Statistic"], alarm["Threshold"]) == ("Sum", 1)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["TreatMissingData"] == "notBreaching"


def test_the_dead_letter_alarm_watches_the_notify_queue_s_dead_letter_queue(
    resources: dict[str, Any],
) -> None:
    alarm = resources["NotifyDeadLetterAlarm"]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"]) == (
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
    )
    [dimension] = alarm["Dimensions"]
    assert dimension["Name"] == "QueueName"
    assert dimension["Value"] == Tag("GetAtt", "NotifyDeadLetterQueue.QueueName")
    redrive = resources["NotifyQueue"]["Properties"]["RedrivePolicy"]
    assert redrive["deadLetterTargetArn"] == Tag("GetAtt", "NotifyDeadLetterQueue.Arn")


def test_both_alarms_notify_the_optional_topics_and_the_email_topic_exists_only_with_an_email(
    resources: dict[str, Any],
) -> None:
    wanted = [
        Tag("If", ["EmailsAlarms", Tag("Ref", "AlarmTopic"), Tag("Ref", "AWS::NoValue")]),
        Tag("If", ["UsesAlarmTopic", Tag("Ref", "AlarmTopicArn"), Tag("Ref", "AWS::NoValue")]),
    ]
    for name in ("NotificationsFailedAlarm", "NotifyDeadLetterAlarm"):
        assert resources[name]["Properties"]["AlarmActions"] == wanted
    topic = resources["AlarmTopic"]
    assert topic["Condition"] == "EmailsAlarms"
    assert topic["Properties"]["Subscription"] == [
        {"Protocol": "email", "Endpoint": Tag("Ref", "AlarmEmail")}
    ]
