//! Dropping the state of a query that stopped with an error. A stopped
//! sort, hash join or DISTINCT may hold millions of allocations, and freeing
//! them takes tens of milliseconds (more on a loaded machine): the client
//! waiting for its timeout or the server answering a cancelled request
//! should not wait for that. The operators are handed to one background
//! thread that drops them; their memory is given back moments later.

use crate::exec::{BoxedOperator, Values};
use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;

/// The background dropper; `None` if its thread could not be started (then
/// the operators are dropped where they stopped).
static RETIRED: OnceLock<Option<Sender<BoxedOperator>>> = OnceLock::new();

fn dropper() -> Option<&'static Sender<BoxedOperator>> {
    RETIRED
        .get_or_init(|| {
            let (send, receive) = channel::<BoxedOperator>();
            std::thread::Builder::new()
                .name("tern-retire".into())
                .spawn(move || receive.into_iter().for_each(drop))
                .ok()
                .map(|_| send)
        })
        .as_ref()
}

/// Replaces `root` by an operator without rows (of the same variables, which
/// the stream still reports) and drops the old one in the background.
pub(crate) fn retire(root: &mut BoxedOperator) {
    let variables = root.variables().to_vec();
    let stopped = std::mem::replace(root, Box::new(Values::empty(variables)));
    let Some(dropper) = dropper() else {
        return;
    };
    // A send only fails when the thread is gone; the operators are dropped
    // here then, which is just slower.
    let _ = dropper.send(stopped);
}
