//! The counting allocator counts what it says: installed as this test binary's global
//! allocator (one test function: the byte counters are process-wide).

use ort_bind_testkit::alloc::{
    Counting, allocations, count, count_this_thread, live_bytes, peak_bytes,
};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn counts_allocations_reallocations_and_bytes() {
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
    drop(v);

    assert_eq!(allocations(|| drop(std::hint::black_box(vec![0u8; 16]))), 1);
    assert_eq!(allocations(|| {}), 0);

    let live = live_bytes();
    let ((), peak) = peak_bytes(|| drop(std::hint::black_box(vec![0u8; 1 << 20])));
    assert!(peak >= 1 << 20, "peak {peak} below the 1 MiB allocated");
    assert!(
        live_bytes() < live + (1 << 20),
        "the freed MiB is no longer live"
    );
}
