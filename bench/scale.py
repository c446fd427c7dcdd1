"""Throughput of the job queue with 1, 2 and 4 worker processes that share nothing but
PostgreSQL and the S3 vault, behind 2 API processes (`make bench-scale`, minutes).

Two engines: the latency-bound stand-in (``SERVICETOOLS_STANDIN_ENGINE_SECONDS``: a
sleep, so workers beyond the 2 cores still add throughput, as engines waiting on I/O
or on a remote model would), and the real engine on the bundled text invoice (what 2
cores give). Every batch counts duplicates (an extraction with more than one ``ended``)
and lost jobs (not ``ended`` at the end): both must be 0. The status lists of a poller
hitting both API processes in turn give the p95 latency.

    python bench/scale.py [--jobs 96] [--engine-jobs 48] [--standin 0.5]
"""

from __future__ import annotations

import argparse
import base64
import secrets
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the real servers: tests/support/postgres.py, s3server.py

from servicetools.client.local import LocalService, LocalWorkers  # noqa: E402
from servicetools.wire.protocol import API_PREFIX, AUTH_HEADER  # noqa: E402
from tests.support.helpers import make_invoice_pdf  # noqa: E402
from tests.support.postgres import PostgresServer  # noqa: E402
from tests.support.s3server import S3Server  # noqa: E402

STANDIN = "SERVICETOOLS_STANDIN_ENGINE_SECONDS"
TIMEOUT = 900.0


class Caller:
    def __init__(self, base_url: str, token: str) -> None:
        self.url, self.session = base_url + API_PREFIX, requests.Session()
        self.session.headers[AUTH_HEADER] = token

    def post(self, path: str, body: dict[str, Any]) -> Any:
        answer = self.session.post(self.url + path, json=body, timeout=60)
        answer.raise_for_status()
        return answer.json()


def run_batch(apis: list[Caller], workers: LocalWorkers, jobs: int, document: bytes,
              database: str) -> dict[str, float]:
    body = {"configuration_name": "invoices", "input_type": "raw",
            "document_raw_data": base64.b64encode(document).decode()}
    with workers, ThreadPoolExecutor(4) as triggers:
        def trigger(i: int) -> str:
            return str(apis[i % 2].post("/extraction/trigger_async", body)["extraction_id"])

        # Untimed: every worker process imports the engine before its first claim.
        warm = list(triggers.map(trigger, range(2 * workers.processes)))
        while not all(s["status_type"] in ("ended", "error") for s in apis[0].post(
                "/extraction/status/list", {"extraction_id_list": warm})["status_map"].values()):
            time.sleep(0.1)
        t0 = time.perf_counter()
        ids = list(triggers.map(trigger, range(jobs)))
        latencies: list[float] = []
        deadline = time.monotonic() + TIMEOUT
        turn = 0
        while time.monotonic() < deadline:
            start = time.perf_counter()
            found = apis[turn % 2].post("/extraction/status/list",
                                        {"extraction_id_list": ids})["status_map"]
            latencies.append(time.perf_counter() - start)
            turn += 1
            if all(s["status_type"] in ("ended", "error") for s in found.values()):
                break
            time.sleep(0.05)
        elapsed = time.perf_counter() - t0
    import psycopg

    with psycopg.connect(database) as conn:
        ended = dict(conn.execute(
            "SELECT extraction_id, count(*) FROM statuses WHERE status_type = 'ended'"
            " AND extraction_id = ANY(%s) GROUP BY extraction_id", (ids,)).fetchall())
    duplicates = sum(1 for n in ended.values() if n > 1)
    lost = sum(1 for i in ids if i not in ended)
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) > 1 else latencies[0]
    return {"jobs": jobs, "seconds": elapsed, "per_s": jobs / elapsed,
            "duplicates": duplicates, "lost": lost, "p95_ms": p95 * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=96, help="stand-in jobs per batch")
    parser.add_argument("--engine-jobs", type=int, default=48, help="real-engine jobs per batch")
    parser.add_argument("--standin", type=float, default=0.5, help="stand-in seconds per job")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="servicetools-scale-"))
    postgres = PostgresServer().start()
    s3 = S3Server(folder / "s3")
    s3.start()
    token = secrets.token_urlsafe(24)
    failures = 0
    try:
        database = postgres.new_database("scale")
        common: dict[str, Any] = {"database": database, "no_workers": True, "token": token,
                                  "vault": f"s3://{s3.bucket}/scale",
                                  "s3_endpoint": s3.endpoint, "env": s3.env}
        # Each API process in a data folder of its own: they share only the two stores.
        apis = [LocalService(folder / f"api{i}", **common).start() for i in (1, 2)]
        callers = [Caller(a.base_url, token) for a in apis]
        document = make_invoice_pdf()
        vault = ["--vault", f"s3://{s3.bucket}/scale", "--s3-endpoint", s3.endpoint]
        for label, jobs, env in (
                (f"stand-in engine ({args.standin} s sleep)", args.jobs,
                 {STANDIN: str(args.standin)}),
                ("real engine (text invoice)", args.engine_jobs, {})):
            print(f"\n== {label}: {jobs} jobs per batch, 2 API processes, workers in their "
                  "own data folders", flush=True)
            print(f"{'workers':>7} {'seconds':>8} {'jobs/s':>7} {'x 1':>5} {'dupl.':>5} "
                  f"{'lost':>4} {'p95 status list':>16}")
            base = None
            for count in (1, 2, 4):
                workers = LocalWorkers(database, folder / f"workers{count}", processes=count,
                                       args=vault, env={**s3.env, **env})
                r = run_batch(callers, workers, jobs, document, database)
                base = base or r["per_s"]
                failures += int(r["duplicates"] + r["lost"])
                print(f"{count:>7} {r['seconds']:>8.1f} {r['per_s']:>7.2f} "
                      f"{r['per_s'] / base:>5.2f} {r['duplicates']:>5.0f} {r['lost']:>4.0f} "
                      f"{r['p95_ms']:>13.1f} ms", flush=True)
        for api in apis:
            api.stop()
    finally:
        s3.stop()
        postgres.stop()
    print("\nduplicates + lost jobs:", failures, "(must be 0)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
