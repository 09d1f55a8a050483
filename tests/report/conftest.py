"""The report tests read three hand-written rule documents instead of the real catalogue.

So the snapshots of this folder do not change whenever a real rule document is reworded; the end-to-end
snapshots (test_cli_snapshots.py) use the real catalogue.
"""

from __future__ import annotations

import pytest
from report_samples import SAMPLE_DOCS

from gradguard import catalogue


@pytest.fixture
def sample_catalogue(monkeypatch: pytest.MonkeyPatch) -> dict[str, catalogue.RuleDoc]:
    """Replace the catalogue by the three sample documents (tests opt in with `usefixtures`)."""
    monkeypatch.setattr(catalogue, "load", lambda: SAMPLE_DOCS)
    return SAMPLE_DOCS
