"""A line of terminal output with styled parts, written without rich.

The one-line formats (concise, statistics, the summary) need only bold and a few colours; importing rich
for them costs a warm run about a tenth of its time. The styles are rich's names, so a `Line` reads as
rich's `Text` does, and the ANSI codes are those rich writes for the standard colour system.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_SGR = {"bold": "1", "dim": "2", "italic": "3", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}


def _codes(style: str | None) -> list[str]:
    return [_SGR[word] for word in (style or "").split()]


@dataclass
class Line:
    """Text in parts, each with an optional style (`"bold red"`), under an optional style for the whole."""

    text: str = ""
    style: str | None = None
    parts: list[tuple[str, str | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.text:
            self.parts.append((self.text, None))

    def append(self, text: str, style: str | None = None) -> None:
        """Add a part at the end."""
        self.parts.append((text, style))

    @property
    def plain(self) -> str:
        """The text without styles."""
        return "".join(text for text, _ in self.parts)

    def ansi(self) -> str:
        """The text with ANSI SGR codes around each styled part."""
        out = []
        for text, style in self.parts:
            codes = _codes(self.style) + _codes(style)
            out.append(f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes and text else text)
        return "".join(out)
