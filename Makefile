# Two entry points, each doing its own set-up (a virtual environment in .venv):
#   make demo   evaluate the gold patches of the embedded demo benchmark
#   make demo-swebench   evaluate the SWE-bench demo (pycalc) in Docker: gold and a model's predictions
#   make demo-multilingual   evaluate the SWE-bench Multilingual demo (jcalc, Java Maven rows built here) in Docker
#   make demo-swtbench   evaluate SWT-bench (test generation) on the pycalc rows in Docker: gold and hand-made predictions
#   make demo-realcode   evaluate the RealCodeJava demo: 4 methods of textkit, 11 samples of a model (pass@k)
#   make test   run the project's test suite (Maven and Docker tests included)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_WORKERS ?= 2

.PHONY: demo demo-swebench demo-multilingual demo-swtbench demo-realcode test lint clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/pytest -p no:cacheprovider --tebench-predictions=gold -n $(PYTEST_WORKERS) \
		--tebench-report=tebench-report.json --junitxml=tebench-junit.xml --tebench-html=tebench-report.html

SWEBENCH_DEMO := pytest_tebench/demo/swebench
demo-swebench: $(BIN)/.installed
	-@scripts/ensure-docker
	@# gold resolves every instance (the run passes); the model's run fails 4 of its 5 items by design
	$(BIN)/pytest -p no:cacheprovider --tebench-benchmark=swebench --tebench-dataset=$(SWEBENCH_DEMO)/dataset.jsonl \
		--tebench-predictions=gold
	-$(BIN)/pytest -p no:cacheprovider --tebench-benchmark=swebench --tebench-dataset=$(SWEBENCH_DEMO)/dataset.jsonl \
		--tebench-predictions=$(SWEBENCH_DEMO)/predictions/demo-model.jsonl \
		--tebench-report=swebench-report.json --tebench-swebench-report=swebench-run-report.json \
		--junitxml=swebench-junit.xml

MULTILINGUAL_DEMO := pytest_tebench/demo/multilingual
demo-multilingual: $(BIN)/.installed
	-@scripts/ensure-docker
	@# gold resolves both rows (the run passes); the model's wrong fix of jcalc-1 fails by design
	$(BIN)/pytest -p no:cacheprovider --tebench-benchmark=swebench --tebench-dataset=$(MULTILINGUAL_DEMO)/dataset.jsonl \
		--tebench-swebench-images=build --tebench-predictions=gold
	-$(BIN)/pytest -p no:cacheprovider --tebench-benchmark=swebench --tebench-dataset=$(MULTILINGUAL_DEMO)/dataset.jsonl \
		--tebench-swebench-images=build --tebench-predictions=$(MULTILINGUAL_DEMO)/predictions/demo-model.jsonl \
		--tebench-report=multilingual-report.json --junitxml=multilingual-junit.xml

demo-swtbench: $(BIN)/.installed
	-@scripts/ensure-docker
	@# gold (each row's test_patch) succeeds on every instance with a positive coverage delta (the run passes);
	@# the hand-made predictions (P->P, F->F, P->F, a reproduction, empty, a code edit, a patch that does not
	@# apply) fail all but one item by design
	$(BIN)/pytest -p no:cacheprovider --tebench-benchmark=swtbench --tebench-dataset=$(SWEBENCH_DEMO)/dataset.jsonl \
		--tebench-predictions=gold
	-$(BIN)/pytest -p no:cacheprovider --tebench-benchmark=swtbench --tebench-dataset=$(SWEBENCH_DEMO)/dataset.jsonl \
		--tebench-predictions=$(SWEBENCH_DEMO)/predictions/swtbench-model.jsonl \
		--tebench-report=swtbench-report.json --junitxml=swtbench-junit.xml --tebench-html=swtbench-report.html

REALCODE_DEMO := pytest_tebench/demo/realcode
demo-realcode: $(BIN)/.installed
	@# one item per (instance, model): it passes when a sample passes; center's two samples are wrong by design
	-$(BIN)/pytest -p no:cacheprovider --tebench-benchmark=realcode --tebench-dataset=$(REALCODE_DEMO)/dataset.jsonl \
		--tebench-predictions=$(REALCODE_DEMO)/predictions/demo-model.jsonl \
		--tebench-report=realcode-report.json --junitxml=realcode-junit.xml

test: $(BIN)/.installed
	@# Docker tests need an engine and the sandbox image; where we are root this installs and
	@# starts the engine, and the image is built once (reused while its recipe is unchanged).
	-@scripts/ensure-docker && $(BIN)/tebench image ensure
	@# the HTML report's browser tests need Debian's chromium (installed when root)
	-@scripts/ensure-browser
	$(BIN)/pytest -n $(PYTEST_WORKERS) -p no:cacheprovider tests

lint: $(BIN)/.installed
	$(BIN)/ruff check pytest_tebench tests bench
	$(BIN)/ruff format --check pytest_tebench tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info tebench-report.json tebench-junit.xml tebench-report.html swebench-*.json swebench-junit.xml swtbench-*.json swtbench-junit.xml swtbench-report.html
