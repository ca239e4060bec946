//! A global allocator that counts: allocations per thread and per process, and bytes live
//! with their peak.
//!
//! A test binary (or the bench) installs it once; a binary has one global allocator:
//!
//! ```
//! use ort_bind_testkit::alloc::{Counting, allocations};
//!
//! #[global_allocator]
//! static GLOBAL: Counting = Counting;
//!
//! fn main() {
//!     let n = allocations(|| drop(std::hint::black_box(vec![1u8; 8])));
//!     assert_eq!(n, 1);
//! }
//! ```
//!
//! What it counts: every `alloc`, `alloc_zeroed` and `realloc` made through Rust's global
//! allocator (ort-bind's code, generated bindings, the `ort` crate, the test itself).
//! ONNX Runtime is C++ and allocates through its own allocators, never through Rust's:
//! it is not counted. So "0 allocations" means none by Rust code, not none in the process.
//!
//! Counting never allocates (atomics and a const-initialised thread-local without a
//! destructor), so measuring does not disturb what is measured. Without `Counting`
//! installed every count stays 0.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The counting allocator: forwards every call to [`System`] and counts it. Install it with
/// `#[global_allocator]` (see the [module docs](self)).
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Const-initialised and without a destructor: using it never allocates.
    static THREAD_ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Allocations (and reallocations) made so far in the process, on any thread.
pub fn count() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Allocations (and reallocations) made so far by the calling thread: what tests that run
/// in parallel with others measure.
pub fn count_this_thread() -> u64 {
    THREAD_ALLOCATIONS.with(Cell::get)
}

/// Allocations (and reallocations) the calling thread makes while `f` runs.
pub fn allocations(f: impl FnOnce()) -> u64 {
    let before = count_this_thread();
    f();
    count_this_thread() - before
}

/// Bytes allocated and not yet freed, process-wide.
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Runs `f` and returns its result with the peak of bytes live while it ran, above what was
/// live when it started. The peak is process-wide: callers must not run anything else that
/// allocates meanwhile (one test function per binary).
pub fn peak_bytes<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = live_bytes();
    PEAK.store(base, Ordering::Relaxed);
    let result = f();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    (result, peak)
}

fn counted() {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    // `try_with`: during thread teardown the slot may be gone; the global count still counts.
    let _ = THREAD_ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

fn grew(size: usize) {
    let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(size: usize) {
    LIVE.fetch_sub(size, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so it
// upholds exactly the contract `System` does; the only extra work is atomic counters and a
// const-initialised thread-local `Cell`, which neither allocate nor unwind.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        counted();
        // SAFETY: forwarded unchanged; the caller guarantees `layout` has non-zero size.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        counted();
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        counted();
        // SAFETY: forwarded unchanged; the caller guarantees `ptr` came from this allocator
        // (which hands out `System` blocks) with `layout`, and `new_size` is valid.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }
}
