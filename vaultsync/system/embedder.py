"""A client for the embeddings endpoint a person runs: the OpenAI-compatible ``POST /v1/embeddings`` that Ollama,
llama.cpp's server, LM Studio and hosted services share.

Plain ``urllib``: the re-ranker is optional, so it may not cost the default install a dependency. Every way the
endpoint can fail (refused, slow, an error status, an answer of another shape) is one ``EmbedderDown`` with a
line saying which, since recall then answers lexically and says why.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path


class EmbedderDown(Exception):
    """The endpoint gave no vectors; the message says why in one line."""


@dataclass(frozen=True)
class Endpoint:
    url: str
    model: str
    key_file: Path | None = None

    def key(self) -> str:
        """The bearer key, read when used (so a rotated key is picked up); empty without a key file."""
        if self.key_file is None:
            return ""
        try:
            return self.key_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise EmbedderDown(f"{self.key_file}: cannot read the embeddings key: {exc.strerror}") from None


def embed(endpoint: Endpoint, texts: list[str], timeout: float) -> list[list[float]]:
    """One vector per text, in order, as the endpoint computed them."""
    if not texts:
        return []
    body = json.dumps({"model": endpoint.model, "input": texts}).encode()
    headers = {"Content-Type": "application/json"}
    key = endpoint.key()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(endpoint.url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            document = json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        raise EmbedderDown(f"{endpoint.url}: answered {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise EmbedderDown(f"{endpoint.url}: unreachable ({reason})") from None
    except ValueError:
        raise EmbedderDown(f"{endpoint.url}: the answer is not JSON") from None
    return _vectors(endpoint.url, document, len(texts))


def _vectors(url: str, document: object, count: int) -> list[list[float]]:
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise EmbedderDown(f"{url}: expected {{'data': [...]}} with {count} embeddings")
    try:
        ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
        vectors = [[float(x) for x in item["embedding"]] for item in ordered]
    except (AttributeError, KeyError, TypeError, ValueError):
        raise EmbedderDown(f"{url}: an item of 'data' has no list of numbers as 'embedding'") from None
    if len({len(v) for v in vectors}) != 1 or not vectors[0]:
        raise EmbedderDown(f"{url}: the embeddings differ in length")
    return vectors
