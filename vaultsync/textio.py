"""Decoding text files without bending a byte: BOMs and line endings are remembered, not normalised."""

from __future__ import annotations

BOM = "\ufeff"


class NotText(ValueError):
    """The bytes are not UTF-8; the message says where the first bad byte is."""


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def strip_bom(text: str) -> tuple[str, bool]:
    if text.startswith(BOM):
        return text[1:], True
    return text, False


def newline_of(text: str) -> str:
    """The dominant line ending, so text vaultsync adds matches what is there."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"
