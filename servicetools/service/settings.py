"""One settings object for the local service; every limit of D12/D14 is a field here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import bundled

MIB = 1024 * 1024
#: The folder holding the bundled ``configurations/`` and ``classifiers/`` (package data).
BUNDLED_DATA = bundled.ROOT


def _default_workers() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Settings:
    """Everything `create_app` needs; tests point ``data_dir`` at a temporary folder."""

    data_dir: Path
    configurations_dir: Path = BUNDLED_DATA / "configurations"
    classifiers_dir: Path = BUNDLED_DATA / "classifiers"
    #: D14: loopback/private/link-local/multicast hosts are refused unless this is set.
    allow_private_hosts: bool = False
    max_document_bytes: int = 25 * MIB
    max_pages: int = 50
    #: An image's pixels, or one PDF page's as drawn at render_dpi (A4 is 2.2 MP at 150).
    max_megapixels: float = 50.0
    #: All of a PDF's pages as drawn at render_dpi (50 A3 pages are 220 MP).
    max_document_megapixels: float = 250.0
    #: How deeply a JSON body's arrays and objects may nest (the interface's deepest
    #: request, an update of a table's cells, is five levels; 1,000 crashed the parser).
    max_json_depth: int = 64
    #: Arrays and objects in one JSON body (counted as "[" and "{" before parsing): the
    #: largest update, 100,000 values, needs about one each.
    max_json_containers: int = 250_000
    #: Values (field values and table cells) one result/update may carry: each is
    #: checked and stored, and a body at the size limit could hold 1.5 million.
    max_update_values: int = 100_000
    hosted_timeout: float = 15.0
    hosted_max_redirects: int = 3
    #: Engine worker processes; the engine is CPU-bound, so one per core.
    workers: int = field(default_factory=_default_workers)
    render_dpi: int = 150
    #: Seconds between the watchdog's rounds, and how long an unfinished extraction that
    #: no worker holds stays quiet before the watchdog ends it in error.
    watchdog_interval: float = 30.0
    watchdog_quiet: float = 120.0
    #: Where the vault keeps document bytes: None for the folder ``vault_dir`` (the
    #: embedded default), or ``s3://BUCKET/PREFIX`` for S3-compatible object storage,
    #: which several service processes can share (core/vault.py).
    vault_url: str | None = None
    #: The S3 endpoint of an ``s3://`` vault, e.g. ``http://127.0.0.1:8333``; None lets
    #: boto3 find it (``AWS_ENDPOINT_URL``, else AWS itself).
    s3_endpoint: str | None = None
    #: A development user created at start with this token (the embedded default).
    dev_user: str = "dev"
    dev_token: str | None = None
    #: A PostgreSQL URL (``postgresql://...``) for users, keys, extractions, statuses and
    #: results; None keeps them in SQLite files in ``data_dir`` (the embedded default).
    database_url: str | None = None
    #: With ``database_url``: run engine workers in this process too (`servicetools serve`
    #: alone then does everything), or False for a pure API process (``--no-workers``)
    #: whose jobs `servicetools worker` processes run.
    in_process_workers: bool = True
    #: Seconds a worker holds a claimed job without a heartbeat before another may take
    #: it over (core/pgqueue.py); the heartbeat renews it every third of that.
    lease_seconds: float = 30.0
    #: Claims of one job at most: a job whose workers keep vanishing (a document that
    #: crashes the engine, say) ends in error after this many.
    job_attempts: int = 3
    #: A TEST AND BENCH AID: when set, the engine is replaced by a sleep of this many
    #: seconds (pipeline._stand_in), from $SERVICETOOLS_STANDIN_ENGINE_SECONDS.
    standin_engine_seconds: float | None = None

    @property
    def max_body_bytes(self) -> int:
        # base64 grows a document by 4/3, and MIME line breaks (CRLF after every 76
        # characters) by 78/76 more; leave room for the JSON around it.
        return self.max_document_bytes * 4 // 3 * 78 // 76 + MIB

    @property
    def database_path(self) -> Path:
        return self.data_dir / "service.sqlite3"

    @property
    def vault_dir(self) -> Path:
        return self.data_dir / "vault"

    @property
    def spool_dir(self) -> Path:
        """Large request bodies and their answers on their way to and from the helper
        process; emptied at start (a crash may leave some)."""
        return self.data_dir / "spool"
