//! `tern._native`: the engine in a Python process. It opens an index, runs
//! a query and hands out its rows a page at a time as plain tuples; the
//! Python side (`python/tern/__init__.py`) turns them into the HTTP
//! client's terms and result iterators, so both ways of using Tern give
//! the same objects. The GIL is released while the engine works.

mod serve;

use oxrdf::Term;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};
use std::path::PathBuf;
use std::sync::Arc;
use tern_engine::{Engine, EngineOptions, QueryOutcome, SolutionStream, TripleStream};
use tern_export::SolutionsFormat;
use tern_index::builder::{self, Input, LoadOptions};
use tern_index::{Store, StoreOptions};

/// An index opened for queries (read-only: a running server may write it).
#[pyclass(frozen)]
struct Index {
    engine: Arc<Engine>,
}

#[pymethods]
impl Index {
    /// Opens the index in `path`; `writable` also opens its log for
    /// updates (one writer per index: a server writing it must not run).
    #[new]
    #[pyo3(signature = (path, writable=false))]
    fn open(py: Python<'_>, path: PathBuf, writable: bool) -> PyResult<Index> {
        let store = py
            .detach(|| Store::open(&path, writable, StoreOptions::default()))
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Ok(Index {
            engine: Arc::new(Engine::new(store, EngineOptions::default())),
        })
    }

    /// Applies a SPARQL update in one durable transaction (all of it or,
    /// on an error, nothing); returns (operations, inserted, deleted).
    fn update(&self, py: Python<'_>, sparql: &str) -> PyResult<(usize, usize, usize)> {
        let engine = self.engine.clone();
        py.detach(|| engine.update(sparql, &tern_engine::UpdateRequest::default()))
            .map(|report| (report.operations, report.inserted, report.deleted))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Serves this index over HTTP as `tern serve` does (SPARQL endpoint,
    /// workbench, paging) from threads of this process; see `serve.rs`.
    #[pyo3(signature = (host="127.0.0.1", port=7070, workers=None, timeout=None, update_token=None))]
    fn serve(
        &self,
        py: Python<'_>,
        host: &str,
        port: u16,
        workers: Option<usize>,
        timeout: Option<f64>,
        update_token: Option<String>,
    ) -> PyResult<serve::Server> {
        let options = serve::ServeOptions {
            host: host.to_owned(),
            port,
            workers,
            timeout,
            update_token,
        };
        serve::Server::start(py, (*self.engine).clone(), options)
    }

    /// Starts a query and reads its first `n` items in the same call
    /// (one crossing into the engine for a small result): returns the
    /// running query, its form ("select", "graph" or "ask"), the SELECT's
    /// variable names or the ASK's answer, and the first page (rows as
    /// dicts, triples; see `next_dicts`, `next_triples`).
    fn start<'py>(
        &self,
        py: Python<'py>,
        sparql: &str,
        n: usize,
        classes: &TermClasses,
    ) -> PyResult<(Query, &'static str, Bound<'py, PyAny>, Bound<'py, PyList>)> {
        let engine = self.engine.clone();
        let (outcome, first) = py
            .detach(|| -> Result<_, String> {
                let outcome = engine.query(sparql, None).map_err(|e| e.to_string())?;
                let mut state = match outcome {
                    QueryOutcome::Solutions { variables, rows } => State::Solutions {
                        variables: variables.iter().map(|v| v.as_str().to_owned()).collect(),
                        rows,
                    },
                    QueryOutcome::Boolean(value) => State::Boolean(value),
                    QueryOutcome::Graph(triples) => State::Graph(triples),
                };
                let first = state.take(n)?;
                Ok((state, first))
            })
            .map_err(PyValueError::new_err)?;
        let (form, info) = match &outcome {
            State::Solutions { variables, .. } => {
                ("select", PyList::new(py, variables)?.into_any())
            }
            State::Graph(_) => ("graph", py.None().into_bound(py)),
            State::Boolean(value) => (
                "ask",
                pyo3::types::PyBool::new(py, *value).to_owned().into_any(),
            ),
        };
        let page = first.into_python(py, &outcome, classes)?;
        Ok((
            Query {
                state: std::sync::Mutex::new(outcome),
            },
            form,
            info,
            page,
        ))
    }

    /// The whole result of a SELECT as an Arrow IPC stream (one UTF-8
    /// column per variable, terms in N-Triples syntax, as the server's
    /// Arrow format), for `pyarrow.ipc.open_stream`.
    fn arrow_ipc<'py>(&self, py: Python<'py>, sparql: &str) -> PyResult<Bound<'py, PyBytes>> {
        let engine = self.engine.clone();
        let bytes = py.detach(|| -> Result<Vec<u8>, String> {
            match engine.query(sparql, None).map_err(|e| e.to_string())? {
                QueryOutcome::Solutions { variables, rows } => {
                    let mut out = Vec::new();
                    tern_export::write_solutions(
                        &mut out,
                        SolutionsFormat::Arrow,
                        &variables,
                        rows,
                    )
                    .map_err(|e| e.to_string())?;
                    Ok(out)
                }
                _ => Err("Arrow tables are for SELECT queries".to_owned()),
            }
        });
        bytes
            .map(|b| PyBytes::new(py, &b))
            .map_err(PyValueError::new_err)
    }
}

enum State {
    Solutions {
        variables: Vec<String>,
        rows: SolutionStream,
    },
    Boolean(bool),
    Graph(TripleStream),
}

/// A running query.
#[pyclass(frozen)]
struct Query {
    state: std::sync::Mutex<State>,
}

#[pymethods]
impl Query {
    /// Up to `n` more items: SELECT rows as dicts from every variable name
    /// to a term made with `classes` (None when unbound, as the client's
    /// rows are), CONSTRUCT/DESCRIBE triples as `classes`' triple type.
    /// Fewer than `n`: the end.
    fn next_page<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        classes: &TermClasses,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.state.lock().unwrap();
        let state: &mut State = &mut guard;
        let taken = py.detach(|| state.take(n)).map_err(PyValueError::new_err)?;
        taken.into_python(py, state, classes)
    }
}

impl State {
    /// The next `n` items, as the engine gives them.
    fn take(&mut self, n: usize) -> Result<Taken, String> {
        match self {
            State::Solutions { rows, .. } => rows
                .by_ref()
                .take(n)
                .collect::<Result<Vec<_>, _>>()
                .map(Taken::Rows)
                .map_err(|e| e.to_string()),
            State::Graph(triples) => triples
                .by_ref()
                .take(n)
                .collect::<Result<Vec<_>, _>>()
                .map(Taken::Triples)
                .map_err(|e| e.to_string()),
            State::Boolean(_) => Ok(Taken::Rows(Vec::new())),
        }
    }
}

/// Items taken from the engine, before they become Python objects.
enum Taken {
    Rows(Vec<Vec<Option<Term>>>),
    Triples(Vec<oxrdf::Triple>),
}

impl Taken {
    /// The items as Python objects. Equal terms within one page share one
    /// object (terms are immutable): results repeat values down their
    /// columns, and making a term object costs more than finding it again.
    fn into_python<'py>(
        self,
        py: Python<'py>,
        state: &State,
        classes: &TermClasses,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut made = MadeTerms::new(classes);
        let list = PyList::empty(py);
        match self {
            Taken::Rows(rows) => {
                let State::Solutions { variables, .. } = state else {
                    return Ok(list);
                };
                let names: Vec<Bound<'py, PyString>> =
                    variables.iter().map(|v| PyString::intern(py, v)).collect();
                for row in rows {
                    let dict = pyo3::types::PyDict::new(py);
                    for (name, cell) in names.iter().zip(row) {
                        match cell {
                            Some(t) => dict.set_item(name, made.get(py, t)?)?,
                            None => dict.set_item(name, py.None())?,
                        }
                    }
                    list.append(dict)?;
                }
            }
            Taken::Triples(triples) => {
                for t in triples {
                    let subject = made.get(py, t.subject.into())?;
                    let predicate = made.get(py, t.predicate.into())?;
                    let object = made.get(py, t.object)?;
                    list.append(classes.triple(py, [subject, predicate, object])?)?;
                }
            }
        }
        Ok(list)
    }
}

/// The client's term classes (`tern_client.terms.IRI`, `BNode`,
/// `Literal`) and its `Triple`, given once. Terms are made here without
/// running their Python `__init__`: an instance is allocated and its
/// slots (`value`, `datatype`, `lang`, as `tern_client.terms` declares
/// them) are set as that `__init__` would set them, which costs a third
/// of a constructor call per cell. `tests/server/test_embedded_python.py`
/// checks that such terms equal constructed ones.
#[pyclass(frozen)]
struct TermClasses {
    iri: Py<PyType>,
    blank: Py<PyType>,
    literal: Py<PyType>,
    triple: Py<PyType>,
    /// `tuple.__new__`: makes a `Triple` (a named tuple) without the
    /// Python-level `__new__` that namedtuple generates.
    tuple_new: Py<PyAny>,
    value: Py<PyString>,
    datatype: Py<PyString>,
    lang: Py<PyString>,
}

#[pymethods]
impl TermClasses {
    #[new]
    fn new(
        py: Python<'_>,
        iri: Py<PyType>,
        blank: Py<PyType>,
        literal: Py<PyType>,
        triple: Py<PyType>,
    ) -> PyResult<TermClasses> {
        let tuple_new = py.get_type::<PyTuple>().getattr("__new__")?.unbind();
        Ok(TermClasses {
            iri,
            blank,
            literal,
            triple,
            tuple_new,
            value: PyString::intern(py, "value").unbind(),
            datatype: PyString::intern(py, "datatype").unbind(),
            lang: PyString::intern(py, "lang").unbind(),
        })
    }
}

impl TermClasses {
    fn make<'py>(&self, py: Python<'py>, term: &Term) -> PyResult<Bound<'py, PyAny>> {
        match term {
            Term::NamedNode(n) => {
                let object = allocate(py, &self.iri)?;
                set_slot(&object, &self.value, &PyString::new(py, n.as_str()))?;
                Ok(object)
            }
            Term::BlankNode(b) => {
                let object = allocate(py, &self.blank)?;
                set_slot(&object, &self.value, &PyString::new(py, b.as_str()))?;
                Ok(object)
            }
            Term::Literal(l) => {
                let object = allocate(py, &self.literal)?;
                set_slot(&object, &self.value, &PyString::new(py, l.value()))?;
                // oxrdf gives language-tagged literals rdf:langString and
                // simple ones xsd:string, and keeps tags lower-case: what
                // the client's constructor makes of them.
                set_slot(
                    &object,
                    &self.datatype,
                    &interned(py, l.datatype().as_str()),
                )?;
                match l.language() {
                    Some(tag) => set_slot(&object, &self.lang, &PyString::new(py, tag))?,
                    None => set_slot(&object, &self.lang, &py.None().into_bound(py))?,
                }
                Ok(object)
            }
            #[allow(unreachable_patterns)]
            _ => Err(PyValueError::new_err("a quoted triple as a result term")),
        }
    }

    fn triple<'py>(
        &self,
        py: Python<'py>,
        parts: [Bound<'py, PyAny>; 3],
    ) -> PyResult<Bound<'py, PyAny>> {
        self.tuple_new
            .bind(py)
            .call1((self.triple.bind(py), PyTuple::new(py, parts)?))
    }
}

/// A new instance of `class` with its slots unset (its `__init__` not run),
/// not tracked by the cycle collector: a term holds only strings and None,
/// so it can never be part of a cycle, and then neither can a row dict
/// that holds only terms (CPython leaves such dicts untracked too). A
/// page of rows no longer makes every collection walk all its cells.
fn allocate<'py>(py: Python<'py>, class: &Py<PyType>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the GIL is held and `class` is a live type object; a null
    // result is a raised exception, which `from_owned_ptr_or_err` takes.
    // Untracking a tracked object that no other object refers to yet is
    // what `PyObject_GC_UnTrack` is for.
    unsafe {
        let raw = pyo3::ffi::PyType_GenericAlloc(class.as_ptr().cast(), 0);
        let object = Bound::from_owned_ptr_or_err(py, raw)?;
        if pyo3::ffi::PyObject_GC_IsTracked(object.as_ptr()) == 1 {
            pyo3::ffi::PyObject_GC_UnTrack(object.as_ptr().cast());
        }
        Ok(object)
    }
}

/// Sets a slot the way `object.__setattr__` does, past the class's own
/// `__setattr__` (which makes terms immutable).
fn set_slot(
    object: &Bound<'_, PyAny>,
    name: &Py<PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: the GIL is held; all three pointers are live objects.
    let status = unsafe {
        pyo3::ffi::PyObject_GenericSetAttr(object.as_ptr(), name.as_ptr(), value.as_ptr())
    };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(object.py()))
    }
}

/// A datatype IRI as an interned string: a result has few datatypes, and
/// each literal then points at one shared string.
fn interned<'py>(py: Python<'py>, datatype: &str) -> Bound<'py, PyString> {
    PyString::intern(py, datatype)
}

/// The term objects made during one call, by term: one page's worth at
/// most, so the map stays as small as the page.
struct MadeTerms<'c, 'py> {
    classes: &'c TermClasses,
    made: rustc_hash::FxHashMap<Term, Bound<'py, PyAny>>,
}

impl<'c, 'py> MadeTerms<'c, 'py> {
    fn new(classes: &'c TermClasses) -> Self {
        MadeTerms {
            classes,
            made: rustc_hash::FxHashMap::default(),
        }
    }

    fn get(&mut self, py: Python<'py>, term: Term) -> PyResult<Bound<'py, PyAny>> {
        if let Some(object) = self.made.get(&term) {
            return Ok(object.clone());
        }
        let object = self.classes.make(py, &term)?;
        self.made.insert(term, object.clone());
        Ok(object)
    }
}

/// Builds an index at `path` from files (N-Triples, N-Quads, Turtle,
/// TriG, optionally .gz/.zst); `force` replaces an index there. Returns
/// the number of triples.
#[pyfunction]
#[pyo3(signature = (path, files, force=false))]
fn load(py: Python<'_>, path: PathBuf, files: Vec<PathBuf>, force: bool) -> PyResult<u64> {
    py.detach(|| -> Result<u64, String> {
        let inputs = files
            .iter()
            .map(|f| Input::file(f, None, None).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let options = LoadOptions {
            force,
            progress: false,
            ..LoadOptions::default()
        };
        builder::build(&path, &inputs, &options)
            .map(|report| report.meta.triples)
            .map_err(|e| e.to_string())
    })
    .map_err(PyOSError::new_err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Index>()?;
    m.add_class::<Query>()?;
    m.add_class::<TermClasses>()?;
    m.add_class::<serve::Server>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    Ok(())
}
