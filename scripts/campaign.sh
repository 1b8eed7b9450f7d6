#!/usr/bin/env bash
# The main job: provision everything, then run the default campaign over
# every provisioned interpreter (3.11 ... 3.15t, each with the newest torch
# that has a wheel for it) with the eager, aot_eager and inductor backends on
# CPU. Extra arguments go to `tcfuzz run` (e.g. --budget 1h).
# Exit code: 0 nothing new, 1 new buckets filed, 2 usage, 3 harness failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/provision.sh
exec .venv/bin/tcfuzz run --backend eager,aot_eager,inductor --budget 12m "$@"
