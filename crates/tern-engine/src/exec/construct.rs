//! CONSTRUCT's template, instantiated on IDs: for every input row, one
//! output row `?subject ?predicate ?object` per template triple whose terms
//! are all bound and well placed. No term is decoded here: constants are
//! IDs (interned once, at planning), template blank nodes are fresh
//! blank-node IDs per solution, and a triple with a literal subject or a
//! predicate that is not an IRI is dropped by looking at its IDs' kinds. The
//! rows then leave the engine like any SELECT result, as batches of IDs
//! that the writers decode on all cores.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::{Term, Variable};
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::algebra::GraphPattern;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::sync::Arc;
use tern_index::{Id, Tag};

/// Duplicates are removed among this many recent triples. A result is a set
/// of triples, so a repeat beyond the window changes no graph a client
/// parses, and the window keeps memory bounded for exports of any size
/// (24 bytes a triple: about 1.5 MiB at most).
const DUPLICATE_WINDOW: usize = 1 << 16;

/// Template blank nodes are blank-node IDs from here up: far above any
/// number the loader gives a stored blank node, so they name nodes of their
/// own (labelled `_:cN`).
const FRESH_BLANK_BASE: u64 = Id::FRESH_BLANK_BASE;

/// The names of the output columns.
pub fn triple_variables() -> Vec<Variable> {
    ["subject", "predicate", "object"]
        .map(Variable::new_unchecked)
        .to_vec()
}

/// Whether `template` copies the solutions of `pattern` as they are: both
/// are one triple pattern of three distinct variables in the same places
/// (`CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }`, also under LIMIT,
/// DISTINCT, REDUCED, the projection the parser adds, or `GRAPH` of one
/// named graph: what a Graph Store GET asks). Each solution is then a
/// stored triple of one graph, or of the default graph, which a scan gives
/// once (it merges the graphs of a dataset's default graph), with an IRI or
/// blank subject and an IRI predicate: the triples need no check and no
/// duplicate removal.
pub fn copies_its_pattern(template: &[TriplePattern], pattern: &GraphPattern) -> bool {
    let mut pattern = pattern;
    while let GraphPattern::Slice { inner, .. }
    | GraphPattern::Distinct { inner }
    | GraphPattern::Reduced { inner }
    | GraphPattern::Project { inner, .. }
    | GraphPattern::Graph {
        name: NamedNodePattern::NamedNode(_),
        inner,
    } = pattern
    {
        pattern = inner;
    }
    let (GraphPattern::Bgp { patterns }, [copy]) = (pattern, template) else {
        return false;
    };
    let [triple] = patterns.as_slice() else {
        return false;
    };
    let (TermPattern::Variable(s), NamedNodePattern::Variable(p), TermPattern::Variable(o)) =
        (&triple.subject, &triple.predicate, &triple.object)
    else {
        return false;
    };
    s != p && p != o && s != o && triple == copy
}

/// Where a template term's ID comes from.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Constant(Id),
    Column(usize),
    /// The `k`th blank node of the template, fresh per solution.
    Blank(u64),
}

/// Most IDs whose kind is remembered; beyond, the memory starts over.
const KINDS_KEPT: usize = 1 << 16;

/// What an ID stands for, as far as placing it in a triple goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Iri,
    Blank,
    /// A literal, or nothing.
    Other,
}

pub struct Construct {
    ctx: Arc<QueryContext>,
    input: BoxedOperator,
    variables: Vec<Variable>,
    /// Per template triple that can produce anything: its three slots.
    template: Vec<[Slot; 3]>,
    /// Blank nodes in the template.
    blanks: u64,
    /// Solutions instantiated so far: numbers the fresh blank nodes.
    solutions: u64,
    seen: FxHashSet<[Id; 3]>,
    /// The input's columns of subject, predicate and object when the
    /// template copies its rows as they are (see [`copies_its_pattern`]).
    copied: Option<[usize; 3]>,
    kinds: Kinds,
    detail: String,
}

/// What IDs stand for. Those of the updates' or the query's vocabulary take
/// a lookup, and are remembered (the same few come back on every row).
struct Kinds {
    ctx: Arc<QueryContext>,
    /// The first literal of the stored vocabulary: IRIs sort before
    /// literals, so a stored term's kind is one comparison, made here
    /// without a call into the index per triple.
    first_literal: Option<Id>,
    known: FxHashMap<Id, Kind>,
}

impl Construct {
    /// `copies` says the template copies the input's rows as they are
    /// (see [`copies_its_pattern`]).
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        patterns: &[TriplePattern],
        copies: bool,
    ) -> Result<Construct, EngineError> {
        let mut blank_numbers: FxHashMap<String, u64> = FxHashMap::default();
        let mut template = Vec::with_capacity(patterns.len());
        'patterns: for pattern in patterns {
            let predicate = match &pattern.predicate {
                NamedNodePattern::NamedNode(n) => TermPattern::NamedNode(n.clone()),
                NamedNodePattern::Variable(v) => TermPattern::Variable(v.clone()),
            };
            let mut slots = [Slot::Constant(Id::UNDEFINED); 3];
            for (position, term) in [&pattern.subject, &predicate, &pattern.object]
                .into_iter()
                .enumerate()
            {
                slots[position] = match term {
                    TermPattern::Variable(v) => {
                        match input.variables().iter().position(|x| x == v) {
                            Some(column) => Slot::Column(column),
                            // Never bound: the triple is never made.
                            None => continue 'patterns,
                        }
                    }
                    TermPattern::BlankNode(b) => {
                        let next = blank_numbers.len() as u64;
                        Slot::Blank(*blank_numbers.entry(b.as_str().to_owned()).or_insert(next))
                    }
                    TermPattern::NamedNode(n) => Slot::Constant(ctx.intern(&n.clone().into())?),
                    TermPattern::Literal(l) if position == 2 => {
                        Slot::Constant(ctx.intern(&l.clone().into())?)
                    }
                    // A literal subject: the triple is never well formed.
                    _ => continue 'patterns,
                };
            }
            template.push(slots);
        }
        let copied = match template.as_slice() {
            [[Slot::Column(s), Slot::Column(p), Slot::Column(o)]] if copies => Some([*s, *p, *o]),
            _ => None,
        };
        let detail = patterns
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(" . ");
        Ok(Construct {
            kinds: Kinds {
                first_literal: ctx.index.first_literal().ok(),
                ctx: ctx.clone(),
                known: FxHashMap::default(),
            },
            ctx,
            input,
            variables: triple_variables(),
            template,
            blanks: blank_numbers.len() as u64,
            solutions: 0,
            seen: FxHashSet::default(),
            copied,
            detail,
        })
    }

    fn instantiate(&mut self, input: &Batch, out: &mut Batch) -> Result<(), EngineError> {
        if self.seen.len() >= DUPLICATE_WINDOW {
            self.seen.clear();
        }
        for row in 0..input.len {
            // (A forged saved state may give any count: no overflow.)
            let blank_base = self
                .solutions
                .checked_mul(self.blanks)
                .and_then(|n| n.checked_add(FRESH_BLANK_BASE))
                .ok_or_else(|| bad_state("fresh blank nodes past the largest number"))?;
            self.solutions = self.solutions.saturating_add(1);
            for slots in &self.template {
                let [s, p, o] = slots.map(|slot| match slot {
                    Slot::Constant(id) => id,
                    Slot::Column(c) => input.columns[c][row],
                    Slot::Blank(k) => Id::new(Tag::BlankNode, blank_base + k),
                });
                // A constant is in its place by the grammar (an IRI or a
                // blank node as subject, an IRI as predicate): only a
                // variable's value is looked at.
                let column = |i: usize| matches!(slots[i], Slot::Column(_));
                if o == Id::UNDEFINED
                    || (column(0) && !self.kinds.is_subject(s)?)
                    || (column(1) && !self.kinds.is_iri(p)?)
                {
                    continue;
                }
                // Fresh blank nodes make every triple they are in new.
                let fresh =
                    matches!(slots[0], Slot::Blank(_)) || matches!(slots[2], Slot::Blank(_));
                if fresh || self.seen.insert([s, p, o]) {
                    out.push_row(&[s, p, o]);
                }
            }
        }
        Ok(())
    }
}

impl Kinds {
    fn is_iri(&mut self, id: Id) -> Result<bool, EngineError> {
        Ok(self.kind(id)? == Kind::Iri)
    }

    /// Whether `id` can be a subject: an IRI or a blank node.
    fn is_subject(&mut self, id: Id) -> Result<bool, EngineError> {
        Ok(matches!(self.kind(id)?, Kind::Iri | Kind::Blank))
    }

    /// What `id` stands for.
    #[inline]
    fn kind(&mut self, id: Id) -> Result<Kind, EngineError> {
        Ok(match (id.tag(), self.first_literal) {
            (Tag::BlankNode, _) => Kind::Blank,
            (Tag::Vocab, Some(first)) if id >= first => Kind::Other,
            (Tag::Vocab, Some(_)) => Kind::Iri,
            _ => self.kind_looked_up(id)?,
        })
    }

    /// What `id` stands for, asking the index or the query's terms.
    #[inline(never)]
    fn kind_looked_up(&mut self, id: Id) -> Result<Kind, EngineError> {
        Ok(match id.tag() {
            Tag::BlankNode => Kind::Blank,
            Tag::Vocab => match self.ctx.is_literal(id)? {
                true => Kind::Other,
                false => Kind::Iri,
            },
            Tag::DeltaVocab | Tag::LocalVocab => {
                if let Some(&known) = self.known.get(&id) {
                    return Ok(known);
                }
                if self.known.len() >= KINDS_KEPT {
                    self.known.clear();
                }
                let kind = if id.tag() != Tag::LocalVocab {
                    match self.ctx.is_literal(id)? {
                        true => Kind::Other,
                        false => Kind::Iri,
                    }
                } else {
                    match self.ctx.term(id)? {
                        Some(Term::NamedNode(_)) => Kind::Iri,
                        Some(Term::BlankNode(_)) => Kind::Blank,
                        _ => Kind::Other,
                    }
                };
                self.known.insert(id, kind);
                kind
            }
            _ => Kind::Other,
        })
    }
}

impl Operator for Construct {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input
            .estimated_rows()
            .map(|rows| rows.saturating_mul(self.template.len() as u64))
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Construct", self.detail.clone())
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    /// The number of solutions instantiated (which numbers the next fresh
    /// blank nodes) and the input's state. The window of recent triples is
    /// not kept: after resuming, a triple returned before the suspension
    /// may come again, which changes no graph (see [`DUPLICATE_WINDOW`]),
    /// and the query stays resumable by any server.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::new(
            vec![self.solutions],
            vec![self.input.save(stash)?],
        ))
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        let input = self.input.checkpoint()?;
        Some(OperatorState::new(vec![self.solutions], vec![input]))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.solutions = state.number(0)?;
        self.input.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        loop {
            let Some(input) = self.input.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            if input.len == 0 {
                // The input paused for the end of the turn.
                return Ok(Some(input_paused()));
            }
            if let Some(columns) = self.copied {
                self.solutions = self.solutions.saturating_add(input.len as u64);
                let mut input = input;
                let len = input.len;
                let columns = columns.map(|c| std::mem::take(&mut input.columns[c]));
                return Ok(Some(Batch {
                    columns: columns.to_vec(),
                    len,
                }));
            }
            let mut out = Batch::with_columns(3);
            self.instantiate(&input, &mut out)?;
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
    }
}

/// An empty batch: what an operator returns when the turn ended before it
/// had rows.
fn input_paused() -> Batch {
    Batch::with_columns(3)
}

#[cfg(test)]
mod tests {
    use super::copies_its_pattern;
    use spargebra::{Query, SparqlParser};

    fn copies(query: &str) -> bool {
        let Query::Construct {
            template, pattern, ..
        } = SparqlParser::new().parse_query(query).unwrap()
        else {
            panic!("not a CONSTRUCT")
        };
        copies_its_pattern(&template, &pattern)
    }

    #[test]
    fn only_a_template_equal_to_its_one_pattern_copies_it() {
        assert!(copies("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"));
        assert!(copies("CONSTRUCT WHERE { ?s ?p ?o }"));
        assert!(copies("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 5"));
        assert!(!copies("CONSTRUCT { ?o ?p ?s } WHERE { ?s ?p ?o }"));
        assert!(!copies("CONSTRUCT { ?s ?p ?s } WHERE { ?s ?p ?s }"));
        assert!(!copies(
            "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o . ?o ?q ?r }"
        ));
        assert!(!copies(
            "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"
        ));
        assert!(!copies(
            "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(?o = 1) }"
        ));
        assert!(!copies(
            "CONSTRUCT { ?s <http://p> ?o } WHERE { ?s <http://p> ?o }"
        ));
    }
}
