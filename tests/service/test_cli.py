"""``servicetools keys`` and ``servicetools config check``, run as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from servicetools import LocalService, bundled

from ..support.helpers import Api, create_key
from ..support.postgres import PostgresServer

#: Starts processes of its own (tests/conftest.py: integration).
pytestmark = pytest.mark.integration

CONFIGS = bundled.CONFIGURATIONS


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "servicetools", *args], capture_output=True,
                          text=True, timeout=60)


def test_keys_create_list_revoke(service: LocalService) -> None:
    token = create_key(service.data_dir, "carol")
    api = Api(service.base_url, token)
    assert api.get("/vault/list").status_code == 200
    listing = run("keys", "list", "--user", "carol", "--data-dir", str(service.data_dir))
    assert "carol" in listing.stdout and "active" in listing.stdout
    assert token not in listing.stdout  # only hashes are stored, never shown again
    revoked = run("keys", "revoke", "--user", "carol", "--data-dir", str(service.data_dir))
    assert revoked.returncode == 0 and "revoked 1" in revoked.stdout
    resp = api.get("/vault/list")
    assert resp.status_code == 401 and resp.json()["error"]["code"] == "unauthorized"


def test_keys_create_needs_a_user() -> None:
    assert run("keys", "create").returncode == 2


def test_config_check_accepts_the_bundled_configurations() -> None:
    out = run("config", "check", *map(str, sorted(CONFIGS.glob("*.json"))))
    assert out.returncode == 0, out.stdout
    assert out.stdout.count(": ok") == len(list(CONFIGS.glob("*.json")))


def _variant(tmp_path: Path, output_schema: object) -> Path:
    config = json.loads((CONFIGS / "invoices.json").read_text())
    config["output_schema"] = output_schema
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize(("schema", "kind", "place"), [
    ("[1, 2]", "Invalid schema", "$"),
    ({"a": {"b": "fields.[bad"}}, "Parsing error", "$.a.b"),
    ({"n": "fields.\"Invoice Nmber\""}, "Binding error", "$.n"),
    ({"c": "records.\"Line Items\"[*].Colour"}, "Binding error", "$.c"),
])
def test_config_check_reports_output_schema_errors(tmp_path: Path, schema: object, kind: str,
                                                   place: str) -> None:
    out = run("config", "check", str(_variant(tmp_path, schema)))
    assert out.returncode == 1
    assert kind in out.stdout and place in out.stdout, out.stdout


def test_config_check_reports_bad_targets(tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "invoices.json").read_text())
    config["extraction_targets"][0]["search_area"] = "nowhere"
    (tmp_path / "area.json").write_text(json.dumps(config))
    out = run("config", "check", str(tmp_path / "area.json"))
    assert out.returncode == 1 and "extraction_targets[0]" in out.stdout
    assert "'nowhere' is not in search_areas" in out.stdout
    config = json.loads((CONFIGS / "invoices.json").read_text())
    config["extraction_targets"][1]["validation_tree"]["rule_groups"][0]["rules"] = [
        {"type": "regex", "pattern": "[unclosed"}]
    (tmp_path / "regex.json").write_text(json.dumps(config))
    out = run("config", "check", str(tmp_path / "regex.json"))
    assert out.returncode == 1
    assert "extraction_targets[1].validation_tree" in out.stdout and "[unclosed" in out.stdout
    (tmp_path / "broken.json").write_text("{not json")
    assert "not valid JSON" in run("config", "check", str(tmp_path / "broken.json")).stdout


def test_config_check_reports_two_columns_at_one_position(tmp_path: Path) -> None:
    # A cell is its column's by position: the second column at position 0 was never read.
    config = json.loads((CONFIGS / "invoices.json").read_text())
    table = next(t for t in config["extraction_targets"] if t["type"] == "table")
    table["header_schema"][1]["position"] = table["header_schema"][0]["position"]
    (tmp_path / "columns.json").write_text(json.dumps(config))
    out = run("config", "check", str(tmp_path / "columns.json"))
    assert out.returncode == 1
    index = config["extraction_targets"].index(table)
    assert (f"extraction_targets[{index}].header_schema: more than one column at position "
            f"{table['header_schema'][0]['position']}") in out.stdout


def test_config_check_reports_a_search_area_with_no_area(tmp_path: Path) -> None:
    # Corners given the wrong way round: the target searched nothing and came back empty.
    config = json.loads((CONFIGS / "invoices.json").read_text())
    name, area = next(iter(config["search_areas"].items()))
    x0, y0, x1, y1 = area["box"]
    area["box"] = [x1, y0, x0, y1]
    (tmp_path / "area.json").write_text(json.dumps(config))
    out = run("config", "check", str(tmp_path / "area.json"))
    assert out.returncode == 1
    assert f"search_areas[{name!r}]: the box {area['box']} is empty" in out.stdout


def test_serve_refuses_a_bad_configuration_folder(tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "broken.json").write_text(json.dumps({"id": "x", "name": "x"}))
    out = run("serve", "--data-dir", str(tmp_path / "d"), "--configurations", str(folder),
              "--port", "0")
    assert out.returncode == 2
    assert "broken.json" in out.stderr


UNREACHABLE = "postgresql://admin:secret@/servicetools?host=/nonexistent-socket-folder"


@pytest.mark.parametrize(("command", "url"), [
    ("serve", UNREACHABLE), ("keys", UNREACHABLE), ("serve", "sqlite:///elsewhere.db")])
def test_serve_and_keys_refuse_an_unusable_database(tmp_path: Path, command: str, url: str
                                                    ) -> None:
    pytest.importorskip("psycopg")
    args = ["serve", "--port", "0"] if command == "serve" else ["keys", "list"]
    out = run(*args, "--data-dir", str(tmp_path / "d"), "--database", url)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(f"servicetools {command}: The database"), out.stderr
    assert "Traceback" not in out.stderr and "secret" not in out.stderr


def test_keys_on_a_postgresql_database(postgres: PostgresServer, tmp_path: Path) -> None:
    url = postgres.new_database()
    token = create_key(tmp_path, "dora", url)
    listing = run("keys", "list", "--database", url, "--data-dir", str(tmp_path))
    assert listing.returncode == 0 and "dora" in listing.stdout and "active" in listing.stdout
    assert token not in listing.stdout
    assert not list(tmp_path.glob("*.sqlite3"))  # nothing went to the SQLite default
    revoked = run("keys", "revoke", "--user", "dora", "--database", url)
    assert revoked.returncode == 0 and "revoked 1" in revoked.stdout


@pytest.mark.parametrize(("args", "says"), [
    (["serve", "--no-workers"], "--no-workers is for the job queue in PostgreSQL"),
    (["serve", "--lease-seconds", "5"], "--lease-seconds is for the job queue"),
    (["worker", "--database", UNREACHABLE], "servicetools worker: The database"),
    (["worker", "--database", UNREACHABLE, "--lease-seconds", "0"], "must be above 0"),
])
def test_serve_and_worker_refuse_bad_queue_options(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str) -> None:
    pytest.importorskip("psycopg")
    from servicetools.cli import main

    assert main([*args, "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and "secret" not in err
