//! Per-client admission: one address may have at most `max_per_client`
//! queries in the server at once (running, waiting or parked on a client
//! that does not read), so one client cannot take every slot.

use crate::error::RequestError;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

pub struct ClientSlots {
    max: usize,
    held: Mutex<HashMap<IpAddr, usize>>,
}

/// One query's slot; given back when dropped (with the query's task).
pub struct ClientSlot {
    slots: Arc<ClientSlots>,
    ip: IpAddr,
}

impl ClientSlot {
    /// The client's address.
    pub fn ip(&self) -> IpAddr {
        self.ip
    }
}

impl ClientSlots {
    pub fn new(max: usize) -> Arc<ClientSlots> {
        Arc::new(ClientSlots {
            max: max.max(1),
            held: Mutex::default(),
        })
    }

    /// A slot for a query of `ip`, or 429 when it holds all of its own.
    pub fn take(self: &Arc<Self>, ip: IpAddr) -> Result<ClientSlot, RequestError> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let count = held.entry(ip).or_insert(0);
        if *count >= self.max {
            return Err(RequestError::TooManyFromClient(format!(
                "{ip} already has {} queries in the server, the most one client may have; \
                 retry when one has ended",
                self.max
            )));
        }
        *count += 1;
        Ok(ClientSlot {
            slots: self.clone(),
            ip,
        })
    }

    /// Queries `ip` has in the server.
    #[cfg(test)]
    fn held(&self, ip: IpAddr) -> usize {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.get(&ip).copied().unwrap_or(0)
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = held.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_has_its_own_slots_and_gets_them_back() {
        let slots = ClientSlots::new(2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = slots.take(a).unwrap();
        let _a2 = slots.take(a).unwrap();
        assert!(matches!(
            slots.take(a),
            Err(RequestError::TooManyFromClient(_))
        ));
        let _b1 = slots.take(b).unwrap();
        drop(a1);
        assert_eq!(slots.held(a), 1);
        let _a3 = slots.take(a).unwrap();
    }
}
