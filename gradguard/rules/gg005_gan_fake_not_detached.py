"""GG005: a GAN's fake batch feeds the discriminator's loss without `.detach()`."""

from __future__ import annotations

from collections.abc import Iterator

from gradguard import codemods
from gradguard.analysis.detect import stepped_reads
from gradguard.analysis.facts import Cause, FileFacts
from gradguard.model import Diagnostic
from gradguard.rules import Rule, carrier_name, conflict_related, freed_row


class GanFakeNotDetached(Rule):
    """The discriminator's backward freed the generator's graph that the generator's loss needs."""

    code = "GG005"

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for conflict in facts.conflicts:
            if conflict.cause is not Cause.GAN_REUSE or conflict.carrier is None:
                continue
            stepped = conflict.stepped
            reads = stepped_reads(conflict.carrier.first_reads, stepped)
            edits = []
            seen: set[int] = set()
            for read in reads:
                if id(read.expr) in seen:
                    continue
                seen.add(id(read.expr))
                edits.append(codemods.replace_node(facts, read.expr, codemods.detached(facts, read.expr)))
            consumer = reads[0].consumer if reads else "D"
            yield self.report(facts, conflict.failing.node, related=conflict_related(facts, conflict),
                              edits=edits, carrier=carrier_name(conflict), consumer=consumer or "D",
                              line=freed_row(facts, conflict))
