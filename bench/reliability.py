"""Reliability benchmarks against the local service: invariants checked, figures printed.

1. Crash: 50 asynchronous extractions, the service killed with SIGKILL while some are
   done and some in flight, then started again on the same data folder and port.
   Checked: every extraction ends final (none stuck), every result saved before the
   kill is served byte for byte after it, ``PRAGMA integrity_check`` is ``ok``, and no
   vault file is half written (temporary files left, size or key not matching the row).
2. Load: 50 concurrent triggers beside 200 concurrent status requests of 1,000 ids
   each. Checked: no 5xx, no exception, no other refusal. Printed: p50/p95 of the
   1,000-id status request under load, beside the same request on an idle service.
3. Write lock: one user's largest allowed updates (the request body limit filled with
   100,000-character values, and the most table cells an update may hold) beside another
   user's triggers. Printed: that user's trigger p95 alone and during the update, as a ratio
   (goal within 2x). Only errors fail; no timing does.

The raw HTTP calls use bare ``requests`` sessions, not `Client`: the client retries
idempotent calls on 5xx and connection errors, which would hide the errors counted here.

Run: ``.venv/bin/python bench/reliability.py [--quick]`` (``make bench`` runs it too, at
default sizes: about 2-3 minutes on 2 cores). Exit status 1 when an invariant fails; the
data folders are then kept for a look and their path is printed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import itertools
import json
import math
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import requests

from servicetools import LocalService
from servicetools.service.core.store_sqlite import results_file
from servicetools.service.core.vault import object_key
from servicetools.service.settings import Settings
from servicetools.wire.protocol import API_PREFIX, AUTH_HEADER

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client import invoice_pdf  # noqa: E402  (the bench folder is not a package)

CONFIG = "invoices"
FINAL = ("ended", "error")
#: A request that takes longer than this is counted as an error (an exception).
REQUEST_TIMEOUT = 600.0


# -- plumbing ---------------------------------------------------------------------------
class Checks:
    """The invariants: each failure is printed as it is found and decides the exit status."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def expect(self, ok: bool, what: str) -> bool:
        if not ok:
            self.failures.append(what)
            print(f"  FAILED: {what}")
        return ok


class Api:
    """One user's bare HTTP caller on its own session (no retries: every error counts)."""

    def __init__(self, base_url: str, token: str) -> None:
        self.url = base_url + API_PREFIX
        self.session = requests.Session()
        self.session.headers[AUTH_HEADER] = token

    def post(self, path: str, body: Any = None, *, data: bytes | None = None,
             timeout: float = REQUEST_TIMEOUT) -> requests.Response:
        if data is not None:
            return self.session.post(self.url + path, data=data, timeout=timeout,
                                     headers={"Content-Type": "application/json"})
        return self.session.post(self.url + path, json=body, timeout=timeout)

    def get(self, path: str, timeout: float = REQUEST_TIMEOUT) -> requests.Response:
        return self.session.get(self.url + path, timeout=timeout)

    def upload(self, data: bytes, name: str) -> requests.Response:
        return self.session.post(self.url + "/vault/upload", files={"uploadFile": (name, data)},
                                 data={"doctype": "invoice"}, timeout=REQUEST_TIMEOUT)

    def statuses(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        resp = self.post("/extraction/status/list", {"extraction_id_list": ids})
        resp.raise_for_status()
        status_map: dict[str, dict[str, Any]] = resp.json()["status_map"]
        return status_map

    def wait_final(self, ids: list[str], timeout: float) -> tuple[dict[str, dict[str, Any]], float]:
        """Poll (1,000 ids a request, D5) until every id is final or ``timeout`` passes."""
        t0 = time.monotonic()
        while True:
            found: dict[str, dict[str, Any]] = {}
            for start in range(0, len(ids), 1000):
                found.update(self.statuses(ids[start:start + 1000]))
            waited = time.monotonic() - t0
            if all(s["status_type"] in FINAL for s in found.values()) or waited > timeout:
                return found, waited
            time.sleep(0.2)


def raw_trigger(pdf: bytes, name: str) -> dict[str, Any]:
    return {"configuration_name": CONFIG, "extraction_name": name, "input_type": "raw",
            "document_raw_data": base64.b64encode(pdf).decode()}


class Invoices:
    """Distinct invoices: the vault keeps one file per owner and content, so repeating one
    document would skip the vault's write and fsync and make a trigger look cheaper."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.count = 0

    def next(self) -> tuple[str, bytes]:
        self.count += 1
        number = f"{self.prefix}-{self.count:05d}"
        return number, invoice_pdf(number)


def quantile(samples: list[float], q: float) -> float:
    """Linear interpolation between the nearest ranks (as numpy's default)."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    k = (len(ordered) - 1) * q
    low = math.floor(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def ms(samples: list[float]) -> str:
    p50, p95 = quantile(samples, 0.5) * 1000, quantile(samples, 0.95) * 1000
    top = max(samples, default=math.nan) * 1000
    return f"p50 {p50:8.1f} ms  p95 {p95:8.1f} ms  max {top:8.1f} ms  (n={len(samples)})"


def kinds(statuses: dict[str, dict[str, Any]]) -> Counter[str]:
    return Counter(s["status_type"] for s in statuses.values())


@dataclass
class Calls:
    """Latencies and failures of one kind of request, filled from many threads."""

    latencies: list[float] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)  # 5xx
    exceptions: list[str] = field(default_factory=list)  # timeouts, refused connections
    refused: list[str] = field(default_factory=list)  # other non-2xx, or a wrong answer
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, send: Callable[[], requests.Response],
             check: Callable[[requests.Response], str | None] | None = None
             ) -> requests.Response | None:
        t = time.perf_counter()
        try:
            resp = send()
            _ = resp.content  # the whole body is part of the latency
        except requests.RequestException as exc:
            with self.lock:
                self.exceptions.append(f"{type(exc).__name__}: {exc}")
            return None
        took = time.perf_counter() - t
        problem = None
        if resp.status_code >= 500:
            problem = "5xx"
        elif resp.status_code >= 300:
            problem = "refused"
        elif check is not None:
            try:
                problem = check(resp)  # outside the timing: parsing is the client's cost
            except ValueError as exc:  # not JSON
                problem = f"unreadable answer: {exc}"
        with self.lock:
            self.latencies.append(took)
            if problem == "5xx":
                self.server_errors.append(f"{resp.status_code} {resp.text[:200]}")
            elif problem is not None:
                self.refused.append(f"{resp.status_code} {problem}: {resp.text[:200]}")
        return resp if problem is None else None

    @property
    def errors(self) -> int:
        return len(self.server_errors) + len(self.exceptions) + len(self.refused)

    def summary(self) -> str:
        return (f"5xx {len(self.server_errors)}, exceptions {len(self.exceptions)}, "
                f"other failures {len(self.refused)}")

    def first_error(self) -> str:
        return (self.server_errors + self.exceptions + self.refused + [""])[0]


@contextmanager
def read_only(database: Path) -> Iterator[sqlite3.Connection]:
    # mode=ro: looking must not change what the crash left (a read-only connection
    # cannot checkpoint the WAL into the database file when it closes).
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        yield conn
    finally:
        conn.close()


def integrity(database: Path) -> str:
    """``PRAGMA integrity_check`` of the main file and of the results file beside it."""
    answers = []
    for path in (database, results_file(database)):
        with read_only(path) as db:
            answers += [str(row[0]) for row in db.execute("PRAGMA integrity_check")]
    return ", ".join(sorted(set(answers)))


@dataclass
class Saved:
    """What the database holds for one extraction: latest status, data state and text."""

    status: str
    data_state: str
    data_json: str | None


def database_snapshot(database: Path) -> dict[str, Saved]:
    """Each extraction's latest status and data state (main file) with its data (the
    results file beside it)."""
    with read_only(results_file(database)) as db:
        data = dict(db.execute("SELECT extraction_id, data_json FROM results").fetchall())
    with read_only(database) as db:
        rows = db.execute(
            "SELECT e.extraction_id, e.data_state, (SELECT s.status_type FROM statuses s"
            " WHERE s.extraction_id = e.extraction_id ORDER BY s.seq DESC LIMIT 1)"
            " FROM extractions e").fetchall()
    return {row[0]: Saved(row[2], row[1], data.get(row[0])) for row in rows}


@dataclass
class VaultReport:
    rows: int = 0
    files: int = 0
    temporary: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    wrong_size: list[str] = field(default_factory=list)
    wrong_key: list[str] = field(default_factory=list)
    unreferenced: list[str] = field(default_factory=list)

    @property
    def broken(self) -> int:
        return (len(self.temporary) + len(self.missing) + len(self.wrong_size)
                + len(self.wrong_key))

    def line(self) -> str:
        return (f"{self.rows} document rows, {self.files} files: {len(self.temporary)} "
                f"temporary left, {len(self.missing)} missing, {len(self.wrong_size)} wrong "
                f"size, {len(self.wrong_key)} content not matching its key; "
                f"{len(self.unreferenced)} complete file(s) no row refers to")


def check_vault(settings: Settings) -> VaultReport:
    """The vault writes ``.tmp-*`` beside the target, fsyncs and renames (core/vault.py);
    a crash may leave a temporary file but never a short document. Each ``documents``
    row records its file's size and key: the SHA-256 of owner, NUL and the bytes
    (`object_key`), or of the bytes alone for files stored before keys were per owner."""
    report = VaultReport()
    with read_only(settings.database_path) as db:
        rows = db.execute("SELECT owner_id, size, sha256 FROM documents").fetchall()
    report.rows = len(rows)
    keys = set()
    for owner_id, size, key in rows:
        keys.add(key)
        path = settings.vault_dir / key[:2] / key
        if not path.is_file():
            report.missing.append(key)
            continue
        data = path.read_bytes()
        if len(data) != size:
            report.wrong_size.append(key)
        elif key not in (object_key(owner_id, data), hashlib.sha256(data).hexdigest()):
            report.wrong_key.append(key)
    for path in settings.vault_dir.rglob("*"):
        if not path.is_file():
            continue
        report.files += 1
        if path.name.startswith(".tmp-"):
            report.temporary.append(path.name)
        elif path.name not in keys:
            report.unreferenced.append(path.name)
    return report


def wait_gone(pids: list[int], timeout: float) -> tuple[list[int], float]:
    """Wait for processes to end; the pids still alive after ``timeout`` and the wait."""
    t0 = time.monotonic()
    alive = [p for p in pids if psutil.pid_exists(p)]
    while alive and time.monotonic() - t0 < timeout:
        time.sleep(0.05)
        alive = [p for p in alive if _running(p)]
    return alive, time.monotonic() - t0


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# -- 1. crash ----------------------------------------------------------------------------
def bench_crash(root: Path, count: int, kill_after: int, checks: Checks) -> None:
    svc = LocalService(root / "crash")
    settings = Settings(data_dir=svc.data_dir)
    t = time.perf_counter()
    svc.start()
    print(f"  service started in {time.perf_counter() - t:.1f} s on {svc.data_dir}")
    try:
        _crash(svc, settings, count, kill_after, checks)
    finally:
        svc.stop()


def _crash(svc: LocalService, settings: Settings, count: int, kill_after: int,
           checks: Checks) -> None:
    api = Api(svc.base_url, svc.token)
    invoices = Invoices("CRASH")
    # Warm the engine workers first: a cold worker takes seconds to import the engine,
    # and the kill should meet extractions that run at their usual pace.
    for _ in range(2):
        number, pdf = invoices.next()
        checks.expect(api.post("/extraction/trigger_sync", raw_trigger(pdf, number)).ok,
                      "warm-up trigger_sync failed")
    documents = [invoices.next() for _ in range(count)]
    sent = {hashlib.sha256(pdf).hexdigest() for _, pdf in documents}

    def trigger(doc: tuple[str, bytes]) -> str:
        resp = api.post("/extraction/trigger_async", raw_trigger(doc[1], doc[0]))
        resp.raise_for_status()
        return str(resp.json()["extraction_id"])

    t = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(trigger, documents))
    print(f"  {count} async extractions triggered in {time.perf_counter() - t:.2f} s")

    # Kill once `kill_after` have ended while others still run. The results fetched
    # now are compared byte for byte after the restart (the service sends stored text).
    deadline = time.monotonic() + 120
    while True:
        found = kinds(api.statuses(ids))
        running = count - found["ended"] - found["error"]
        if (found["ended"] >= kill_after and running) or not running or (
                time.monotonic() > deadline):
            break
        time.sleep(0.01)
    before = {i: s for i, s in api.statuses(ids).items() if s["status_type"] == "ended"}
    fetched = {i: api.get(f"/extraction/result/get/{i}").content for i in before}
    assert svc.process is not None
    workers = [p.pid for p in psutil.Process(svc.process.pid).children(recursive=True)]
    svc.kill()
    # The engine workers outlive a killed service for up to half a second (they poll
    # their parent): wait for them, so the snapshot below is what the crash left.
    alive, took = wait_gone(workers, 15)
    checks.expect(not alive, f"engine workers {alive} still run 15 s after the kill")
    print(f"  killed -9; its {len(workers)} child process(es) gone {took:.2f} s later")

    database = settings.database_path
    at_kill = database_snapshot(database)
    ours = {i: at_kill[i] for i in ids if i in at_kill}
    checks.expect(len(ours) == count, f"{count - len(ours)} triggered extractions missing "
                                      "from the database")
    states = Counter(s.status if s.status in FINAL else "running" for s in ours.values())
    print(f"  at the kill (database): {states['ended']} ended, {states['error']} error, "
          f"{states['running']} in flight; {len(fetched)} results fetched just before")
    checks.expect(states["running"] > 0, "no extraction was in flight at the kill "
                                         "(the scenario tested nothing)")
    checks.expect(states["ended"] > 0, "no extraction had ended at the kill")
    saved = {i: s.data_json for i, s in at_kill.items()
             if s.data_state == "present" and s.data_json is not None}
    result = integrity(database)
    checks.expect(result == "ok", f"integrity_check after the kill: {result}")
    vault = check_vault(settings)
    print(f"  after the kill: integrity_check {result}; vault {vault.line()}")
    checks.expect(vault.broken == 0, "half-written or mismatched vault files after the kill")

    t = time.perf_counter()
    svc.start()
    print(f"  restarted on the same data_dir and port in {time.perf_counter() - t:.1f} s")
    # Recovery runs at start, before the service answers (PoolPipeline.recover in the app's
    # lifespan), so nothing should be left to wait for; the watchdog (every 30 s, for
    # extractions quiet for 120 s) cannot be tuned from `servicetools serve`.
    print("  (watchdog_interval/watchdog_quiet are Settings fields that `servicetools serve`"
          " offers no flag or variable for; recovery at start closes what the kill left)")
    final, waited = api.wait_final(ids, timeout=30)
    after = kinds(final)
    stuck = count - after["ended"] - after["error"]
    print(f"  after the restart: {after['ended']} ended, {after['error']} error, {stuck} "
          f"stuck (all final {waited:.2f} s after the service answered)")
    checks.expect(stuck == 0, f"{stuck} extraction(s) stuck after the restart")
    messages = Counter(s["message"] for s in final.values() if s["status_type"] == "error")
    for message, n in messages.items():
        print(f"    {n} x error: {message}")
        checks.expect("interrupted" in message, f"unexpected error message: {message}")

    lost = [i for i, text in saved.items()
            if api.get(f"/extraction/result/get/{i}").content != text.encode()]
    changed = [i for i, body in fetched.items()
               if api.get(f"/extraction/result/get/{i}").content != body]
    # Every extraction that is ended now (some may have ended between our fetch and the
    # kill) must have its result.
    missing = [i for i, s in final.items() if s["status_type"] == "ended"
               and not api.get(f"/extraction/result/get/{i}").ok]
    print(f"  saved results: {len(saved)} in the database at the kill, {len(lost)} lost or "
          f"changed after; {len(fetched)} fetched before the kill, {len(changed)} differ; "
          f"{len(missing)} ended without a result")
    checks.expect(not lost, f"{len(lost)} saved result(s) lost or changed: {lost[:3]}")
    checks.expect(not changed, f"{len(changed)} fetched result(s) differ: {changed[:3]}")
    checks.expect(not missing, f"{len(missing)} ended extraction(s) without result")

    # The documents themselves: every raw document sent is in the vault, intact.
    listing = api.get("/vault/list").json()["documents"]
    stored = {hashlib.sha256(api.get(f"/vault/get/{d['document_id']}").content).hexdigest()
              for d in listing}
    absent = len(sent - stored)
    print(f"  vault: {count - absent} of the {count} documents sent download intact")
    checks.expect(absent == 0, f"{absent} document(s) sent are not in the vault intact")
    number, pdf = invoices.next()
    works = api.post("/extraction/trigger_sync", raw_trigger(pdf, number))
    checks.expect(works.ok, f"trigger_sync after the restart: {works.status_code}")
    result = integrity(database)
    vault = check_vault(settings)
    print(f"  after the restart: integrity_check {result}; vault {vault.line()}")
    checks.expect(result == "ok", f"integrity_check after the restart: {result}")
    checks.expect(vault.broken == 0, "half-written or mismatched vault files after restart")


# -- 2. load ------------------------------------------------------------------------------
def make_ids(api: Api, count: int) -> list[str]:
    """``count`` real extractions of one vault document (one upload, named by each trigger).

    The status endpoint answers 404 for any unknown id (D5), so 1,000 ids must be 1,000
    extractions of this user. They are run to the end (rather than made to fail at once
    with an unreachable hosted URL, as bench/client.py does), so the status rows are
    those of finished extractions, eight statuses each, as a real wait would see them."""
    number, pdf = Invoices("IDS").next()
    resp = api.upload(pdf, f"{number}.pdf")
    resp.raise_for_status()
    body = {"configuration_name": CONFIG, "input_type": "service",
            "document_storage_id": resp.json()["document_id"]}

    def trigger(_: int) -> str:
        answer = api.post("/extraction/trigger_async", body)
        answer.raise_for_status()
        return str(answer.json()["extraction_id"])

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(trigger, range(count)))


def bench_load(svc: LocalService, api: Api, n_ids: int, n_triggers: int, n_polls: int,
               n_baseline: int, checks: Checks) -> None:
    t = time.perf_counter()
    ids = make_ids(api, n_ids)
    final, _ = api.wait_final(ids, timeout=600)
    print(f"  {n_ids} extractions made for the status requests in "
          f"{time.perf_counter() - t:.1f} s: {dict(kinds(final))}")
    checks.expect(kinds(final)["ended"] == n_ids, "not every id extraction ended")
    body = json.dumps({"extraction_id_list": ids}).encode()

    def complete(resp: requests.Response) -> str | None:
        got = resp.json().get("status_map", {})
        return None if len(got) == n_ids else f"status_map holds {len(got)} ids"

    alone = Calls()
    session = Api(svc.base_url, svc.token)
    for _ in range(5):  # warm the connection and the database's page cache
        session.post("/extraction/status/list", data=body).raise_for_status()
    for _ in range(n_baseline):
        alone.call(lambda: session.post("/extraction/status/list", data=body), complete)
    checks.expect(alone.errors == 0, f"baseline status requests failed: {alone.first_error()}")

    invoices = Invoices("LOAD")
    documents = [invoices.next() for _ in range(n_triggers)]
    triggers, polls = Calls(), Calls()
    triggered: list[str] = []
    # Every thread waits at the barrier with its own session (and connection), so the
    # requests really arrive together instead of as a pool of 8 lets them.
    gate = threading.Barrier(n_triggers + n_polls + 1)

    def trigger(doc: tuple[str, bytes]) -> None:
        own = Api(svc.base_url, svc.token)
        request = raw_trigger(doc[1], doc[0])
        gate.wait()
        resp = triggers.call(lambda: own.post("/extraction/trigger_async", request))
        if resp is not None:
            with triggers.lock:
                triggered.append(resp.json()["extraction_id"])

    def poll() -> None:
        own = Api(svc.base_url, svc.token)
        gate.wait()
        polls.call(lambda: own.post("/extraction/status/list", data=body), complete)

    threads = ([threading.Thread(target=trigger, args=(d,)) for d in documents]
               + [threading.Thread(target=poll) for _ in range(n_polls)])
    for thread in threads:
        thread.start()
    gate.wait()
    t = time.perf_counter()
    for thread in threads:
        thread.join()
    burst = time.perf_counter() - t
    print(f"  {n_triggers} triggers and {n_polls} status requests of {n_ids} ids at once: "
          f"all answered in {burst:.1f} s")
    print(f"  status {n_ids} ids, idle     {ms(alone.latencies)}")
    print(f"  status {n_ids} ids, loaded   {ms(polls.latencies)}")
    print(f"  trigger_async, loaded     {ms(triggers.latencies)}")
    ratio = quantile(polls.latencies, 0.95) / quantile(alone.latencies, 0.95)
    # Loaded latency is mostly queueing (250 requests at once on 2 cores, which the
    # bench's own threads share): the rate at which requests were answered, beside one
    # caller's sequential rate, tells queueing apart from a service that slows down.
    idle_rate = len(alone.latencies) / sum(alone.latencies)
    print(f"  status p95 loaded / idle: {ratio:.1f}x; answered {len(polls.latencies) / burst:.1f}"
          f" status requests/s in the burst (with the triggers) vs {idle_rate:.1f}/s "
          "one at a time")
    print(f"  errors: triggers {triggers.summary()}; status {polls.summary()}")
    checks.expect(triggers.errors == 0, f"{triggers.errors} trigger error(s) under load: "
                                        f"{triggers.first_error()}")
    checks.expect(polls.errors == 0, f"{polls.errors} status error(s) under load: "
                                     f"{polls.first_error()}")
    done, waited = api.wait_final(triggered, timeout=120)
    print(f"  the {len(triggered)} triggered extractions: {dict(kinds(done))} "
          f"({waited:.1f} s after the burst)")
    checks.expect(kinds(done)["ended"] == len(triggered),
                  "not every extraction triggered under load ended")


# -- 3. write lock ---------------------------------------------------------------------------
#: docs/interface.md, Fixed limits: a corrected value is at most 100,000 characters. An
#: update holds at most `Settings.max_update_values` values, in a body of at most
#: `Settings.max_body_bytes`.
MAX_VALUE = 100_000


def create_user(svc: LocalService, name: str) -> str:
    """A second user's token, issued as an admin does (D2: ``servicetools keys create``);
    the running service reads keys from its database, so no restart is needed."""
    out = subprocess.run([sys.executable, "-m", "servicetools", "keys", "create", "--user",
                          name, "--data-dir", str(svc.data_dir)],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def fill(head: str, items: Iterator[str], tail: str, limit: int) -> tuple[bytes, int]:
    """A JSON body ``head item,item,... tail`` holding as many (ASCII) items as fit."""
    parts, size, count = [head], len(head) + len(tail), 0
    for item in items:
        extra = len(item) + (1 if count else 0)
        if size + extra > limit:
            break
        parts.append(("," if count else "") + item)
        size, count = size + extra, count + 1
    parts.append(tail)
    body = "".join(parts).encode()
    assert len(body) == size <= limit
    return body, count


def update_head(extraction_id: str, target_id: str, kind: str) -> str:
    return (f'{{"extraction_id":"{extraction_id}","updates":[{{"extracted_target_id":'
            f'"{target_id}","type":"{kind}","new_extracted_values":[')


def long_values(extraction_id: str, target_id: str, limit: int, most: int | None
                ) -> tuple[bytes, int]:
    """The body limit filled with values of the longest allowed length."""
    def items() -> Iterator[str]:
        for k in itertools.count() if most is None else range(most):
            value = f"{k:06d}-" + "x" * (MAX_VALUE - 7)  # distinct, exactly the limit
            yield json.dumps({"extracted_field": value}, separators=(",", ":"))
    return fill(update_head(extraction_id, target_id, "field"), items(), "]}]}", limit)


def many_cells(extraction_id: str, target_id: str, limit: int, most: int | None
               ) -> tuple[bytes, int]:
    """The shortest table cells, as many as an update may hold (`most`) and the body
    limit allows (each is validated, given an id and stored with its validation result)."""
    def items() -> Iterator[str]:
        for k in itertools.count() if most is None else range(most):
            yield json.dumps({"extracted_cell": str(k % 10), "table_id": "t", "row": k // 4,
                              "column": k % 4}, separators=(",", ":"))
    return fill(update_head(extraction_id, target_id, "table"), items(), "]}]}", limit)


@dataclass
class Window:
    """The other user's requests while (or without) the updates run."""

    triggers: Calls = field(default_factory=Calls)
    reads: Calls = field(default_factory=Calls)
    ids: list[str] = field(default_factory=list)


def other_user(api: Api, read_id: str, invoices: Invoices, window: Window,
               stop: Callable[[], bool], pause: float = 0.1) -> None:
    """Paced triggers, one at a time, as a user at work sends them (a flood would measure
    the engine's queue instead); beside them, in their own thread, paced status reads of
    one id, which take no write lock: if the reads stall too, the stall is not the lock."""
    reader = Api(api.url.removesuffix(API_PREFIX), str(api.session.headers[AUTH_HEADER]))
    read = {"extraction_id_list": [read_id]}

    def reads() -> None:
        while not stop():
            window.reads.call(lambda: reader.post("/extraction/status/list", read))
            time.sleep(pause)

    thread = threading.Thread(target=reads)
    thread.start()
    while not stop():
        number, pdf = invoices.next()  # made outside the timing
        request = raw_trigger(pdf, number)
        resp = window.triggers.call(partial(api.post, "/extraction/trigger_async", request))
        if resp is not None:
            window.ids.append(resp.json()["extraction_id"])
        time.sleep(pause)
    thread.join()


def bench_write_lock(svc: LocalService, api: Api, checks: Checks, *, max_values: int | None,
                     max_cells: int | None, window_s: float, n_baseline: int) -> None:
    """``max_values``/``max_cells``: None fills the body limit (the default run)."""
    other = Api(svc.base_url, create_user(svc, "other"))
    settings = Settings(data_dir=svc.data_dir)
    limit = settings.max_body_bytes
    invoices = Invoices("LOCK-A")
    extracted = []
    for _ in range(2):  # one extraction per update shape, so each starts from the same data
        number, pdf = invoices.next()
        resp = api.post("/extraction/trigger_sync", raw_trigger(pdf, number))
        resp.raise_for_status()
        extracted.append(resp.json())
    eids = [data["extraction_info"]["extraction_id"] for data in extracted]
    field_id, table_id = (
        next(t["id"] for t in data["extracted_targets"] if t["type"] == kind)
        for data, kind in zip(extracted, ("field", "table"), strict=True))
    shapes = [("longest values", *long_values(eids[0], field_id, limit, max_values)),
              ("most values", *many_cells(eids[1], table_id, limit,
                                          max_cells or settings.max_update_values))]
    # The value limit is where the docs say: one character more is refused.
    over = long_values(eids[0], field_id, limit, 1)[0].replace(b"-x", b"-xx", 1)
    probe = api.post("/extraction/result/update", data=over)
    print(f"  body limit {limit:,} bytes (max_body_bytes); a value of {MAX_VALUE + 1:,} "
          f"characters is refused with {probe.status_code} (expected 400)")
    checks.expect(probe.status_code == 400, f"over-long value answered {probe.status_code}")
    for name, body, count in shapes:
        print(f"  update '{name}': {count:,} values in one body of {len(body):,} bytes "
              f"({len(body) / limit:.1%} of the limit)")

    number, pdf = Invoices("LOCK-READ").next()
    read_id = other.post("/extraction/trigger_sync", raw_trigger(pdf, number)).json()[
        "extraction_info"]["extraction_id"]
    others = Invoices("LOCK-B")
    alone = Window()
    other_user(other, read_id, others, alone,
               lambda: len(alone.triggers.latencies) >= n_baseline)
    print(f"  other user's trigger_async alone    {ms(alone.triggers.latencies)}")
    print(f"  other user's status read alone      {ms(alone.reads.latencies)}")
    windows = [alone]
    for name, body, _ in shapes:
        updates, window, finished = Calls(), Window(), threading.Event()
        answer: list[int] = []

        def run(body: bytes = body, updates: Calls = updates, answer: list[int] = answer,
                finished: threading.Event = finished) -> None:
            # Short updates are repeated to fill the window; a long one runs once.
            t0 = time.perf_counter()
            while not updates.errors and time.perf_counter() - t0 < window_s:
                resp = updates.call(lambda: api.post("/extraction/result/update", data=body))
                answer.append(len(resp.content) if resp is not None else 0)
            finished.set()

        updater = threading.Thread(target=run)
        updater.start()
        other_user(other, read_id, others, window, finished.is_set)
        updater.join()
        windows.append(window)
        ratio = (quantile(window.triggers.latencies, 0.95)
                 / quantile(alone.triggers.latencies, 0.95))
        worst = max(window.triggers.latencies) / max(alone.triggers.latencies)
        print(f"  during '{name}': {len(updates.latencies)} update(s) of "
              f"{mean(updates.latencies):.1f} s each, answer {max(answer) / 1e6:.0f} MB")
        print(f"    other user's trigger_async        {ms(window.triggers.latencies)}")
        print(f"    other user's status read          {ms(window.reads.latencies)}")
        print(f"    trigger during / alone: p95 {ratio:.1f}x, max {worst:.0f}x (goal: p95 "
              "within 2x)")
        checks.expect(updates.errors == 0, f"update '{name}': {updates.summary()}; "
                                           f"{updates.first_error()}")
    for window in windows:
        checks.expect(window.triggers.errors + window.reads.errors == 0,
                      f"other user's requests failed: triggers {window.triggers.summary()}, "
                      f"reads {window.reads.summary()}")
    ids = [i for window in windows for i in window.ids]
    done, waited = other.wait_final(ids, timeout=180)
    print(f"  the other user's {len(ids)} extractions: {dict(kinds(done))} "
          f"(all final {waited:.1f} s after the last update)")
    checks.expect(kinds(done)["ended"] == len(ids),
                  "not every extraction of the other user ended")
    # The update was stored whole: the table now holds every cell sent.
    stored = api.get(f"/extraction/result/list/{eids[1]}").json()["extracted_targets"]
    cells = next(len(t["extracted_values"]) for t in stored if t["type"] == "table")
    print(f"  stored after the updates: {cells:,} table cells (sent {shapes[1][2]:,})")
    checks.expect(cells == shapes[1][2], "the table update was not stored whole")


def mean(samples: list[float]) -> float:
    return sum(samples) / len(samples) if samples else math.nan


# -- main --------------------------------------------------------------------------------------
def scenario(title: str, checks: Checks, run: Callable[[], None]) -> None:
    print(title, flush=True)
    t = time.perf_counter()
    try:
        run()
    except Exception as exc:  # noqa: BLE001  a broken scenario is a failure, not the end
        import traceback

        traceback.print_exc()
        checks.expect(False, f"the scenario stopped: {type(exc).__name__}: {exc}")
    print(f"  ({time.perf_counter() - t:.0f} s)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes: a smoke run")
    args = parser.parse_args()
    quick: bool = args.quick
    checks = Checks()
    root = Path(tempfile.mkdtemp(prefix="servicetools-reliability-"))
    t0 = time.perf_counter()
    count = 20 if quick else 50
    scenario(f"== 1. crash: kill -9 during {count} async extractions, restart on the same "
             "data_dir", checks, lambda: bench_crash(root, count, count // 5, checks))
    # Scenarios 2 and 3 share one service (a given data_dir is kept at stop: the bench
    # removes it at the end, or keeps it for a look when an invariant failed).
    with LocalService(root / "shared") as svc:
        api = Api(svc.base_url, svc.token)
        n_ids, n_triggers, n_polls = (200, 10, 40) if quick else (1000, 50, 200)
        scenario(f"== 2. load: {n_triggers} triggers beside {n_polls} status requests of "
                 f"{n_ids} ids, all at once", checks,
                 lambda: bench_load(svc, api, n_ids, n_triggers, n_polls,
                                    10 if quick else 50, checks))
        scale = "scaled down (--quick)" if quick else "the largest the limits allow"
        scenario(f"== 3. write lock: one user's large updates ({scale}) beside another "
                 "user's triggers", checks,
                 lambda: bench_write_lock(svc, api, checks,
                                          max_values=20 if quick else None,
                                          max_cells=40_000 if quick else None,
                                          window_s=3.0 if quick else 8.0,
                                          n_baseline=15 if quick else 40))
    print(f"== {time.perf_counter() - t0:.0f} s in all")
    if checks.failures:
        print(f"FAILED: {len(checks.failures)} invariant(s); data kept in {root}")
        for failure in checks.failures:
            print(f"  - {failure}")
        return 1
    shutil.rmtree(root, ignore_errors=True)
    print("all invariants hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
