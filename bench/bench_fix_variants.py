"""The whole fix-variant campaign: every buggy fixture rewritten mechanically by every rewrite of
`tests/analysis/metamorphic.py`, fixed by `--fix --unsafe-fixes`, run beside its hand fix under the same
rewrite (`tests/analysis/test_fix_variants.py`, whose verdict table `GAPS` it checks in full).

    python bench/bench_fix_variants.py            # two workers; ~100 s on a quiet 2-core machine
    python bench/bench_fix_variants.py -k tuple   # only the rewrites whose name holds "tuple"

The test suite runs a third of it (each rewrite on a different third of the fixtures); this runs all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
               str(ROOT / "tests" / "analysis" / "test_fix_variants.py"), *sys.argv[1:]]
    return subprocess.call(command, cwd=ROOT, env={**os.environ, "GRADGUARD_LONG": "1"})


if __name__ == "__main__":
    raise SystemExit(main())
