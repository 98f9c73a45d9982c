"""Contract of the Blobs port (in memory and S3), and the blobs' lifetime in the template."""

from __future__ import annotations

from typing import TYPE_CHECKING

import boto3
import pytest

from signoff.errors import NotFound, StoreUnavailable
from signoff.store.memory import MemoryBlobs
from signoff.store.s3 import S3Blobs
from tests.support.aws import Tag, load_template

if TYPE_CHECKING:
    from signoff.store.base import Blobs
    from tests.support.aws import AwsResources

ONE_MB = 1024 * 1024


@pytest.fixture(params=["memory", "s3"])
def blobs(request: pytest.FixtureRequest) -> Blobs:
    if request.param == "memory":
        return MemoryBlobs()
    request.getfixturevalue("aws")
    return S3Blobs.from_env()


def test_a_megabyte_of_binary_reads_back_identical(blobs: Blobs) -> None:
    data = bytes(range(256)) * (ONE_MB // 256) + b"\x00tail"

    blobs.put("sessions/s1/chunks/0000000000-a", data)

    assert blobs.get("sessions/s1/chunks/0000000000-a") == data


def test_a_put_replaces_what_was_under_the_key(blobs: Blobs) -> None:
    blobs.put("k", b"first")
    blobs.put("k", b"second")
    blobs.put("k2", b"other")

    assert (blobs.get("k"), blobs.get("k2")) == (b"second", b"other")


def test_a_missing_key_is_not_found(blobs: Blobs) -> None:
    with pytest.raises(NotFound) as missing:
        blobs.get("sessions/nobody/state/x")

    assert (missing.value.kind, missing.value.key) == ("blob", "sessions/nobody/state/x")


def test_on_s3_a_missing_bucket_becomes_store_unavailable(aws: AwsResources) -> None:
    blobs = S3Blobs("no-such-bucket-signoff", boto3.client("s3"))

    with pytest.raises(StoreUnavailable):
        blobs.put("k", b"v")
    with pytest.raises(StoreUnavailable):
        blobs.get("k")


def test_blobs_outlive_the_records_pointing_at_them_for_every_retention() -> None:
    # CloudFormation has no arithmetic: the bucket's expiry comes from a mapping
    # that cfn-lint does not check against RetentionDays' allowed values.
    template = load_template()
    allowed = template["Parameters"]["RetentionDays"]["AllowedValues"]
    expiry = template["Mappings"]["BlobExpiry"]
    rule = template["Resources"]["LargeValuesBucket"]["Properties"]["LifecycleConfiguration"][
        "Rules"
    ][0]

    assert rule["ExpirationInDays"] == Tag(
        "FindInMap", ["BlobExpiry", Tag("Ref", "RetentionDays"), "Days"]
    )
    assert {int(days): entry["Days"] for days, entry in expiry.items()} == {
        int(days): int(days) + 1 for days in allowed
    }
    assert template["Parameters"]["RetentionDays"]["Default"] in allowed
