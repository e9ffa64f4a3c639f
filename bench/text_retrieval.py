"""How close our BM25 ranking (bm25s + a Lucene-like analyzer) is to Lucene's own, as SWE-bench runs it.

SWE-bench ranks with pyserini, a Python wrapper of Anserini; this runs Anserini itself (its
fat jar from Maven Central, Java 21+), the way pyserini does: ``IndexCollection`` over
``JsonCollection`` documents ``{"id": path, "contents": path + "\\n" + text}`` with the default
generator (Anserini's default English analyzer: Porter stemming, Lucene stop words), and
``SimpleSearcher.search(query, k)`` with BM25 k1 = 0.9, b = 0.4 (pyserini's defaults; the query
is cut to 80 % while Lucene refuses it for too many clauses, as SWE-bench does). The documents
and the queries are the very ones ``tebench text`` uses. Printed per instance: the overlap of the
top-k file sets (|ours & Lucene's| / k) for k = 1, 5, 10, 20, and the means.

    curl -O https://repo1.maven.org/maven2/io/anserini/anserini/1.5.0/anserini-1.5.0-fatjar.jar
    python bench/text_retrieval.py DATA.jsonl[.gz] --repos DIR --anserini anserini-1.5.0-fatjar.jar \\
        --java /path/to/jdk21+/bin/java [-k EXPR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench.text import SwebenchLayout
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.selection import keyword_matcher
from pytest_tebench.text.bm25 import FileIndex
from pytest_tebench.workspace.repos import RepositoryStore
from pytest_tebench.workspace.trees import read_tree

DEPTHS = (1, 5, 10, 20)
SEARCH_JAVA = """
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.anserini.search.ScoredDoc;
import io.anserini.search.SimpleSearcher;
import java.nio.file.Files;
import java.nio.file.Paths;

public class Search {
  public static void main(String[] args) throws Exception {
    SimpleSearcher searcher = new SimpleSearcher(args[0]);
    JsonNode query = new ObjectMapper().readTree(Files.readString(Paths.get(args[1])));
    String text = query.get("query").asText();
    int cutoff = text.length();
    ScoredDoc[] hits;
    while (true) {
      try {
        hits = searcher.search(text.substring(0, cutoff), Integer.parseInt(args[2]));
        break;
      } catch (Exception e) {
        if (String.valueOf(e).contains("maxClauseCount") || String.valueOf(e).contains("TooManyClauses")) {
          cutoff = (int) Math.round(cutoff * 0.8);
          continue;
        }
        throw e;
      }
    }
    for (ScoredDoc hit : hits) System.out.println(hit.docid + "\\t" + hit.score);
  }
}
"""


def load_rows(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def lucene_ranking(
    java: str, jar: Path, documents: dict[str, str], query: str, *, k: int, work: Path
) -> list[str]:
    (work / "docs").mkdir(parents=True)
    with (work / "docs" / "documents.jsonl").open("w", encoding="utf-8") as handle:
        for docid, contents in documents.items():
            handle.write(json.dumps({"id": docid, "contents": contents}) + "\n")
    subprocess.run(
        [java, "-cp", str(jar), "io.anserini.index.IndexCollection", "-collection", "JsonCollection",
         "-generator", "DefaultLuceneDocumentGenerator", "-threads", "1", "-input", str(work / "docs"),
         "-index", str(work / "index"), "-storePositions", "-storeDocvectors", "-storeRaw"],
        check=True, capture_output=True,
    )  # fmt: skip
    (work / "query.json").write_text(json.dumps({"query": query}), encoding="utf-8")
    (work / "Search.java").write_text(SEARCH_JAVA, encoding="utf-8")
    out = subprocess.run(
        [java, "-cp", str(jar), str(work / "Search.java"), str(work / "index"), str(work / "query.json"),
         str(k)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return [line.split("\t")[0] for line in out.splitlines() if "\t" in line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--repos", required=True, type=Path)
    parser.add_argument("--anserini", required=True, type=Path, help="anserini-<version>-fatjar.jar")
    parser.add_argument("--java", default="java", help="a Java 21+ launcher")
    parser.add_argument("-k", dest="keyword", default="")
    args = parser.parse_args()

    layout = SwebenchLayout()
    selected = keyword_matcher(args.keyword)
    rows = [r for r in load_rows(Path(args.dataset)) if selected([r["instance_id"], r["repo"]])]
    instances = layout.load([RawRecord(r, f"{args.dataset}[{i}]") for i, r in enumerate(rows)])
    scratch = Path(tempfile.mkdtemp(prefix="tebench-text-retrieval-"))
    store = RepositoryStore(scratch, local_dirs=[args.repos], allow_network=False)
    k = max(DEPTHS)
    overlaps: dict[int, list[float]] = {d: [] for d in DEPTHS}
    print(f"{'instance':40} docs " + " ".join(f"@{d:<4}" for d in DEPTHS))
    for instance in instances:
        mirror = store.locate(instance.repo, [instance.commit])
        tree = read_tree(mirror, instance.commit, wanted=layout.is_document)
        documents = {p: p + "\n" + (tree.text(p) or "") for p in sorted(tree.blobs)}
        query = layout.query(instance)
        ours = [hit.docid for hit in FileIndex(documents).search(query, k)]
        theirs = lucene_ranking(
            args.java, args.anserini, documents, query, k=k, work=scratch / instance.instance_id
        )
        cells = []
        for depth in DEPTHS:
            size = min(depth, len(documents))
            overlap = len(set(ours[:depth]) & set(theirs[:depth])) / size
            overlaps[depth].append(overlap)
            cells.append(f"{overlap:5.2f}")
        print(f"{instance.instance_id:40} {len(documents):4} " + " ".join(cells))
    means = " ".join(f"{sum(v) / len(v):5.2f}" for v in overlaps.values())
    print(f"{'mean of ' + str(len(instances)) + ' instances':40} {'':4} {means}")


if __name__ == "__main__":
    main()
