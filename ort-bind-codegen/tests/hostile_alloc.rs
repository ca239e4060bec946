//! Bounded memory on hostile input: a counting global allocator (`ort_bind_testkit::alloc`)
//! measures the peak bytes live while `signature_from_bytes` decodes each case of the
//! hostile corpus (see `hostile.rs`). Nothing is ever allocated from a length the file claims, so a
//! file that claims gigabytes costs what its real bytes cost; the bound checked is
//! linear in the input's size.
//!
//! One test function: the allocator's counters are process-wide, so cases must not
//! run concurrently.

mod hostile_cases;

use hostile_cases::*;
use ort_bind_codegen::__private::model::signature_from_bytes;
use ort_bind_testkit::alloc::{Counting, peak_bytes};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak bytes allocated (above what was live before) while decoding `bytes`.
fn decode_peak(bytes: &[u8]) -> usize {
    let ((), peak) = peak_bytes(|| drop(signature_from_bytes(bytes, "alloc.onnx")));
    peak
}

/// The bound: a decoded message is at most this many times larger than its encoding
/// (an empty `ValueInfoProto` is 2 bytes on the wire and about 100 in memory; vectors
/// grow by doubling), plus a constant for small inputs and error messages.
const PER_BYTE: usize = 200;
const FIXED: usize = 64 << 10;

fn bound(len: usize) -> usize {
    len * PER_BYTE + FIXED
}

/// Under Miri (which checks the allocator's `unsafe` forwarding, see `UNSAFE.md`) only
/// a few small cases run: Miri is ~1000x slower, and its isolation forbids reading files,
/// so the fixture is compiled in and the cases are built directly.
#[test]
#[cfg(miri)]
fn counting_allocator_under_miri() {
    let add = include_bytes!("../../ort-bind-tests/tests/fixtures/add.onnx");
    for cut in (1..=add.len()).step_by(5) {
        assert!(decode_peak(&add[..cut]) <= bound(cut));
    }
    let small = [
        simple_model(),
        model(&ld_claiming(11, 1 << 32, &[0; 8])),
        deep_model(44, sequence_of),
        deep_model(60, optional_of),
        model(&graph(
            &[f32_value(b"a\0b", &[W::Value(u64::MAX)])],
            &[f32_value(b"y", &[])],
        )),
    ];
    for bytes in &small {
        let peak = decode_peak(bytes);
        assert!(
            peak <= bound(bytes.len()),
            "{peak} bytes for {}",
            bytes.len()
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "minutes of work; see counting_allocator_under_miri")]
fn decoding_memory_is_linear_in_the_input() {
    let mut cases = generated_cases();
    cases.extend(
        corpus_files()
            .into_iter()
            .map(|(name, bytes, expect)| Case {
                name: name.to_owned(),
                bytes,
                expect,
            }),
    );
    let mut worst_ratio = 0.0f64;
    let mut worst_name = String::new();
    println!(
        "{:<52} {:>10} {:>12} {:>8}",
        "case", "input B", "peak B", "peak/in"
    );
    for c in &cases {
        let peak = decode_peak(&c.bytes);
        let ratio = peak as f64 / c.bytes.len().max(1) as f64;
        println!(
            "{:<52} {:>10} {:>12} {:>8.1}",
            c.name,
            c.bytes.len(),
            peak,
            ratio
        );
        assert!(
            peak <= bound(c.bytes.len()),
            "case `{}`: {peak} bytes peak for {} input bytes",
            c.name,
            c.bytes.len()
        );
        if c.bytes.len() > 1024 && ratio > worst_ratio {
            worst_ratio = ratio;
            worst_name.clone_from(&c.name);
        }
    }
    println!("worst peak/input ratio above 1 KiB: {worst_ratio:.1} ({worst_name})");

    // Planning (identifiers, dims, recurrent pairs) on top of decoding is linear too:
    // checked on the big cases (100,000 values, 2,000 x 2,000 related names, ...).
    println!(
        "{:<52} {:>10} {:>12} {:>8}",
        "decode + plan", "input B", "peak B", "peak/in"
    );
    for c in count_cases() {
        let ((), peak) = peak_bytes(|| {
            if let Ok(sig) = signature_from_bytes(&c.bytes, "alloc.onnx") {
                drop(ort_bind_codegen::__private::plan::plan(&sig));
            }
        });
        let ratio = peak as f64 / c.bytes.len() as f64;
        println!(
            "{:<52} {:>10} {:>12} {:>8.1}",
            c.name,
            c.bytes.len(),
            peak,
            ratio
        );
        assert!(
            peak <= 2 * bound(c.bytes.len()),
            "plan `{}`: {peak} bytes",
            c.name
        );
    }

    // Claims of gigabytes cost nothing beyond the bytes that are there.
    for c in huge_length_cases() {
        let peak = decode_peak(&c.bytes);
        assert!(peak < FIXED, "case `{}` allocated {peak} bytes", c.name);
    }

    // Every truncation of every fixture, and seeded random bytes.
    let mut max_peak = 0;
    for (name, bytes) in fixture_models() {
        for cut in 1..=bytes.len() {
            let peak = decode_peak(&bytes[..cut]);
            assert!(peak <= bound(cut), "{name}[..{cut}]: {peak} bytes");
            max_peak = max_peak.max(peak);
        }
    }
    let mut rng = Rng::new(0xA110C);
    for _ in 0..5_000 {
        let len = rng.below(4096) + 1;
        let bytes = rng.bytes(len);
        let peak = decode_peak(&bytes);
        assert!(peak <= bound(len), "random buffer of {len}: {peak} bytes");
        max_peak = max_peak.max(peak);
    }
    println!("fixture truncations and random buffers: max peak {max_peak} bytes");
}
