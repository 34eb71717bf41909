//! One variable's columns in the Arrow stream: the typed column and its
//! `__term` companion, or a single column of N-Triples text.

use super::iri_dictionary::IriDictionary;
use super::value::{natural_kind, value, Kind, Value};
use crate::term::write_nt_term;
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float64Builder, Int64Builder,
    StringBuilder, TimestampMillisecondBuilder,
};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, TimeUnit};
use oxrdf::{Term, TermRef};
use std::collections::HashMap;
use std::sync::Arc;

/// The key of each field's metadata that says what its column holds:
/// a kind of value (`iri`, `string`, `integer`, ...), `term` for N-Triples
/// text, `term-companion` for a typed column's misfits.
pub const KIND_KEY: &str = "tern:kind";

pub struct Column {
    name: String,
    /// IRIs as plain UTF-8 arrays, for a Parquet file: its writer builds
    /// its own dictionary from the values whatever the array, so hashing
    /// them into an Arrow dictionary first was work done twice (about 4% of
    /// a Parquet export's CPU). The file's schema still says dictionary
    /// ([`Column::fields`]), and readers get dictionary arrays.
    plain_iris: bool,
    /// `None`: the variable's values have no common type; `text` holds
    /// every value.
    typed: Option<(Kind, Typed)>,
    /// N-Triples text: every value, or those the typed column cannot hold.
    text: StringBuilder,
    text_bytes: usize,
    scratch: Vec<u8>,
}

enum Typed {
    Iri(IriDictionary),
    /// IRIs as plain UTF-8 (see [`Column::plain_iris`]).
    IriText(StringBuilder),
    String(StringBuilder),
    Integer(Int64Builder),
    Double(Float64Builder),
    Decimal(Decimal128Builder),
    Boolean(BooleanBuilder),
    Date(Date32Builder),
    DateTime(TimestampMillisecondBuilder),
}

impl Column {
    /// The column for a variable whose first values are `values`: typed by
    /// the kind most of them fit (ties go to the earlier kind), untyped when
    /// none fits.
    /// `plain_iris`: see [`Column::plain_iris`].
    pub fn for_values<'a>(
        name: &str,
        values: impl Iterator<Item = &'a Term>,
        plain_iris: bool,
    ) -> Column {
        let mut counts: Vec<(Kind, usize)> = Vec::new();
        for term in values {
            if let Some(kind) = natural_kind(term.as_ref()) {
                match counts.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((kind, 1)),
                }
            }
        }
        let best = counts.iter().map(|&(_, n)| n).max();
        let kind = counts
            .iter()
            .find(|&&(_, n)| Some(n) == best)
            .map(|&(k, _)| k);
        Column::new(name, kind, plain_iris)
    }

    /// An empty column of this name, typed by `kind` (text when `None`).
    fn new(name: &str, kind: Option<Kind>, plain_iris: bool) -> Column {
        Column {
            name: name.to_owned(),
            plain_iris,
            typed: kind.map(|k| (k, Typed::new(k, plain_iris))),
            text: StringBuilder::new(),
            text_bytes: 0,
            scratch: Vec::new(),
        }
    }

    /// An empty column of the same name and type, for rows written on
    /// another core.
    pub fn empty_like(&self) -> Column {
        Column::new(
            &self.name,
            self.typed.as_ref().map(|(k, _)| *k),
            self.plain_iris,
        )
    }

    /// The fields of this variable, in order: the file's or stream's.
    pub fn fields(&self) -> Vec<Field> {
        let meta = |kind: &str| HashMap::from([(KIND_KEY.to_owned(), kind.to_owned())]);
        let text = |name: String, kind: &str| {
            Field::new(name, DataType::Utf8, true).with_metadata(meta(kind))
        };
        match &self.typed {
            None => vec![text(self.name.clone(), "term")],
            Some((kind, _)) => vec![
                Field::new(&self.name, data_type(*kind), true).with_metadata(meta(kind.name())),
                text(format!("{}__term", self.name), "term-companion"),
            ],
        }
    }

    /// The fields of the record batches this column's arrays go into: its
    /// [`fields`](Column::fields), but UTF-8 where IRIs are gathered as
    /// plain text.
    pub fn batch_fields(&self) -> Vec<Field> {
        let mut fields = self.fields();
        if let Some((_, Typed::IriText(_))) = &self.typed {
            fields[0] = fields[0].clone().with_data_type(DataType::Utf8);
        }
        fields
    }

    pub fn text_bytes(&self) -> usize {
        self.text_bytes
    }

    pub fn push(&mut self, term: Option<TermRef<'_>>) {
        if let Some((kind, typed)) = &mut self.typed {
            if let Some(v) = term.and_then(|t| value(*kind, t)) {
                typed.append(v);
                self.text.append_null();
                if let Value::Text(t) = v {
                    self.text_bytes += t.len();
                }
                return;
            }
            typed.append_null();
        }
        match term {
            Some(term) => {
                self.scratch.clear();
                write_nt_term(&mut self.scratch, term, false);
                // Terms are UTF-8 text and escaping keeps them so.
                let text = std::str::from_utf8(&self.scratch).unwrap_or_default();
                self.text_bytes += text.len();
                self.text.append_value(text);
            }
            None => self.text.append_null(),
        }
    }

    /// The arrays of the rows pushed since the last call, in field order.
    /// The text builders that follow are sized as these were: a finished
    /// builder starts over from empty buffers, and growing them again
    /// batch after batch (each growth a copy) was 1.5% of an Arrow
    /// export's instructions.
    pub fn finish(&mut self) -> Vec<ArrayRef> {
        self.text_bytes = 0;
        let sized = sized_like(&self.text);
        let text: ArrayRef = Arc::new(std::mem::replace(&mut self.text, sized).finish());
        match &mut self.typed {
            None => vec![text],
            Some((_, typed)) => vec![typed.finish(), text],
        }
    }
}

/// An empty builder with room for as many values and bytes as `builder`.
fn sized_like(builder: &StringBuilder) -> StringBuilder {
    StringBuilder::with_capacity(builder.len(), builder.values_slice().len())
}

fn data_type(kind: Kind) -> DataType {
    match kind {
        Kind::Iri => DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        Kind::String => DataType::Utf8,
        Kind::Integer => DataType::Int64,
        Kind::Double => DataType::Float64,
        Kind::Decimal(scale) => DataType::Decimal128(38, scale),
        Kind::Boolean => DataType::Boolean,
        Kind::Date => DataType::Date32,
        Kind::DateTime => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
    }
}

impl Typed {
    fn new(kind: Kind, plain_iris: bool) -> Typed {
        match kind {
            Kind::Iri if plain_iris => Typed::IriText(StringBuilder::new()),
            Kind::Iri => Typed::Iri(IriDictionary::default()),
            Kind::String => Typed::String(StringBuilder::new()),
            Kind::Integer => Typed::Integer(Int64Builder::new()),
            Kind::Double => Typed::Double(Float64Builder::new()),
            Kind::Decimal(scale) => Typed::Decimal(
                Decimal128Builder::new()
                    .with_precision_and_scale(38, scale)
                    .expect("a scale of at most 38"),
            ),
            Kind::Boolean => Typed::Boolean(BooleanBuilder::new()),
            Kind::Date => Typed::Date(Date32Builder::new()),
            Kind::DateTime => {
                Typed::DateTime(TimestampMillisecondBuilder::new().with_timezone("UTC"))
            }
        }
    }

    /// Appends a value of this column's kind (as [`value`] gives it).
    fn append(&mut self, v: Value<'_>) {
        match (self, v) {
            (Typed::Iri(b), Value::Text(t)) => b.append(t),
            (Typed::IriText(b), Value::Text(t)) => b.append_value(t),
            (Typed::String(b), Value::Text(t)) => b.append_value(t),
            (Typed::Integer(b), Value::Integer(n)) => b.append_value(n),
            (Typed::Double(b), Value::Double(x)) => b.append_value(x),
            (Typed::Decimal(b), Value::Decimal(n)) => b.append_value(n),
            (Typed::Boolean(b), Value::Boolean(x)) => b.append_value(x),
            (Typed::Date(b), Value::Date(d)) => b.append_value(d),
            (Typed::DateTime(b), Value::DateTime(ms)) => b.append_value(ms),
            (typed, _) => typed.append_null(),
        }
    }

    fn append_null(&mut self) {
        match self {
            Typed::Iri(b) => b.append_null(),
            Typed::IriText(b) => b.append_null(),
            Typed::String(b) => b.append_null(),
            Typed::Integer(b) => b.append_null(),
            Typed::Double(b) => b.append_null(),
            Typed::Decimal(b) => b.append_null(),
            Typed::Boolean(b) => b.append_null(),
            Typed::Date(b) => b.append_null(),
            Typed::DateTime(b) => b.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Typed::Iri(b) => b.finish(),
            Typed::IriText(b) | Typed::String(b) => {
                let sized = sized_like(b);
                Arc::new(std::mem::replace(b, sized).finish())
            }
            Typed::Integer(b) => Arc::new(b.finish()),
            Typed::Double(b) => Arc::new(b.finish()),
            Typed::Decimal(b) => Arc::new(b.finish()),
            Typed::Boolean(b) => Arc::new(b.finish()),
            Typed::Date(b) => Arc::new(b.finish()),
            Typed::DateTime(b) => Arc::new(b.finish()),
        }
    }
}
