//! `tern._native`: the engine in a Python process. It opens an index, runs
//! a query and hands out its rows a page at a time as plain tuples; the
//! Python side (`python/tern/__init__.py`) turns them into the HTTP
//! client's terms and result iterators, so both ways of using Tern give
//! the same objects. The GIL is released while the engine works.

use oxrdf::{Term, Triple};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
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
    #[new]
    fn open(path: PathBuf) -> PyResult<Index> {
        let store = Store::open(&path, false, StoreOptions::default())
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Ok(Index {
            engine: Arc::new(Engine::new(store, EngineOptions::default())),
        })
    }

    /// Starts a query; its results are read with `Query.next_rows`.
    fn execute(&self, py: Python<'_>, sparql: &str) -> PyResult<Query> {
        let engine = self.engine.clone();
        let outcome = py
            .detach(|| engine.query(sparql, None))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Query {
            state: std::sync::Mutex::new(match outcome {
                QueryOutcome::Solutions { variables, rows } => State::Solutions {
                    variables: variables.iter().map(|v| v.as_str().to_owned()).collect(),
                    rows,
                },
                QueryOutcome::Boolean(value) => State::Boolean(value),
                QueryOutcome::Graph(triples) => State::Graph(triples),
            }),
        })
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
    /// "select", "ask" or "graph".
    #[getter]
    fn form(&self) -> &'static str {
        match &*self.state.lock().unwrap() {
            State::Solutions { .. } => "select",
            State::Boolean(_) => "ask",
            State::Graph(_) => "graph",
        }
    }

    #[getter]
    fn variables(&self) -> Vec<String> {
        match &*self.state.lock().unwrap() {
            State::Solutions { variables, .. } => variables.clone(),
            _ => Vec::new(),
        }
    }

    #[getter]
    fn boolean(&self) -> Option<bool> {
        match &*self.state.lock().unwrap() {
            State::Boolean(value) => Some(*value),
            _ => None,
        }
    }

    /// Up to `n` more SELECT rows as dicts from every variable name to a
    /// term made with `classes`, or None when unbound (as the client's
    /// rows are).
    fn next_dicts<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        classes: &TermClasses,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.state.lock().unwrap();
        let state: &mut State = &mut guard;
        let (names, rows) = match state {
            State::Solutions { variables, rows } => {
                let names: Vec<Bound<'py, pyo3::types::PyString>> = variables
                    .iter()
                    .map(|v| pyo3::types::PyString::intern(py, v))
                    .collect();
                let taken = py
                    .detach(|| rows.by_ref().take(n).collect::<Result<Vec<_>, _>>())
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                (names, taken)
            }
            _ => return Ok(PyList::empty(py)),
        };
        let list = PyList::empty(py);
        for row in &rows {
            let dict = pyo3::types::PyDict::new(py);
            for (name, cell) in names.iter().zip(row) {
                match cell {
                    Some(t) => dict.set_item(name, classes.make(py, t)?)?,
                    None => dict.set_item(name, py.None())?,
                }
            }
            list.append(dict)?;
        }
        Ok(list)
    }

    /// Up to `n` more rows (SELECT: tuples of cells; CONSTRUCT/DESCRIBE:
    /// (s, p, o) tuples), each cell None or (kind, value, datatype, lang)
    /// with kind 0 IRI, 1 blank node, 2 literal. Fewer than `n`: the end.
    fn next_rows<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.state.lock().unwrap();
        let state: &mut State = &mut guard;
        let taken = py.detach(|| -> Result<Taken, String> {
            match state {
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
                _ => Ok(Taken::Rows(Vec::new())),
            }
        });
        let taken = taken.map_err(PyValueError::new_err)?;
        let list = PyList::empty(py);
        match taken {
            Taken::Rows(rows) => {
                for row in &rows {
                    let cells = row
                        .iter()
                        .map(|cell| cell.as_ref().map(|t| term(py, t)).transpose())
                        .collect::<PyResult<Vec<_>>>()?;
                    list.append(PyTuple::new(py, cells)?)?;
                }
            }
            Taken::Triples(triples) => {
                for t in &triples {
                    list.append(triple(py, t)?)?;
                }
            }
        }
        Ok(list)
    }
}

/// The client's term classes (`tern_client.terms.IRI`, `BNode`,
/// `Literal`), given once per query: terms are made here, without a
/// Python-level loop per cell.
#[pyclass(frozen)]
struct TermClasses {
    iri: Py<PyAny>,
    blank: Py<PyAny>,
    literal: Py<PyAny>,
}

#[pymethods]
impl TermClasses {
    #[new]
    fn new(iri: Py<PyAny>, blank: Py<PyAny>, literal: Py<PyAny>) -> TermClasses {
        TermClasses {
            iri,
            blank,
            literal,
        }
    }
}

impl TermClasses {
    fn make<'py>(&self, py: Python<'py>, term: &Term) -> PyResult<Bound<'py, PyAny>> {
        match term {
            Term::NamedNode(n) => self.iri.bind(py).call1((n.as_str(),)),
            Term::BlankNode(b) => self.blank.bind(py).call1((b.as_str(),)),
            Term::Literal(l) => {
                self.literal
                    .bind(py)
                    .call1((l.value(), l.datatype().as_str(), l.language()))
            }
            #[allow(unreachable_patterns)]
            _ => Err(PyValueError::new_err("a quoted triple as a result term")),
        }
    }
}

enum Taken {
    Rows(Vec<Vec<Option<Term>>>),
    Triples(Vec<Triple>),
}

fn term<'py>(py: Python<'py>, term: &Term) -> PyResult<Bound<'py, PyTuple>> {
    let none = || None::<&str>;
    match term {
        Term::NamedNode(n) => (0, n.as_str(), none(), none()).into_pyobject(py),
        Term::BlankNode(b) => (1, b.as_str(), none(), none()).into_pyobject(py),
        Term::Literal(l) => {
            let datatype = l.datatype().as_str();
            (2, l.value(), Some(datatype), l.language()).into_pyobject(py)
        }
        #[allow(unreachable_patterns)]
        _ => Err(PyValueError::new_err("a quoted triple as a result term")),
    }
}

fn triple<'py>(py: Python<'py>, t: &Triple) -> PyResult<Bound<'py, PyTuple>> {
    let subject: Term = t.subject.clone().into();
    let predicate: Term = t.predicate.clone().into();
    (
        term(py, &subject)?,
        term(py, &predicate)?,
        term(py, &t.object)?,
    )
        .into_pyobject(py)
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
    m.add_function(wrap_pyfunction!(load, m)?)?;
    Ok(())
}
