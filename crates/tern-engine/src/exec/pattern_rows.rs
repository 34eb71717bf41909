//! How the index rows of one triple pattern become solution rows: the
//! permutation whose leading columns are the pattern's constants, the output
//! column each variable position fills, and which graphs count. The scan and
//! the index join's lookups share it.

use super::scan::{GraphScope, PatternTerm};
use crate::context::{GraphSet, QueryContext};
use crate::EngineError;
use tern_index::permutation::Row;
use tern_index::{Id, Index, MergedLookup, Permutation, ScanRange};

#[derive(Debug, Clone, Copy)]
pub struct PatternRows {
    pub terms: [PatternTerm; 3],
    pub graph: GraphScope,
    pub perm: Permutation,
    /// A range of values asked for one variable position (see
    /// [`PatternRows::ranged`]).
    pub range_on: Option<(usize, ScanRange)>,
    /// The part of `range_on` the permutation can apply: on the column right
    /// after the prefix.
    pub scan_range: ScanRange,
    prefix: [Id; 3],
    prefix_len: usize,
}

impl PatternRows {
    pub fn new(terms: [PatternTerm; 3], graph: GraphScope) -> PatternRows {
        PatternRows::ranged(terms, graph, None)
    }

    /// A pattern of which only rows with the value at `range_on.0` in
    /// `range_on.1` are wanted, when that position is a variable: the
    /// permutation then has it right after the constants, and scans read
    /// only that range. A row outside it may still come (when the position
    /// is bound), so the range narrows reading, it does not filter.
    pub fn ranged(
        terms: [PatternTerm; 3],
        graph: GraphScope,
        range_on: Option<(usize, ScanRange)>,
    ) -> PatternRows {
        PatternRows::leading(terms, graph, range_on, &[])
    }

    /// This pattern with some variables bound to values (`terms`, `graph`:
    /// a left row's values in place, as an index join looks it up). Its
    /// permutation keeps this pattern's constants in front where it can:
    /// `?d a bib:Article` with `?d` bound is looked up in POS, not SPO,
    /// so that every lookup of a join lands in the few blocks of
    /// `a bib:Article`, which stay cached, instead of one block per
    /// subject all over SPO (at 100M triples, a million lookups decoded a
    /// block each).
    pub fn bound_to(&self, terms: [PatternTerm; 3], graph: GraphScope) -> PatternRows {
        let lead = &self.perm.order()[..self.prefix_len];
        PatternRows::leading(terms, graph, self.range_on, lead)
    }

    /// [`ranged`](Self::ranged), with the positions `lead` (constants of
    /// `terms`) first in the permutation where one has them first.
    fn leading(
        terms: [PatternTerm; 3],
        graph: GraphScope,
        range_on: Option<(usize, ScanRange)>,
        lead: &[usize],
    ) -> PatternRows {
        let wanted = range_on.filter(|&(pos, _)| matches!(terms[pos], PatternTerm::Variable(_)));
        let (perm, prefix_len) = bound_prefix(&terms, wanted.map(|(pos, _)| pos), lead);
        let mut prefix = [Id::UNDEFINED; 3];
        for (slot, &pos) in prefix.iter_mut().zip(&perm.order()[..prefix_len]) {
            if let PatternTerm::Constant(id) = terms[pos] {
                *slot = id;
            }
        }
        let scan_range = match wanted {
            Some((pos, range)) if perm.order().get(prefix_len) == Some(&pos) => range,
            _ => ScanRange::ALL,
        };
        PatternRows {
            terms,
            graph,
            perm,
            range_on,
            scan_range,
            prefix,
            prefix_len,
        }
    }

    /// The pattern's constants in the permutation's column order.
    pub fn prefix(&self) -> &[Id] {
        &self.prefix[..self.prefix_len]
    }

    /// The output column the rows are sorted on: the variable right after
    /// the bound columns in the permutation's order.
    pub fn sorted_column(&self) -> Option<usize> {
        let next = *self.perm.order().get(self.prefix_len)?;
        match self.terms.get(next)? {
            PatternTerm::Variable(column) => Some(*column),
            PatternTerm::Constant(_) => None,
        }
    }

    /// Fills `row_out` (one slot per pattern variable) from an index row of
    /// the permutation; false when the row is not a solution: outside the
    /// graph scope, a repeated variable with two values, or the same triple
    /// as `last_triple` in a default graph that merges graphs.
    pub fn fill(
        &self,
        ctx: &QueryContext,
        stored: Row,
        last_triple: &mut Option<[u64; 3]>,
        row_out: &mut [Id],
    ) -> bool {
        let quad = self.perm.quad_of(stored);
        let (in_scope, merge) = self.graph_matches(ctx, quad[3]);
        if !in_scope {
            return false;
        }
        let triple = [quad[0], quad[1], quad[2]];
        if merge {
            if *last_triple == Some(triple) {
                return false;
            }
            *last_triple = Some(triple);
        }
        row_out.iter_mut().for_each(|v| *v = Id::UNDEFINED);
        for (term, &value) in self.terms.iter().zip(&triple) {
            if let PatternTerm::Variable(column) = *term {
                if !bind(row_out, column, Id(value)) {
                    return false;
                }
            }
        }
        match self.graph {
            GraphScope::NamedVariable(column) => bind(row_out, column, Id(quad[3])),
            _ => true,
        }
    }

    /// Where each of the `width` output columns comes from in a stored
    /// row, when a scan's batches can be copied column by column instead of
    /// filled row by row: the pattern's scope is the index's default graph
    /// or the union of all graphs (a batch all in the index's default
    /// graph then passes whole) and each output column is one variable at
    /// one position. `None` otherwise.
    pub fn stored_columns(&self, ctx: &QueryContext, width: usize) -> Option<Vec<usize>> {
        if self.graph != GraphScope::Default
            || !matches!(ctx.default_graph, GraphSet::IndexDefault | GraphSet::All)
        {
            return None;
        }
        let order = self.perm.order();
        let mut from = vec![None; width];
        for (position, term) in self.terms.iter().enumerate() {
            if let PatternTerm::Variable(column) = *term {
                let slot = from.get_mut(column)?;
                if slot.is_some() {
                    return None;
                }
                *slot = order.iter().position(|&p| p == position);
            }
        }
        from.into_iter().collect()
    }

    /// Looks the pattern up in the index, through the reader of its
    /// permutation in `readers` (one per permutation, each keeping the
    /// block it read last), and calls `each` with the output row of every
    /// match (filled as [`fill`](Self::fill) does, in `row_out`).
    pub fn lookup(
        &self,
        ctx: &QueryContext,
        readers: &mut [Option<MergedLookup>; Permutation::COUNT],
        row_out: &mut [Id],
        mut each: impl FnMut(&[Id]),
    ) -> Result<(), EngineError> {
        let Some((lo, hi)) = Index::bounds(self.prefix(), self.scan_range) else {
            return Ok(());
        };
        let reader = readers[self.perm as usize].get_or_insert_with(|| ctx.index.lookup(self.perm));
        let mut last_triple = None;
        reader.rows(lo, hi, |stored| {
            if self.fill(ctx, stored, &mut last_triple, row_out) {
                each(row_out);
            }
        })?;
        Ok(())
    }

    /// The values of the variable columns (`width` of them, at most two)
    /// of each row matching `terms` in `graph`, looked up through
    /// `readers`: one step of a graph walk from a bound node.
    pub fn lookup_values(
        ctx: &QueryContext,
        readers: &mut [Option<MergedLookup>; Permutation::COUNT],
        terms: [PatternTerm; 3],
        graph: GraphScope,
        width: usize,
        each: impl FnMut(&[Id]),
    ) -> Result<(), EngineError> {
        let mut row = [Id::UNDEFINED; 2];
        PatternRows::new(terms, graph).lookup(ctx, readers, &mut row[..width], each)
    }

    /// Whether a row in `graph` belongs to the scope, and whether equal
    /// triples from different graphs must be merged.
    fn graph_matches(&self, ctx: &QueryContext, graph: u64) -> (bool, bool) {
        let in_named_set = || {
            graph != Id::DEFAULT_GRAPH.0
                && match &ctx.named_graphs {
                    GraphSet::Only(list) => list.contains(&Id(graph)),
                    _ => true,
                }
        };
        match self.graph {
            GraphScope::Default => match &ctx.default_graph {
                GraphSet::IndexDefault => (graph == Id::DEFAULT_GRAPH.0, false),
                GraphSet::All => (true, true),
                GraphSet::AllNamed => (graph != Id::DEFAULT_GRAPH.0, true),
                GraphSet::Only(list) => (list.contains(&Id(graph)), true),
            },
            GraphScope::Named(g) => (graph == g.0 && in_named_set(), false),
            GraphScope::NamedVariable(_) => (in_named_set(), false),
        }
    }
}

/// Sets a variable's slot; false if it already holds another value.
fn bind(row: &mut [Id], column: usize, value: Id) -> bool {
    if row[column] != Id::UNDEFINED && row[column] != value {
        return false;
    }
    row[column] = value;
    true
}

/// The permutation with the pattern's constants as leading columns (and
/// `next` right after them, if given), and how many they are. With the
/// predicate and one more position bound, the predicate leads: an index join
/// then looks all its rows up in one predicate's blocks, which stay cached,
/// instead of one block per subject. Among the permutations that lead with
/// the constants, one that has the positions `lead` first is preferred.
fn bound_prefix(
    terms: &[PatternTerm; 3],
    next: Option<usize>,
    lead: &[usize],
) -> (Permutation, usize) {
    let mut bound = [0; 3];
    let mut len = 0;
    for (i, term) in terms.iter().enumerate() {
        if matches!(term, PatternTerm::Constant(_)) {
            bound[len] = i;
            len += 1;
        }
    }
    let perm = match (&bound[..len], next) {
        ([0, 1], None | Some(2)) => Permutation::Pso,
        ([1, 2], None | Some(0)) => Permutation::Pos,
        (bound, next) => Permutation::for_bound(bound, next),
    };
    if lead.len() > len || perm.leads_with(lead) {
        return (perm, len);
    }
    let preferred = Permutation::ALL.into_iter().find(|p| {
        p.leads_with(&bound[..len])
            && p.leads_with(lead)
            && next.is_none_or(|n| p.order().get(len) == Some(&n))
    });
    (preferred.unwrap_or(perm), len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_index::Id;

    fn variable(column: usize) -> PatternTerm {
        PatternTerm::Variable(column)
    }

    fn constant(id: u64) -> PatternTerm {
        PatternTerm::Constant(Id(id))
    }

    /// A lookup binds the join's variables into the pattern; the
    /// permutation keeps the pattern's own constants first, so that the
    /// lookups of one join share the blocks of those constants.
    #[test]
    fn a_bound_pattern_keeps_its_constants_in_front() {
        let class = PatternRows::new([variable(0), constant(1), constant(2)], GraphScope::Default);
        assert_eq!(class.perm, Permutation::Pos);
        let looked_up =
            class.bound_to([constant(7), constant(1), constant(2)], GraphScope::Default);
        assert_eq!(looked_up.perm, Permutation::Pos);
        assert_eq!(looked_up.prefix(), &[Id(1), Id(2), Id(7)]);
        // Without the pattern to start from, a fully bound one is read in SPO.
        let alone = PatternRows::new([constant(7), constant(1), constant(2)], GraphScope::Default);
        assert_eq!(alone.perm, Permutation::Spo);

        let of_subject =
            PatternRows::new([constant(7), variable(0), constant(2)], GraphScope::Default);
        let looked_up =
            of_subject.bound_to([constant(7), constant(1), constant(2)], GraphScope::Default);
        assert_eq!(looked_up.perm, Permutation::Osp);
        assert_eq!(looked_up.prefix(), &[Id(2), Id(7), Id(1)]);

        // The predicate still leads when it and one more position are bound.
        let by_predicate =
            PatternRows::new([variable(0), constant(1), variable(1)], GraphScope::Default);
        assert_eq!(by_predicate.perm, Permutation::Pso);
        let looked_up =
            by_predicate.bound_to([variable(0), constant(1), constant(9)], GraphScope::Default);
        assert_eq!(looked_up.perm, Permutation::Pos);
        assert_eq!(looked_up.prefix(), &[Id(1), Id(9)]);
    }
}
