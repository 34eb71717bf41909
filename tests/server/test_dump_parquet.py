"""`tern dump --format parquet`: the whole store as one Parquet file whose
rows, turned back into RDF terms (typed cells written back as N-Triples,
the `__term` companions as they are), are exactly the quads of
`tern dump --format nq`; `--graph` keeps one graph's rows; pandas and
DuckDB read the file."""

import subprocess

import pyarrow.parquet
import pytest

from conftest import load, tern_bin
from test_arrow_types import terms_of_table

XSD = "http://www.w3.org/2001/XMLSchema#"
GRAPH = "http://example.org/g1"


@pytest.fixture(scope="module")
def mixed_index(workdir):
    """Quads of every term kind the typed columns handle, in the default
    graph and a named one, over more rows than one row group (some lines
    repeat a quad: the store holds it once)."""
    path = workdir / "dump-mixed.nq"
    with open(path, "w") as f:
        for i in range(70_000):
            s = f"_:b{i % 500}" if i % 9 == 0 else f"<http://example.org/s{i // 4}>"
            o = [
                f"<http://example.org/o{i % 313}>",
                f'"{i}"^^<{XSD}integer>',
                f'"{i}.5"^^<{XSD}decimal>',
                f'"text {i} \\"quoted\\"\\n"@en',
                f'"2021-03-{i % 28 + 1:02d}"^^<{XSD}date>',
                f'"{str(i % 2 == 0).lower()}"^^<{XSD}boolean>',
                f'"plain {i}"',
            ][i % 7]
            g = f" <{GRAPH}>" if i % 3 == 0 else ""
            f.write(f"{s} <http://example.org/p{i % 5}> {o}{g} .\n")
    return load(workdir / "dump-mixed", str(path))


def dump(index, *args):
    done = subprocess.run([str(tern_bin()), "dump", "--index", str(index), *args],
                          capture_output=True, check=True, timeout=300)
    return done.stdout


def masked(line):
    """A quad line with blank node labels masked (the two dumps label them
    alike, but a canonical form needs no such promise)."""
    return " ".join("_:" if w.startswith("_:") else w for w in line.split(" "))


def nquads_lines(data):
    return sorted(masked(line) for line in data.decode().splitlines() if line)


def parquet_lines(path):
    table = pyarrow.parquet.read_table(path)
    variables, rows = terms_of_table(table)
    assert variables == ["subject", "predicate", "object", "graph"]
    lines = []
    for s, p, o, g in rows:
        assert s is not None and p is not None and o is not None
        lines.append(masked(" ".join([s, p, o] + ([g] if g else []) + ["."])))
    return sorted(lines), table


def test_parquet_dump_holds_exactly_the_quads(mixed_index, tmp_path):
    out = tmp_path / "all.parquet"
    dump(mixed_index, "--format", "parquet", "-o", str(out))
    lines, table = parquet_lines(out)
    expected = nquads_lines(dump(mixed_index, "--format", "nq"))
    assert len(lines) > 60_000
    assert lines == expected
    # Typed where the values allow: predicates are IRIs, graphs text.
    kinds = {f.name: f.metadata[b"tern:kind"].decode() for f in table.schema}
    assert kinds["predicate"] == "iri"
    assert pyarrow.parquet.ParquetFile(out).metadata.num_row_groups >= 2


def test_parquet_dump_of_one_graph(mixed_index, tmp_path):
    out = tmp_path / "g1.parquet"
    dump(mixed_index, "--format", "parquet", "--graph", GRAPH, "-o", str(out))
    lines, _ = parquet_lines(out)
    expected = nquads_lines(dump(mixed_index, "--format", "nq", "--graph", GRAPH))
    assert lines == expected
    assert all(line.endswith(f"<{GRAPH}> .") for line in lines)


def test_pandas_and_duckdb_read_the_dump(mixed_index, tmp_path):
    import duckdb
    import pandas

    out = tmp_path / "all.parquet"
    dump(mixed_index, "--format", "parquet", "-o", str(out))
    quads = nquads_lines(dump(mixed_index, "--format", "nq"))
    frame = pandas.read_parquet(out)
    assert len(frame) == len(quads)
    count = duckdb.connect().execute(
        f"SELECT COUNT(*) FROM read_parquet('{out}') WHERE predicate = 'http://example.org/p0'"
    ).fetchone()[0]
    assert count == sum(" <http://example.org/p0> " in line for line in quads)
