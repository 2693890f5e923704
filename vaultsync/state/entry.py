"""One unit of the base as a value: what the decision (core/) reads of the base, without the database."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# ``json.dumps(value, ensure_ascii=False)`` without building an encoder per call: a first import encodes 100k.
json_text = json.JSONEncoder(ensure_ascii=False).encode


@dataclass
class BaseEntry:
    """One unit as last synced: ``data`` is JSON for facts and entities, raw bytes for files."""

    data: bytes
    extra: dict[str, Any] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.data)
