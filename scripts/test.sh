#!/usr/bin/env bash
# The test suite: provision everything, then run the unit tests, the worker
# isolation tests and the planted-bug round trip (slow ones are marked `slow`;
# pass -m "not slow" for the fast ones only). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/provision.sh
exec .venv/bin/python -m pytest tests "$@"
