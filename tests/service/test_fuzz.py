"""The service fuzzed from its own OpenAPI document with schemathesis, over loopback.

Every check schemathesis has (no server error, status codes, content types, response
schemas and headers, 405s with Allow, schema-invalid requests refused, ...) with a fixed
seed, through all its phases (examples, coverage, fuzzing, stateful links), except one:
"positive_data_acceptance", which expects every schema-valid request to be accepted.
A document's bytes are judged by what they are (D12), not by the schema, so random
bytes that are schema-valid as a file are rightly refused with 415. One operation has a
narrower exception, written with its reason in ``schemathesis.toml`` beside this file.

`make test` runs a short pass (FUZZ_EXAMPLES, default 15 per operation); `make fuzz`
a long one (20,000 requests and more).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from servicetools import LocalService

#: Starts processes of its own (tests/conftest.py: integration).
pytestmark = pytest.mark.integration

# Every check is on by default; the exceptions are in this file, each with its reason (a
# --checks option would override the per-operation ones). The run works in the test's
# own folder, so the file is named.
_CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_the_openapi_document_fuzzed_finds_no_failure(service: LocalService,
                                                      tmp_path: Path) -> None:
    examples = int(os.environ.get("FUZZ_EXAMPLES", "15"))
    st = Path(sys.executable).with_name("st")
    command = [str(st), "--config-file", str(_CONFIG), "run",
               f"{service.base_url}/openapi.json", "--url", service.base_url,
               "--seed", "20261124",
               "--max-examples", str(examples), "-H", f"X-Api: {service.token}",
               "--request-timeout", "120", "--no-color"]
    # The report folder schemathesis writes goes to the test's own folder.
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                          timeout=3600, check=False)
    generated = re.search(r"(\d+) generated", done.stdout)
    print(f"schemathesis: {generated.group(0) if generated else '?'} test cases")
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert generated is not None and int(generated.group(1)) > 0
