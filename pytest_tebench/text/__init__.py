"""LM text datasets: prompts built from a benchmark's instances and the repositories' files.

Benchmark-neutral parts live here (the cl100k_base tokenizer, BM25 retrieval, the token budget
and the dataset writer); each benchmark's prompt layout lives in its own package under
``benchmarks/``. Needs the optional extra ``pytest-tebench[text]``.
"""
