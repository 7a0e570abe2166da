//! Back-pressure: a fixed number of slots for heavy work (rollouts, gradings), a bounded
//! queue of requests waiting for one, and a 429 with `Retry-After` for the rest.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::errors::ApiError;

/// Slots for work of one kind.
pub struct Slots {
    semaphore: Arc<Semaphore>,
    size: usize,
    /// Requests waiting for a slot now.
    waiting: AtomicUsize,
    /// How many may wait.
    queue: usize,
    retry_after: u64,
    /// What the slots are for, as a 429 names them.
    what: String,
}

impl Slots {
    /// `size` slots, `queue` waiting requests at most; 429s ask to retry after
    /// `retry_after` seconds.
    pub fn new(what: &str, size: usize, queue: usize, retry_after: u64) -> Self {
        Self {
            semaphore: Arc::new(Semaphore::new(size)),
            size,
            waiting: AtomicUsize::new(0),
            queue,
            retry_after,
            what: what.to_owned(),
        }
    }

    /// A slot, held until the permit is dropped: a free one at once, else one waited for
    /// when the queue has room, else a 429.
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        if let Ok(permit) = self.semaphore.clone().try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(ApiError::busy(
                &format!("{} {} ({} queued)", self.size, self.what, self.queue),
                self.retry_after,
            ));
        }
        let _waiting = Waiting(&self.waiting);
        self.semaphore
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ApiError::shutting_down())
    }

    /// Slots taken now.
    pub fn in_use(&self) -> usize {
        self.size - self.semaphore.available_permits()
    }
}

/// One request counted as waiting until it is dropped (it got its slot, or its client
/// went away).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn full_slots_answer_429_once_the_queue_is_full() {
        let slots = Arc::new(Slots::new("rollouts", 1, 1, 7));
        let first = slots.acquire().await.unwrap();
        assert_eq!(slots.in_use(), 1);
        let waiter = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await.map(|_| ()) }
        });
        while slots.waiting.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        let error = slots.acquire().await.unwrap_err();
        assert_eq!(error.status, axum::http::StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(error.retry_after, Some(7));
        drop(first);
        waiter.await.unwrap().unwrap();
        assert_eq!(slots.waiting.load(Ordering::SeqCst), 0);
        assert_eq!(slots.in_use(), 0);
    }
}
