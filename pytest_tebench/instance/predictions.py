"""Read predictions in the SWE-bench format and turn raw model output into a patch.

A prediction is ``{"instance_id", "model_name_or_path", "model_patch"}`` (extra keys are kept but
ignored), given as ``.jsonl`` or as ``.json`` holding a list or an id-keyed dict. For TEBench the
patch is a *test* patch. The literal ``gold`` asks for every selected instance's gold patch.

Bad entries are not fatal: each becomes a :class:`Prediction` with ``problem`` set and an
``origin`` naming the file and line, so the plugin can show it as an error item while every
other prediction is still evaluated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench.errors import InputError
from pytest_tebench.instance.jsonl import decode_json
from pytest_tebench.instance.jsonl import invalid_unicode
from pytest_tebench.instance.jsonl import jsonl_lines
from pytest_tebench.instance.jsonl import read_text

GOLD = "gold"

_PATCH_TAG = re.compile(r"<patch>\s*\n?(.*?)</patch>", re.DOTALL)
# A fenced block labelled diff or patch; the language tag is what tells a diff from example code.
# It closes only at a line holding nothing but its own fence: a patch may contain ``` itself (a
# Markdown test resource, a text block), but a diff line never starts at column 0 with a backtick.
_DIFF_FENCE = re.compile(r"^(`{3,})(?:diff|patch)[^\n]*\n(.*?)^\1[ \t]*$", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Prediction:
    instance_id: str
    model_name_or_path: str
    #: The patch to evaluate, already extracted from raw output; "" when the model gave none.
    patch: str
    #: ``file:line`` (JSONL) or ``file[key]`` (JSON) or ``gold``.
    origin: str
    #: How the patch was found: ``as-is``, ``patch-tag``, ``diff-fence`` or ``gold``.
    extraction: str = "as-is"
    #: Why this entry cannot be evaluated (malformed line, missing field, duplicate, unknown id).
    problem: str | None = None
    #: The model has no line for this instance: scored like an empty patch, status
    #: ``missing_prediction`` (see :func:`missing_prediction`).
    missing: bool = False

    @property
    def is_empty(self) -> bool:
        return not self.patch.strip()


def extract_patch(text: str) -> tuple[str, str]:
    """Return ``(patch, method)`` from raw model output.

    Plain diffs pass through untouched. ``<patch>…</patch>`` wins over fences because the
    SWE-bench prompt asks for it explicitly; several diff fences are joined in order.
    """
    if text.lstrip().startswith(("diff --git", "--- ", "Index: ")):
        return text, "as-is"
    tagged = _PATCH_TAG.findall(text)
    if tagged:
        return _joined(tagged), "patch-tag"
    fenced = [match[1] for match in _DIFF_FENCE.findall(text)]
    if fenced:
        return _joined(fenced), "diff-fence"
    return text, "as-is"


def _joined(parts: Iterable[str]) -> str:
    pieces = [part if part.endswith("\n") else part + "\n" for part in parts if part.strip()]
    return "".join(pieces)


def load_predictions(path: Path) -> list[Prediction]:
    """Read a predictions file; only an unreadable file raises, bad entries carry ``problem``."""
    return _mark_duplicates(
        [_to_prediction(value, origin, problem) for value, origin, problem in read_entries(path)]
    )


def read_entries(path: Path) -> list[tuple[Any, str, str | None]]:
    """The raw entries of a ``.jsonl``/``.json`` predictions file: ``(value, origin, problem)``,
    ``problem`` set for a line that is not JSON or not valid Unicode. Benchmarks with their own
    entry format (RealCodeJava's samples) build their predictions from these."""
    if not path.is_file():
        raise InputError("predictions file not found", source=str(path))
    text = read_text(path, "predictions")
    if path.suffix == ".jsonl":
        return list(_jsonl_entries(text, str(path)))
    if path.suffix == ".json":
        return _json_entries(text, str(path))
    raise InputError("predictions must be a .jsonl or .json file (or the word 'gold')", source=str(path))


_Entry = tuple[Any, str, str | None]


def _jsonl_entries(text: str, source: str) -> Iterable[_Entry]:
    for lineno, line in jsonl_lines(text):
        origin = f"{source}:{lineno}"
        try:
            value = decode_json(line)
        except json.JSONDecodeError as exc:
            yield None, origin, f"malformed JSON: {exc.msg} (column {exc.colno})"
            continue
        yield value, origin, invalid_unicode(value)


def _json_entries(text: str, source: str) -> list[_Entry]:
    try:
        value = decode_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg}", source=source, line=exc.lineno) from exc
    if isinstance(value, list):
        return [(item, f"{source}[{index}]", invalid_unicode(item)) for index, item in enumerate(value)]
    if isinstance(value, dict):
        entries: list[_Entry] = []
        for key, item in value.items():
            keyed = (
                {"instance_id": key, **item} if isinstance(item, dict) and "instance_id" not in item else item
            )
            entries.append((keyed, f"{source}[{key!r}]", invalid_unicode(keyed)))
        return entries
    raise InputError("a JSON predictions file must hold a list or an id-keyed object", source=source)


def _to_prediction(value: Any, origin: str, problem: str | None) -> Prediction:
    if problem is None and not isinstance(value, dict):
        problem = "an entry must be a JSON object"
    if problem is not None:
        return Prediction("", "", "", origin, problem=problem)
    instance_id = value.get("instance_id")
    model = value.get("model_name_or_path")
    # SWE-bench's inference scripts write the completion as ``full_output`` and the patch they
    # extracted as ``model_patch``; a file with only the raw completion is extracted here
    raw_patch = value.get("model_patch")
    if raw_patch is None and isinstance(value.get("full_output"), str):
        raw_patch = value["full_output"]
    for field_name, field_value in (("instance_id", instance_id), ("model_name_or_path", model)):
        if not isinstance(field_value, str) or not field_value.strip():
            return Prediction(
                str(instance_id or ""),
                str(model or ""),
                "",
                origin,
                problem=f"field {field_name!r} is missing or not a non-empty string",
            )
    assert isinstance(instance_id, str) and isinstance(model, str)
    if raw_patch is not None and not isinstance(raw_patch, str):
        return Prediction(
            instance_id, model, "", origin, problem="field 'model_patch' must be a string or null"
        )
    patch, extraction = extract_patch(raw_patch or "")
    return Prediction(instance_id, model, patch, origin, extraction=extraction)


def _mark_duplicates(predictions: list[Prediction]) -> list[Prediction]:
    """A second prediction for the same (model, instance) is an error; the first one stands."""
    seen: dict[tuple[str, str], str] = {}
    marked: list[Prediction] = []
    for prediction in predictions:
        key = (prediction.model_name_or_path, prediction.instance_id)
        if prediction.problem is None and key in seen:
            marked.append(
                replace(
                    prediction,
                    # the first line stays the scored one: a later line can never replace it
                    problem=f"duplicate of {seen[key]}",
                )
            )
            continue
        if prediction.problem is None:
            seen[key] = prediction.origin
        marked.append(prediction)
    return marked


def missing_prediction(instance_id: str, model: str) -> Prediction:
    """The stand-in for an instance a model submitted nothing for (it still counts, as empty)."""
    return Prediction(instance_id, model, "", "(no prediction)", extraction="missing", missing=True)


def gold_predictions(instances: Iterable[tuple[str, str]]) -> list[Prediction]:
    """Predictions equal to gold, from ``(instance_id, gold_patch)`` pairs, in dataset order."""
    return [Prediction(iid, GOLD, patch, GOLD, extraction=GOLD) for iid, patch in instances]
