"""Decoding text files without bending a byte: BOMs and line endings are remembered, not normalised."""

from __future__ import annotations

BOM = "\ufeff"


class NotText(ValueError):
    """The bytes are not UTF-8; the message says where the first bad byte is."""


def decode(data: bytes) -> str:
    """The text of a file, which must be UTF-8.

    No fallback encoding is guessed: a wrong guess would reach the other side as changed text, and Obsidian
    rewrites bytes it cannot read as U+FFFD on the next save. The message says how to fix the file instead.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8 (a file "
            "written on Windows: iconv -f windows-1252 -t utf-8) and the next pass syncs it"
        ) from None


def strip_bom(text: str) -> tuple[str, bool]:
    if text.startswith(BOM):
        return text[1:], True
    return text, False


def newline_of(text: str) -> str:
    """The dominant line ending, so text vaultsync adds matches what is there."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"
