//! Locks that cannot be poisoned in practice.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`. A thread that panics aborts the process (`panic = "abort"`
/// in release builds), so a poisoned lock cannot be observed there; in tests
/// the data is taken as it is.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
