//! The schema of one snapshot, compiled for query-time inference: the
//! closures of the class and property hierarchies (cycles and equivalences
//! included), where each property's triples can come from (its
//! subproperties, inverses, symmetric and transitive closures, `hasValue`
//! restrictions), domains and ranges, class definitions, and the classes
//! of `owl:sameAs`.
//!
//! Read with index scans of the schema's predicates (all graphs, or one
//! schema graph), so compiling costs milliseconds for schemas of thousands
//! of axioms however large the instance data; cached per snapshot name
//! (which changes with every write) in a [`SchemaCache`].

use super::vocabulary as v;
use super::Inference;
use crate::context::SynonymTable;
use crate::EngineError;
use oxrdf::{NamedNode, NamedNodeRef, Term};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tern_index::{Id, Permutation, ScanRange, Snapshot};

/// Which way a stored triple `(x Q y)` gives a triple of another property:
/// `Forward` gives `(x P y)`, `Backward` gives `(y P x)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    Forward,
    Backward,
}

impl Direction {
    fn flip(self) -> Direction {
        match self {
            Direction::Forward => Direction::Backward,
            Direction::Backward => Direction::Forward,
        }
    }
}

/// Where the triples of one property come from.
#[derive(Debug, Clone, Default)]
pub struct PropertySources {
    /// Stored triples of these properties, each read in a direction (the
    /// property itself, forward, is always first).
    pub stored: Vec<(NamedNode, Direction)>,
    /// Transitive closures (OWL RL `prp-trp`): the closure of the stored
    /// triples of these sources, read in a direction.
    pub closures: Vec<(Vec<(NamedNode, Direction)>, Direction)>,
    /// `hasValue` restrictions (`cls-hv1`): an instance of the class gets
    /// the value, in a direction.
    pub has_values: Vec<(Term, Term, Direction)>,
}

impl PropertySources {
    /// Whether the property has triples other than its own stored ones.
    pub fn derives(&self) -> bool {
        self.stored.len() > 1 || !self.closures.is_empty() || !self.has_values.is_empty()
    }
}

/// An OWL restriction class.
#[derive(Debug, Clone)]
pub enum Restriction {
    /// `∃p.D`: a subject with a `p` value of class D (`owl:Thing`: any).
    SomeValuesFrom(NamedNode, Term),
    /// `∃p.{v}`: a subject with `p` value v.
    HasValue(NamedNode, Term),
}

/// A compiled schema (see the module comment).
#[derive(Debug, Default)]
pub struct Schema {
    pub regime: Inference,
    /// Each class of the hierarchy: its subclasses, itself first.
    pub sub_classes: FxHashMap<Term, Vec<Term>>,
    /// `(sub, super)` for every class pair of the reflexive and transitive
    /// hierarchy (answers to patterns on `rdfs:subClassOf`).
    pub class_pairs: Vec<(Term, Term)>,
    /// `(sub, super)` of the property hierarchy, likewise.
    pub property_pairs: Vec<(Term, Term)>,
    /// Properties with triples besides their stored ones.
    pub properties: FxHashMap<NamedNode, PropertySources>,
    /// `rdfs:domain` and `rdfs:range` axioms: (property, class).
    pub domains: Vec<(NamedNode, Term)>,
    pub ranges: Vec<(NamedNode, Term)>,
    /// `owl:intersectionOf` classes and their parts.
    pub intersections: FxHashMap<Term, Vec<Term>>,
    pub restrictions: FxHashMap<Term, Restriction>,
    /// Each member of an `owl:sameAs` class: all members, the canonical one
    /// first.
    pub synonyms: FxHashMap<Term, Arc<[Term]>>,
    /// Named classes whose instances are not only those stored.
    pub derived_classes: Vec<NamedNode>,
    /// All such classes, named or not.
    deriving_classes: FxHashSet<Term>,
    /// The sameAs classes as IDs, canonical member first (the same order
    /// as `synonyms`).
    pub synonym_ids: Arc<SynonymTable>,
}

impl Schema {
    /// The subclasses of `class`, itself included.
    pub fn sub_classes_of<'a>(&'a self, class: &'a Term) -> &'a [Term] {
        self.sub_classes
            .get(class)
            .map_or(std::slice::from_ref(class), Vec::as_slice)
    }

    /// The parts of an intersection that its restrictions imply: a
    /// subject of a `p` triple is an instance of the domain of `p` and of
    /// its super-properties (rdfs7, rdfs2) and of their superclasses
    /// (rdfs9), so with `∃p.D` among the parts, such a class needs no
    /// join of its own (`Chair ≡ Person ⊓ ∃headOf.Department` with
    /// `headOf ⊑ worksFor ⊑ memberOf`, `memberOf` of domain `Person`: the
    /// heads of departments, no Person check). Restrictions themselves are
    /// never left out.
    pub fn implied_parts<'a>(&'a self, parts: &'a [Term]) -> FxHashSet<&'a Term> {
        let mut implied = FxHashSet::default();
        for part in parts {
            let property = match self.restrictions.get(part) {
                Some(Restriction::SomeValuesFrom(p, _) | Restriction::HasValue(p, _)) => p,
                None => continue,
            };
            let as_term = Term::NamedNode(property.clone());
            let supers = self
                .property_pairs
                .iter()
                .filter(|(sub, _)| *sub == as_term)
                .map(|(_, sup)| sup)
                .chain(std::iter::once(&as_term));
            let domains: Vec<&Term> = supers
                .flat_map(|sup| {
                    self.domains
                        .iter()
                        .filter(move |(p, _)| matches!(sup, Term::NamedNode(n) if n == p))
                        .map(|(_, d)| d)
                })
                .collect();
            for domain in domains {
                implied.insert(domain);
                implied.extend(
                    self.class_pairs
                        .iter()
                        .filter(|(sub, _)| sub == domain)
                        .map(|(_, sup)| sup),
                );
            }
        }
        implied.retain(|c| parts.contains(c) && !self.restrictions.contains_key(*c));
        implied
    }

    /// Where `property`'s triples come from.
    pub fn sources_of(&self, property: &NamedNode) -> Cow<'_, PropertySources> {
        match self.properties.get(property) {
            Some(sources) => Cow::Borrowed(sources),
            None => Cow::Owned(PropertySources {
                stored: vec![(property.clone(), Direction::Forward)],
                ..PropertySources::default()
            }),
        }
    }

    /// Whether patterns on `class` have answers besides the stored ones
    /// (decided once, when the schema is compiled).
    pub fn derives_class(&self, class: &Term) -> bool {
        self.deriving_classes.contains(class)
    }

    /// What [`derives_class`](Self::derives_class) answers, worked out.
    fn works_out_derived(&self, class: &Term) -> bool {
        self.sub_classes_of(class).iter().any(|c| {
            c != class
                || self.domains.iter().any(|(_, d)| d == c)
                || self.ranges.iter().any(|(_, r)| r == c)
                || self.intersections.contains_key(c)
                || self.restrictions.contains_key(c)
        })
    }

    /// The synonyms of a term (itself alone when it has none).
    pub fn synonyms_of(&self, term: &Term) -> Arc<[Term]> {
        self.synonyms
            .get(term)
            .cloned()
            .unwrap_or_else(|| Arc::from(vec![term.clone()]))
    }

    /// Compiles the schema of `snapshot` under `regime`, read from
    /// `schema_graph` only when given (else from every graph).
    pub fn compile(
        snapshot: &Snapshot,
        regime: Inference,
        schema_graph: Option<&NamedNode>,
    ) -> Result<Schema, EngineError> {
        let graph = match schema_graph {
            Some(g) => match snapshot.id_of(g.as_ref().into())? {
                Some(id) => Some(id),
                None => {
                    return Ok(Schema {
                        regime,
                        ..Schema::default()
                    })
                }
            },
            None => None,
        };
        let reader = Reader { snapshot, graph };
        let owl = regime == Inference::OwlRl;
        let mut ids = Decoder::default();

        // The class hierarchy: edges sub → super.
        let mut class_edges = reader.pairs(v::SUB_CLASS_OF)?;
        let mut property_edges = reader.pairs(v::SUB_PROPERTY_OF)?;
        let mut intersections = FxHashMap::default();
        let mut restrictions = Vec::new();
        let mut inverses = Vec::new();
        let mut symmetric = Vec::new();
        let mut transitive = FxHashSet::default();
        let mut same_as = Vec::new();
        if owl {
            for (a, b) in reader.pairs(v::EQUIVALENT_CLASS)? {
                class_edges.extend([(a, b), (b, a)]);
            }
            for (a, b) in reader.pairs(v::EQUIVALENT_PROPERTY)? {
                property_edges.extend([(a, b), (b, a)]);
            }
            for (class, list) in reader.pairs(v::INTERSECTION_OF)? {
                let parts = reader.list(list)?;
                // cls-int2: an instance of the intersection is one of each part.
                class_edges.extend(parts.iter().map(|&p| (class, p)));
                intersections.insert(class, parts);
            }
            let on_property: FxHashMap<Id, Id> =
                reader.pairs(v::ON_PROPERTY)?.into_iter().collect();
            for (filler_kind, predicate) in [(0, v::SOME_VALUES_FROM), (1, v::HAS_VALUE)] {
                for (class, filler) in reader.pairs(predicate)? {
                    if let Some(&property) = on_property.get(&class) {
                        restrictions.push((class, property, filler_kind, filler));
                    }
                }
            }
            inverses = reader.pairs(v::INVERSE_OF)?;
            symmetric = reader.subjects_of_type(v::SYMMETRIC_PROPERTY)?;
            transitive = reader
                .subjects_of_type(v::TRANSITIVE_PROPERTY)?
                .into_iter()
                .collect();
            same_as = reader.pairs(v::SAME_AS)?;
        }
        let domains = reader.pairs(v::DOMAIN)?;
        let ranges = reader.pairs(v::RANGE)?;

        // Reflexive and transitive closures of both hierarchies.
        let class_supers = closure(&class_edges);
        let property_supers = closure(&property_edges);
        let mut sub_classes: FxHashMap<Id, Vec<Id>> = FxHashMap::default();
        let mut class_pairs = Vec::new();
        for (&class, supers) in &class_supers {
            for &sup in supers {
                sub_classes.entry(sup).or_default().push(class);
                class_pairs.push((class, sup));
            }
        }
        let mut property_pairs = Vec::new();
        for (&property, supers) in &property_supers {
            for &sup in supers {
                property_pairs.push((property, sup));
            }
        }
        // rdfs6: every predicate of the data is a property, a
        // subproperty of itself (those of the last build: the statistics').
        for stats in &snapshot.stats().predicates {
            let p = Id(stats.predicate);
            if !property_supers.contains_key(&p) {
                property_pairs.push((p, p));
            }
        }

        // Where each property's triples come from: (property, direction)
        // nodes, an edge from each node whose triples give the other's.
        let mut feeds: FxHashMap<(Id, Direction), Vec<(Id, Direction)>> = FxHashMap::default();
        let mut edge = |from: (Id, Direction), to: (Id, Direction)| {
            feeds.entry(to).or_default().push(from);
        };
        for &(sub, sup) in &property_edges {
            for d in [Direction::Forward, Direction::Backward] {
                edge((sub, d), (sup, d));
            }
        }
        for &(a, b) in &inverses {
            for d in [Direction::Forward, Direction::Backward] {
                edge((a, d), (b, d.flip()));
                edge((b, d), (a, d.flip()));
            }
        }
        for &p in &symmetric {
            for d in [Direction::Forward, Direction::Backward] {
                edge((p, d), (p, d.flip()));
            }
        }
        let mut properties_with_sources: FxHashSet<Id> = feeds.keys().map(|(p, _)| *p).collect();
        properties_with_sources.extend(transitive.iter().copied());
        // hasValue restrictions feed their property (cls-hv1).
        let has_value: Vec<(Id, Id, Id)> = restrictions
            .iter()
            .filter(|r| r.2 == 1)
            .map(|&(class, property, _, value)| (class, property, value))
            .collect();
        properties_with_sources.extend(has_value.iter().map(|r| r.1));

        let reached = |target: (Id, Direction)| -> Vec<(Id, Direction)> {
            let mut seen = FxHashSet::default();
            let mut queue = VecDeque::from([target]);
            seen.insert(target);
            while let Some(node) = queue.pop_front() {
                for &from in feeds.get(&node).into_iter().flatten() {
                    if seen.insert(from) {
                        queue.push_back(from);
                    }
                }
            }
            let mut nodes: Vec<_> = seen.into_iter().collect();
            nodes.sort();
            // The property itself, forward, first.
            nodes.sort_by_key(|n| *n != target);
            nodes
        };
        let mut raw_properties = Vec::new();
        for &property in &properties_with_sources {
            let sources = reached((property, Direction::Forward));
            let closures: Vec<(Id, Direction)> = sources
                .iter()
                .filter(|(p, _)| transitive.contains(p))
                .copied()
                .collect();
            let closures: Vec<(Vec<(Id, Direction)>, Direction)> = closures
                .into_iter()
                .map(|(t, d)| (reached((t, Direction::Forward)), d))
                .collect();
            let values: Vec<(Id, Id, Direction)> = has_value
                .iter()
                .flat_map(|&(class, p, value)| {
                    sources
                        .iter()
                        .filter(move |(s, _)| *s == p)
                        .map(move |&(_, d)| (class, value, d))
                })
                .collect();
            raw_properties.push((property, sources, closures, values));
        }

        // sameAs classes: connected components.
        let mut same_as_classes: Vec<Vec<Id>> = Vec::new();
        {
            let mut neighbours: FxHashMap<Id, Vec<Id>> = FxHashMap::default();
            for &(a, b) in &same_as {
                neighbours.entry(a).or_default().push(b);
                neighbours.entry(b).or_default().push(a);
            }
            let mut seen = FxHashSet::default();
            let mut starts: Vec<Id> = neighbours.keys().copied().collect();
            starts.sort();
            for start in starts {
                if !seen.insert(start) {
                    continue;
                }
                let mut members = vec![start];
                let mut i = 0;
                while i < members.len() {
                    for &n in &neighbours[&members[i]] {
                        if seen.insert(n) {
                            members.push(n);
                        }
                    }
                    i += 1;
                }
                if members.len() > 1 {
                    same_as_classes.push(members);
                }
            }
        }

        // Decode every ID the schema keeps, in one pass.
        for &(a, b) in class_pairs.iter().chain(&property_pairs) {
            ids.add(a);
            ids.add(b);
        }
        for &(a, b) in domains.iter().chain(&ranges) {
            ids.add(a);
            ids.add(b);
        }
        for (class, parts) in &intersections {
            ids.add(*class);
            parts.iter().for_each(|&p| ids.add(p));
        }
        for &(class, property, _, filler) in &restrictions {
            [class, property, filler]
                .into_iter()
                .for_each(|i| ids.add(i));
        }
        for (property, sources, closures, values) in &raw_properties {
            ids.add(*property);
            sources.iter().for_each(|(p, _)| ids.add(*p));
            closures
                .iter()
                .flat_map(|(c, _)| c)
                .for_each(|(p, _)| ids.add(*p));
            values.iter().for_each(|&(c, v, _)| {
                ids.add(c);
                ids.add(v);
            });
        }
        same_as_classes.iter().flatten().for_each(|&m| ids.add(m));
        let terms = ids.decode(snapshot)?;
        let term = |id: &Id| terms.get(id).cloned();
        let named = |id: &Id| match terms.get(id) {
            Some(Term::NamedNode(n)) => Some(n.clone()),
            _ => None,
        };
        let named_sources = |sources: &[(Id, Direction)]| -> Vec<(NamedNode, Direction)> {
            sources
                .iter()
                .filter_map(|(p, d)| Some((named(p)?, *d)))
                .collect()
        };

        let mut schema = Schema {
            regime,
            ..Schema::default()
        };
        for (class, subs) in &sub_classes {
            let Some(class_term) = term(class) else {
                continue;
            };
            let mut members: Vec<Term> = subs.iter().filter_map(term).collect();
            members.sort_by_key(|t| *t != class_term);
            schema.sub_classes.insert(class_term, members);
        }
        schema.class_pairs = class_pairs
            .iter()
            .filter_map(|(a, b)| Some((term(a)?, term(b)?)))
            .collect();
        schema.property_pairs = property_pairs
            .iter()
            .filter_map(|(a, b)| Some((term(a)?, term(b)?)))
            .collect();
        for (property, sources, closures, values) in &raw_properties {
            let Some(property) = named(property) else {
                continue;
            };
            let sources = PropertySources {
                stored: named_sources(sources),
                closures: closures
                    .iter()
                    .map(|(c, d)| (named_sources(c), *d))
                    .collect(),
                has_values: values
                    .iter()
                    .filter_map(|(c, v, d)| Some((term(c)?, term(v)?, *d)))
                    .collect(),
            };
            if sources.derives() {
                schema.properties.insert(property, sources);
            }
        }
        let axioms = |pairs: &[(Id, Id)]| -> Vec<(NamedNode, Term)> {
            pairs
                .iter()
                .filter_map(|(p, c)| Some((named(p)?, term(c)?)))
                .collect()
        };
        schema.domains = axioms(&domains);
        schema.ranges = axioms(&ranges);
        for (class, parts) in &intersections {
            let (Some(class), Some(parts)) = (term(class), parts.iter().map(term).collect()) else {
                continue;
            };
            schema.intersections.insert(class, parts);
        }
        for (class, property, kind, filler) in &restrictions {
            let (Some(class), Some(property), Some(filler)) =
                (term(class), named(property), term(filler))
            else {
                continue;
            };
            let restriction = match kind {
                0 => Restriction::SomeValuesFrom(property, filler),
                _ => Restriction::HasValue(property, filler),
            };
            schema.restrictions.insert(class, restriction);
        }
        let mut id_classes = Vec::new();
        for members in &same_as_classes {
            let mut members: Vec<(Id, Term)> = members
                .iter()
                .filter_map(|id| Some((*id, term(id)?)))
                .collect();
            members.sort_by_key(|(_, t)| t.to_string());
            id_classes.push(members.iter().map(|(id, _)| *id).collect());
            let members: Arc<[Term]> = members.into_iter().map(|(_, t)| t).collect();
            for m in members.iter() {
                schema.synonyms.insert(m.clone(), members.clone());
            }
        }
        schema.synonym_ids = Arc::new(SynonymTable::new(id_classes));
        let candidates: FxHashSet<Term> = schema
            .sub_classes
            .keys()
            .chain(schema.domains.iter().map(|(_, c)| c))
            .chain(schema.ranges.iter().map(|(_, c)| c))
            .chain(schema.intersections.keys())
            .chain(schema.restrictions.keys())
            .cloned()
            .collect();
        schema.deriving_classes = candidates
            .into_iter()
            .filter(|c| schema.works_out_derived(c))
            .collect();
        let mut derived: Vec<NamedNode> = schema
            .deriving_classes
            .iter()
            .filter_map(|c| match c {
                Term::NamedNode(n) => Some(n.clone()),
                _ => None,
            })
            .collect();
        derived.sort();
        schema.derived_classes = derived;
        Ok(schema)
    }
}

/// Reads the schema's triples from one snapshot.
struct Reader<'a> {
    snapshot: &'a Snapshot,
    /// Only this graph's triples, when set.
    graph: Option<Id>,
}

impl Reader<'_> {
    /// The distinct (subject, object) pairs of a predicate.
    fn pairs(&self, predicate: NamedNodeRef<'_>) -> Result<Vec<(Id, Id)>, EngineError> {
        let Some(p) = self.snapshot.id_of(predicate.into())? else {
            return Ok(Vec::new());
        };
        let mut pairs = Vec::new();
        for batch in self.snapshot.scan(Permutation::Pso, &[p], ScanRange::ALL) {
            let batch = batch?;
            for i in 0..batch.len() {
                if self.graph.is_some_and(|g| g != batch.columns[3][i]) {
                    continue;
                }
                pairs.push((batch.columns[1][i], batch.columns[2][i]));
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        Ok(pairs)
    }

    /// The subjects typed with `class`.
    fn subjects_of_type(&self, class: NamedNodeRef<'_>) -> Result<Vec<Id>, EngineError> {
        let (Some(p), Some(c)) = (
            self.snapshot.id_of(v::TYPE.into())?,
            self.snapshot.id_of(class.into())?,
        ) else {
            return Ok(Vec::new());
        };
        let mut subjects = Vec::new();
        for batch in self
            .snapshot
            .scan(Permutation::Pos, &[p, c], ScanRange::ALL)
        {
            let batch = batch?;
            for i in 0..batch.len() {
                if self.graph.is_none_or(|g| g == batch.columns[3][i]) {
                    subjects.push(batch.columns[2][i]);
                }
            }
        }
        subjects.sort_unstable();
        subjects.dedup();
        Ok(subjects)
    }

    /// The first object of `(subject predicate ?o)`.
    fn object(&self, subject: Id, predicate: Id) -> Result<Option<Id>, EngineError> {
        for batch in self
            .snapshot
            .scan(Permutation::Spo, &[subject, predicate], ScanRange::ALL)
        {
            let batch = batch?;
            for i in 0..batch.len() {
                if self.graph.is_none_or(|g| g == batch.columns[3][i]) {
                    return Ok(Some(batch.columns[2][i]));
                }
            }
        }
        Ok(None)
    }

    /// The members of an RDF list (cut at a cycle or a broken link).
    fn list(&self, head: Id) -> Result<Vec<Id>, EngineError> {
        let (Some(first), Some(rest)) = (
            self.snapshot.id_of(v::FIRST.into())?,
            self.snapshot.id_of(v::REST.into())?,
        ) else {
            return Ok(Vec::new());
        };
        let mut members = Vec::new();
        let mut seen = FxHashSet::default();
        let mut node = head;
        while seen.insert(node) {
            let Some(member) = self.object(node, first)? else {
                break;
            };
            members.push(member);
            match self.object(node, rest)? {
                Some(next) => node = next,
                None => break,
            }
        }
        Ok(members)
    }
}

/// Each node's reachable nodes (itself included) over `edges`.
fn closure(edges: &[(Id, Id)]) -> FxHashMap<Id, Vec<Id>> {
    let mut next: FxHashMap<Id, Vec<Id>> = FxHashMap::default();
    for &(a, b) in edges {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    let mut reach = FxHashMap::default();
    for &start in next.keys() {
        let mut seen = FxHashSet::default();
        seen.insert(start);
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for &n in &next[&node] {
                if seen.insert(n) {
                    stack.push(n);
                }
            }
        }
        let mut nodes: Vec<Id> = seen.into_iter().collect();
        nodes.sort_unstable();
        reach.insert(start, nodes);
    }
    reach
}

/// Collects IDs, then decodes them all at once.
#[derive(Default)]
struct Decoder {
    ids: FxHashSet<Id>,
}

impl Decoder {
    fn add(&mut self, id: Id) {
        self.ids.insert(id);
    }

    fn decode(self, snapshot: &Snapshot) -> Result<FxHashMap<Id, Term>, EngineError> {
        let ids: Vec<Id> = self.ids.into_iter().collect();
        let terms = snapshot.terms_of(&ids)?;
        Ok(ids
            .into_iter()
            .zip(terms)
            .filter_map(|(id, t)| Some((id, t?)))
            .collect())
    }
}

/// Compiled schemas of recent snapshots, by snapshot name, regime and
/// schema graph.
#[derive(Default)]
pub struct SchemaCache {
    entries: Mutex<Vec<(SchemaKey, Arc<Schema>)>>,
}

type SchemaKey = (String, Inference, Option<NamedNode>);

/// Schemas kept (a server reads one snapshot at a time, a few while
/// writes land).
const CACHED_SCHEMAS: usize = 4;

impl SchemaCache {
    pub fn get(
        &self,
        snapshot: &Snapshot,
        regime: Inference,
        schema_graph: Option<&NamedNode>,
    ) -> Result<Arc<Schema>, EngineError> {
        let key = (snapshot.name(), regime, schema_graph.cloned());
        if let Some((_, schema)) = self.lock().iter().find(|(k, _)| *k == key) {
            return Ok(schema.clone());
        }
        let schema = Arc::new(Schema::compile(snapshot, regime, schema_graph)?);
        let mut entries = self.lock();
        entries.retain(|(k, _)| *k != key);
        entries.insert(0, (key, schema.clone()));
        entries.truncate(CACHED_SCHEMAS);
        Ok(schema)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(SchemaKey, Arc<Schema>)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}
