"""`--output-format json-lines`: the entries of the `json` format, one compact JSON object per line.

The same fields as `json` (ruff's), so a stream reader (`jq -c`, a log pipeline) needs no array.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gradguard.model import FileResult
from gradguard.report.json_format import entries


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write one JSON object per file error, finding and note (nothing at all when there are none)."""
    for entry in entries(results, cwd):
        out.write(json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n")
