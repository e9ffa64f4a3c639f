"""RealCodeJava predictions: n samples (raw answers) per (instance, model).

Accepted entries, in a ``.jsonl`` or ``.json`` file (read by
:func:`pytest_tebench.instance.predictions.read_entries`), mixed freely:

* one sample per line: ``{"instance_id", "model_name_or_path", "model_patch"}`` (or
  ``completion``/``output``/``generation``/``full_output``); lines with the same id and model
  are that pair's samples, in file order;
* a list per line: ``{"instance_id", "model_name_or_path", "outputs": [...]}`` (or ``samples``;
  a single string counts as one sample);
* MERA's lm-eval samples log (``--log_samples``): ``{"doc": {... "meta": {"id": ...}}, "resps":
  [[sample, ...]], ...}``; every response is a sample. lm-eval writes no model name into these
  lines, so it comes from ``model_name_or_path`` when present, else from the folder the file is in
  (lm-eval names it after the model).

``id`` and integer ids are accepted for ``instance_id``. The result is one
:class:`~pytest_tebench.instance.predictions.Prediction` per (instance, model): its ``patch`` is
the JSON list of the raw samples (what the result cache hashes), decoded by :func:`samples_of`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.instance.predictions import read_entries

SAMPLES = "realcode-samples"
_TEXT_FIELDS = ("model_patch", "completion", "output", "generation", "full_output")
_LIST_FIELDS = ("outputs", "samples")


@dataclass
class _Group:
    instance_id: str
    model: str
    origin: str
    samples: list[str] = field(default_factory=list)
    lines: int = 0


def encode_samples(samples: list[str]) -> str:
    return json.dumps(samples, ensure_ascii=False)


def samples_of(prediction: Prediction) -> list[str]:
    """The raw samples of a prediction made by :func:`read_samples` or ``gold``; none for a
    missing prediction."""
    if not prediction.patch:
        return []
    try:
        value = json.loads(prediction.patch)
    except json.JSONDecodeError:
        return [prediction.patch]  # a plain answer (a prediction made by other code)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return [prediction.patch]


def read_samples(path: Path) -> list[Prediction]:
    """One prediction per (instance, model), in order of first appearance; a bad entry is a
    prediction with ``problem`` (an error item naming the line), and the others still count."""
    groups: dict[tuple[str, str], _Group] = {}
    order: list[_Group | Prediction] = []
    default_model = path.resolve().parent.name
    for value, origin, problem in read_entries(path):
        if problem is not None:
            order.append(Prediction("", "", "", origin, problem=problem))
            continue
        try:
            instance_id, model, samples = _entry(value, default_model)
        except ValueError as exc:
            ids = value if isinstance(value, dict) else {}
            order.append(
                Prediction(str(ids.get("instance_id") or ""), str(ids.get("model_name_or_path") or ""), "",
                           origin, problem=str(exc))
            )  # fmt: skip
            continue
        group = groups.get((instance_id, model))
        if group is None:
            group = groups[(instance_id, model)] = _Group(instance_id, model, origin)
            order.append(group)
        group.samples.extend(samples)
        group.lines += 1
    return [item if isinstance(item, Prediction) else _prediction(item) for item in order]


def _prediction(group: _Group) -> Prediction:
    origin = group.origin if group.lines == 1 else f"{group.origin} (+{group.lines - 1} more lines)"
    return Prediction(
        group.instance_id, group.model, encode_samples(group.samples), origin, extraction=SAMPLES
    )


def _entry(value: Any, default_model: str) -> tuple[str, str, list[str]]:
    if not isinstance(value, dict):
        raise ValueError("an entry must be a JSON object")
    if "resps" in value and isinstance(value.get("doc"), dict):
        return _lm_eval_entry(value, default_model)
    instance_id = _id(value.get("instance_id", value.get("id")))
    model = value.get("model_name_or_path")
    if not isinstance(model, str) or not model.strip():
        raise ValueError("field 'model_name_or_path' is missing or not a non-empty string")
    for name in _LIST_FIELDS:
        if name in value:
            return instance_id, model, _strings(value[name], name)
    for name in _TEXT_FIELDS:
        if name in value:
            text = value[name]
            if text is None:
                return instance_id, model, [""]
            if not isinstance(text, str):
                raise ValueError(f"field {name!r} must be a string or null")
            return instance_id, model, [text]
    raise ValueError(f"no answer: give 'outputs' (a list of samples) or one of {', '.join(_TEXT_FIELDS)}")


def _lm_eval_entry(value: dict[str, Any], default_model: str) -> tuple[str, str, list[str]]:
    doc = value["doc"]
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else doc
    instance_id = _id(meta.get("id", doc.get("instance_id")))
    model = value.get("model_name_or_path") or default_model
    responses = value.get("resps")
    if not isinstance(responses, list):
        raise ValueError("field 'resps' of an lm-eval sample must be a list")
    samples: list[str] = []
    for response in responses:
        samples.extend(_strings(response, "resps"))
    return instance_id, str(model), samples


def _id(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError("field 'instance_id' (or 'id') is missing or not a non-empty string/integer")


def _strings(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise ValueError(f"field {name!r} must be a string or a list of strings")
