"""Sorts, groups and hash joins larger than a query's memory budget go to
disk, through the real server: a server with a small `--memory` gives the
results of one without, counts its spill files in /metrics, and writes them
in `--spill-dir` (nameless files: the directory stays empty)."""

import requests

from conftest import Server

BIG = "http://example.org/big/"
# Each needs more than the 2 MiB budget below (the big index has 200K
# triples): a sort of 50K labels, 50K groups, and a join of two groupings
# of 50K rows on their keys (in no index order, so it is hashed).
QUERIES = {
    "sort": f"SELECT ?s ?l WHERE {{ ?s <{BIG}label> ?l }} ORDER BY DESC(?l) ?s",
    "group": f"SELECT ?s (COUNT(*) AS ?n) (MAX(?o) AS ?m) WHERE {{ ?s ?p ?o }} GROUP BY ?s",
    "join": (
        f"SELECT ?s ?k ?m WHERE {{ {{ SELECT ?s (COUNT(*) AS ?k) WHERE {{ ?s ?p ?o }} GROUP BY ?s }} "
        f"{{ SELECT ?s (MAX(?n) AS ?m) WHERE {{ ?s <{BIG}n> ?n }} GROUP BY ?s }} }}"
    ),
}


def tsv(server: Server, query: str) -> list[str]:
    r = requests.post(server.url, data={"query": query}, headers={"Accept": "text/tab-separated-values"}, timeout=120)
    assert r.status_code == 200, r.text
    return r.text.splitlines()


def test_a_small_budget_spills_and_gives_the_same_results(big_index, tmp_path):
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    roomy = Server(big_index)
    small = Server(big_index, "--memory", "2M", "--spill-dir", str(spill_dir))
    try:
        for name, query in QUERIES.items():
            expected = tsv(roomy, query)
            before = small.metrics()["tern_spill_files_total"]
            got = tsv(small, query)
            if "ORDER BY" in query:
                assert got == expected, name
            else:
                assert got[0] == expected[0] and sorted(got) == sorted(expected), name
            assert len(got) > 1000, name
            after = small.metrics()
            assert after["tern_spill_files_total"] > before, f"{name} did not spill"
            assert after["tern_spill_bytes_total"] > 0
        assert roomy.metrics()["tern_spill_files_total"] == 0
        assert list(spill_dir.iterdir()) == []
        # EXPLAIN reports what the query's operators held at most: the sort's
        # 50K rows in memory on one server, at most the budget on the other.
        peaks = [
            requests.post(s.url, data={"query": QUERIES["sort"], "explain": "true"}, timeout=120).json()[
                "memory_peak_bytes"
            ]
            for s in (roomy, small)
        ]
        assert peaks[0] > 2 << 20 and 0 < peaks[1] <= 2 << 20, peaks
    finally:
        roomy.stop()
        small.stop()


def test_a_spill_directory_that_cannot_be_written_is_a_clear_error(big_index, tmp_path):
    missing = tmp_path / "no-such-dir"
    refused = Server.__new__(Server)
    try:
        Server.__init__(refused, big_index, "--spill-dir", str(missing))
        raise AssertionError("the server started with a spill directory that does not exist")
    except RuntimeError as e:
        assert "--spill-dir" in str(e) and str(missing) in str(e), e
    # Gone while the server runs: the query that needed it fails with the
    # reason, and the server goes on serving.
    going = tmp_path / "going"
    going.mkdir()
    s = Server(big_index, "--memory", "2M", "--spill-dir", str(going))
    try:
        going.rmdir()
        r = requests.post(s.url, data={"query": QUERIES["sort"]}, timeout=120)
        assert r.status_code == 500, r.text
        assert "spill" in r.text and str(going) in r.text, r.text
        assert requests.post(s.url, data={"query": "ASK {}"}, timeout=30).status_code == 200
    finally:
        s.stop()
