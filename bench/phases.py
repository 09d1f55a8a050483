"""Where `gradguard lint`'s time goes, phase by phase, measured in this process on a corpus.

The phases are those of `gradguard.analysis.facts_for`, called one by one so each can be timed: read
the bytes, the text prefilter (`might_hold_finding`), decoding, the CPython-`ast` screen, the libcst
parse, the dataflow interpreter (`Program.run`), and the rules (`facts_of` + every rule's `check`).
One process, no cache: the sums are CPU-bound seconds, which `gradguard lint` shares across workers.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PHASES = ("read", "prefilter", "decode", "ast screen", "libcst parse", "dataflow", "rules")


@dataclass
class PhaseReport:
    """Seconds per phase and how many files each gate let through, for one corpus."""

    files: int = 0
    prefiltered: int = 0  # passed the text prefilter
    screened: int = 0  # passed the ast screen (or CPython could not parse them): these reach libcst
    parse_failures: int = 0  # libcst could not parse them (gradguard reports a file error)
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    slowest: list[tuple[float, str]] = field(default_factory=list)  # (parse+dataflow+rules s, path)

    @property
    def total(self) -> float:
        """Seconds of all phases together."""
        return sum(self.seconds.values())


def measure(files: Iterable[Path], keep_slowest: int = 5) -> PhaseReport:
    """Run the analysis of every file phase by phase and time each phase."""
    from gradguard.analysis import might_hold_finding
    from gradguard.analysis.detect import facts_of
    from gradguard.analysis.program import Program
    from gradguard.analysis.screen import screen
    from gradguard.engine import InputError, decode
    from gradguard.parse import ParseFailure, parse_module
    from gradguard.rules import all_rules

    rules = all_rules()
    report = PhaseReport()
    clock = time.perf_counter
    spent = report.seconds
    for path in files:
        report.files += 1
        start = clock()
        data = path.read_bytes()
        after_read = clock()
        passed = might_hold_finding(data)
        after_prefilter = clock()
        spent["read"] += after_read - start
        spent["prefilter"] += after_prefilter - after_read
        if not passed:
            continue
        report.prefiltered += 1
        try:
            source: str | None = decode(data, str(path))[0]
        except InputError:
            source = None
        after_decode = clock()
        spent["decode"] += after_decode - after_prefilter
        if source is None:
            continue
        screened = screen(source)
        after_screen = clock()
        spent["ast screen"] += after_screen - after_decode
        if screened is not None and not screened.relevant:
            continue
        report.screened += 1
        try:
            module = parse_module(source)
        except ParseFailure:
            report.parse_failures += 1
            spent["libcst parse"] += clock() - after_screen
            continue
        after_parse = clock()
        program = Program(module, screened.modules if screened is not None else frozenset())
        program.run()
        after_dataflow = clock()
        facts = facts_of(program, source)
        for rule in rules:
            list(rule.check(facts))
        after_rules = clock()
        spent["libcst parse"] += after_parse - after_screen
        spent["dataflow"] += after_dataflow - after_parse
        spent["rules"] += after_rules - after_dataflow
        report.slowest.append((after_rules - after_screen, str(path)))
    report.slowest = sorted(report.slowest, reverse=True)[:keep_slowest]
    return report


def profile(files: Iterable[Path], top: int = 15) -> str:
    """cProfile of `measure` over `files`: the `top` functions by own time, then by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    measure(files)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs()
    out.write(f"-- top {top} by own time (tottime) --\n")
    stats.sort_stats("tottime").print_stats(top)
    out.write(f"-- top {top} by cumulative time --\n")
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()
