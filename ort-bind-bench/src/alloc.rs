//! A global allocator that counts allocations, so the harness can report how many
//! allocations each contender makes per run.
//!
//! It counts every `alloc`, `alloc_zeroed` and `realloc` made through Rust's global
//! allocator on any thread: ort-bind's code, the `ort` crate's, and this harness's (which
//! allocates nothing inside a timed iteration). ONNX Runtime itself allocates through its
//! own C++ allocators and is not counted here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// The counting allocator; installed as `#[global_allocator]` in `main.rs`.
#[derive(Debug)]
pub(crate) struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Allocations made so far in the process.
pub(crate) fn count() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so it
// upholds exactly the contract `System` does; the only extra work is an atomic increment,
// which neither allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged; the caller guarantees `layout` has non-zero size.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
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
    use super::count;

    #[test]
    fn counts_allocations_and_reallocations() {
        let before = count();
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.extend([1, 2, 3, 4]);
        let after_alloc = count();
        assert!(after_alloc > before, "a Vec allocation was not counted");
        // Other test threads may allocate too, so only check that our growth is counted.
        let before_grow = count();
        v.reserve(1000);
        assert!(count() > before_grow, "a reallocation was not counted");
        std::hint::black_box(&v);
    }
}
