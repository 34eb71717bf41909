//! Result writers shared by `tern query` and the server: SPARQL results in
//! JSON, XML, CSV and TSV for SELECT and ASK; Turtle and N-Triples for
//! CONSTRUCT and DESCRIBE. Writers stream: rows are written as they come.

use oxrdf::{Term, Triple, Variable};
use sparesults::{QueryResultsFormat, QueryResultsSerializer};
use std::io::Write;

/// Formats for SELECT and ASK results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolutionsFormat {
    Json,
    Xml,
    Csv,
    Tsv,
}

/// Formats for CONSTRUCT and DESCRIBE results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Turtle,
    NTriples,
}

impl SolutionsFormat {
    fn sparesults(self) -> QueryResultsFormat {
        match self {
            SolutionsFormat::Json => QueryResultsFormat::Json,
            SolutionsFormat::Xml => QueryResultsFormat::Xml,
            SolutionsFormat::Csv => QueryResultsFormat::Csv,
            SolutionsFormat::Tsv => QueryResultsFormat::Tsv,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError<E: std::error::Error + 'static> {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The query failed while its results were being written.
    #[error(transparent)]
    Query(E),
}

/// Writes solutions as they are produced; returns the number of rows.
pub fn write_solutions<W: Write, E: std::error::Error + 'static>(
    out: W,
    format: SolutionsFormat,
    variables: &[Variable],
    rows: impl Iterator<Item = Result<Vec<Option<Term>>, E>>,
) -> Result<u64, ExportError<E>> {
    let mut writer = QueryResultsSerializer::from_format(format.sparesults())
        .serialize_solutions_to_writer(out, variables.to_vec())?;
    let mut count = 0;
    for row in rows {
        let row = row.map_err(ExportError::Query)?;
        writer.serialize(
            variables
                .iter()
                .zip(&row)
                .filter_map(|(v, t)| Some((v.as_ref(), t.as_ref()?.as_ref()))),
        )?;
        count += 1;
    }
    writer.finish()?;
    Ok(count)
}

pub fn write_boolean<W: Write>(
    out: W,
    format: SolutionsFormat,
    value: bool,
) -> std::io::Result<()> {
    QueryResultsSerializer::from_format(format.sparesults())
        .serialize_boolean_to_writer(out, value)?;
    Ok(())
}

/// Writes triples as they are produced; returns the number of triples.
pub fn write_graph<W: Write, E: std::error::Error + 'static>(
    out: W,
    format: GraphFormat,
    triples: impl Iterator<Item = Result<Triple, E>>,
) -> Result<u64, ExportError<E>> {
    let mut count = 0;
    match format {
        GraphFormat::NTriples => {
            let mut writer = oxttl::NTriplesSerializer::new().for_writer(out);
            for t in triples {
                writer.serialize_triple(&t.map_err(ExportError::Query)?)?;
                count += 1;
            }
            writer.finish();
        }
        GraphFormat::Turtle => {
            let mut writer = oxttl::TurtleSerializer::new().for_writer(out);
            for t in triples {
                writer.serialize_triple(&t.map_err(ExportError::Query)?)?;
                count += 1;
            }
            writer.finish()?;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, NamedNode};

    #[derive(Debug, thiserror::Error)]
    #[error("never")]
    struct Never;

    #[test]
    fn solutions_are_written_in_each_format() {
        let variables = vec![Variable::new_unchecked("x"), Variable::new_unchecked("y")];
        let rows = || {
            vec![
                Ok::<_, Never>(vec![
                    Some(NamedNode::new_unchecked("http://e/a").into()),
                    None,
                ]),
                Ok(vec![None, Some(Literal::new_simple_literal("b\tc").into())]),
            ]
            .into_iter()
        };
        let mut tsv = Vec::new();
        assert_eq!(
            write_solutions(&mut tsv, SolutionsFormat::Tsv, &variables, rows()).unwrap(),
            2
        );
        assert_eq!(
            String::from_utf8(tsv).unwrap(),
            "?x\t?y\n<http://e/a>\t\n\t\"b\\tc\"\n"
        );
        let mut json = Vec::new();
        write_solutions(&mut json, SolutionsFormat::Json, &variables, rows()).unwrap();
        let json = String::from_utf8(json).unwrap();
        assert!(json.contains("\"vars\":[\"x\",\"y\"]"), "{json}");
        assert!(json.contains("http://e/a"), "{json}");
    }

    #[test]
    fn query_errors_stop_the_writer() {
        let rows = vec![Err::<Vec<Option<Term>>, _>(Never)].into_iter();
        let result = write_solutions(Vec::new(), SolutionsFormat::Csv, &[], rows);
        assert!(matches!(result, Err(ExportError::Query(Never))));
    }
}
