//! Every writer's output parsed back by an independent parser.

use oxrdf::{BlankNode, Graph, Literal, NamedNode, Term, Triple, Variable};
use sparesults::{QueryResultsFormat, QueryResultsParser, ReaderQueryResultsParserOutput};
use tern_export::{GraphFormat, Prefixes, SolutionsFormat};

fn variables() -> Vec<Variable> {
    vec![Variable::new_unchecked("x"), Variable::new_unchecked("y")]
}

fn rows() -> Vec<Vec<Option<Term>>> {
    vec![
        vec![
            Some(NamedNode::new_unchecked("http://e/a").into()),
            Some(Literal::new_simple_literal("tab\there \"q\" \\ \n, é").into()),
        ],
        vec![
            Some(BlankNode::new_unchecked("b0").into()),
            Some(Literal::new_language_tagged_literal_unchecked("hi <&>", "en").into()),
        ],
        vec![
            None,
            Some(Literal::new_typed_literal("42", oxrdf::vocab::xsd::INTEGER).into()),
        ],
        vec![
            Some(NamedNode::new_unchecked("http://e/c?d=1&e").into()),
            None,
        ],
    ]
}

fn write(format: SolutionsFormat) -> Vec<u8> {
    let mut out = Vec::new();
    let rows = rows().into_iter().map(Ok::<_, std::io::Error>);
    let n = tern_export::write_solutions(&mut out, format, &variables(), rows).unwrap();
    assert_eq!(n, 4);
    out
}

fn parse_solutions(format: QueryResultsFormat, data: &[u8]) -> Vec<Vec<Option<Term>>> {
    let ReaderQueryResultsParserOutput::Solutions(solutions) =
        QueryResultsParser::from_format(format)
            .for_reader(data)
            .unwrap()
    else {
        panic!("not solutions")
    };
    assert_eq!(solutions.variables(), variables().as_slice());
    solutions
        .map(|s| {
            let s = s.unwrap();
            variables().iter().map(|v| s.get(v).cloned()).collect()
        })
        .collect()
}

#[test]
fn json_xml_tsv_parse_back_exactly() {
    for (ours, theirs) in [
        (SolutionsFormat::Json, QueryResultsFormat::Json),
        (SolutionsFormat::Xml, QueryResultsFormat::Xml),
        (SolutionsFormat::Tsv, QueryResultsFormat::Tsv),
    ] {
        let data = write(ours);
        let parsed = parse_solutions(theirs, &data);
        let mut expected = rows();
        if ours == SolutionsFormat::Tsv {
            // TSV has no way to say which blank node labels are kept.
            expected[1][0] = parsed[1][0].clone();
        }
        assert_eq!(
            parsed,
            expected,
            "{ours:?}: {}",
            String::from_utf8_lossy(&data)
        );
    }
}

#[test]
fn csv_is_plain_values_with_quoting() {
    let data = write(SolutionsFormat::Csv);
    assert_eq!(
        String::from_utf8(data).unwrap(),
        "x,y\r\nhttp://e/a,\"tab\there \"\"q\"\" \\ \n, é\"\r\n_:b0,hi <&>\r\n,42\r\nhttp://e/c?d=1&e,\r\n"
    );
}

#[test]
fn booleans_parse_back() {
    for (ours, theirs) in [
        (SolutionsFormat::Json, QueryResultsFormat::Json),
        (SolutionsFormat::Xml, QueryResultsFormat::Xml),
    ] {
        for value in [true, false] {
            let mut out = Vec::new();
            tern_export::write_boolean(&mut out, ours, value).unwrap();
            let ReaderQueryResultsParserOutput::Boolean(b) =
                QueryResultsParser::from_format(theirs)
                    .for_reader(out.as_slice())
                    .unwrap()
            else {
                panic!("not a boolean")
            };
            assert_eq!(b, value);
        }
    }
}

#[test]
fn in_band_errors_keep_json_and_xml_well_formed() {
    for format in [SolutionsFormat::Json, SolutionsFormat::Xml] {
        let mut writer = format.writer();
        let mut out = Vec::new();
        writer.header(&mut out, &variables());
        writer.row(&mut out, &tern_export::term_refs(&rows()[0]));
        assert!(writer.error(&mut out, "query timed out <after> \"1\" s"));
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("timed out"), "{text}");
        if format == SolutionsFormat::Json {
            let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(parsed["error"]["incomplete"], true);
            assert_eq!(parsed["results"]["bindings"].as_array().unwrap().len(), 1);
        } else {
            assert!(text.ends_with("</tern:error>\n</sparql>\n"), "{text}");
        }
    }
    assert!(!SolutionsFormat::Tsv.writer().error(&mut Vec::new(), "x"));
}

#[test]
fn arrow_columns_are_typed_and_keep_what_does_not_fit() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Float64Type, Int32Type, Int64Type};
    use arrow_array::Array;
    let xsd =
        |local: &str| NamedNode::new_unchecked(format!("http://www.w3.org/2001/XMLSchema#{local}"));
    let typed = |lexical: &str, local: &str| {
        Some(Term::from(Literal::new_typed_literal(lexical, xsd(local))))
    };
    let variables: Vec<Variable> = ["i", "n", "d", "day", "s"]
        .map(Variable::new_unchecked)
        .to_vec();
    let rows = vec![
        vec![
            Some(NamedNode::new_unchecked("http://e/a").into()),
            typed("42", "integer"),
            typed("1.5E0", "double"),
            typed("2024-02-29", "date"),
            Some(Literal::new_simple_literal("plain").into()),
        ],
        vec![
            Some(BlankNode::new_unchecked("b0").into()),
            typed("007", "integer"),
            None,
            typed("1970-01-02", "date"),
            Some(Literal::new_language_tagged_literal_unchecked("hallo", "de").into()),
        ],
        vec![
            Some(NamedNode::new_unchecked("http://e/a").into()),
            typed("-3", "integer"),
            typed("2.0E0", "double"),
            None,
            Some(Literal::new_simple_literal("more").into()),
        ],
    ];
    let mut out = Vec::new();
    let n = tern_export::write_solutions(
        &mut out,
        SolutionsFormat::Arrow,
        &variables,
        rows.into_iter().map(Ok::<_, std::io::Error>),
    )
    .unwrap();
    assert_eq!(n, 3);
    let reader = arrow_ipc::reader::StreamReader::try_new(out.as_slice(), None).unwrap();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    let batch = &batches[0];
    let schema = batch.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "i",
            "i__term",
            "n",
            "n__term",
            "d",
            "d__term",
            "day",
            "day__term",
            "s",
            "s__term"
        ]
    );
    let kind = |k: usize| schema.field(k).metadata()["tern:kind"].clone();
    assert_eq!(
        [kind(0), kind(1), kind(2), kind(4), kind(6), kind(8)],
        [
            "iri",
            "term-companion",
            "integer",
            "double",
            "date",
            "string"
        ]
    );
    // IRIs: dictionary-encoded; the blank node goes to the companion.
    let iris = batch.column(0).as_dictionary::<Int32Type>();
    let values = iris.values().as_string::<i32>();
    assert_eq!(values.value(iris.keys().value(0) as usize), "http://e/a");
    assert!(iris.is_null(1));
    assert_eq!(batch.column(1).as_string::<i32>().value(1), "_:b0");
    // A non-canonical integer keeps its lexical form in the companion.
    let ints = batch.column(2).as_primitive::<Int64Type>();
    assert_eq!(
        (ints.value(0), ints.is_null(1), ints.value(2)),
        (42, true, -3)
    );
    assert_eq!(
        batch.column(3).as_string::<i32>().value(1),
        "\"007\"^^<http://www.w3.org/2001/XMLSchema#integer>"
    );
    let doubles = batch.column(4).as_primitive::<Float64Type>();
    assert_eq!(
        (doubles.value(0), doubles.is_null(1), doubles.value(2)),
        (1.5, true, 2.0)
    );
    assert!(
        batch.column(5).is_null(1),
        "unbound is null in both columns"
    );
    let days = batch.column(6).as_primitive::<Date32Type>();
    assert_eq!((days.value(0), days.value(1)), (19_782, 1));
    let strings = batch.column(8).as_string::<i32>();
    assert_eq!((strings.value(0), strings.is_null(1)), ("plain", true));
    assert_eq!(batch.column(9).as_string::<i32>().value(1), "\"hallo\"@de");
}

fn triples() -> Vec<Triple> {
    let e = |s: &str| NamedNode::new_unchecked(format!("http://example.org/ns#{s}"));
    let b = BlankNode::new_unchecked("n1");
    vec![
        Triple::new(e("a"), oxrdf::vocab::rdf::TYPE, e("Tern")),
        Triple::new(
            e("a"),
            e("name"),
            Literal::new_simple_literal("A \"tern\"\nline"),
        ),
        Triple::new(
            e("a"),
            e("name"),
            Literal::new_language_tagged_literal_unchecked("Sterne", "de"),
        ),
        Triple::new(
            e("a"),
            e("size"),
            Literal::new_typed_literal("-12", oxrdf::vocab::xsd::INTEGER),
        ),
        Triple::new(
            e("a"),
            e("ratio"),
            Literal::new_typed_literal("1.50", oxrdf::vocab::xsd::DECIMAL),
        ),
        Triple::new(
            e("a"),
            e("ok"),
            Literal::new_typed_literal("true", oxrdf::vocab::xsd::BOOLEAN),
        ),
        Triple::new(e("a"), e("knows"), b.clone()),
        Triple::new(b.clone(), e("name"), Literal::new_simple_literal("blank")),
        Triple::new(e("a"), e("name"), Literal::new_simple_literal("again")),
        Triple::new(
            NamedNode::new_unchecked("http://other.example/x-y"),
            NamedNode::new_unchecked("http://other.example/p/q1"),
            NamedNode::new_unchecked("http://other.example/"),
        ),
    ]
}

fn graph_output(format: GraphFormat) -> Vec<u8> {
    let mut writer = format.writer(Prefixes::for_query(
        "PREFIX ex: <http://example.org/ns#> CONSTRUCT WHERE { ?s ?p ?o }",
    ));
    let mut out = Vec::new();
    writer.header(&mut out);
    for t in triples() {
        writer.triple(&mut out, t.as_ref()).unwrap();
    }
    writer.footer(&mut out);
    out
}

#[test]
fn graph_formats_parse_back_to_the_same_graph() {
    let expected: Graph = triples().into_iter().collect();
    for (format, rdf_format) in [
        (GraphFormat::Turtle, oxrdfio::RdfFormat::Turtle),
        (GraphFormat::NTriples, oxrdfio::RdfFormat::NTriples),
        (GraphFormat::NQuads, oxrdfio::RdfFormat::NQuads),
        (GraphFormat::RdfXml, oxrdfio::RdfFormat::RdfXml),
        (
            GraphFormat::JsonLd,
            oxrdfio::RdfFormat::JsonLd {
                profile: oxrdfio::JsonLdProfileSet::empty(),
            },
        ),
        (
            GraphFormat::JsonLdCompacted,
            oxrdfio::RdfFormat::JsonLd {
                profile: oxrdfio::JsonLdProfileSet::empty(),
            },
        ),
    ] {
        assert_parses_to(
            &graph_output(format),
            rdf_format,
            &expected,
            &format!("{format:?}"),
        );
    }
}

/// Asserts that `data` parses (as `rdf_format`) to `expected`, up to blank
/// node labels, which parsers may rename.
fn assert_parses_to(data: &[u8], rdf_format: oxrdfio::RdfFormat, expected: &Graph, what: &str) {
    let text = String::from_utf8_lossy(data);
    let parsed: Graph = oxrdfio::RdfParser::from_format(rdf_format)
        .for_reader(data)
        .map(|q| Triple::from(q.unwrap_or_else(|e| panic!("{what}: {e}\n{text}"))))
        .collect();
    assert!(
        parsed.len() == expected.len() && isomorphic(&parsed, expected),
        "{what}:\n{text}"
    );
}

fn isomorphic(a: &Graph, b: &Graph) -> bool {
    let label = |g: &Graph| {
        let mut lines: Vec<String> = g
            .iter()
            .map(|t| {
                t.to_string()
                    .split(' ')
                    .map(|w| if w.starts_with("_:") { "_:" } else { w })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        lines.sort();
        lines
    };
    label(a) == label(b)
}

#[test]
fn turtle_is_compact() {
    let text = String::from_utf8(graph_output(GraphFormat::Turtle)).unwrap();
    assert!(
        text.starts_with("@prefix ex: <http://example.org/ns#> .\n"),
        "{text}"
    );
    assert!(text.contains("ex:a a ex:Tern ;"), "{text}");
    assert!(text.contains(" ,\n"), "{text}");
    assert!(text.contains("ex:size -12 ;"), "{text}");
    assert!(text.contains("ex:ratio 1.50 ;"), "{text}");
    assert!(text.contains("<http://other.example/x-y>"), "{text}");
}

/// Writes `triples` as the server writes a large result: the first `alone`
/// triples by the writer itself, then runs of `run` triples each by a fork
/// (made in order before any run is written, their bytes appended in
/// order), then the rest by the writer again.
fn forked_output(format: GraphFormat, alone: usize, run: usize) -> Option<Vec<u8>> {
    let triples = triples();
    let mut writer = format.writer(Prefixes::well_known());
    let mut out = Vec::new();
    writer.header(&mut out);
    for t in &triples[..alone] {
        writer.triple(&mut out, t.as_ref()).unwrap();
    }
    let middle: Vec<&[Triple]> = triples[alone..triples.len() - 1].chunks(run).collect();
    let mut forks = Vec::new();
    for _ in &middle {
        forks.push(writer.fork()?);
    }
    for (fork, chunk) in forks.iter_mut().zip(middle) {
        let mut buf = Vec::new();
        for t in chunk {
            fork.triple(&mut buf, t.as_ref()).unwrap();
        }
        out.extend_from_slice(&buf);
    }
    writer
        .triple(&mut out, triples.last().unwrap().as_ref())
        .unwrap();
    writer.footer(&mut out);
    Some(out)
}

#[test]
fn forked_graph_writers_write_the_same_graph() {
    let expected: Graph = triples().into_iter().collect();
    let mut forked = 0;
    for (format, rdf_format) in [
        (GraphFormat::Turtle, oxrdfio::RdfFormat::Turtle),
        (GraphFormat::NTriples, oxrdfio::RdfFormat::NTriples),
        (GraphFormat::RdfXml, oxrdfio::RdfFormat::RdfXml),
        (
            GraphFormat::JsonLd,
            oxrdfio::RdfFormat::JsonLd {
                profile: oxrdfio::JsonLdProfileSet::empty(),
            },
        ),
        (
            GraphFormat::JsonLdCompacted,
            oxrdfio::RdfFormat::JsonLd {
                profile: oxrdfio::JsonLdProfileSet::empty(),
            },
        ),
    ] {
        // Runs cut inside a subject's and a predicate's triples, and forks
        // made before the writer wrote anything.
        for (alone, run) in [(0, 1), (0, 3), (1, 2), (2, 4), (3, 1), (5, 100)] {
            let Some(data) = forked_output(format, alone, run) else {
                continue;
            };
            forked += 1;
            let what = format!("{format:?} {alone} {run}");
            assert_parses_to(&data, rdf_format, &expected, &what);
        }
    }
    // Turtle, N-Triples and JSON-LD (both forms) fork; RDF/XML does not (a
    // triple can fail there).
    assert_eq!(forked, 24);
}

#[test]
fn compacted_json_ld_gives_classes_as_the_node_type() {
    let out = String::from_utf8(graph_output(GraphFormat::JsonLdCompacted)).unwrap();
    assert!(out.contains("\"@type\":[\"ex:Tern\"]"), "{out}");
    // A class that is a blank node stays a property: `@type` holds IRIs.
    let mut writer = GraphFormat::JsonLdCompacted.writer(Prefixes::well_known());
    let mut out = Vec::new();
    writer.header(&mut out);
    let subject = NamedNode::new_unchecked("http://example.org/ns#a");
    for class in [
        Term::from(NamedNode::new_unchecked("http://example.org/ns#C")),
        Term::from(BlankNode::new_unchecked("c")),
    ] {
        let triple = Triple::new(subject.clone(), oxrdf::vocab::rdf::TYPE, class);
        writer.triple(&mut out, triple.as_ref()).unwrap();
    }
    writer.footer(&mut out);
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(
        text.contains("\"@type\":[\"http://example.org/ns#C\"]"),
        "{text}"
    );
    assert!(text.contains(":type\":[{\"@id\":\"_:c\"}]"), "{text}");
    let expected: Graph = [
        Triple::new(
            subject.clone(),
            oxrdf::vocab::rdf::TYPE,
            NamedNode::new_unchecked("http://example.org/ns#C"),
        ),
        Triple::new(
            subject,
            oxrdf::vocab::rdf::TYPE,
            BlankNode::new_unchecked("c"),
        ),
    ]
    .into_iter()
    .collect();
    let json_ld = oxrdfio::RdfFormat::JsonLd {
        profile: oxrdfio::JsonLdProfileSet::empty(),
    };
    assert_parses_to(&out, json_ld, &expected, "classes");
}

/// Parquet's forks gather their runs on any thread and end in any order;
/// the file holds the rows in the order of the runs, and a run dropped
/// before its end (its rows failed) does not hold the file up.
#[test]
fn parquet_runs_ending_out_of_order_keep_the_order_of_the_runs() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let number = |n: usize| {
        Term::from(Literal::new_typed_literal(
            n.to_string(),
            oxrdf::vocab::xsd::INTEGER,
        ))
    };
    let write_rows = |writer: &mut dyn tern_export::SolutionsWriter,
                      out: &mut Vec<u8>,
                      rows: std::ops::Range<usize>| {
        for n in rows {
            let term = number(n);
            writer.row(out, &[Some(term.as_ref())]);
        }
    };
    let mut writer = SolutionsFormat::Parquet.writer();
    let mut out = Vec::new();
    writer.header(&mut out, &[Variable::new_unchecked("n")]);
    // Enough rows, written one at a time, for the columns' types.
    write_rows(writer.as_mut(), &mut out, 0..1500);
    let mut runs: Vec<(Box<dyn tern_export::SolutionsWriter>, Vec<u8>)> = (0..4)
        .map(|_| {
            (
                writer.fork_rows().expect("a typed Parquet writer forks"),
                Vec::new(),
            )
        })
        .collect();
    // Run 2 fails: its rows are written but never ended. (It carries no
    // bytes: nothing was encoded when it was made.)
    let lengths = [700, 2500, 300, 1200];
    let mut from = 1500;
    let mut expected: Vec<i64> = (0..1500).collect();
    for (k, ((fork, buf), len)) in runs.iter_mut().zip(lengths).enumerate() {
        write_rows(fork.as_mut(), buf, from..from + len);
        if k != 2 {
            expected.extend(from as i64..(from + len) as i64);
        }
        from += len;
    }
    let failed = runs.remove(2);
    // The others end last run first, each on a thread of its own.
    let ended: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (mut fork, mut buf) in runs.into_iter().rev() {
            handles.push(scope.spawn(move || {
                fork.end_run(&mut buf);
                buf
            }));
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    drop(failed);
    for buf in ended.iter().rev() {
        out.extend_from_slice(buf);
    }
    write_rows(writer.as_mut(), &mut out, from..from + 10);
    expected.extend(from as i64..(from + 10) as i64);
    writer.footer(&mut out);

    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(out)).unwrap();
    let mut read: Vec<i64> = Vec::new();
    for batch in reader.build().unwrap() {
        let batch = batch.unwrap();
        read.extend(batch.column(0).as_primitive::<Int64Type>().values().iter());
    }
    assert_eq!(read, expected);
}

/// Parquet gets IRIs as plain text (its writer makes its own dictionary),
/// yet the file's schema says dictionary, and readers get dictionary arrays
/// with the same values.
#[test]
fn parquet_iris_read_back_as_dictionaries() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let iris = ["http://e/a", "http://e/b", "http://e/a", "http://e/c"];
    let rows = iris
        .iter()
        .map(|iri| vec![Some(Term::from(NamedNode::new_unchecked(*iri)))])
        .chain([vec![Some(BlankNode::new_unchecked("b1").into())]])
        .map(Ok::<_, std::io::Error>);
    let mut out = Vec::new();
    let variables = [Variable::new_unchecked("i")];
    tern_export::write_solutions(&mut out, SolutionsFormat::Parquet, &variables, rows).unwrap();

    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(out)).unwrap();
    let batch = reader.build().unwrap().next().unwrap().unwrap();
    let column = batch.column(0).as_dictionary::<Int32Type>();
    let values = column.values().as_string::<i32>();
    let read: Vec<Option<&str>> = (0..column.len())
        .map(|i| {
            column
                .is_valid(i)
                .then(|| values.value(column.keys().value(i) as usize))
        })
        .collect();
    let mut expected: Vec<Option<&str>> = iris.iter().copied().map(Some).collect();
    expected.push(None);
    assert_eq!(read, expected);
    assert_eq!(batch.column(1).as_string::<i32>().value(4), "_:b1");
}
