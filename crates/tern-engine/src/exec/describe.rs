//! DESCRIBE: the concise bounded description of every resource (IRI or
//! blank node) in the input rows: its triples as subject, and those of the
//! blank nodes they reach as objects, as rows `?subject ?predicate ?object`
//! of IDs, streamed scan batch by scan batch. Each resource is described
//! once; what is remembered for that (the resources described and still to
//! describe) is IDs only and counted against the query's memory budget.

use super::construct::triple_variables;
use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::{Term, Variable};
use rustc_hash::FxHashSet;
use std::sync::Arc;
use tern_index::{Id, MergedScan, Permutation, ScanRange, Tag};

pub struct Describe {
    ctx: Arc<QueryContext>,
    input: Option<BoxedOperator>,
    variables: Vec<Variable>,
    /// Resources found and not described yet.
    todo: Vec<Id>,
    /// Resources described or being described.
    done: FxHashSet<Id>,
    /// The resource being described, its triples' scan, and how many scan
    /// rows were read (to find the place again after a suspension).
    current: Option<(Id, MergedScan, u64)>,
    memory: MemoryCharge,
}

/// What a suspended description had left, kept in the stash.
struct Pending {
    todo: Vec<Id>,
    done: FxHashSet<Id>,
    current: Option<(Id, u64)>,
    input_done: bool,
}

impl Describe {
    pub fn new(ctx: Arc<QueryContext>, input: BoxedOperator) -> Describe {
        let memory = ctx.memory_charge();
        Describe {
            ctx,
            input: Some(input),
            variables: triple_variables(),
            todo: Vec::new(),
            done: FxHashSet::default(),
            current: None,
            memory,
        }
    }

    /// Adds the IRIs and blank nodes of an input batch to the resources to
    /// describe.
    fn take_resources(&mut self, batch: &Batch) -> Result<(), EngineError> {
        // Reversed, so that the stack describes them in the rows' order.
        for row in (0..batch.len).rev() {
            for column in batch.columns.iter().rev() {
                let id = column[row];
                if self.done.contains(&id) || !self.is_resource(id)? {
                    continue;
                }
                self.todo.push(id);
            }
        }
        self.charge()
    }

    fn is_resource(&self, id: Id) -> Result<bool, EngineError> {
        Ok(match id.tag() {
            Tag::BlankNode => true,
            Tag::Vocab | Tag::DeltaVocab => !self.ctx.is_literal(id)?,
            // A term the query made: only the index's triples describe
            // anything, so one it does not hold has no description.
            Tag::LocalVocab => match self.ctx.term(id)? {
                Some(term @ (Term::NamedNode(_) | Term::BlankNode(_))) => {
                    self.ctx.index.id_of(term.as_ref())?.is_some()
                }
                _ => false,
            },
            _ => false,
        })
    }

    fn charge(&self) -> Result<(), EngineError> {
        self.memory
            .set((self.todo.len() * 8 + self.done.len() * 16) as u64)
    }

    /// The next resource not described yet, with its scan started.
    fn start_next(&mut self) -> Result<bool, EngineError> {
        while let Some(mut resource) = self.todo.pop() {
            if resource.tag() == Tag::LocalVocab {
                let term = self.ctx.term(resource)?.ok_or_else(|| bad_state("term"))?;
                match self.ctx.index.id_of(term.as_ref())? {
                    Some(id) => resource = id,
                    None => continue,
                }
            }
            if self.done.insert(resource) {
                let scan = self
                    .ctx
                    .index
                    .scan(Permutation::Spo, &[resource], ScanRange::ALL);
                self.current = Some((resource, scan, 0));
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The triples of the current resource's next scan batch; `None` when
    /// its scan is over.
    fn describe_some(&mut self) -> Result<Option<Batch>, EngineError> {
        let Some((resource, scan, read)) = &mut self.current else {
            return Ok(None);
        };
        let Some(batch) = scan.next() else {
            self.current = None;
            return Ok(None);
        };
        let batch = batch?;
        *read += batch.len() as u64;
        let resource = *resource;
        let [_, predicates, objects, _] = &batch.columns;
        let mut out = Batch::with_columns(3);
        for i in 0..batch.len() {
            // The same triple in several graphs comes in consecutive rows
            // (the graph is the last column): once is enough.
            if i > 0 && predicates[i - 1] == predicates[i] && objects[i - 1] == objects[i] {
                continue;
            }
            if objects[i].tag() == Tag::BlankNode && !self.done.contains(&objects[i]) {
                self.todo.push(objects[i]);
            }
            out.push_row(&[resource, predicates[i], objects[i]]);
        }
        self.charge()?;
        Ok(Some(out))
    }
}

impl Operator for Describe {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Describe", "concise bounded descriptions")
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.input.iter().map(|i| i.as_ref()).collect()
    }

    /// The resources left and done, and the place in the current one, are
    /// stashed; the input's state is saved as it is.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let pending = Pending {
            todo: std::mem::take(&mut self.todo),
            done: std::mem::take(&mut self.done),
            current: self.current.take().map(|(id, _, read)| (id, read)),
            input_done: self.input.is_none(),
        };
        let children = match &mut self.input {
            Some(input) => vec![input.save(stash)?],
            None => Vec::new(),
        };
        Ok(OperatorState {
            numbers: Vec::new(),
            stashed: Some(stash.put(pending)),
            children,
        })
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let pending: Pending = state.take_stashed(stash, "DESCRIBE")?;
        self.todo = pending.todo;
        self.done = pending.done;
        if pending.input_done {
            self.input = None;
        } else if let Some(input) = &mut self.input {
            input.restore(state.into_child()?, stash)?;
        }
        if let Some((resource, read)) = pending.current {
            let mut scan = self
                .ctx
                .index
                .scan(Permutation::Spo, &[resource], ScanRange::ALL);
            // Batches are cut the same way on the same index: skip the
            // batches read before.
            let mut skipped = 0;
            while skipped < read {
                match scan.next() {
                    Some(batch) => skipped += batch?.len() as u64,
                    None => break,
                }
            }
            self.current = Some((resource, scan, read));
        }
        self.charge()
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        loop {
            self.ctx.check()?;
            if let Some(out) = self.describe_some()? {
                if out.len > 0 {
                    return Ok(Some(out));
                }
                continue;
            }
            if self.start_next()? {
                continue;
            }
            let Some(input) = &mut self.input else {
                return Ok(None);
            };
            match input.next_batch()? {
                None => self.input = None,
                // The input paused for the end of the turn.
                Some(batch) if batch.len == 0 => return Ok(Some(Batch::with_columns(3))),
                Some(batch) => self.take_resources(&batch)?,
            }
        }
    }
}

impl crate::suspend::StashSize for Pending {
    fn stash_bytes(&self) -> usize {
        self.todo.capacity() * 8 + self.done.capacity() * 16
    }
}
