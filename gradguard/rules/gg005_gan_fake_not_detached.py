"""GG005: a GAN's fake batch feeds the discriminator's loss without `.detach()`."""

from __future__ import annotations

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.analysis.values import Read
from gradguard.rules import ConflictRule, FixPlan, read_shape


class GanFakeNotDetached(ConflictRule):
    """The discriminator's backward freed the generator's graph that the generator's loss needs."""

    code = "GG005"
    causes = frozenset({Cause.GAN_REUSE})

    def applies(self, conflict: Conflict) -> bool:
        return conflict.carrier is not None

    def fields(self, facts: FileFacts, conflict: Conflict) -> dict[str, str]:
        reads = _discriminator_reads(conflict)
        consumer = reads[0].consumer if reads and reads[0].consumer else "D"
        return {**super().fields(facts, conflict), "consumer": consumer}

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        edits = []
        seen: set[int] = set()
        for found in _discriminator_reads(conflict):
            read = _local(facts, found)
            if read is None:
                return FixPlan()
            if id(read.expr) not in seen:
                seen.add(id(read.expr))
                detached = codemods.detached_as(facts, read.expr, read_shape(facts, conflict, read))  # type: ignore[arg-type]
                if detached is None:
                    return FixPlan()
                edits.append(codemods.replace_node(facts, read.expr, detached))
        return FixPlan(tuple(edits))


def _local(facts: FileFacts, read: Read) -> Read | None:
    """The read itself when it is in the linted file; else the argument of this file's call through
    which the fake batch reached it (`discriminator_loss(netD, real, fake)`, whose helper in another
    module scores it): detached there, the helper gets it detached."""
    current: Read | None = read
    while current is not None and not facts.is_local(current.expr):
        current = current.outer
    return current


def _discriminator_reads(conflict: Conflict) -> list[Read]:
    """Where the fake batch went into the discriminator in the discriminator's loss."""
    assert conflict.carrier is not None
    return list(conflict.carrier.fed)
