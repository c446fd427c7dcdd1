"""``servicetools``: serve | worker | keys | config check | extract | report | doctor | demo."""

from __future__ import annotations

import argparse
import dataclasses
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .extras import MissingExtra

if TYPE_CHECKING:
    from .service.settings import Settings

DEV_TOKEN_ENV = "SERVICETOOLS_DEV_TOKEN"
#: The S3 endpoint of an ``s3://`` vault when ``--s3-endpoint`` is not given.
S3_ENDPOINT_ENV = "SERVICETOOLS_S3_ENDPOINT"
#: A TEST AND BENCH AID: seconds the stand-in engine sleeps instead of extracting
#: (Settings.standin_engine_seconds); never set it for real work.
STANDIN_ENV = "SERVICETOOLS_STANDIN_ENGINE_SECONDS"


def _settings(args: argparse.Namespace) -> Settings:
    from .service.settings import BUNDLED_DATA, Settings  # needs the service extra

    extra: dict[str, object] = {}
    workers = getattr(args, "workers", None) or getattr(args, "processes", None)
    if workers:
        extra["workers"] = workers
    for option, name in (("lease_seconds", "lease_seconds"), ("max_attempts", "job_attempts")):
        if getattr(args, option, None) is not None:
            extra[name] = getattr(args, option)
    standin = os.environ.get(STANDIN_ENV)
    if standin:
        extra["standin_engine_seconds"] = float(standin)
    configurations = getattr(args, "configurations", None)  # serve's, not keys'
    classifiers = getattr(args, "classifiers", None)
    return Settings(
        data_dir=Path(args.data_dir).resolve(),
        configurations_dir=Path(configurations or BUNDLED_DATA / "configurations").resolve(),
        classifiers_dir=Path(classifiers or BUNDLED_DATA / "classifiers").resolve(),
        allow_private_hosts=getattr(args, "allow_private_hosts", False),
        dev_token=os.environ.get(DEV_TOKEN_ENV) or None,
        vault_url=getattr(args, "vault", None),
        s3_endpoint=getattr(args, "s3_endpoint", None) or os.environ.get(S3_ENDPOINT_ENV) or None,
        database_url=getattr(args, "database", None),
        in_process_workers=not getattr(args, "no_workers", False),
        **extra,  # type: ignore[arg-type]
    )


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings(args)  # first: without the service extra, it says what to install
    problem = _queue_problem(args, settings)
    if problem:
        print(f"servicetools serve: {problem}", file=sys.stderr)
        return 2
    import uvicorn

    from .service.app import create_app
    from .service.core.configs import ConfigError
    from .service.core.store import StoreUnavailable
    from .service.core.vault_objects import StorageError

    if not settings.dev_token:
        # The embedded default starts with a development user and token (D2).
        settings = dataclasses.replace(settings, dev_token=secrets.token_urlsafe(24))
        print(f"development token for user 'dev' (header X-Api): {settings.dev_token}",
              flush=True)
    try:
        app = create_app(settings)
    except (ConfigError, StorageError, StoreUnavailable) as exc:
        print(f"servicetools serve: {exc}", file=sys.stderr)
        return 2
    print(f"serving on http://{args.host}:{args.port} (docs at /docs)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _queue_problem(args: argparse.Namespace, settings: Settings) -> str | None:
    """What is wrong with the options of serve/worker together, or None."""
    if settings.s3_endpoint and args.s3_endpoint and not settings.vault_url:
        return "--s3-endpoint is for a vault in S3; give --vault s3://BUCKET/PREFIX too"
    if settings.database_url is None:
        for option in ("no_workers", "lease_seconds", "max_attempts"):
            if getattr(args, option, None) not in (None, False):
                return (f"--{option.replace('_', '-')} is for the job queue in PostgreSQL; "
                        "give --database postgresql://... too")
    if settings.lease_seconds <= 0 or settings.job_attempts < 1 or settings.workers < 1:
        return "--lease-seconds must be above 0, --max-attempts and --processes at least 1"
    return None


def cmd_worker(args: argparse.Namespace) -> int:
    settings = _settings(args)
    problem = _queue_problem(args, settings)
    if problem:
        print(f"servicetools worker: {problem}", file=sys.stderr)
        return 2
    import signal

    from .extras import require
    from .service.core.store import StoreUnavailable
    from .service.core.vault_objects import StorageError

    require("scale", feature="servicetools worker")
    from .service.core.store_postgres import PgStore
    from .service.core.vault import Vault
    from .service.core.worker import WorkerPool

    assert settings.database_url is not None
    try:
        # The schema is brought up to date here too: workers may start before any API.
        store = PgStore(settings.database_url, pool_size=1)
        Vault(settings, store).objects.check()
        store.close()
    except (StorageError, StoreUnavailable) as exc:
        print(f"servicetools worker: {exc}", file=sys.stderr)
        return 2
    pool = WorkerPool(settings, settings.workers).start()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: pool.stop())
    print(f"{settings.workers} worker process(es) on the queue (pids "
          f"{' '.join(map(str, pool.pids))})", flush=True)
    pool.wait()
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from .service.core.backends import open_store
    from .service.core.store import StoreUnavailable

    try:
        store = open_store(_settings(args))
    except StoreUnavailable as exc:
        print(f"servicetools keys: {exc}", file=sys.stderr)
        return 2
    if args.action == "create":
        token = secrets.token_urlsafe(32)
        store.add_key(args.user, token)
        print(token)  # shown once: only its hash is stored
        return 0
    if args.action == "list":
        for key in store.list_keys(args.user):
            state = "revoked" if key["revoked"] else "active"
            print(f"{key['user']}\t{key['prefix']}…\t{state}")
        return 0
    count = store.revoke_keys(args.user, args.prefix)
    print(f"revoked {count} key(s) of {args.user}")
    return 0 if count else 1


def cmd_config_check(args: argparse.Namespace) -> int:
    from .service.core.configs import check_file

    status = 0
    for path in args.files:
        problems = check_file(Path(path))
        if problems:
            status = 1
            for problem in problems:
                print(f"{path}: {problem}")
        else:
            print(f"{path}: ok")
    return status


def cmd_demo(args: argparse.Namespace) -> int:
    from .client import LocalServiceError, ServiceError
    from .demo import main as demo_main

    try:
        return demo_main(args.out)
    except (LocalServiceError, ServiceError) as exc:
        print(f"servicetools demo: {exc}", file=sys.stderr)
        return 2


_DATABASE_HELP = ("PostgreSQL URL (postgresql://user@host/db, or postgresql:///db?host=/socket/dir)"
                  " for users, keys, extractions and results; default: SQLite in --data-dir")


def _add_queue_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lease-seconds", type=float,
                        help="with --database: how long a worker holds a job without a "
                             "heartbeat before another takes it over (default 30)")
    parser.add_argument("--max-attempts", type=int,
                        help="with --database: claims of one job before it ends in error "
                             "(default 3)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="servicetools", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the local reference service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--data-dir", default="var/service")
    serve.add_argument("--configurations", help="folder of configuration JSON files")
    serve.add_argument("--classifiers", help="folder of classifier JSON files")
    serve.add_argument("--allow-private-hosts", action="store_true",
                       help="let hosted documents come from loopback/private addresses (tests)")
    serve.add_argument("--workers", type=int, help="engine worker processes (default: cores)")
    serve.add_argument("--vault", metavar="s3://BUCKET/PREFIX",
                       help="keep vault documents in S3-compatible object storage (needs the "
                            "'scale' extra; credentials from AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY) instead of the data folder")
    serve.add_argument("--s3-endpoint", metavar="URL",
                       help=f"the S3 server of --vault, e.g. http://127.0.0.1:8333 "
                            f"(default: ${S3_ENDPOINT_ENV}, else AWS)")
    serve.add_argument("--log-level", default="warning")
    serve.add_argument("--database", metavar="URL", help=_DATABASE_HELP)
    serve.add_argument("--no-workers", action="store_true",
                       help="with --database: run no engine here, only the API (the jobs "
                            "wait for `servicetools worker` processes)")
    _add_queue_options(serve)
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="run engine processes on the job queue of a "
                                           "PostgreSQL database (beside API processes)")
    worker.add_argument("--database", metavar="URL", required=True, help=_DATABASE_HELP)
    worker.add_argument("--processes", type=int, help="engine processes (default: cores)")
    worker.add_argument("--data-dir", default="var/service",
                        help="for a vault in a folder (without --vault): the data folder "
                             "of the service, on this machine")
    worker.add_argument("--vault", metavar="s3://BUCKET/PREFIX",
                        help="the vault of the API processes (the same for all)")
    worker.add_argument("--s3-endpoint", metavar="URL",
                        help=f"the S3 server of --vault (default: ${S3_ENDPOINT_ENV}, else AWS)")
    worker.add_argument("--allow-private-hosts", action="store_true",
                        help="let hosted documents come from loopback/private addresses")
    _add_queue_options(worker)
    worker.set_defaults(func=cmd_worker)

    keys = sub.add_parser("keys", help="issue, list and revoke API tokens")
    keys.add_argument("action", choices=["create", "list", "revoke"])
    keys.add_argument("--user", required=False)
    keys.add_argument("--prefix", help="revoke only the key whose hash starts with this")
    keys.add_argument("--data-dir", default="var/service")
    keys.add_argument("--database", metavar="URL", help=_DATABASE_HELP)
    keys.set_defaults(func=cmd_keys)

    config = sub.add_parser("config", help="configuration tools")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    check = config_sub.add_parser("check", help="check configuration files offline")
    check.add_argument("files", nargs="+")
    check.set_defaults(func=cmd_config_check)

    demo = sub.add_parser("demo", help="run the main job on the embedded service")
    demo.add_argument("--out", default="report", help="folder for the HTML report")
    demo.set_defaults(func=cmd_demo)

    from .extract_cli import add_parser as add_extract_parser
    from .report.cli import add_parser as add_report_parser
    from .report.doctor_cli import add_parser as add_doctor_parser

    add_extract_parser(sub)
    add_report_parser(sub)
    add_doctor_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "keys" and args.action in ("create", "revoke") and not args.user:
        parser.error(f"keys {args.action} needs --user NAME")
    try:
        result: int = args.func(args)
    except MissingExtra as exc:
        print(f"servicetools {args.command}: {exc}", file=sys.stderr)
        return 2
    return result


if __name__ == "__main__":
    sys.exit(main())
