//! Apache Arrow IPC stream for SELECT: one nullable UTF-8 column per
//! variable holding the term in N-Triples syntax (`<iri>`, `_:b`,
//! `"lex"^^<dt>`), so data tools get every term kind without a schema per
//! datatype. Rows are gathered into record batches of up to `BATCH_ROWS`
//! rows or `BATCH_BYTES` of text, then encoded into the caller's buffer.

use crate::term::write_nt_term;
use crate::SolutionsWriter;
use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use oxrdf::{TermRef, Variable};
use std::sync::Arc;

const BATCH_ROWS: usize = 64 * 1024;
const BATCH_BYTES: usize = 1 << 20;

#[derive(Default)]
pub struct ArrowWriter {
    state: Option<State>,
}

struct State {
    schema: SchemaRef,
    stream: StreamWriter<Vec<u8>>,
    columns: Vec<StringBuilder>,
    rows: usize,
    bytes: usize,
    /// Reused scratch for one term's text.
    scratch: Vec<u8>,
}

impl State {
    fn flush_batch(&mut self, out: &mut Vec<u8>) {
        if self.rows == 0 {
            return;
        }
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|c| Arc::new(c.finish()) as ArrayRef)
            .collect();
        // The schema and arrays agree by construction, and writing into a
        // Vec cannot fail.
        let batch =
            RecordBatch::try_new(self.schema.clone(), arrays).expect("columns match the schema");
        self.stream.write(&batch).expect("IPC encoding into memory");
        out.append(self.stream.get_mut());
        self.rows = 0;
        self.bytes = 0;
    }
}

impl SolutionsWriter for ArrowWriter {
    fn header(&mut self, out: &mut Vec<u8>, variables: &[Variable]) {
        let schema: SchemaRef = Arc::new(Schema::new(
            variables
                .iter()
                .map(|v| Field::new(v.as_str(), DataType::Utf8, true))
                .collect::<Vec<_>>(),
        ));
        let mut stream =
            StreamWriter::try_new(Vec::new(), &schema).expect("IPC encoding into memory");
        out.append(stream.get_mut());
        self.state = Some(State {
            columns: variables.iter().map(|_| StringBuilder::new()).collect(),
            schema,
            stream,
            rows: 0,
            bytes: 0,
            scratch: Vec::new(),
        });
    }

    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        let Some(state) = &mut self.state else { return };
        for (column, term) in state.columns.iter_mut().zip(row) {
            match term {
                Some(term) => {
                    state.scratch.clear();
                    write_nt_term(&mut state.scratch, *term, false);
                    // Terms are UTF-8 text and escaping keeps them so.
                    let text = std::str::from_utf8(&state.scratch).unwrap_or_default();
                    state.bytes += text.len();
                    column.append_value(text);
                }
                None => column.append_null(),
            }
        }
        state.rows += 1;
        if state.rows >= BATCH_ROWS || state.bytes >= BATCH_BYTES {
            state.flush_batch(out);
        }
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        if let Some(mut state) = self.state.take() {
            state.flush_batch(out);
            state.stream.finish().expect("IPC encoding into memory");
            out.append(state.stream.get_mut());
        }
    }

    fn boolean(&mut self, out: &mut Vec<u8>, value: bool) {
        // ASK has no table; give a one-row, one-column table `boolean`.
        let variable = Variable::new_unchecked("boolean");
        self.header(out, std::slice::from_ref(&variable));
        let literal = oxrdf::Literal::from(value);
        self.row(out, &[Some(literal.as_ref().into())]);
        self.footer(out);
    }
}
