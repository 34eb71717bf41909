//! ORDER BY: materializes its input and sorts it with SPARQL's order of
//! terms, a bounded step at a time ([`SortSteps`]); an input larger than
//! the memory budget is sorted in runs written to disk and merged
//! ([`ExternalSort`]).

use super::profile::OperatorInfo;
use super::sort_steps::SortSteps;
use super::spill::ExternalSort;
use super::{Batch, BoxedOperator, Collector, Operator, Pulled, COLLECTING};
use crate::context::QueryContext;
use crate::expr::RowEvaluator;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::OrderExpression;
use std::sync::Arc;
use tern_index::vocab::TermKind;
use tern_index::{Id, Tag};

pub struct OrderBy {
    ctx: Arc<QueryContext>,
    input: Option<BoxedOperator>,
    variables: Vec<Variable>,
    keys: Vec<(RowEvaluator, bool)>,
    collector: Collector,
    /// The collected rows once the input has ended.
    sorter: Option<Box<SortSteps>>,
    /// Only this many rows will be read (a LIMIT above): the sort keeps the
    /// best of them as it collects, in bounded memory.
    top: Option<usize>,
    /// The runs written to disk, once the rows did not fit in memory.
    spilled: Option<Box<ExternalSort>>,
}

/// The largest LIMIT (plus OFFSET) for which the sort keeps only the best
/// rows while it collects: each time it has collected four times as many
/// (or [`TOP_BUFFER_ROWS`]), it sorts them, which must fit in a turn.
const TOP_ROWS: usize = 8 * 1024;
const TOP_BUFFER_ROWS: usize = 32 * 1024;

/// `OperatorState::numbers[0]` of a sort whose input has ended (while it
/// collects: [`COLLECTING`], with `numbers[1]` the stash handle of its
/// runs on disk plus one, or 0).
const SORTING: u64 = 2;
/// The input has ended and the rows are on disk, being merged.
const MERGING: u64 = 3;

impl OrderBy {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        order: Vec<OrderExpression>,
        scope: Arc<crate::expr::Scope>,
    ) -> OrderBy {
        let variables = input.variables().to_vec();
        let keys = order
            .into_iter()
            .map(|o| match o {
                OrderExpression::Asc(e) => (
                    RowEvaluator::new(ctx.clone(), e, variables.clone(), scope.clone()),
                    true,
                ),
                OrderExpression::Desc(e) => (
                    RowEvaluator::new(ctx.clone(), e, variables.clone(), scope.clone()),
                    false,
                ),
            })
            .collect();
        OrderBy {
            ctx,
            input: Some(input),
            variables,
            keys,
            collector: Collector::default(),
            sorter: None,
            top: None,
            spilled: None,
        }
    }
}

impl OrderBy {
    fn describe_keys(&self) -> String {
        self.keys
            .iter()
            .map(|(k, asc)| {
                if *asc {
                    format!("ASC({k})")
                } else {
                    format!("DESC({k})")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Operator for OrderBy {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.as_ref()?.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("OrderBy", self.describe_keys())
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.input
            .as_deref()
            .map(|i| i as &dyn Operator)
            .into_iter()
            .collect()
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        if let Some(sorter) = self.sorter.take() {
            return Ok(OperatorState {
                numbers: vec![SORTING],
                stashed: Some(stash.put(*sorter)),
                children: Vec::new(),
            });
        }
        let spilled = self.spilled.take().map(|runs| stash.put(*runs));
        let Some(input) = self.input.as_mut() else {
            return Ok(OperatorState {
                numbers: vec![MERGING],
                stashed: Some(spilled.ok_or_else(|| bad_state("sort without input or rows"))?),
                children: Vec::new(),
            });
        };
        let mut state = self.collector.save_with(input.as_mut(), stash)?;
        state.numbers.push(spilled.map_or(0, |handle| handle + 1));
        Ok(state)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        match state.number(0)? {
            SORTING => {
                self.sorter = Some(Box::new(state.take_stashed(stash, "sorted rows")?));
                self.input = None;
                Ok(())
            }
            MERGING => {
                self.spilled = Some(Box::new(state.take_stashed(stash, "sorted runs")?));
                self.input = None;
                Ok(())
            }
            COLLECTING => {
                if let Some(handle) = state.number(1)?.checked_sub(1) {
                    self.spilled = Some(Box::new(stash.take(handle)?));
                }
                self.collector
                    .restore_with(state, self.input.as_mut(), stash)
            }
            other => Err(bad_state(format!("sort phase {other}"))),
        }
    }

    fn first_rows_only(&mut self, rows: usize) {
        if rows <= TOP_ROWS {
            self.top = Some(rows);
        }
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.variables.len();
        let paused = || Ok(Some(Batch::with_columns(width)));
        while self.input.is_some() {
            if !self.write_spilled_run()? {
                return paused();
            }
            let input = self.input.as_mut().expect("checked above");
            let full = self
                .top
                .map_or(usize::MAX, |top| (4 * top).max(TOP_BUFFER_ROWS));
            // With a LIMIT above, the rows kept are bounded: nothing to spill.
            let spillable = self.top.is_none();
            match self
                .collector
                .pull_up_to(input.as_mut(), &self.ctx, full, spillable)?
            {
                // The turn ended while the input was pulled in.
                Pulled::Paused => return paused(),
                Pulled::Full => {
                    self.keep_best()?;
                    if self.ctx.should_yield() {
                        return paused();
                    }
                }
                Pulled::TooLarge => self.spill_collected()?,
                Pulled::Ended => {
                    self.input = None;
                    if self.spilled.is_some() {
                        self.spill_collected()?;
                    } else {
                        let rows = self.collector.take();
                        self.sorter = Some(Box::new(self.sorter_of(rows)?));
                    }
                }
            }
        }
        if self.spilled.is_some() {
            if !self.write_spilled_run()? {
                return paused();
            }
            let keys = &self.keys;
            let keys_of = |key: usize, row: &[Id]| keys[key].0.evaluate(row);
            let runs = self.spilled.as_mut().expect("checked above");
            self.ctx.check()?;
            return runs.next_batch(&keys_of);
        }
        let Some(sorter) = self.sorter.as_mut() else {
            return Err(bad_state("sort without rows"));
        };
        if !sorter.sorted() {
            let keys_of = |key: usize, row: &[Id]| self.keys[key].0.evaluate(row);
            // A step at a time, so that a large sort pauses at the end of
            // the turn like everything else.
            while !sorter.sorted() {
                sorter.step(&keys_of)?;
                self.ctx.check()?;
                if !sorter.sorted() && self.ctx.should_yield() {
                    return paused();
                }
            }
        }
        Ok(sorter.next_batch(width))
    }
}

impl OrderBy {
    /// Hands the rows collected so far to the sort on disk, as its next
    /// run (they did not fit in memory, or the input ended after others
    /// did not).
    fn spill_collected(&mut self) -> Result<(), EngineError> {
        if self.spilled.is_none() {
            let ascending = self.keys.iter().map(|(_, a)| *a).collect();
            self.spilled = Some(Box::new(ExternalSort::new(
                &self.ctx,
                self.variables.len(),
                ascending,
            )?));
        }
        let rows = self.collector.take();
        let sorter = self.sorter_of(rows)?;
        self.spilled
            .as_mut()
            .expect("created above")
            .add_run(sorter);
        Ok(())
    }

    /// Sorts and writes the run being spilled, if any: false when the turn
    /// ended first. The rows of the run are counted as the collector's
    /// until they are written.
    fn write_spilled_run(&mut self) -> Result<bool, EngineError> {
        let Some(runs) = self.spilled.as_mut().filter(|r| r.writing()) else {
            return Ok(true);
        };
        let keys = &self.keys;
        let keys_of = |key: usize, row: &[Id]| keys[key].0.evaluate(row);
        if !runs.write_run(&self.ctx, &keys_of)? {
            return Ok(false);
        }
        self.collector.charge(&self.ctx, 0)?;
        Ok(true)
    }
}

impl OrderBy {
    /// A sorter of `rows`, handing out the first `top` rows if only those
    /// will be read.
    fn sorter_of(&self, rows: Vec<Vec<Id>>) -> Result<SortSteps, EngineError> {
        let first_literal = self.ctx.index.first_literal()?;
        let kind_of = |id: Id| self.ctx.index.term_kind(id);
        let by_id: Vec<Option<usize>> = self
            .keys
            .iter()
            .map(|(k, _)| {
                k.plain_column()
                    .filter(|&c| ids_in_term_order(&rows, c, first_literal, &kind_of))
            })
            .collect();
        let ascending: Vec<bool> = self.keys.iter().map(|(_, a)| *a).collect();
        let mut sorter = SortSteps::new(rows, &ascending, &by_id);
        if let Some(top) = self.top {
            sorter.keep_first(top);
        }
        Ok(sorter)
    }

    /// Keeps only the best `top` rows collected so far: the first `top`
    /// rows of the whole result are among them and the rows still to come.
    /// (Ties stay in input order: the kept rows come before the rest.)
    fn keep_best(&mut self) -> Result<(), EngineError> {
        let rows = self.collector.take();
        let mut sorter = self.sorter_of(rows)?;
        let keys_of = |key: usize, row: &[Id]| self.keys[key].0.evaluate(row);
        while !sorter.sorted() {
            sorter.step(&keys_of)?;
        }
        let mut best = Vec::new();
        while let Some(batch) = sorter.next_batch(self.variables.len()) {
            best.extend((0..batch.len).map(|i| batch.row(i)));
        }
        self.collector.replace(best);
        Ok(())
    }
}

/// Whether sorting `column` by ID sorts it in SPARQL's order: the values
/// are unbound, blank nodes or IRIs (IDs order them in that order, and IRIs
/// by their text since the vocabulary is sorted), possibly with literals of
/// the vocabulary all of one kind that compares by lexical form (simple
/// strings, language strings, or literals of non-XML-Schema datatypes: see
/// `tern_index::vocab::TermKind`); or unbound and inline values of one
/// numeric type (stored in value order). Other literals of the vocabulary
/// do not qualify: `"10"^^xsd:float` sorts before `"9"` there.
fn ids_in_term_order(
    rows: &[Vec<Id>],
    column: usize,
    first_literal: Id,
    kind_of: &dyn Fn(Id) -> Option<TermKind>,
) -> bool {
    let resource = |id: Id| {
        matches!(id.tag(), Tag::Undefined | Tag::BlankNode)
            || (id.tag() == Tag::Vocab && id < first_literal)
    };
    let numbers = |tag: Tag| move |id: Id| id == Id::UNDEFINED || id.tag() == tag;
    let all = |accept: &dyn Fn(Id) -> bool| rows.iter().all(|row| accept(row[column]));
    if all(&numbers(Tag::Integer)) || all(&numbers(Tag::Decimal)) {
        return true;
    }
    // Resources, and literals all of the first literal's kind if that is
    // one that sorts by key.
    let first = rows.iter().map(|row| row[column]).find(|&id| !resource(id));
    let Some(first) = first else {
        return true;
    };
    // (Only vocabulary terms have a kind.)
    let kind = kind_of(first);
    let sorts_by_key = matches!(
        kind,
        Some(TermKind::SimpleLiteral | TermKind::LanguageLiteral | TermKind::OtherLiteral)
    );
    sorts_by_key && all(&|id: Id| resource(id) || kind_of(id) == kind)
}
