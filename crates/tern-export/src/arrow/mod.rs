//! Apache Arrow IPC stream for SELECT, typed: per variable a column whose
//! type follows its values (IRIs as dictionary-encoded UTF-8, plain strings
//! as UTF-8, xsd:integer as Int64, xsd:double as Float64, xsd:decimal as
//! Decimal128, xsd:boolean as Boolean, xsd:date as Date32, xsd:dateTime in
//! UTC as Timestamp(ms, UTC)), chosen from the first rows; and beside it a
//! UTF-8 column `VAR__term` with, in N-Triples syntax, every value that
//! does not fit that type (blank nodes, language-tagged strings, other
//! datatypes, a lexical form that is not canonical), so that nothing is
//! lost. A variable whose first values have no common type has one UTF-8
//! column of N-Triples text. Each field's metadata says which it is
//! (`tern:kind`). Rows are gathered into record batches of up to
//! `BATCH_ROWS` rows or `BATCH_BYTES` of text.
//!
//! Once the types are chosen, the rows of a large result are gathered on
//! all cores: each fork gathers its run of rows (`tern serve` cuts rounds
//! of 4,096 rows into one run per core) into a record batch of its own,
//! written with its own dictionaries. Every record batch of the stream
//! is preceded by its dictionaries (a replacement of the previous ones,
//! which the IPC stream format allows), so batches written on different
//! cores cannot disagree about what an index means.
//!
//! The same batches go into Parquet (`ArrowWriter::parquet`), gathered on
//! all cores in the same way, each run's encoded into row groups of its
//! own on its core and put into the file in the order of the runs
//! (`parquet_file.rs`); the footer (row groups' offsets and statistics)
//! comes last, and the Arrow schema, field metadata included, rides in its
//! key-value metadata as Arrow's writer puts it.

mod column;
mod file_writer;
mod iri_dictionary;
mod parquet_file;
mod parquet_footer;
mod row_group;
mod thrift_fields;
mod value;

use crate::SolutionsWriter;
use arrow_array::RecordBatch;
use arrow_ipc::writer::{
    write_message, CompressionContext, DictionaryTracker, EncodedData, IpcDataGenerator,
    IpcWriteOptions, StreamWriter,
};
use arrow_schema::{Field, Schema, SchemaRef};
use column::Column;
use oxrdf::{Term, TermRef, Variable};
use parquet_file::{ParquetFile, ParquetRun};
use std::sync::Arc;

const BATCH_ROWS: usize = 64 * 1024;
const BATCH_BYTES: usize = 1 << 20;
/// Rows whose values choose the columns' types.
const SAMPLE_ROWS: usize = 1024;

#[derive(Default)]
pub struct ArrowWriter {
    /// Parquet instead of the Arrow IPC stream.
    parquet: bool,
    variables: Vec<Variable>,
    /// The first rows, kept until the columns' types are chosen.
    sample: Vec<Vec<Option<Term>>>,
    state: Option<State>,
}

struct State {
    /// The schema of the record batches: the stream's or file's, but for
    /// Parquet with IRIs as plain UTF-8 (see `Column::batch_fields`).
    batch_schema: SchemaRef,
    container: Container,
    columns: Vec<Column>,
    rows: usize,
}

/// Where record batches go: both write into a buffer that is moved to the
/// output after each batch (the writers count what they wrote themselves,
/// so draining their buffer does not disturb their offsets).
enum Container {
    /// The IPC stream's schema message and end marker; its batches are
    /// encoded by [`ipc_batch`].
    Ipc(StreamWriter<Vec<u8>>),
    /// A fork's: its batches belong to a stream begun elsewhere.
    IpcFork,
    Parquet(Box<ParquetFile>),
    /// A fork's: its batches are encoded into row groups of its own,
    /// which go to the Parquet file's thread as one run.
    ParquetRun(ParquetRun),
}

/// Appends `batch` to `out` as IPC stream messages: its dictionaries, each
/// sent anew, then the record batch. A dictionary tracker of its own
/// forgets which dictionaries were sent; one per batch means every batch
/// carries its own, however many cores write batches of the same stream.
/// The messages are written straight into `out`, made room for first:
/// going through a stream writer's buffer, grown as it was written and
/// then copied, was 6% of an Arrow export's instructions.
fn ipc_batch(batch: &RecordBatch, out: &mut Vec<u8>) {
    let options = IpcWriteOptions::default();
    let generator = IpcDataGenerator::default();
    let mut tracker = DictionaryTracker::new(false);
    // Numbers the dictionaries of the schema's fields (the schema message
    // itself went out at the start of the stream).
    generator.schema_to_bytes_with_dictionary_tracker(&batch.schema(), &mut tracker, &options);
    let (dictionaries, record) = generator
        .encode(
            batch,
            &mut tracker,
            &options,
            &mut CompressionContext::default(),
        )
        .expect("IPC encoding into memory");
    // Each message: a continuation marker and a length, its flatbuffer
    // header padded to the default alignment (64 bytes), then its body
    // (aligned already).
    let room = |m: &EncodedData| m.ipc_message.len() + m.arrow_data.len() + 8 + 64;
    out.reserve(dictionaries.iter().map(room).sum::<usize>() + room(&record));
    for message in dictionaries.into_iter().chain([record]) {
        write_message(&mut *out, message, &options).expect("IPC encoding into memory");
    }
}

impl Container {
    /// A container for `schema`; `out` gets what it begins with (IPC's
    /// schema message, Parquet's magic number).
    fn new(schema: &SchemaRef, parquet: bool, out: &mut Vec<u8>) -> Container {
        if parquet {
            return Container::Parquet(Box::new(ParquetFile::new(schema, out)));
        }
        let mut stream =
            StreamWriter::try_new(Vec::new(), schema).expect("IPC encoding into memory");
        out.append(stream.get_mut());
        Container::Ipc(stream)
    }

    /// Writes a batch (for Parquet, a whole row group, which goes to `out`
    /// when the next one is written) and moves the bytes it made into
    /// `out`. Writing into memory cannot fail, and the batch matches the
    /// schema by construction.
    fn write(&mut self, batch: RecordBatch, out: &mut Vec<u8>) {
        match self {
            Container::Ipc(_) | Container::IpcFork => ipc_batch(&batch, out),
            Container::Parquet(file) => file.write(batch, out),
            Container::ParquetRun(run) => run.write(batch),
        }
    }

    /// A fork's container, for the rows after those written so far; `None`
    /// where the container cannot fork.
    fn fork(&mut self) -> Option<Container> {
        match self {
            Container::Ipc(_) | Container::IpcFork => Some(Container::IpcFork),
            Container::Parquet(file) => file.fork().map(Container::ParquetRun),
            Container::ParquetRun(_) => None,
        }
    }

    /// The end of a fork's run: a Parquet run lets the encoder go on.
    fn end_run(&mut self) {
        if let Container::ParquetRun(run) = self {
            run.end();
        }
    }

    /// What a Parquet file's encoder has written so far, to `out`.
    fn ready_bytes(&mut self, out: &mut Vec<u8>) {
        if let Container::Parquet(file) = self {
            file.ready_bytes(out);
        }
    }

    /// The end: IPC's end-of-stream marker, Parquet's footer.
    fn finish(self, out: &mut Vec<u8>) {
        match self {
            Container::Ipc(mut stream) => {
                stream.finish().expect("IPC encoding into memory");
                out.append(stream.get_mut());
            }
            Container::IpcFork => {}
            Container::Parquet(file) => file.finish(out),
            Container::ParquetRun(mut run) => run.end(),
        }
    }
}

impl State {
    fn new(
        variables: &[Variable],
        sample: &[Vec<Option<Term>>],
        parquet: bool,
        out: &mut Vec<u8>,
    ) -> State {
        let columns: Vec<Column> = variables
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let values = sample.iter().filter_map(|r| r[i].as_ref());
                Column::for_values(v.as_str(), values, parquet)
            })
            .collect();
        let schema = |fields: fn(&Column) -> Vec<Field>| -> SchemaRef {
            Arc::new(Schema::new(
                columns.iter().flat_map(fields).collect::<Vec<_>>(),
            ))
        };
        let container = Container::new(&schema(Column::fields), parquet, out);
        let batch_schema = schema(Column::batch_fields);
        let mut state = State {
            batch_schema,
            container,
            columns,
            rows: 0,
        };
        let mut refs = Vec::new();
        for row in sample {
            refs.clear();
            refs.extend(row.iter().map(|t| t.as_ref().map(Term::as_ref)));
            state.push(out, &refs);
        }
        state
    }

    fn push(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        for (column, term) in self.columns.iter_mut().zip(row) {
            column.push(*term);
        }
        self.rows += 1;
        let bytes: usize = self.columns.iter().map(Column::text_bytes).sum();
        if self.rows >= BATCH_ROWS || bytes >= BATCH_BYTES {
            self.flush_batch(out);
        }
    }

    fn flush_batch(&mut self, out: &mut Vec<u8>) {
        if self.rows == 0 {
            return;
        }
        let arrays = self.columns.iter_mut().flat_map(Column::finish).collect();
        // The schema and arrays agree by construction, and writing into a
        // Vec cannot fail.
        let batch = RecordBatch::try_new(self.batch_schema.clone(), arrays)
            .expect("columns match the schema");
        self.container.write(batch, out);
        self.rows = 0;
    }

    /// A state for the rows after the ones this one holds, written on
    /// another core. The fork takes the rows this one holds, so that they
    /// go out before the fork's (forks are made in the order of their runs;
    /// the first of a round takes what was written one row at a time
    /// before it, the others start empty).
    fn fork(&mut self) -> Option<State> {
        let container = self.container.fork()?;
        let fresh = self.columns.iter().map(Column::empty_like).collect();
        Some(State {
            batch_schema: self.batch_schema.clone(),
            container,
            columns: std::mem::replace(&mut self.columns, fresh),
            rows: std::mem::take(&mut self.rows),
        })
    }
}

impl ArrowWriter {
    /// A writer of Parquet instead of the Arrow IPC stream.
    pub fn parquet() -> ArrowWriter {
        ArrowWriter {
            parquet: true,
            ..ArrowWriter::default()
        }
    }

    /// Chooses the columns' types from the rows kept so far and writes them.
    fn start(&mut self, out: &mut Vec<u8>) {
        let sample = std::mem::take(&mut self.sample);
        self.state = Some(State::new(&self.variables, &sample, self.parquet, out));
    }
}

impl SolutionsWriter for ArrowWriter {
    fn header(&mut self, _out: &mut Vec<u8>, variables: &[Variable]) {
        // The schema waits for the first rows, which choose its types.
        self.variables = variables.to_vec();
        self.sample.clear();
        self.state = None;
    }

    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        if let Some(state) = &mut self.state {
            state.push(out, row);
            return;
        }
        self.sample
            .push(row.iter().map(|t| t.map(TermRef::into_owned)).collect());
        if self.sample.len() >= SAMPLE_ROWS {
            self.start(out);
        }
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        if self.state.is_none() {
            self.start(out);
        }
        if let Some(mut state) = self.state.take() {
            state.flush_batch(out);
            state.container.finish(out);
        }
    }

    /// Forks gather their runs into record batches of their own, once the
    /// columns' types are chosen; a Parquet file's encoder puts them in
    /// the order of the runs.
    fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
        let state = self.state.as_mut()?.fork()?;
        Some(Box::new(ArrowWriter {
            parquet: self.parquet,
            variables: Vec::new(),
            sample: Vec::new(),
            state: Some(state),
        }))
    }

    /// A Parquet fork's rows make row groups of their own, which a large
    /// file needs fewer of (see `parquet_file.rs`).
    fn rows_per_fork(&self) -> usize {
        match self.state.as_ref().map(|state| &state.container) {
            Some(Container::Parquet(file)) => file.rows_per_run(),
            _ => 1,
        }
    }

    fn end_run(&mut self, out: &mut Vec<u8>) {
        if let Some(state) = &mut self.state {
            state.flush_batch(out);
            state.container.end_run();
        }
    }

    fn ready_bytes(&mut self, out: &mut Vec<u8>) {
        if let Some(state) = &mut self.state {
            state.container.ready_bytes(out);
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
