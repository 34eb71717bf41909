//! `Index.serve`: the SPARQL endpoint and workbench of `tern serve`, run
//! inside the Python process on the index it has open, so a notebook can
//! query in-process and let other tools (a browser, SPARQLWrapper, curl)
//! reach the same data. The server runs on its own threads (a Tokio
//! runtime and the query workers), never holding the GIL; `Server.stop`
//! shuts it down gracefully and frees the port.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;
use tern_engine::Engine;
use tern_server::ServerConfig;

/// What `Index.serve` takes, besides the index.
pub struct ServeOptions {
    pub host: String,
    pub port: u16,
    pub workers: Option<usize>,
    pub timeout: Option<f64>,
    pub update_token: Option<String>,
}

/// A running endpoint. Stopped by `stop()`, by leaving a `with` block, or
/// when the object is dropped.
#[pyclass(frozen)]
pub struct Server {
    addr: SocketAddr,
    running: Mutex<Option<Running>>,
}

struct Running {
    shutdown: tokio::sync::oneshot::Sender<()>,
    thread: JoinHandle<std::io::Result<()>>,
}

impl Server {
    /// Binds the address and starts serving `engine` on a new thread;
    /// returns once the port is bound (a bind failure is the caller's
    /// error, naming the address).
    pub fn start(py: Python<'_>, engine: Engine, options: ServeOptions) -> PyResult<Server> {
        let addr = (options.host.as_str(), options.port)
            .to_socket_addrs()
            .map_err(|e| PyValueError::new_err(format!("host {:?}: {e}", options.host)))?
            .next()
            .ok_or_else(|| PyValueError::new_err(format!("host {:?}: no address", options.host)))?;
        let mut config = ServerConfig {
            addr,
            update_token: options.update_token,
            ..ServerConfig::default()
        };
        if let Some(workers) = options.workers {
            config.workers = workers.max(1);
        }
        if let Some(seconds) = options.timeout {
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(PyValueError::new_err(format!(
                    "timeout must be a positive number of seconds, not {seconds}"
                )));
            }
            config.timeout = Some(Duration::from_secs_f64(seconds));
        }
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("tern-serve".into())
            .spawn(move || serve(engine, config, bound_tx, stop))
            .map_err(|e| PyOSError::new_err(format!("cannot start the server thread: {e}")))?;
        let bound = py.detach(move || bound_rx.recv());
        match bound {
            Ok(Ok(addr)) => Ok(Server {
                addr,
                running: Mutex::new(Some(Running { shutdown, thread })),
            }),
            Ok(Err(message)) => {
                let _ = thread.join();
                Err(PyOSError::new_err(message))
            }
            Err(_) => {
                let outcome = thread.join();
                Err(PyOSError::new_err(format!(
                    "the server thread ended before listening: {}",
                    match outcome {
                        Ok(Err(e)) => e.to_string(),
                        _ => "no reason given".to_owned(),
                    }
                )))
            }
        }
    }
}

/// The server thread: a runtime of two threads (HTTP, and the first turn of
/// a query on an idle server; queries run on the server's own workers),
/// the bind reported back, then serving until
/// `stop` fires or its sender is dropped.
fn serve(
    engine: Engine,
    config: ServerConfig,
    bound: std::sync::mpsc::Sender<Result<SocketAddr, String>>,
    stop: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("tern-http")
        // A query's first turn may run on these threads (`first_turn_here`).
        .thread_stack_size(tern_engine::QUERY_STACK_BYTES)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let addr = config.addr;
        let listener = match tern_server::bind(config.clone()).await {
            Ok(listener) => listener,
            Err(e) => {
                let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
                    " (another server uses that port: choose another, or port=0 for a free one)"
                } else {
                    ""
                };
                let _ = bound.send(Err(format!("cannot listen on {addr}{hint}: {e}")));
                return Ok(());
            }
        };
        let _ = bound.send(listener.local_addr().map_err(|e| e.to_string()));
        tern_server::serve(listener, engine, config, async {
            let _ = stop.await;
        })
        .await
    })
}

#[pymethods]
impl Server {
    /// The workbench's address, e.g. `http://127.0.0.1:7070/`.
    #[getter]
    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// The SPARQL endpoint's address (query, and update when an update
    /// token was given), e.g. `http://127.0.0.1:7070/sparql`.
    #[getter]
    fn endpoint(&self) -> String {
        format!("http://{}/sparql", self.addr)
    }

    #[getter]
    fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Stops taking connections, lets requests in flight finish, and
    /// returns when the server is down (the port is free again).
    /// Stopping a stopped server does nothing.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let running = self.running.lock().unwrap().take();
        let Some(Running { shutdown, thread }) = running else {
            return Ok(());
        };
        let _ = shutdown.send(());
        match py.detach(|| thread.join()) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(PyOSError::new_err(format!("the server stopped with: {e}"))),
            Err(_) => Err(PyOSError::new_err("the server thread panicked")),
        }
    }

    #[getter]
    fn running(&self) -> bool {
        self.running.lock().unwrap().is_some()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.stop(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = if self.running() { "running" } else { "stopped" };
        format!("<tern.Server {} ({state})>", self.url())
    }
}

impl Drop for Server {
    /// A server nobody holds any more stops (without waiting for it: the
    /// GIL may be held here, and requests in flight finish on their own).
    fn drop(&mut self) {
        if let Some(Running { shutdown, .. }) = self.running.get_mut().unwrap().take() {
            let _ = shutdown.send(());
        }
    }
}
