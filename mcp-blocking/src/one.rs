//! A channel for one reply between threads: one allocation (a slot and a condition
//! variable), where a `std::sync::mpsc` channel makes its counter, a block on the first send
//! and a waiter list when the receiver blocks (a reply is made on every call)

use std::sync::mpsc::RecvError;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

enum Slot<T> {
    /// Nothing sent yet
    Empty,
    /// Sent, not yet received
    Full(T),
    /// The sender went away without sending, or the value was taken
    Closed,
}

struct One<T> {
    slot: Mutex<Slot<T>>,
    filled: Condvar,
}

/// The sending half: [`send`](Self::send) consumes it; dropping it unsent tells the receiver
/// no reply comes (public but unnamed outside the crate: the [`Blocking`](crate::threads::Blocking)
/// plumbing's reply)
pub struct OneSender<T>(Option<Arc<One<T>>>);

/// The receiving half: [`recv`](Self::recv) blocks until the reply or until the sender is
/// gone
pub(crate) struct OneReceiver<T>(Arc<One<T>>);

/// A channel for one reply
pub(crate) fn channel<T>() -> (OneSender<T>, OneReceiver<T>) {
    let one = Arc::new(One {
        slot: Mutex::new(Slot::Empty),
        filled: Condvar::new(),
    });
    (OneSender(Some(Arc::clone(&one))), OneReceiver(one))
}

impl<T> One<T> {
    fn put(&self, slot: Slot<T>) {
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = slot;
        self.filled.notify_one();
    }
}

impl<T> OneSender<T> {
    /// Sends the reply; `Err` with it when the receiver is gone
    pub(crate) fn send(mut self, value: T) -> Result<(), T> {
        let one = self.0.take().expect("sent once: send consumes the sender");
        // Only the receiver holds the other reference: one reference left means it is gone.
        if Arc::strong_count(&one) == 1 {
            return Err(value);
        }
        one.put(Slot::Full(value));
        Ok(())
    }
}

impl<T> Drop for OneSender<T> {
    fn drop(&mut self) {
        if let Some(one) = self.0.take() {
            one.put(Slot::Closed);
        }
    }
}

impl<T> OneReceiver<T> {
    /// Blocks until the reply; `Err` when the sender went away without sending
    pub(crate) fn recv(&self) -> Result<T, RecvError> {
        let mut slot = self.0.slot.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            match std::mem::replace(&mut *slot, Slot::Closed) {
                Slot::Full(value) => return Ok(value),
                Slot::Closed => return Err(RecvError),
                Slot::Empty => {
                    *slot = Slot::Empty;
                    slot = self
                        .0
                        .filled
                        .wait(slot)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}

impl<T> std::fmt::Debug for OneSender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneSender")
    }
}

impl<T> std::fmt::Debug for OneReceiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneReceiver")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_crosses_threads_and_a_dropped_sender_ends_the_wait() {
        let (tx, rx) = channel();
        let sender = std::thread::spawn(move || tx.send(7).is_ok());
        assert_eq!(rx.recv(), Ok(7));
        assert!(sender.join().unwrap());
        // Taken once: a second receive finds nothing more to come.
        assert_eq!(rx.recv(), Err(RecvError));

        let (tx, rx) = channel::<u8>();
        let dropper = std::thread::spawn(move || drop(tx));
        assert_eq!(rx.recv(), Err(RecvError));
        dropper.join().unwrap();

        let (tx, rx) = channel();
        drop(rx);
        assert_eq!(tx.send(1), Err(1), "nobody receives");
    }
}
