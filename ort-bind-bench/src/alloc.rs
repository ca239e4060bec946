//! A global allocator that counts allocations, so the harness can report how many
//! allocations each contender makes per run.
//!
//! It counts every `alloc`, `alloc_zeroed` and `realloc` made through Rust's global
//! allocator on any thread: ort-bind's code, the `ort` crate's, and this harness's (which
//! allocates nothing inside a timed iteration). ONNX Runtime itself allocates through its
//! own C++ allocators and is not counted here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The counting allocator; installed as `#[global_allocator]` in `main.rs`.
#[derive(Debug)]
pub(crate) struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    // Const-initialised and without a destructor: using it never allocates.
    static THREAD_ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Allocations made so far in the process, on any thread (what the harness reports).
pub(crate) fn count() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Allocations made so far by the calling thread (for tests, which run in parallel).
#[cfg(test)]
pub(crate) fn count_this_thread() -> u64 {
    THREAD_ALLOCATIONS.with(Cell::get)
}

fn counted() {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    // `try_with`: during thread teardown the slot may be gone; the global count still counts.
    let _ = THREAD_ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so it
// upholds exactly the contract `System` does; the only extra work is an atomic increment
// and a const-initialised thread-local increment, which neither allocate nor unwind.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        counted();
        // SAFETY: forwarded unchanged; the caller guarantees `layout` has non-zero size.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        counted();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        counted();
        // SAFETY: forwarded unchanged; the caller guarantees `ptr` came from this allocator
        // (which hands out `System` blocks) with `layout`, and `new_size` is valid.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::{count, count_this_thread};

    #[test]
    fn counts_allocations_and_reallocations() {
        let (before, before_here) = (count(), count_this_thread());
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.extend([1, 2, 3, 4]);
        assert!(count() > before, "a Vec allocation was not counted");
        assert_eq!(
            count_this_thread(),
            before_here + 1,
            "one allocation, counted once"
        );
        v.clear();
        v.extend([5, 6, 7, 8]);
        assert_eq!(
            count_this_thread(),
            before_here + 1,
            "reusing capacity allocates nothing"
        );
        v.reserve(1000);
        assert_eq!(
            count_this_thread(),
            before_here + 2,
            "a reallocation counts"
        );
        std::hint::black_box(&v);
    }
}
