"""Tests for the pre-commit secret guard.

Every fake token is assembled from pieces at run time so this file never contains anything
that other secret scanners (or GitHub push protection) would flag as a live credential.
"""

from __future__ import annotations

import pytest

from vaultsync.git import secrets
from vaultsync.git.secrets import Finding, scan_bytes, scan_text

TELEGRAM_SECRET = "AAH" + "x1Y" * 10 + "z_"  # exactly 35 characters

PLANTED: list[tuple[str, str]] = [
    ("private key block", "-----BEGIN " + "RSA PRIVATE KEY-----"),
    ("private key block", "-----BEGIN " + "OPENSSH PRIVATE KEY-----"),
    ("private key block", "-----BEGIN " + "PRIVATE KEY-----"),
    ("private key block", "-----BEGIN " + "PGP PRIVATE KEY BLOCK-----"),
    ("AWS access key id", "AKIA" + "ABCDEFGH23456789"),
    ("AWS access key id", "ASIA" + "Z" * 8 + "7" * 8),
    ("GitHub token", "ghp_" + "A" * 36),
    ("GitHub token", "gho_" + "b2C" * 12),
    ("GitHub token", "github_pat_" + "11ABCDEFG0" + "_xY9" * 15),
    ("Anthropic API key", "sk-ant-" + "api03-" + "Ab1_" * 20),
    ("OpenAI-style API key", "sk-" + "Ab12" * 12),
    ("OpenAI-style API key", "sk-proj-" + "Ab1-_x" * 20),
    ("OpenAI-style API key", "sk-svcacct-" + "Q9z" * 10),
    ("Telegram bot token", "123456789:" + TELEGRAM_SECRET),
    ("Telegram bot token", "7" * 10 + ":" + TELEGRAM_SECRET),
    ("Slack token", "xoxb-" + "1234567890-" + "9876543210-" + "AbCd" * 6),
    ("Slack token", "xoxp-" + "12-34-56-" + "f00d" * 8),
    (
        "Slack webhook URL",
        "https://hooks.slack.com" + "/services/T0ABC1234/B0DEF5678/" + "aBcD" * 6,
    ),
    ("Google API key", "AIza" + "Sy" + "A1b2_" * 6 + "xyz"),
    ("Stripe secret key", "sk_live_" + "4eC39Hq" * 4),
    ("Stripe secret key", "rk_live_" + "Zq7" * 9),
]


def _assert_redacted(finding: Finding, token: str) -> None:
    assert finding.redacted == f"{token[:4]}… ({len(token)} chars)"
    assert token[:5] not in finding.redacted


@pytest.mark.parametrize(("kind", "token"), PLANTED, ids=[token[:11] for _, token in PLANTED])
def test_each_kind_is_found_on_its_line_and_redacted(kind: str, token: str) -> None:
    text = f"# Setup notes\n\nThe value is {token} (do not share)\nmore text\n"

    findings = scan_text(text)

    assert len(findings) == 1
    assert findings[0].line == 3
    assert findings[0].kind == kind
    _assert_redacted(findings[0], token)


@pytest.mark.parametrize(("kind", "token"), PLANTED, ids=[token[:11] for _, token in PLANTED])
def test_each_kind_is_found_at_start_and_end_of_text(kind: str, token: str) -> None:
    assert [f.kind for f in scan_text(token)] == [kind]
    assert [f.line for f in scan_text("a\nb\n" + token)] == [3]


def test_several_secrets_in_one_text_are_reported_in_order() -> None:
    aws = "AKIA" + "QWERTYUIOP123456"
    github = "ghp_" + "k" * 36
    slack = "xoxb-" + "111-222-" + "abc" * 5
    stripe = "sk_live_" + "9a" * 14
    text = "\n".join(
        [
            "---",
            "date: 2024-05-01",
            "---",
            f"aws: {aws}",
            "",
            f"tokens: `{github}` and `{slack}`",
            "-----BEGIN " + "EC PRIVATE KEY-----",
            "MHcCAQEEIB...",
            "-----END " + "EC PRIVATE KEY-----",
            f"payments {stripe}",
        ]
    )

    findings = scan_text(text)

    assert [(f.line, f.kind) for f in findings] == [
        (4, "AWS access key id"),
        (6, "GitHub token"),
        (6, "Slack token"),
        (7, "private key block"),
        (10, "Stripe secret key"),
    ]
    for finding, token in zip(findings[:3], [aws, github, slack], strict=True):
        _assert_redacted(finding, token)


def test_anthropic_key_is_reported_once_not_also_as_openai() -> None:
    token = "sk-ant-" + "api03-" + "Zz9-" * 20
    assert [f.kind for f in scan_text(f"key={token}")] == ["Anthropic API key"]


REALISTIC_MEMORY = """\
---
title: Weekly sync 2024-05-01
id: cd103235805820b0
created: 2024-05-01T09:30:00+08:00
tags: [project/alpha, people]
---

# Meeting with Alice — 2024-05-01 14:30

- Session id 550e8400-e29b-41d4-a716-446655440000, trace 0f8e2c1d4b3a5968
- Fixed in commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 (short: a94a8fe)
- Ticket task-sk-1 and task-sk-12 closed; see risk-Assessment-2024-Q3-Final-Report-v2.md
- Uses sk-learn-compatible-estimators-for-tabular-data; branch desk-booking-Service-2024-rewrite
- Call +1-555-123-4567 or +86 138 1234 5678; order 20240501123456 shipped
- Docs: https://docs.python.org/3/library/re.html and https://github.com/org/repo/pull/1234
- Webhook docs at https://api.slack.com/messaging/webhooks
- Password: [STORE IN .env]
- API key: sk-... (ask Bob), token ghp_xxxx, SLACK_BOT_TOKEN=xoxb-your-bot-token
- Issue 123456789:fix-the-memory-leak-in-sync-engine1 reopened
- Stripe test mode only: pk_test_ keys, work_live_reloading_configuration_enabled
- Time 12:30:45, ratio 16:9, build 2024.05.01-rc1

## 中文笔记

用户偏好：每天早上九点提醒喝水。项目代号「北极星」，负责人张三，电话 13812345678。

-----
-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUabc
-----END CERTIFICATE-----
-----BEGIN PUBLIC KEY-----

```json
{"id": "cd103235805820b0", "uuid": "123e4567-e89b-12d3-a456-426614174000", "ok": true}
```
"""  # noqa: RUF001 -- real Chinese notes use full-width punctuation


def test_realistic_memory_text_has_no_findings() -> None:
    assert scan_text(REALISTIC_MEMORY) == []


def test_telegram_token_inside_a_longer_digit_run_is_not_matched() -> None:
    assert scan_text("id 12345678901:" + TELEGRAM_SECRET) == []
    assert scan_text("ref x123456789:" + TELEGRAM_SECRET) == []


def test_telegram_secret_longer_than_35_chars_is_not_matched() -> None:
    assert scan_text("123456789:" + TELEGRAM_SECRET + "Q") == []


def test_tokens_glued_inside_words_are_not_matched() -> None:
    assert scan_text("mask-" + "Ab12" * 12) == []
    assert scan_text("desk_live_" + "4eC39Hq" * 4) == []
    assert scan_text("X" + "AKIA" + "ABCDEFGH23456789") == []
    assert scan_text("AKIA" + "ABCDEFGH23456789" + "abc") == []


def test_token_after_escaped_newline_in_json_is_found() -> None:
    token = "sk-proj-" + "Ab1-_x" * 20
    text = '{"role": "user", "content": "here is my key:\\n' + token + '"}'

    findings = scan_text(text)

    assert [f.kind for f in findings] == ["OpenAI-style API key"]
    _assert_redacted(findings[0], token)


def test_token_directly_after_chinese_text_is_found() -> None:
    token = "AKIA" + "ABCDEFGH23456789"
    assert [f.kind for f in scan_text("密钥" + token + "已轮换")] == ["AWS access key id"]


def test_crlf_line_endings_count_lines_correctly() -> None:
    token = "ghp_" + "A" * 36
    text = "line one\r\nline two\r\n\r\ntoken " + token + "\r\nafter\r\n"

    findings = scan_text(text)

    assert [f.line for f in findings] == [4]
    _assert_redacted(findings[0], token)


def test_bytes_with_invalid_utf8_are_still_scanned() -> None:
    token = "AIza" + "Sy" + "A1b2_" * 6 + "xyz"
    data = b"\xff\xfe broken \x80 header\n" + "中文\n".encode() + token.encode() + b"\xc3\n"

    findings = scan_bytes(data)

    assert [(f.line, f.kind) for f in findings] == [(3, "Google API key")]
    _assert_redacted(findings[0], token)


def test_bytes_without_secrets_have_no_findings() -> None:
    assert scan_bytes(b"\x00\xff\xfe\x80" + REALISTIC_MEMORY.encode()) == []


def test_every_alternative_starts_with_a_literal() -> None:
    # A literal first character in every alternative is what lets ``re`` skip through clean
    # text quickly; a pattern added later that starts with a class or group would silently
    # make every scan many times slower.
    for _, regex in secrets._KINDS.values():
        assert regex[0] not in "\\[(.^$?*+{|", regex
