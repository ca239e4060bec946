//! Hostile value files: every reader of `ort_bind_cli::data` (`.npy` numbers and strings,
//! TensorProto, SequenceProto, MapProto, OptionalProto) on truncated, mutated and random
//! bytes, absurd nesting and absurd length claims, and the checked-in corpus
//! `ort-bind-tests/tests/fixtures/hostile_values/` (also seeds of the `decode_value` fuzz
//! target). Every input must give `Ok` or a clear `Err` naming its origin, never a panic;
//! what decodes must encode and decode back to the same bytes.
//!
//! `cargo test --release -p ort-bind-cli --test hostile_values -- --nocapture` prints the
//! counts; `-- --ignored write_hostile_value_corpus` rewrites the checked-in corpus.

use std::path::PathBuf;

use ort_bind_cli::data::{self, ProtoKind, npy, value_proto};
use ort_bind_runtime::{
    DynMap, DynValue, ElementType, Float4E2M1x2, Float8E8M0, HostArray, Int4x2, NumericType,
    Strings, UInt2x4, ValueType,
};

const KINDS: [ProtoKind; 4] = [
    ProtoKind::Tensor,
    ProtoKind::Sequence,
    ProtoKind::Map,
    ProtoKind::Optional,
];

fn f32s(dims: &[usize], v: &[f32]) -> DynValue {
    DynValue::Tensor(HostArray::from_vec(dims.to_vec(), v.to_vec()).unwrap())
}

fn strs(items: &[&str]) -> DynValue {
    DynValue::Strings(Strings::from_strs(&[items.len()], items).unwrap())
}

/// Valid values of every kind, the seeds of truncation and mutation.
fn seeds() -> Vec<(ProtoKind, DynValue)> {
    let zipmap_row = DynMap::new(
        DynValue::Tensor(HostArray::from_vec(vec![3], vec![10i64, 20, 30]).unwrap()),
        f32s(&[3], &[0.1, 0.2, 0.7]),
    )
    .unwrap();
    let names = DynMap::new(strs(&["cat", "dög"]), strs(&["a", "b"])).unwrap();
    vec![
        (ProtoKind::Tensor, strs(&["héllo", "", "w\0rld"])),
        (
            ProtoKind::Tensor,
            f32s(&[2, 2], &[1.0, -2.0, f32::NAN, 4.0]),
        ),
        (
            ProtoKind::Sequence,
            DynValue::Sequence(vec![f32s(&[2], &[1.0, 2.0]), f32s(&[0], &[]), strs(&["x"])]),
        ),
        (
            ProtoKind::Sequence,
            DynValue::Sequence(vec![DynValue::Map(zipmap_row.clone()); 3]),
        ),
        (ProtoKind::Sequence, DynValue::Sequence(vec![])),
        (ProtoKind::Map, DynValue::Map(zipmap_row)),
        (ProtoKind::Map, DynValue::Map(names)),
        (ProtoKind::Optional, DynValue::Optional(None)),
        // Narrow types: packed ones with a partly used last byte.
        (
            ProtoKind::Tensor,
            DynValue::Tensor(
                HostArray::from_vec(
                    vec![5],
                    vec![
                        Int4x2::pack([1, -8]),
                        Int4x2::pack([7, 0]),
                        Int4x2::pack([-1, 0]),
                    ],
                )
                .unwrap(),
            ),
        ),
        (
            ProtoKind::Tensor,
            DynValue::Tensor(
                HostArray::from_vec(
                    vec![1, 5],
                    vec![UInt2x4::pack([3, 2, 1, 0]), UInt2x4::pack([2, 0, 0, 0])],
                )
                .unwrap(),
            ),
        ),
        (
            ProtoKind::Sequence,
            DynValue::Sequence(vec![
                DynValue::Tensor(
                    HostArray::from_vec(
                        vec![2],
                        vec![Float8E8M0::from_bits(0), Float8E8M0::from_bits(0xFF)],
                    )
                    .unwrap(),
                ),
                DynValue::Tensor(
                    HostArray::from_vec(
                        vec![3],
                        vec![
                            Float4E2M1x2::pack([6.0, -0.5]),
                            Float4E2M1x2::pack([1.5, 0.0]),
                        ],
                    )
                    .unwrap(),
                ),
            ]),
        ),
        (
            ProtoKind::Optional,
            DynValue::Optional(Some(Box::new(DynValue::Sequence(vec![strs(&["q", "r"])])))),
        ),
    ]
}

/// Decodes `bytes` as `kind`; on `Ok`, checks the round trip. Returns whether it decoded.
fn check(bytes: &[u8], kind: ProtoKind) -> bool {
    match value_proto::decode(bytes, "hostile.pb", kind) {
        Ok(value) => {
            let again = value_proto::encode("v", &value);
            let back = value_proto::decode(&again, "again.pb", kind)
                .unwrap_or_else(|e| panic!("{} re-encoded does not decode: {e}", value.describe()));
            assert_eq!(value_proto::encode("v", &back), again);
            true
        }
        Err(e) => {
            assert!(e.to_string().contains("hostile.pb"), "{e}");
            false
        }
    }
}

fn check_npy(bytes: &[u8]) -> bool {
    match npy::decode_value(bytes, "hostile.npy") {
        Ok(_) => true,
        Err(e) => {
            assert!(e.to_string().contains("hostile.npy"), "{e}");
            false
        }
    }
}

/// A small seeded generator (xorshift64*): the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(b.len() + 1);
        match rng.below(4) {
            0 if at < b.len() => b[at] = rng.next() as u8,
            1 if at < b.len() => b[at] ^= 1 << rng.below(8),
            2 if at < b.len() => {
                b.remove(at);
            }
            _ => b.insert(at, rng.next() as u8),
        }
    }
    b
}

#[test]
fn truncated_mutated_and_random_files_never_panic() {
    let files: Vec<(ProtoKind, Vec<u8>)> = seeds()
        .iter()
        .map(|(k, v)| (*k, value_proto::encode("seed", v)))
        .collect();
    let npy_seeds = [
        npy::encode_strings(&Strings::from_strs(&[2, 2], &["a", "bé", "", "ccc"]).unwrap()),
        npy::encode(
            HostArray::from_vec(vec![3], vec![1i64, 2, 3])
                .unwrap()
                .view(),
        )
        .unwrap()
        .0,
    ];
    // [clear errors, decoded]
    let mut counts = [0usize; 2];
    let mut tally = |decoded: bool| counts[usize::from(decoded)] += 1;
    // Every prefix of every seed.
    for (kind, bytes) in &files {
        for end in 0..bytes.len() {
            tally(check(&bytes[..end], *kind));
        }
    }
    for bytes in &npy_seeds {
        for end in 0..bytes.len() {
            tally(check_npy(&bytes[..end]));
        }
    }
    let truncated = files.iter().map(|(_, b)| b.len()).sum::<usize>()
        + npy_seeds.iter().map(Vec::len).sum::<usize>();
    // Mutations, read as their own kind and as every other kind.
    let mut rng = Rng(0x5eed_0f0b_adf1_1e00);
    let mut mutated = 0;
    for _ in 0..400 {
        for (kind, bytes) in &files {
            let m = mutate(&mut rng, bytes);
            tally(check(&m, *kind));
            tally(check(&m, KINDS[rng.below(4)]));
            mutated += 2;
        }
        for bytes in &npy_seeds {
            tally(check_npy(&mutate(&mut rng, bytes)));
            mutated += 1;
        }
    }
    // Random bytes.
    for _ in 0..4000 {
        let len = rng.below(64);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        tally(check(&bytes, KINDS[rng.below(4)]));
        tally(check_npy(&bytes));
    }
    let [err, ok] = counts;
    println!(
        "{truncated} truncated, {mutated} mutated, 8000 random: {ok} decoded (round trip \
         checked), {err} clear errors"
    );
    assert!(err > 0 && ok > 0);
}

/// A sequence of sequences (or an optional of optionals) `depth` levels deep around one
/// float tensor, built as bytes (a value that deep would overflow the stack of any
/// recursive encoder; the decoder must refuse it without recursing that deep).
fn nested(kind: ProtoKind, depth: usize) -> Vec<u8> {
    let tensor = value_proto::encode("", &f32s(&[1], &[1.0]));
    let (elem_type, field, inner_tensor_field) = match kind {
        ProtoKind::Optional => (5u8, 7, 3),
        _ => (3u8, 5, 3),
    };
    // Innermost: elem_type TENSOR and the tensor.
    let mut bytes = [
        vec![0x10, 0x01],
        claim(inner_tensor_field, tensor.len() as u64, &tensor),
    ]
    .concat();
    for _ in 1..depth {
        bytes = [
            vec![0x10, elem_type],
            claim(field, bytes.len() as u64, &bytes),
        ]
        .concat();
    }
    bytes
}

#[test]
fn nesting_is_limited() {
    let limit = value_proto::MAX_DEPTH;
    for kind in [ProtoKind::Sequence, ProtoKind::Optional] {
        assert!(check(&nested(kind, limit), kind), "{kind:?} at the limit");
        for depth in [limit + 1, 100, 1_000, 10_000] {
            let err = value_proto::decode(&nested(kind, depth), "deep.pb", kind)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("nest deeper than 32") || err.contains("recursion limit"),
                "{kind:?} {depth}: {err}"
            );
        }
    }
}

/// A varint.
fn varint(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out
}

/// Field `tag` of wire type 2 claiming `len` bytes, followed by `tail`.
fn claim(tag: u32, len: u64, tail: &[u8]) -> Vec<u8> {
    let mut out = varint(u64::from(tag) << 3 | 2);
    out.extend(varint(len));
    out.extend_from_slice(tail);
    out
}

/// The checked-in corpus: name, kind, bytes, and what reading them gives (`None`: decodes).
fn corpus() -> Vec<(&'static str, ProtoKind, Vec<u8>, Option<&'static str>)> {
    let key_values = |keys: &[i64], n: usize| {
        let mut values = Vec::new();
        for i in 0..n {
            // SequenceProto.tensor_values = 3: a float scalar TensorProto (data_type 1,
            // raw_data 4 bytes).
            let mut t = vec![0x10, 0x01, 0x4a, 0x04];
            t.extend((i as f32).to_le_bytes());
            values.extend(claim(3, t.len() as u64, &t));
        }
        let mut m = vec![0x10, 0x07]; // key_type int64
        for &k in keys {
            m.push(0x18);
            m.extend(varint(k as u64));
        }
        let mut seq = vec![0x10, 0x01]; // elem_type TENSOR
        seq.extend(values);
        m.extend(claim(5, seq.len() as u64, &seq));
        m
    };
    vec![
        (
            "map_duplicate_keys.pb",
            ProtoKind::Map,
            key_values(&[7, 7], 2),
            Some("the key 7 appears more than once"),
        ),
        (
            "map_3_keys_2_values.pb",
            ProtoKind::Map,
            key_values(&[1, 2, 3], 2),
            Some("3 keys and 2 values"),
        ),
        ("map_empty.pb", ProtoKind::Map, key_values(&[], 0), None),
        (
            "sequence_empty.pb",
            ProtoKind::Sequence,
            vec![0x10, 0x01],
            None,
        ),
        (
            "optional_without_value.pb",
            ProtoKind::Optional,
            vec![0x10, 0x01],
            None,
        ),
        (
            "sequence_nested_1000.pb",
            ProtoKind::Sequence,
            nested(ProtoKind::Sequence, 1000),
            Some("recursion limit"),
        ),
        (
            "optional_nested_33.pb",
            ProtoKind::Optional,
            nested(ProtoKind::Optional, 33),
            Some("nest deeper than 32"),
        ),
        (
            "string_claims_2p62.pb",
            ProtoKind::Tensor,
            // TensorProto.string_data = 6 claiming 2^62 bytes.
            claim(6, 1 << 62, b"abc"),
            Some("protobuf decoding failed"),
        ),
        (
            "map_string_key_claims_4gib.pb",
            ProtoKind::Map,
            // MapProto.string_keys = 4 claiming 4 GiB.
            claim(4, 1 << 32, b"k"),
            Some("protobuf decoding failed"),
        ),
        (
            "string_tensor_claims_2p40_elements.pb",
            ProtoKind::Tensor,
            // dims [2^20, 2^20], data_type string, one string.
            [
                vec![0x0a],
                varint(6),
                varint(1 << 20),
                varint(1 << 20),
                vec![0x10, 0x08],
                claim(6, 1, b"x"),
            ]
            .concat(),
            Some("need 1099511627776 strings, the tensor holds 1"),
        ),
        (
            "int4_5_elements_in_2_bytes.pb",
            ProtoKind::Tensor,
            // dims [5], data_type int4 (22), raw_data 2 bytes (5 elements need 3).
            [vec![0x08, 0x05, 0x10, 0x16], claim(9, 2, &[0x21, 0x43])].concat(),
            Some("raw_data holds 2 bytes where 5 int4 elements packed 2 to a byte need 3"),
        ),
        (
            "uint2_int32_data_too_many.pb",
            ProtoKind::Tensor,
            // dims [3], data_type uint2 (25), int32_data [1, 2] (3 elements are 1 byte).
            vec![0x08, 0x03, 0x10, 0x19, 0x2a, 0x02, 0x01, 0x02],
            Some("need 1 values (3 uint2 elements, 4 to a byte), the tensor holds 2"),
        ),
        (
            "float8e4m3fn_int32_data_300.pb",
            ProtoKind::Tensor,
            // dims [1], data_type float8e4m3fn (17), int32_data [300].
            [vec![0x08, 0x01, 0x10, 0x11, 0x2a, 0x02], varint(300)].concat(),
            Some("int32_data value 300 is out of range for float8e4m3fn"),
        ),
        (
            "int2_claims_2p62_elements.pb",
            ProtoKind::Tensor,
            // dims [2^31, 2^31], data_type int2 (26), one raw byte.
            [
                vec![0x0a],
                varint(10),
                varint(1 << 31),
                varint(1 << 31),
                vec![0x10, 0x1a],
                claim(9, 1, &[0]),
            ]
            .concat(),
            Some(
                "raw_data holds 1 bytes where 4611686018427387904 int2 elements packed 4 to a byte need 1152921504606846976",
            ),
        ),
        (
            "string_not_utf8.pb",
            ProtoKind::Tensor,
            [
                vec![0x0a, 0x01, 0x01, 0x10, 0x08],
                claim(6, 2, &[0xc3, 0x28]),
            ]
            .concat(),
            Some("is not UTF-8"),
        ),
    ]
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures/hostile_values")
}

#[test]
fn checked_in_corpus_gives_what_it_says() {
    for (name, kind, bytes, want) in corpus() {
        let path = corpus_dir().join(name);
        let on_disk = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(on_disk, bytes, "{name} differs from what this test writes");
        let ty = match kind {
            ProtoKind::Tensor => ValueType::Tensor {
                elem: ElementType::String,
                dims: vec![],
            },
            ProtoKind::Sequence => ValueType::Sequence(Box::new(ValueType::Tensor {
                elem: ElementType::Numeric(NumericType::F32),
                dims: vec![],
            })),
            ProtoKind::Map => ValueType::Map {
                key: ElementType::Numeric(NumericType::I64),
                value: ElementType::Numeric(NumericType::F32),
            },
            ProtoKind::Optional => ValueType::Optional(Box::new(ValueType::Tensor {
                elem: ElementType::Numeric(NumericType::F32),
                dims: vec![],
            })),
        };
        let got = data::read_value(&path, Some(&ty));
        match (want, got) {
            (None, Ok(_)) => {}
            (Some(want), Err(e)) => {
                let e = e.to_string();
                assert!(e.contains(want) && e.contains(name), "{name}: {e}");
            }
            (want, got) => panic!("{name}: expected {want:?}, got {got:?}"),
        }
    }
}

/// Writes the checked-in corpus (run after changing `corpus`).
#[test]
#[ignore = "writes ort-bind-tests/tests/fixtures/hostile_values/"]
fn write_hostile_value_corpus() {
    std::fs::create_dir_all(corpus_dir()).unwrap();
    for (name, _, bytes, _) in corpus() {
        std::fs::write(corpus_dir().join(name), bytes).unwrap();
    }
}
