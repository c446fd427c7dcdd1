"""The vault's object store in S3-compatible object storage (boto3, the ``scale`` extra):
one vault that service processes and workers on several machines share.

Objects are named ``PREFIX/<key[:2]>/<key>``, as the folder store (vault_folder.py)
names its files.
Each is written with one PutObject, which S3 stores whole or not at all: an upload cut
off halfway leaves no object. The put is conditional (``If-None-Match: *``), so a retry,
or two processes storing the same document at once, never writes a key twice.

Credentials come from boto3's usual places (``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY``, a profile, an instance role); the endpoint from
``--s3-endpoint``, or boto3's own ``AWS_ENDPOINT_URL``, else AWS itself.
"""

from __future__ import annotations

import time
from typing import Any

from ...extras import load
from .vault_objects import StorageError

__all__ = ["S3Objects"]

#: Attempts of a put that meets a concurrent put of the same key (409).
_CONFLICT_ATTEMPTS = 5


class S3Objects:
    """`Objects <.vault_objects.Objects>` in one bucket, under one prefix."""

    def __init__(self, bucket: str, prefix: str, *, endpoint: str | None = None) -> None:
        boto3 = load("boto3", "scale", feature="a vault in S3 (--vault s3://...)")
        from botocore.config import Config

        self.bucket, self.prefix, self.endpoint = bucket, prefix, endpoint
        config = Config(
            # A server that cannot be reached should be reported within seconds, not
            # after botocore's default minute per attempt.
            connect_timeout=5, read_timeout=60,
            retries={"mode": "standard", "max_attempts": 3},
            # S3-compatible servers (SeaweedFS, MinIO) answer path-style requests
            # without DNS names per bucket; AWS answers both.
            s3={"addressing_style": "path"} if endpoint else None,
        )
        try:
            # A session of its own: boto3's default one keeps the credentials it first
            # found, and each backend should see the environment as it is when made.
            session = boto3.session.Session()
            self.client: Any = session.client("s3", endpoint_url=endpoint, config=config)
        except ValueError as exc:  # botocore's word for an endpoint that is no URL
            raise StorageError(f"the S3 endpoint {endpoint!r} cannot be used: {exc}") from exc

    def __repr__(self) -> str:
        return f"<S3Objects s3://{self.bucket}/{self.prefix} at {self.endpoint or 'AWS'}>"

    def name(self, key: str) -> str:
        """The object's name in the bucket."""
        return f"{self.prefix}{key[:2]}/{key}"

    def check(self) -> None:
        """Raise `StorageError` with a readable reason unless the bucket answers."""
        where = f"bucket {self.bucket!r}" + (f" at {self.endpoint}" if self.endpoint else "")
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except Exception as exc:  # noqa: BLE001  botocore raises many types; all mean "no"
            raise StorageError(f"the vault's {where} cannot be used: "
                               f"{_reason(exc, missing='there is no such bucket')}") from exc

    def put(self, key: str, data: bytes) -> None:
        from botocore.exceptions import ClientError

        for attempt in range(_CONFLICT_ATTEMPTS):
            try:
                self.client.put_object(Bucket=self.bucket, Key=self.name(key), Body=data,
                                       IfNoneMatch="*")
                return
            except ClientError as exc:
                status = _status(exc)
                if status == 412:
                    return  # the key is stored already, and a key names its bytes
                if status != 409 or attempt == _CONFLICT_ATTEMPTS - 1:
                    raise StorageError(f"storing {self.name(key)}: {_reason(exc)}") from exc
                # 409: another put of this key is in flight. It may still fail, so the
                # key is not known to be stored until a put of ours succeeds or meets 412.
                time.sleep(0.1 * (attempt + 1))
            except Exception as exc:  # noqa: BLE001  connection errors of every kind
                raise StorageError(f"storing {self.name(key)}: {_reason(exc)}") from exc

    def get(self, key: str) -> bytes:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self.name(key))["Body"]
            data: bytes = body.read()
            return data
        except Exception as exc:  # noqa: BLE001
            raise StorageError(f"reading {self.name(key)}: {_reason(exc)}") from exc

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self.name(key))
        except ClientError as exc:
            if _status(exc) == 404:
                return False
            raise StorageError(f"looking for {self.name(key)}: {_reason(exc)}") from exc
        except Exception as exc:  # noqa: BLE001
            raise StorageError(f"looking for {self.name(key)}: {_reason(exc)}") from exc
        return True


def _status(exc: Any) -> int | None:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return int(status) if status else None


def _reason(exc: Exception, missing: str = "there is no such object") -> str:
    """One readable line for a botocore error (a HEAD's 404 and 403 come without words)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        status = _status(exc)
        if status == 404:
            return f"{missing} (404)"
        if status == 403:
            return "access denied (403): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        error = response.get("Error", {})
        return f"{error.get('Code') or status}: {error.get('Message') or 'no message'}"
    return str(exc) or type(exc).__name__
