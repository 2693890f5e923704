"""Markdown structure where it decides something: the heading that names an entity.

A line that looks like ``# Setup`` is a heading only outside code blocks, HTML comments and Obsidian's ``%%``
comments; a regular expression cannot tell, so the cases it cannot vouch for are parsed with markdown-it-py
(CommonMark). The parser is imported only for those: most summaries open with their heading, and the hourly
pass should not pay for loading a parser it does not need.
"""

from __future__ import annotations

import re

__all__ = ["first_h1"]

_ATX_H1 = re.compile(r"^# +(.+?)\s*#*\s*$", re.MULTILINE)
# What can turn a line that looks like a heading into something else: a fence, an indented or HTML block, an
# Obsidian comment. Text before the first candidate without any of these leaves the candidate a heading.
_MAY_HIDE = re.compile(r"```|~~~|<|%%|^(?: {4}|\t)", re.MULTILINE)
_OBSIDIAN_COMMENT = re.compile(r"%%.*?(?:%%|\Z)", re.DOTALL)


def first_h1(text: str) -> str | None:
    """The text of the first ``# `` heading of ``text``, or None when it has none outside code and comments."""
    m = _ATX_H1.search(text)
    if m is None:
        return None
    if not _MAY_HIDE.search(text, 0, m.start()):
        return m.group(1).strip()
    return _parsed_h1(text)


def _parsed_h1(text: str) -> str | None:
    from markdown_it import MarkdownIt

    # An Obsidian comment hides what it holds; blanking it (keeping its line breaks) keeps line numbers and
    # lets CommonMark parse the rest as Obsidian shows it.
    visible = _OBSIDIAN_COMMENT.sub(lambda c: re.sub(r"[^\n]", " ", c.group()), text)
    tokens = MarkdownIt("commonmark").parse(visible)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1" and token.markup == "#":
            inline = tokens[i + 1]
            return inline.content.strip() or None
    return None
