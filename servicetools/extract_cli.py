"""``servicetools extract``: documents through the service into a batch file.

    servicetools extract --configuration invoices --out runs/today.jsonl docs/*.pdf

The service is the one of `Client.from_env` (``SERVICE_BASE_URL``/``SERVICE_API_KEY``,
else the embedded one). Exit status: 0 when every document gave a result, 1 when some
failed (the batch file is written all the same, failures listed), 2 when the service
could not be used at all.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

#: Failures listed on stderr before "... and N more".
_LISTED = 20


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``extract`` on the ``add_subparsers()`` object of the main parser."""
    from .client.many import DEFAULT_BATCH_TIMEOUT, DEFAULT_CONCURRENCY

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "extract", help="run documents through the service into a batch file",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--configuration", metavar="NAME", help="configuration name")
    which.add_argument("--configuration-id", metavar="ID", help="configuration id")
    parser.add_argument("--out", metavar="FILE",
                        help="batch file (JSON lines); default runs/<configuration>-<time>.jsonl")
    parser.add_argument("--classifier-id", metavar="ID", help="classify each document first")
    parser.add_argument("--configurations", metavar="DIR",
                        help="your own configuration files, for the embedded service "
                             "(default: the bundled ones)")
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY,
                        help=f"triggers in flight at once (default {DEFAULT_CONCURRENCY})")
    parser.add_argument("--upload-first", action="store_true",
                        help="upload each document to the vault, then trigger by vault id")
    parser.add_argument("--timeout", type=float, default=DEFAULT_BATCH_TIMEOUT,
                        help=f"seconds for the whole batch (default {DEFAULT_BATCH_TIMEOUT:g})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("files", nargs="+", metavar="FILES",
                        help="documents, folders or quoted globs ('docs/**/*.pdf')")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from .client import Client
    from .client.errors import BatchFailures, ServiceError

    label = args.configuration or args.configuration_id
    out = args.out or f"runs/{label}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    try:
        with Client.from_env(configurations=args.configurations) as client, \
                warnings.catch_warnings():
            # The failures are listed below, one line each: no warning besides.
            warnings.simplefilter("ignore", BatchFailures)
            batch = client.extract_many(
                args.files, configuration_name=args.configuration,
                configuration_id=args.configuration_id, classifier_id=args.classifier_id,
                concurrency=args.concurrency, upload_first=args.upload_first,
                timeout=args.timeout, progress=not args.no_progress)
    except (ServiceError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"servicetools extract: {exc}", file=sys.stderr)
        return 2
    path = batch.save(out)
    for failure in batch.failures[:_LISTED]:
        print(f"failed ({failure.stage}): {failure.document}: {failure.reason}",
              file=sys.stderr)
    if len(batch.failures) > _LISTED:
        print(f"... and {len(batch.failures) - _LISTED} more in {path}", file=sys.stderr)
    print(f"{len(batch.results)} ended, {len(batch.failures)} failed, "
          f"{batch.timings.get('total_s', 0):.1f} s -> {path}")
    return 1 if batch.failures else 0
