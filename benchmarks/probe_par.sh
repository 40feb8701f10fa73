#!/usr/bin/env bash
# Whether N processes started at once all see the NVIDIA OpenCL platform.
N=${1:-14}
for i in $(seq $N); do
  python3 -c "import gpured; print([d['name'][:12] for d in gpured.devices()])" 2>&1 | tail -1 &
done
wait
