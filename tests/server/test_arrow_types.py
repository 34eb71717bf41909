"""The Arrow stream's typed columns, read by pyarrow, pandas, polars and
DuckDB: each variable's column has the type of its values (Int64,
Float64, Decimal128, Boolean, Date32, Timestamp(ms, UTC), dictionary
strings for IRIs, strings) and a `VAR__term` companion holds, as
N-Triples, what does not fit; turned back into RDF terms, the columns
give exactly the terms of the same query's TSV."""

import datetime
import decimal
import io
import re

import numpy
import pytest
import requests

import pyarrow as pa  # noqa: E402
import pyarrow.ipc  # noqa: E402
import pyarrow.parquet  # noqa: E402

ARROW = "application/vnd.apache.arrow.stream"
XSD = "http://www.w3.org/2001/XMLSchema#"

TYPED = f"""PREFIX xsd: <{XSD}>
SELECT ?iri ?n ?d ?dec ?b ?day ?dt ?s ?mixed WHERE {{
  VALUES (?iri ?n ?d ?dec ?b ?day ?dt ?s ?mixed) {{
    (<http://e/a> 1 "1.5E0"^^xsd:double 2.50 true "2024-02-29"^^xsd:date
     "2008-06-20T10:00:00Z"^^xsd:dateTime "x" "y"@en)
    (<http://e/b> -20 "-2.0E-3"^^xsd:double 0.25 false "1969-12-31"^^xsd:date
     "1970-01-01T00:00:00.5Z"^^xsd:dateTime "tab\\there \\"q\\"" <http://e/m>)
    (UNDEF "007"^^xsd:integer "NaN"^^xsd:double 1.5 UNDEF "2020-01-01Z"^^xsd:date
     "2008-06-20T10:00:00+02:00"^^xsd:dateTime "z"@de 3)
  }}
}}"""


def fetch(server, query, accept):
    r = requests.get(server.url, params={"query": query}, headers={"Accept": accept}, timeout=60)
    assert r.status_code == 200, r.text
    return r


NT_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def unescape(text):
    def one(m):
        e = m.group(1)
        if e[0] in "uU":
            return chr(int(e[1:], 16))
        return NT_ESCAPES[e]

    return re.sub(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", one, text)


def parse_nt(text):
    """An N-Triples term as (kind, value, datatype, language)."""
    if text.startswith("<"):
        return ("iri", text[1:-1], None, None)
    if text.startswith("_:"):
        return ("bnode", text[2:], None, None)
    m = re.fullmatch(r'"(.*)"(?:@([^"]+)|\^\^<([^>]+)>)?', text, re.S)
    assert m, text
    value, lang, datatype = unescape(m.group(1)), m.group(2), m.group(3)
    if lang:
        return ("literal", value, None, lang)
    return ("literal", value, None if datatype in (None, XSD + "string") else datatype, None)


def canonical_double(x):
    if numpy.isnan(x):
        return "NaN"
    if numpy.isinf(x):
        return "INF" if x > 0 else "-INF"
    text = numpy.format_float_scientific(x, unique=True, trim="0", exp_digits=1)
    mantissa, exponent = text.split("e")
    return f"{mantissa}E{int(exponent)}"


def typed_term(kind, value):
    """The RDF term a typed cell stands for, as parse_nt gives it."""
    if kind == "iri":
        return ("iri", value, None, None)
    if kind == "string":
        return ("literal", value, None, None)
    if kind == "integer":
        return ("literal", str(value), XSD + "integer", None)
    if kind == "double":
        return ("literal", canonical_double(value), XSD + "double", None)
    if kind == "decimal":
        assert isinstance(value, decimal.Decimal)
        return ("literal", str(value), XSD + "decimal", None)
    if kind == "boolean":
        return ("literal", "true" if value else "false", XSD + "boolean", None)
    if kind == "date":
        return ("literal", value.isoformat(), XSD + "date", None)
    if kind == "dateTime":
        text = value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        if value.microsecond:
            text += "." + f"{value.microsecond // 1000:03d}".rstrip("0")
        return ("literal", text + "Z", XSD + "dateTime", None)
    raise AssertionError(kind)


def terms_of_table(table):
    """Variables and rows of N-Triples text (None for unbound) of an Arrow
    result, the typed cells written back as N-Triples."""
    fields = {f.name: f for f in table.schema}
    variables = [n for n in table.column_names if fields[n].metadata[b"tern:kind"] != b"term-companion"]
    columns = {n: table.column(n).to_pylist() for n in table.column_names}
    rows = []
    for i in range(table.num_rows):
        row = []
        for v in variables:
            kind = fields[v].metadata[b"tern:kind"].decode()
            if kind == "term":
                row.append(columns[v][i])
                continue
            typed, text = columns[v][i], columns[v + "__term"][i]
            assert typed is None or text is None, (v, typed, text)
            row.append(text if typed is None else to_nt(typed_term(kind, typed)))
        rows.append(row)
    return variables, rows


def to_nt(term):
    kind, value, datatype, lang = term
    if kind == "iri":
        return f"<{value}>"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    if lang:
        return f'"{escaped}"@{lang}'
    return f'"{escaped}"' + (f"^^<{datatype}>" if datatype else "")


def tsv_terms(data):
    lines = data.decode().rstrip("\n").split("\n")
    return [[parse_nt(c) if c else None for c in line.split("\t")] for line in lines[1:]]


PARQUET = "application/vnd.apache.parquet"


@pytest.fixture(params=["arrow", "parquet"])
def container(request):
    """Each typed-table test reads the result as an Arrow IPC stream and as
    a Parquet file: the same record batches, two containers."""
    return request.param


def arrow_table(server, query, container="arrow"):
    if container == "parquet":
        return pyarrow.parquet.read_table(io.BytesIO(fetch(server, query, PARQUET).content))
    return pyarrow.ipc.open_stream(fetch(server, query, ARROW).content).read_all()


@pytest.mark.parametrize(
    "query",
    [TYPED, "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", "SELECT ?o WHERE { ?s <http://example.org/birds/wingspanCm> ?o }"],
)
def test_typed_columns_give_back_the_terms_exactly(server, container, query):
    table = arrow_table(server, query, container)
    variables, rows = terms_of_table(table)
    expected = tsv_terms(fetch(server, query, "text/tab-separated-values").content)
    got = [[parse_nt(c) if c else None for c in row] for row in rows]
    assert got == expected


def test_types_follow_the_values(server, container):
    table = arrow_table(server, TYPED, container)
    types = {f.name: f.type for f in table.schema}
    assert types["iri"] == pa.dictionary(pa.int32(), pa.utf8())
    assert types["n"] == pa.int64()
    assert types["d"] == pa.float64()
    assert types["dec"] == pa.decimal128(38, 2)
    assert types["b"] == pa.bool_()
    assert types["day"] == pa.date32()
    assert types["dt"] == pa.timestamp("ms", tz="UTC")
    assert types["s"] == pa.utf8()
    # Misfits keep their exact lexical form beside the typed column.
    assert table.column("n__term").to_pylist()[2] == f'"007"^^<{XSD}integer>'
    assert table.column("dec__term").to_pylist()[2] == f'"1.5"^^<{XSD}decimal>'
    assert table.column("dt__term").to_pylist()[2] == f'"2008-06-20T10:00:00+02:00"^^<{XSD}dateTime>'
    assert table.column("day__term").to_pylist()[2] == f'"2020-01-01Z"^^<{XSD}date>'
    assert table.column("s__term").to_pylist()[2] == '"z"@de'
    # ?mixed: a language string, an IRI and an integer: one IRI and one
    # integer, the tie goes to the kind seen first; the rest is kept aside.
    assert types["mixed"] == pa.dictionary(pa.int32(), pa.utf8())
    assert table.column("mixed__term").to_pylist() == ['"y"@en', None, f'"3"^^<{XSD}integer>']


def test_a_column_without_a_common_type_is_text(server, container):
    query = 'SELECT ?x WHERE { VALUES ?x { "a"@en "b"@de "c"@fr } }'
    table = arrow_table(server, query, container)
    assert table.schema.field("x").type == pa.utf8()
    assert table.schema.field("x").metadata[b"tern:kind"] == b"term"
    assert table.column_names == ["x"]
    assert table.column("x").to_pylist()[0] == '"a"@en'


def test_pandas_polars_and_duckdb_read_the_types(server, container):
    table = arrow_table(server, TYPED, container)
    df = table.to_pandas()
    assert str(df["n"].dtype) in ("Int64", "float64", "int64", "object")  # nulls may widen
    assert df["n"].tolist()[:2] == [1, -20]
    assert df["d"].dtype == numpy.float64
    assert df["b"].tolist()[:2] == [True, False]
    assert str(df["dt"].dtype).startswith("datetime64[ms, UTC]")
    assert df["iri"].dtype.name == "category"
    assert df["dec"][0] == decimal.Decimal("2.50")

    import polars

    frame = polars.from_arrow(table)
    assert frame.schema["n"] == polars.Int64
    assert frame.schema["d"] == polars.Float64
    assert frame.schema["b"] == polars.Boolean
    assert frame.schema["day"] == polars.Date
    assert frame.schema["dt"] == polars.Datetime("ms", "UTC")
    assert frame["n"].to_list() == [1, -20, None]
    assert frame["day"].to_list()[:2] == [datetime.date(2024, 2, 29), datetime.date(1969, 12, 31)]

    import duckdb

    con = duckdb.connect()
    con.register("result", table)
    described = dict(con.execute("DESCRIBE result").fetchall() and [(r[0], r[1]) for r in con.execute("DESCRIBE result").fetchall()])
    assert described["n"] == "BIGINT"
    assert described["d"] == "DOUBLE"
    assert described["b"] == "BOOLEAN"
    assert described["day"] == "DATE"
    assert described["dt"].startswith("TIMESTAMP")
    assert described["dec"].startswith("DECIMAL(38,2)")
    assert con.execute("SELECT sum(n) FROM result").fetchone()[0] == -19


def rss_mb(pid):
    status = open(f"/proc/{pid}/status").read()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024


def test_a_large_result_streams_in_bounded_memory(big_server):
    """Half a million rows of two typed columns, read batch by batch: the
    server holds a batch at a time, not the result."""
    query = (
        "SELECT ?a ?n WHERE { ?a <http://example.org/big/p0> ?o . "
        "?b <http://example.org/big/p0> ?o . ?b <http://example.org/big/n> ?n } LIMIT 500000"
    )
    before = rss_mb(big_server.proc.pid)
    peak = before
    with requests.get(
        big_server.url,
        params={"query": query},
        headers={"Accept": ARROW, "Accept-Encoding": "identity"},
        stream=True,
        timeout=300,
    ) as r:
        assert r.status_code == 200
        # Whole reads: pyarrow expects read(n) to give n bytes.
        reader = pyarrow.ipc.open_stream(io.BufferedReader(r.raw, 1 << 20))
        assert reader.schema.field("n").type == pa.int64()
        assert reader.schema.field("a").type == pa.dictionary(pa.int32(), pa.utf8())
        rows = 0
        for batch in reader:
            rows += batch.num_rows
            assert batch.column(batch.schema.get_field_index("n__term")).null_count == batch.num_rows
            peak = max(peak, rss_mb(big_server.proc.pid))
    assert rows == 500_000
    assert peak < before + 150, (before, peak)


def test_a_large_parquet_result_streams_in_bounded_memory(big_server):
    """The same half million rows as Parquet: written a row group (a batch)
    at a time, so the server never holds the file; pyarrow reads the
    file's row groups and types."""
    query = (
        "SELECT ?a ?n WHERE { ?a <http://example.org/big/p0> ?o . "
        "?b <http://example.org/big/p0> ?o . ?b <http://example.org/big/n> ?n } LIMIT 500000"
    )
    before = rss_mb(big_server.proc.pid)
    peak = before
    data = bytearray()
    with requests.get(big_server.url, params={"query": query}, headers={"Accept": PARQUET, "Accept-Encoding": "identity"},
                      stream=True, timeout=300) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith(PARQUET)
        for chunk in r.iter_content(1 << 20):
            data += chunk
            peak = max(peak, rss_mb(big_server.proc.pid))
    parquet_file = pyarrow.parquet.ParquetFile(io.BytesIO(bytes(data)))
    assert parquet_file.metadata.num_rows == 500_000 and parquet_file.metadata.num_row_groups > 4
    table = parquet_file.read()
    assert table.schema.field("n").type == pa.int64()
    assert table.schema.field("a").type == pa.dictionary(pa.int32(), pa.utf8())
    assert table.column("n__term").null_count == 500_000
    assert peak < before + 150, (before, peak)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 60000",
        "SELECT ?s ?n WHERE { ?s <http://example.org/big/n> ?n } LIMIT 40000",
    ],
)
def test_batches_gathered_on_all_cores_give_the_rows_in_order(big_server, query):
    """A result large enough to be gathered by several cores at once (each
    writes its run as a record batch with its own dictionaries) reads back,
    row by row, as the same terms in the same order as the TSV."""
    reader = pyarrow.ipc.open_stream(fetch(big_server, query, ARROW).content)
    batches = list(reader)
    # Runs written by forks on several cores, each its own record batch.
    assert len(batches) > 2
    variables, rows = terms_of_table(pa.Table.from_batches(batches, reader.schema))
    expected = tsv_terms(fetch(big_server, query, "text/tab-separated-values").content)
    got = [[parse_nt(c) if c else None for c in row] for row in rows]
    assert len(got) == len(expected) and got == expected


def test_a_parquet_scan_written_on_all_cores_holds_the_rows_in_order(big_server):
    """A whole scan is written a batch per core, each run's rows encoded
    into row groups of its own and the encoder's bytes handed on by the
    file alone: the rows are the TSV's, in order, in row groups of at most
    a run's rows."""
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    parquet_file = pyarrow.parquet.ParquetFile(io.BytesIO(fetch(big_server, query, PARQUET).content))
    metadata = parquet_file.metadata
    sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    assert sum(sizes) == 200_000 and len(sizes) > 4 and max(sizes) <= 65_536, sizes
    variables, rows = terms_of_table(parquet_file.read())
    expected = tsv_terms(fetch(big_server, query, "text/tab-separated-values").content)
    got = [[parse_nt(c) if c else None for c in row] for row in rows]
    assert len(got) == len(expected) and got == expected
