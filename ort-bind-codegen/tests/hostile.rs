//! The hostile corpus: every input gives a clean `Ok` or `Err`, never a panic, and
//! whatever decodes goes through plan + expand into a module that parses (before and
//! after formatting) and declares no name twice.
//!
//! Inputs: every real fixture model truncated at every byte and mutated (seeded),
//! random bytes (seeded), length prefixes that claim gigabytes at every level, types
//! nested 10,000 deep, 100,000 inputs / outputs / dims, names with NUL, CR or invalid
//! UTF-8, dims no `usize` holds, and the checked-in files of `tests/fixtures/hostile/`.
//! Memory bounds are checked in `hostile_alloc.rs` (a counting allocator needs its own
//! test binary). Runs in a few seconds with `--release`; not under Miri (hours there:
//! see `hostile_alloc.rs` for what runs under Miri).

#![cfg(not(miri))]

mod hostile_cases;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use hostile_cases::*;
use ort_bind_codegen::__private::model::{MAX_TYPE_DEPTH, signature_from_bytes};
use ort_bind_codegen::__private::plan::plan;
use ort_bind_codegen::{Dim, ModelError, PlanError, ValueType};

/// Runs the pipeline on one input; a panic fails the test with the case's name.
fn run(bytes: &[u8], name: &str) -> Outcome {
    catch_unwind(AssertUnwindSafe(|| run_pipeline(bytes, name)))
        .unwrap_or_else(|_| panic!("case `{name}` panicked (see above)"))
}

/// A case must finish in well under this, also on a loaded machine: what it guards
/// against is super-linear blow-up (minutes, hours), not small slowdowns.
const CASE_LIMIT: Duration = Duration::from_secs(20);

fn check_cases(cases: &[Case]) {
    for c in cases {
        let start = Instant::now();
        let outcome = run(&c.bytes, &c.name);
        let took = start.elapsed();
        assert!(took < CASE_LIMIT, "case `{}` took {took:?}", c.name);
        let ok = match (&c.expect, &outcome) {
            (Expect::DecodeError, Outcome::Rejected(ModelError::Decode { .. })) => true,
            (Expect::DecodeError, _) => false,
            (Expect::AnyError, Outcome::Rejected(_) | Outcome::Unplannable(_)) => true,
            (Expect::AnyError, _) => false,
            (Expect::Decodes, Outcome::Rejected(_)) => false,
            (Expect::Decodes, _) | (Expect::Either, _) => true,
            (Expect::TooDeep, Outcome::Rejected(ModelError::TypeTooDeep { .. })) => true,
            (Expect::TooDeep, _) => false,
            (Expect::Refused, Outcome::Unplannable(e @ PlanError::Unsupported { .. })) => {
                e.to_string().starts_with("input `v` is ")
            }
            (Expect::Refused, _) => false,
            (Expect::Binds, Outcome::Generated { .. }) => true,
            (Expect::Binds, _) => false,
        };
        let shown = match &outcome {
            Outcome::Rejected(e) => format!("Err: {e}"),
            Outcome::Unplannable(e) => format!("decoded; codegen Err: {e}"),
            Outcome::Generated {
                inputs,
                outputs,
                stage,
            } => format!("decoded; {stage}: {inputs} inputs, {outputs} outputs"),
        };
        let mut shown: String = shown.chars().take(160).collect();
        shown.retain(|c| !c.is_control());
        println!(
            "{:<52} {:>9} B {:>8.1?}  {shown}",
            c.name,
            c.bytes.len(),
            took
        );
        assert!(
            ok,
            "case `{}`: expected {:?}, got {shown}",
            c.name, c.expect
        );
    }
}

#[test]
fn fixtures_truncated_at_every_byte() {
    let fixtures = fixture_models();
    assert!(fixtures.len() >= 10, "fixture models missing");
    let (mut ok, mut err) = (0, 0);
    for (name, bytes) in &fixtures {
        // The whole file decodes and generates, the scikit-learn models (string tensors,
        // `seq(map(string, float32))`) included.
        let whole = run(bytes, name);
        assert!(
            matches!(whole, Outcome::Generated { .. }),
            "{name}: {whole:?}"
        );
        for cut in 0..bytes.len() {
            match run(&bytes[..cut], &format!("{name}[..{cut}]")) {
                Outcome::Rejected(_) => err += 1,
                _ => ok += 1,
            }
        }
    }
    println!("{} truncations: {ok} decoded, {err} rejected", ok + err);
    // Most cuts land inside a field; some between fields (a smaller valid model).
    assert!(err > ok);
}

#[test]
fn fixtures_mutated() {
    let mut rng = Rng::new(0x00DD_BA11);
    let (mut ok, mut err) = (0, 0);
    for (name, bytes) in fixture_models() {
        for round in 0..500 {
            let mut m = bytes.clone();
            match round % 4 {
                // Overwrite 1-8 random bytes.
                0 => {
                    for _ in 0..=rng.below(8) {
                        let at = rng.below(m.len());
                        m[at] = rng.next() as u8;
                    }
                }
                // Flip one bit.
                1 => {
                    let at = rng.below(m.len());
                    m[at] ^= 1 << rng.below(8);
                }
                // Delete a span.
                2 => {
                    let at = rng.below(m.len());
                    let n = rng.below(m.len() - at).min(16) + 1;
                    m.drain(at..(at + n).min(m.len()));
                }
                // Insert random bytes.
                _ => {
                    let at = rng.below(m.len() + 1);
                    let n = rng.below(16) + 1;
                    let extra = rng.bytes(n);
                    m.splice(at..at, extra);
                }
            }
            match run(&m, &format!("{name} mutation {round}")) {
                Outcome::Rejected(_) => err += 1,
                _ => ok += 1,
            }
        }
    }
    println!("{} mutations: {ok} decoded, {err} rejected", ok + err);
    assert!(ok > 0 && err > 0);
}

#[test]
fn random_bytes() {
    let mut rng = Rng::new(0x005E_ED0F_0881);
    let (mut ok, mut err) = (0, 0);
    let header = simple_model();
    for i in 0..20_000 {
        let len = rng.below(2048) + 1;
        let mut bytes = rng.bytes(len);
        // Every other buffer starts with a valid model, so decoding gets past it.
        if i % 2 == 1 {
            bytes.splice(0..0, header.iter().copied());
        }
        match run(&bytes, &format!("random #{i}")) {
            Outcome::Rejected(_) => err += 1,
            _ => ok += 1,
        }
    }
    println!("20000 random buffers: {ok} decoded, {err} rejected");
    assert!(err > 9_000, "random bytes should mostly be rejected");
}

#[test]
fn lengths_that_claim_gigabytes() {
    let cases = huge_length_cases();
    assert!(cases.len() > 50);
    check_cases(&cases);
}

#[test]
fn deep_nesting() {
    check_cases(&nesting_cases());
    // The deepest type ort-bind reads is kept whole, and codegen names it unsupported.
    let bytes = deep_model(MAX_TYPE_DEPTH - 1, sequence_of);
    let sig = signature_from_bytes(&bytes, "deep.onnx").expect("decodes");
    let kind = &sig.inputs[0].kind;
    assert_eq!(kind.depth(), MAX_TYPE_DEPTH);
    let shown = kind.to_string();
    assert!(shown.starts_with("seq(seq("), "{shown}");
    assert!(
        shown.ends_with(&format!("(float32[2]{})", ")".repeat(MAX_TYPE_DEPTH - 2))),
        "{shown}"
    );
    let err = plan(&sig).expect_err("not bindable");
    assert!(
        err.to_string()
            .starts_with(&format!("input `deep` is a sequence {shown}: ")),
        "{err}"
    );
    // One level more is an error that names the value and the limit.
    let err = signature_from_bytes(&deep_model(44, map_of), "deep.onnx").expect_err("too deep");
    assert_eq!(
        err.to_string(),
        "ONNX model `deep.onnx`: the type of graph input `deep` nests sequences, maps and \
         optionals more than 16 levels deep; ort-bind reads types up to 16 levels"
    );
}

/// Maps with keys ONNX does not allow, unset element types and real non-tensor types
/// decode into the structured kinds, and codegen's refusal names the value and its type.
#[test]
fn non_tensor_kinds() {
    check_cases(&kind_cases());
    let cases = kind_cases();
    let outcome = |name: &str| {
        let c = cases.iter().find(|c| c.name == name).expect("case exists");
        let sig = signature_from_bytes(&c.bytes, "kinds.onnx").expect("decodes");
        let err = plan(&sig).expect_err("refused");
        (sig.inputs[0].kind.clone(), err.to_string())
    };
    // ZipMap's type, string tensors, maps with string keys bind (`Expect::Binds`).
    let sig = |name: &str| {
        let c = cases.iter().find(|c| c.name == name).expect("case exists");
        signature_from_bytes(&c.bytes, "kinds.onnx").expect("decodes")
    };
    let zipmap = sig("ZipMap output seq(map(string, float32))");
    assert_eq!(
        zipmap.inputs[0].kind.to_string(),
        "seq(map(string, float32))"
    );
    assert!(plan(&zipmap).is_ok());
    let (_, err) = outcome("map with uint8 keys");
    assert_eq!(
        err,
        "input `v` is a map map(uint8, float32): ONNX Runtime's C API makes and reads maps \
         with int64 or string keys and int64, float32, float64 or string values only"
    );
    let (kind, err) = outcome("map with float32 keys");
    assert_eq!(kind, ValueType::Unsupported("map(float32, float32)".into()));
    assert_eq!(
        err,
        "input `v` is map(float32, float32): ONNX allows map keys of integer types and string \
         only"
    );
    let (kind, _) = outcome("map with unknown code 99 keys");
    assert_eq!(kind.to_string(), "map(element type code 99, float32)");
    let (kind, err) = outcome("sequence without elem type");
    assert_eq!(kind.to_string(), "seq(<no type>)");
    assert_eq!(
        err,
        "input `v` is seq(<no type>): it holds <no type>, and the model leaves that element \
         type unset"
    );
    for (name, shown) in [
        ("sequence of an empty TypeProto", "seq(<no type>)"),
        ("optional without elem type", "optional(<no type>)"),
        ("optional of an empty TypeProto", "optional(<no type>)"),
        ("map without value type", "map(int64, <no type>)"),
        ("map without key or value type", "map(undefined, <no type>)"),
        ("seq(map(float32 key)) inside", "seq(map(float32, float32))"),
        ("seq of sparse tensor", "seq(sparse_tensor(float32))"),
        ("map with uint8 keys", "map(uint8, float32)"),
    ] {
        assert_eq!(outcome(name).0.to_string(), shown, "{name}");
    }
    for (name, shown) in [
        ("optional(seq(float32[2]))", "optional(seq(float32[2]))"),
        ("string tensor", "string[n]"),
        ("map with string keys", "map(string, float32)"),
    ] {
        let s = sig(name);
        assert_eq!(s.inputs[0].kind.to_string(), shown, "{name}");
        assert!(plan(&s).is_ok(), "{name}");
    }
}

#[test]
fn many_values() {
    check_cases(&count_cases());
}

#[test]
fn hostile_names() {
    check_cases(&name_cases());
    // A NUL in a name is kept exactly (ONNX Runtime's C API then refuses it at bind
    // time with an error; codegen still gives a module that compiles).
    let sig = signature_from_bytes(
        &model(&graph(&[f32_value(b"a\0b", &[])], &[f32_value(b"y", &[])])),
        "nul.onnx",
    )
    .expect("decodes");
    assert_eq!(sig.inputs[0].name, "a\0b");
}

#[test]
fn hostile_dims() {
    check_cases(&dim_cases());
    let dims = |bytes: Vec<u8>| {
        let sig = signature_from_bytes(&bytes, "dims.onnx").expect("decodes");
        match &sig.inputs[0].kind {
            ValueType::Tensor { dims, .. } => dims.clone().expect("has a shape"),
            other => panic!("{other:?}"),
        }
    };
    let one = |w: W| model(&graph(&[f32_value(b"x", &[w])], &[f32_value(b"y", &[])]));
    assert_eq!(
        dims(one(W::Value(i64::MAX as u64))),
        [Dim::Fixed(i64::MAX as u64)]
    );
    // On the wire a dim is an int64: larger varints read as negative, which is dynamic.
    assert_eq!(dims(one(W::Value(u64::MAX))), [Dim::Dynamic]);
    assert_eq!(dims(one(W::Value(1 << 63))), [Dim::Dynamic]);
    assert_eq!(dims(one(W::Value(0))), [Dim::Dynamic]);
}

#[test]
fn generated_name_clashes() {
    check_cases(&codegen_cases());
}

/// Every file of `tests/fixtures/hostile/`: the ones `corpus_files` describes give what
/// it says; any other file (a fuzz finding added by hand) must just not panic.
#[test]
fn checked_in_hostile_files() {
    let corpus = checked_in_corpus();
    let known = corpus_files();
    assert!(
        corpus.len() >= known.len(),
        "tests/fixtures/hostile/ is incomplete"
    );
    for (file, bytes, expect) in &known {
        let on_disk = corpus.iter().find(|(n, _)| n == file);
        let (_, on_disk) = on_disk.unwrap_or_else(|| panic!("{file} missing"));
        assert_eq!(
            on_disk, bytes,
            "{file} differs from its generator: rewrite the corpus"
        );
        check_cases(&[Case {
            name: (*file).to_owned(),
            bytes: bytes.clone(),
            expect: *expect,
        }]);
    }
    for (name, bytes) in &corpus {
        run(bytes, name);
    }
}

/// Writes `tests/fixtures/hostile/` (run with `--ignored` after changing the corpus).
#[test]
#[ignore = "writes the checked-in corpus"]
fn write_hostile_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures/hostile");
    std::fs::create_dir_all(&dir).expect("create corpus dir");
    for (file, bytes, _) in corpus_files() {
        std::fs::write(dir.join(file), bytes).expect("write corpus file");
    }
}

#[test]
fn graphs_made_to_trip_shape_inference() {
    check_cases(&inference_cases());
    // Through all of that, what inference settles stays right: 300 stride-2 pools over
    // `n` (kernel 3, pad 1) leave 1 for any `n`; the expression would need 2^300, which no
    // `i64` holds, so the axis is open, or exact.
    let cases = inference_cases();
    let pools = cases
        .iter()
        .find(|c| c.name == "300 strided pools")
        .unwrap();
    let sig = signature_from_bytes(&pools.bytes, "pools.onnx").unwrap();
    if let Some(Some(d)) = sig.inferred[0].dims.as_ref().map(|d| d[0].clone()) {
        for n in [1i64, 7, 1 << 40] {
            assert_eq!(d.eval(&|_| Some(n)), Ok(1), "{d}");
        }
    }
}

/// A million-node chain reads and infers in linear time.
#[test]
fn a_million_node_chain() {
    let bytes = relu_chain(1_000_000);
    let start = Instant::now();
    let sig = signature_from_bytes(&bytes, "chain.onnx").expect("decodes");
    let took = start.elapsed();
    println!(
        "1,000,000 Relu nodes ({} MB): read and inferred in {took:?}",
        bytes.len() >> 20
    );
    assert!(took < CASE_LIMIT, "{took:?}");
    let y = sig.inferred[0].dims.as_ref().expect("rank known");
    assert_eq!(y[0].as_ref().map(ToString::to_string).as_deref(), Some("n"));
}
