"""``template.yaml`` ready for a production account: alarms, logs, data that outlives a stack.

What cfn-lint and ``sam validate`` cannot know: that every function has its own
alarms and its own expiring log group, that everything holding data is retained
and recoverable, and that the large-value bucket refuses plain HTTP.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.aws import TEMPLATE, Tag, load_template

ALARM_ACTIONS = [
    Tag("If", ["EmailsAlarms", Tag("Ref", "AlarmTopic"), Tag("Ref", "AWS::NoValue")]),
    Tag("If", ["UsesAlarmTopic", Tag("Ref", "AlarmTopicArn"), Tag("Ref", "AWS::NoValue")]),
]
# Resource types whose deletion or replacement loses data someone still needs.
DATA_TYPES = frozenset(
    {
        "AWS::DynamoDB::Table",
        "AWS::S3::Bucket",
        "AWS::SQS::Queue",
        "AWS::SecretsManager::Secret",
    }
)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def _of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {
        name: resource
        for name, resource in template["Resources"].items()
        if resource["Type"] == kind
    }


def _alarms(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [r["Properties"] for r in _of_type(template, "AWS::CloudWatch::Alarm").values()]


def _watching(template: dict[str, Any], namespace: str, metric: str) -> list[Any]:
    """The dimension values of every alarm on ``namespace``/``metric``."""
    return [
        [dimension["Value"] for dimension in alarm["Dimensions"]]
        for alarm in _alarms(template)
        if alarm["Namespace"] == namespace and alarm["MetricName"] == metric
    ]


def test_every_function_has_an_errors_and_a_throttles_alarm(template: dict[str, Any]) -> None:
    for function in _of_type(template, "AWS::Serverless::Function"):
        for metric in ("Errors", "Throttles"):
            assert [Tag("Ref", function)] in _watching(template, "AWS/Lambda", metric), (
                f"{function} has no {metric} alarm"
            )


def test_the_api_s_5xx_and_the_notify_queue_s_oldest_message_alarm(
    template: dict[str, Any],
) -> None:
    assert [Tag("Ref", "HttpApi")] in _watching(template, "AWS/ApiGateway", "5xx")
    [age] = [
        alarm
        for alarm in _alarms(template)
        if alarm["MetricName"] == "ApproximateAgeOfOldestMessage"
    ]
    assert age["Dimensions"][0]["Value"] == Tag("GetAtt", "NotifyQueue.QueueName")
    assert age["Threshold"] == Tag("Ref", "NotifyQueueAgeAlarmSeconds")


def test_every_dead_letter_queue_alarms_on_its_first_message(template: dict[str, Any]) -> None:
    queues = _of_type(template, "AWS::SQS::Queue")
    dead_letter = {
        queue["Properties"]["RedrivePolicy"]["deadLetterTargetArn"].value.split(".")[0]
        for queue in queues.values()
        if "RedrivePolicy" in queue["Properties"]
    }
    assert dead_letter
    for name in dead_letter:
        [alarm] = [
            alarm
            for alarm in _alarms(template)
            if alarm["Namespace"] == "AWS/SQS"
            and alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
            and alarm["Dimensions"][0]["Value"] == Tag("GetAtt", f"{name}.QueueName")
        ]
        assert alarm["Threshold"] == 1
        assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_every_alarm_tells_the_optional_email_and_topic(template: dict[str, Any]) -> None:
    for name, alarm in _of_type(template, "AWS::CloudWatch::Alarm").items():
        assert alarm["Properties"]["AlarmActions"] == ALARM_ACTIONS, name
        assert alarm["Properties"]["TreatMissingData"] == "notBreaching", name


def test_every_function_logs_to_its_own_group_kept_for_log_retention_days(
    template: dict[str, Any],
) -> None:
    groups = _of_type(template, "AWS::Logs::LogGroup")
    for group in groups.values():
        assert group["Properties"]["RetentionInDays"] == Tag("Ref", "LogRetentionDays")
    used = []
    for name, function in _of_type(template, "AWS::Serverless::Function").items():
        group = function["Properties"]["LoggingConfig"]["LogGroup"]
        assert isinstance(group, Tag) and group.name == "Ref" and group.value in groups, name
        used.append(group.value)
    assert len(set(used)) == len(used), "two functions share a log group"


def test_log_format_and_levels_are_lambda_s_and_powertools_sets_no_other_level(
    template: dict[str, Any],
) -> None:
    function = template["Globals"]["Function"]
    assert function["LoggingConfig"] == {
        "LogFormat": "JSON",
        "ApplicationLogLevel": Tag("Ref", "ApplicationLogLevel"),
        "SystemLogLevel": Tag("Ref", "SystemLogLevel"),
    }
    # Lambda's level wins over Powertools', which warns in plain text when they differ.
    assert "POWERTOOLS_LOG_LEVEL" not in function["Environment"]["Variables"]
    for name, resource in _of_type(template, "AWS::Serverless::Function").items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        assert "POWERTOOLS_LOG_LEVEL" not in variables, name


def test_everything_holding_data_is_retained_on_delete_and_on_replacement(
    template: dict[str, Any],
) -> None:
    for name, resource in template["Resources"].items():
        if resource["Type"] in DATA_TYPES:
            assert resource.get("DeletionPolicy") == "Retain", name
            assert resource.get("UpdateReplacePolicy") == "Retain", name


def test_queues_state_their_retention(template: dict[str, Any]) -> None:
    for name, queue in _of_type(template, "AWS::SQS::Queue").items():
        assert isinstance(queue["Properties"].get("MessageRetentionPeriod"), int), name


def test_table_deletion_protection_and_point_in_time_recovery_are_parameters(
    template: dict[str, Any],
) -> None:
    table = template["Resources"]["SignoffTable"]["Properties"]
    assert table["DeletionProtectionEnabled"] == Tag("If", ["ProtectsTable", True, False])
    assert table["PointInTimeRecoverySpecification"] == {
        "PointInTimeRecoveryEnabled": Tag("If", ["RecoversTable", True, False])
    }
    conditions = template["Conditions"]
    assert conditions["ProtectsTable"] == Tag(
        "Equals", [Tag("Ref", "TableDeletionProtection"), "true"]
    )
    assert conditions["RecoversTable"] == Tag("Equals", [Tag("Ref", "PointInTimeRecovery"), "true"])
    for parameter in ("TableDeletionProtection", "PointInTimeRecovery"):
        assert template["Parameters"][parameter]["Default"] == "true"


def test_the_large_value_bucket_refuses_plain_http(template: dict[str, Any]) -> None:
    [policy] = [
        resource["Properties"]
        for resource in _of_type(template, "AWS::S3::BucketPolicy").values()
        if resource["Properties"]["Bucket"] == Tag("Ref", "LargeValuesBucket")
    ]
    [deny] = [s for s in policy["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
    assert deny["Principal"] == "*" and deny["Action"] == "s3:*"
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert deny["Resource"] == [
        Tag("GetAtt", "LargeValuesBucket.Arn"),
        Tag("Sub", "${LargeValuesBucket.Arn}/*"),
    ]


def test_no_handler_response_or_error_is_copied_into_x_ray(template: dict[str, Any]) -> None:
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["POWERTOOLS_TRACER_CAPTURE_RESPONSE"] == "false"
    assert variables["POWERTOOLS_TRACER_CAPTURE_ERROR"] == "false"
    for function in ("message", "resolve", "notifier", "sweeper"):
        source = (TEMPLATE.parent / "functions" / function / "app.py").read_text()
        assert "capture_lambda_handler(capture_response=False, capture_error=False)" in source
