"""Validate state files against state/schema.json."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "state" / "schema.json").read_text())


def assert_valid_state(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), SCHEMA)
