"""argparse: the values a command-line option can take. An option declared with `choices=` holds one
of them (or its default), so a chain of tests over it that covers them all is exhaustive."""

from __future__ import annotations

from gradguard.analysis.api.facts import Fact, Returns

_PARSER = "argparse.ArgumentParser"

FACTS: tuple[Fact, ...] = (
    Fact(_PARSER, returns=Returns.OBJECT),
    Fact(f"{_PARSER}.add_argument", returns=Returns.NONE, declares_option=True),
    # Groups declare options of the parser they belong to.
    Fact(f"{_PARSER}.add_argument_group", returns=Returns.OBJECT, instance=_PARSER),
    Fact(f"{_PARSER}.add_mutually_exclusive_group", returns=Returns.OBJECT, instance=_PARSER),
    Fact(f"{_PARSER}.parse_args", returns=Returns.OBJECT, instance="argparse.Namespace"),
    Fact("argparse.Namespace", returns=Returns.OBJECT, holds_options=True),
)
