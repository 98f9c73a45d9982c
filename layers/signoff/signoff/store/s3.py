"""Large values in S3: the ``Blobs`` port over one bucket."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from botocore.exceptions import BotoCoreError, ClientError

from signoff.errors import NotFound, StoreUnavailable
from signoff.settings import Deployment

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

__all__ = ["S3Blobs"]

_MISSING = frozenset({"NoSuchKey", "404"})


class S3Blobs:
    """Values too large for one store item, as objects in ``bucket``."""

    def __init__(self, bucket: str, client: S3Client) -> None:
        self.bucket = bucket
        self._client = client

    @classmethod
    def from_env(cls, deployment: Deployment | None = None) -> Self:
        """The bucket named by ``SIGNOFF_BUCKET``, with a default boto3 client.

        Raises:
            UsageError: ``SIGNOFF_BUCKET`` is not set.
        """
        from signoff.awsclients import lazy_client

        bucket = (deployment or Deployment.from_env()).need("bucket")
        return cls(bucket, lazy_client("s3"))

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing what was there.

        Raises:
            StoreUnavailable: S3 failed.
        """
        try:
            self._client.put_object(Bucket=self.bucket, Key=key, Body=data)
        except (ClientError, BotoCoreError) as exc:
            raise StoreUnavailable(f"S3 put of {key} failed: {exc}") from exc

    def get(self, key: str) -> bytes:
        """The bytes under ``key``.

        Raises:
            NotFound: nothing was stored under ``key``.
            StoreUnavailable: S3 failed.
        """
        try:
            return self._client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                raise NotFound("blob", key) from exc
            raise StoreUnavailable(f"S3 get of {key} failed: {exc}") from exc
        except BotoCoreError as exc:
            raise StoreUnavailable(f"S3 get of {key} failed: {exc}") from exc
