# Every target sets itself up: a fresh clone needs only Python 3.11/3.12 and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8000
DATA_DIR ?= var/service
# The token `make serve` registers for the development user (header X-Api).
SERVICE_API_KEY ?= servicetools-dev-token

.PHONY: demo test test-fast test-wheel e2e report-screenshot fuzz bench bench-accuracy bench-doctor bench-estimate bench-rename bench-ocr bench-sets bench-tables bench-ranker bench-reliability bench-audit-scale \
	bench-limits bench-scale bench-columns train serve lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m servicetools demo

# Every test on two workers (pytest-xdist; most of the time is spent waiting on services,
# kernels and the browser): a file's tests stay on one worker, which starts its services
# once. TEST_WORKERS=0 runs them all in this process.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The tests that start no process (no service, database, browser or kernel), on every
# core; tests/conftest.py fails a test that starts one unmarked.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not integration" -n auto

# The wheel without extras in a fresh venv: the client-side tests against it, then the
# demo from the wheel (CI runs this after `make test`).
test-wheel: $(STAMP)
	PYTHON=$(PYTHON) .ci/test-wheel

# The service fuzzed from its OpenAPI with schemathesis (make test runs a short pass).
FUZZ_EXAMPLES ?= 1500
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -s -p no:cacheprovider --timeout=3600 tests/service/test_fuzz.py

# The demo's report page in headless Chromium at 1,400 px: checked, and the screenshot
# kept in report/screenshot.png to look at (needs Debian's chromium).
report-screenshot: $(STAMP)
	$(PY) -m servicetools demo
	REPORT_PAGE=report/index.html REPORT_SCREENSHOT=report/screenshot.png \
		$(PY) -m pytest -q -s -m e2e -p no:cacheprovider tests/e2e/test_report_page.py

# Needs Debian's Chromium (apt-get install chromium); `make test` runs it too when present.
e2e: $(STAMP)
	$(PY) -m pytest -q -m e2e tests/e2e

# accuracy.py runs OCR over a 200-document dev set (minutes): it has its own target.
bench: $(STAMP)
	@for b in bench/*.py; do case "$$b" in bench/accuracy.py|bench/rename.py|bench/ocr_models.py|bench/train.py|bench/realsets.py|bench/sets.py|bench/tables.py|bench/icdar.py|bench/ranker.py|bench/scale.py|bench/audit_scale.py) continue;; esac; \
		echo "== $$b"; $(PY) $$b || exit 1; done

# kill -9 during 50 extractions, 50 triggers beside 200 status requests, one user's
# largest update beside another's triggers (about 3 min).
bench-reliability: $(STAMP)
	$(PY) bench/reliability.py

# Queue throughput with 1, 2, 4 worker processes on PostgreSQL + S3, stand-in and real
# engine; duplicates and lost jobs must be 0 (a few minutes; needs PostgreSQL).
bench-scale: $(STAMP)
	$(PY) bench/scale.py

# Audits of 10 million field values and 30 million cells: a Parquet dataset through
# DuckDB against frames in pandas (a few minutes; about 2 GB of disk for the dataset).
bench-audit-scale: $(STAMP)
	$(PY) bench/audit_scale.py

# The largest accepted request of every limit, and the smallest refused (about 3 min).
# Table columns named alone: generated invoices' line items with names only beside the
# bundled header trees (a minute).
bench-columns: $(STAMP)
	$(PY) bench/column_names.py

bench-limits: $(STAMP)
	$(PY) bench/limits.py

bench-accuracy: $(STAMP)
	$(PY) bench/accuracy.py

# The OCR ceiling on sroie-dev's receipts: key values present in what each reader returns
# (the engine's RapidOCR 3 settings, other detector settings, upscaling), seconds per page.
bench-ocr: $(STAMP)
	$(PY) bench/ocr_models.py --root $(DEV_DATA)

# Every field target of the bundled configurations and of bench/configurations under five
# other names with plain descriptions (bench/renames.json): accuracy per target against its
# own name, per half of the real sets (minutes; the words of read documents are cached).
bench-rename: $(STAMP)
	$(PY) bench/rename.py --root $(DEV_DATA)

# The sets of other kinds of documents (adforms-dev, zugferd-dev, contracts-dev) with
# their configurations in bench/configurations: accuracy per target on each half, fill
# and ceiling (10-20 minutes the first time, most of it OCR of scanned pages; cached).
# Confidence audits with few labels (issue 31): accuracy estimated without truth, audit
# intervals, the review plan's catch; each real set against the others as reference.
bench-estimate: $(STAMP)
	$(PY) bench/estimate.py --root $(DEV_DATA)

# The configuration doctor on defects planted one at a time in the real sets'
# configurations, each extracted again (about 11 minutes).
bench-doctor: $(STAMP)
	$(PY) bench/doctor.py --root $(DEV_DATA)

bench-sets: $(STAMP)
	$(PY) bench/sets.py --root $(DEV_DATA)

# Tables on icdar2013-dev, camelot-tests-dev and real/'s table documents: the engine
# beside pdfplumber and camelot's four flavours, same documents, same measure, per half,
# and the engine through the local service with and without header trees; the same pages
# as scans, and the cell confidence of each set and of the scans where the cell model
# never saw them (about 12 min; the OCR of the scans is cached).
bench-tables: $(STAMP)
	$(PY) bench/tables.py --root $(DEV_DATA)/icdar2013-dev --camelot $(DEV_DATA)/camelot-tests-dev \
		--real $(DEV_DATA)/real --service --scans

# What a learned candidate ranker could gain over the rules on the real sets (a minute
# with bench-accuracy's OCR cache).
bench-ranker: $(STAMP)
	$(PY) bench/ranker.py --root $(DEV_DATA)

# Fits the engine's confidence calibration (engine/calibration.json) from the real dev
# sets under $(DEV_DATA) and the bundled sample, and its scoring of table candidates
# (engine/candidates.json) from the table sets; minutes, most of it OCR (cached).
# TRAIN_ONLY=fields, cells or candidates fits one and keeps the others as shipped
# (candidates: about two minutes).
DEV_DATA ?= ../shared/data
TRAIN_ONLY ?=
train: $(STAMP)
	$(PY) bench/train.py --root $(DEV_DATA) $(if $(TRAIN_ONLY),--only $(TRAIN_ONLY))

serve: $(STAMP)
	SERVICETOOLS_DEV_TOKEN=$(SERVICE_API_KEY) $(PY) -m servicetools serve --port $(PORT) --data-dir $(DATA_DIR)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache
