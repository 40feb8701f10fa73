# gpured — set-up, demo and tests.  Works on a fresh Debian/Ubuntu machine
# with nothing but Python: missing system packages (OpenCL loader and
# headers, PoCL, Oclgrind) come from apt, Python packages from pip.

PYTHON ?= python3
PIP := $(PYTHON) -m pip
APT_PKGS := ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd oclgrind
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
STAMP := build/.deps-stamp

.PHONY: all deps build demo test test-py test-oclgrind bench clean

all: build

# System packages (only those missing) and Python packages.
$(STAMP): Makefile pyproject.toml
	@missing=""; for p in $(APT_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	$(PIP) install -q --disable-pip-version-check "numpy>=1.25" pytest setuptools wheel \
	  nbformat nbclient ipykernel matplotlib
	@mkdir -p build && touch $(STAMP)

deps: $(STAMP)

# The extension, built in place, and the package installed (editable).
build: $(STAMP)
	$(PYTHON) setup.py -q build_ext --inplace
	$(PIP) install -q --disable-pip-version-check --no-build-isolation --no-deps -e .

# Main job: devices, one real reduction checked against NumPy, its time.
demo: build
	$(PYTHON) -m gpured.demo

test: build test-py test-oclgrind

test-py:
	$(PYTHON) -m pytest -q tests

# Every kernel on small inputs under Oclgrind's race, barrier-divergence
# and uninitialised-memory checks; any report fails.
test-oclgrind:
	set -e; for f in tests/oclgrind_*.py; do $(PYTHON) $$f; done

bench: build
	$(PYTHON) -m gpured.bench

clean:
	rm -rf build *.egg-info gpured/*.so csrc/kernels_gen.h
