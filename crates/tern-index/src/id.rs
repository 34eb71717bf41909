//! The 64-bit term identifier.
//!
//! An [`Id`] is 4 tag bits followed by a 60-bit payload. Values that have a
//! compact, order-preserving encoding (numbers, booleans, dates) live inside the
//! ID itself, so filters and ORDER BY on them never touch the vocabulary. All
//! other terms are an index into the sorted vocabulary, so that for them ID order
//! is term order. Blank nodes are numbered at load time and need no text at all.
//!
//! Tags are ordered so that blank nodes sort before vocabulary terms (IRIs, then
//! literals), matching SPARQL's ORDER BY order of term kinds.

use std::fmt;

pub const TAG_BITS: u32 = 4;
pub const PAYLOAD_BITS: u32 = 64 - TAG_BITS;
pub const PAYLOAD_MASK: u64 = (1 << PAYLOAD_BITS) - 1;

/// What kind of value an [`Id`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Tag {
    /// No value: an unbound variable, or the default graph in the graph column.
    Undefined = 0,
    /// A blank node, numbered at load time.
    BlankNode = 1,
    /// An index into the index's sorted vocabulary (IRIs and literals).
    Vocab = 2,
    /// An index into a per-query local vocabulary (terms made by expressions).
    LocalVocab = 3,
    Boolean = 4,
    /// `xsd:integer` in [-2^59, 2^59), stored with an offset so ID order is value order.
    Integer = 5,
    /// `xsd:decimal` as fixed point with [`DECIMAL_SCALE`] fraction digits.
    Decimal = 6,
    /// `xsd:double` whose lowest 4 mantissa bits are zero, order-preserving.
    Double = 7,
    /// `xsd:date`: days since 1970-01-01 plus timezone.
    Date = 8,
    /// `xsd:dateTime`: UTC milliseconds since 1970-01-01 plus timezone.
    DateTime = 9,
    /// A term added by an update since the base index was built: an index
    /// into the store's delta vocabulary, numbered in the order terms came,
    /// so NOT in term order. Whatever relies on "ID order is term order"
    /// checks for this tag (compaction moves these terms into the sorted
    /// base vocabulary).
    DeltaVocab = 10,
}

impl Tag {
    fn from_bits(bits: u8) -> Option<Tag> {
        Some(match bits {
            0 => Tag::Undefined,
            1 => Tag::BlankNode,
            2 => Tag::Vocab,
            3 => Tag::LocalVocab,
            4 => Tag::Boolean,
            5 => Tag::Integer,
            6 => Tag::Decimal,
            7 => Tag::Double,
            8 => Tag::Date,
            9 => Tag::DateTime,
            10 => Tag::DeltaVocab,
            _ => return None,
        })
    }
}

/// A term identifier. `Id(0)` is [`Id::UNDEFINED`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct Id(pub u64);

impl Id {
    pub const UNDEFINED: Id = Id(0);
    /// The graph column value of triples in the default graph.
    pub const DEFAULT_GRAPH: Id = Id(0);

    #[inline]
    pub const fn new(tag: Tag, payload: u64) -> Id {
        Id(((tag as u64) << PAYLOAD_BITS) | (payload & PAYLOAD_MASK))
    }

    #[inline]
    pub fn tag(self) -> Tag {
        // Unknown tags cannot be built through `new`; treat them as undefined.
        Tag::from_bits((self.0 >> PAYLOAD_BITS) as u8).unwrap_or(Tag::Undefined)
    }

    #[inline]
    pub const fn payload(self) -> u64 {
        self.0 & PAYLOAD_MASK
    }

    #[inline]
    pub const fn vocab(index: u64) -> Id {
        Id::new(Tag::Vocab, index)
    }

    /// Blank nodes numbered from here up are made by queries (CONSTRUCT
    /// templates), never by the loader: they are labelled apart.
    pub const FRESH_BLANK_BASE: u64 = 1 << 59;

    #[inline]
    pub const fn blank_node(number: u64) -> Id {
        Id::new(Tag::BlankNode, number)
    }

    /// The smallest and largest IDs with this tag, for range scans over one kind.
    pub const fn tag_range(tag: Tag) -> (Id, Id) {
        (Id::new(tag, 0), Id::new(tag, PAYLOAD_MASK))
    }

    pub fn is_inline_value(self) -> bool {
        (Tag::Boolean..=Tag::DateTime).contains(&self.tag())
    }

    #[inline]
    pub const fn delta_vocab(index: u64) -> Id {
        Id::new(Tag::DeltaVocab, index)
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}({})", self.tag(), self.payload())
    }
}
