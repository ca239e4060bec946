//! Hostile and malformed adapter files: every one gives an error (or, where a change leaves
//! a well-formed file, a consistent view), never a panic.

mod common;

use common::{Adapter, Param, fixture, float};
use ort_bind_adapter::{AdapterError, AdapterView, element_size, read};

/// What every successfully read view promises, whatever bytes it came from.
fn assert_consistent(view: &AdapterView<'_>, what: &str) {
    let mut names: Vec<&str> = view.parameters.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names.len(),
        view.parameters.len(),
        "{what}: duplicate names"
    );
    for p in &view.parameters {
        assert!(!p.name.is_empty(), "{what}: empty name");
        assert!(
            p.dims.iter().all(|&d| d >= 0),
            "{what}: {} {:?}",
            p.name,
            p.dims
        );
        let size = element_size(p.element).expect("a fixed-size element");
        let count = p.element_count().expect("a count that fits");
        assert_eq!(p.data.len(), count * size, "{what}: {}", p.name);
    }
}

/// Where `data` sits in `bytes`.
fn offset_in(bytes: &[u8], data: &[u8]) -> usize {
    data.as_ptr() as usize - bytes.as_ptr() as usize
}

#[test]
fn every_truncation_of_a_real_file_is_refused() {
    for file in ["math.onnx_adapter", "code.onnx_adapter"] {
        let bytes = fixture(file);
        let whole = read(&bytes).unwrap();
        // The writer pads its first object (the first name, at the very end) to 4 bytes;
        // cutting only that padding leaves the same file. Cutting anything more is refused.
        let used = (0..=bytes.len())
            .find(|&len| read(&bytes[..len]).is_ok())
            .unwrap();
        assert!(
            bytes.len() - used < 4,
            "{file}: {used} of {} bytes used",
            bytes.len()
        );
        assert!(
            bytes[used..].iter().all(|&b| b == 0),
            "{file}: padding is zeros"
        );
        for len in 0..bytes.len() {
            match read(&bytes[..len]) {
                Err(AdapterError::NotAnAdapter { found: None }) => assert!(len < 8),
                Err(AdapterError::Invalid { .. }) => assert!(len >= 8 && len < used),
                Ok(view) => assert!(len >= used && view == whole, "{file} cut to {len}"),
                Err(other) => panic!("{file} cut to {len} bytes: {other}"),
            }
        }
    }
}

#[test]
fn every_flipped_byte_of_a_real_file_is_refused_or_read_consistently() {
    let bytes = fixture("math.onnx_adapter");
    let view = read(&bytes).unwrap();
    // Bytes inside parameter data: flipping them leaves a valid file with other values.
    let data_ranges: Vec<_> = view
        .parameters
        .iter()
        .map(|p| {
            let start = offset_in(&bytes, p.data);
            start..start + p.data.len()
        })
        .collect();
    let (mut refused, mut read_ok) = (0, 0);
    for pos in 0..bytes.len() {
        for mask in [0x01, 0x02, 0x10, 0x80, 0xFF] {
            let mut bad = bytes.clone();
            bad[pos] ^= mask;
            match read(&bad) {
                Ok(view) => {
                    read_ok += 1;
                    assert_consistent(&view, &format!("byte {pos} ^ {mask:#x}"));
                }
                Err(_) => {
                    refused += 1;
                    assert!(
                        !data_ranges.iter().any(|r| r.contains(&pos)),
                        "a flip inside data at {pos} was refused"
                    );
                }
            }
            if (4..8).contains(&pos) {
                let found = Some([bad[4], bad[5], bad[6], bad[7]]);
                assert_eq!(read(&bad), Err(AdapterError::NotAnAdapter { found }));
            }
        }
    }
    assert!(
        refused > 0 && read_ok > 0,
        "{refused} refused, {read_ok} read"
    );
}

/// xorshift64*: a fixed, dependency-free stream of pseudo-random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_mutations_never_panic() {
    let original = fixture("code.onnx_adapter");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..20_000 {
        let mut bad = original.clone();
        match round % 4 {
            // Overwrite a few bytes with random values.
            0 | 1 => {
                for _ in 0..1 + rng.below(4) {
                    let pos = rng.below(bad.len());
                    bad[pos] = rng.next() as u8;
                }
            }
            // Plant a large or negative 32-bit word (offsets, lengths, soffsets).
            2 => {
                let pos = 8 + rng.below(bad.len() - 12) / 4 * 4;
                let word = [u32::MAX, 0x8000_0000, 0x7FFF_FFFF, bad.len() as u32, 0][rng.below(5)];
                bad[pos..pos + 4].copy_from_slice(&word.to_le_bytes());
            }
            // Cut out or insert a few bytes past the identifier.
            _ => {
                let pos = 8 + rng.below(bad.len() - 8);
                let n = 1 + rng.below(8);
                if rng.next().is_multiple_of(2) {
                    bad.drain(pos..(pos + n).min(bad.len()));
                } else {
                    for _ in 0..n {
                        bad.insert(pos, rng.next() as u8);
                    }
                }
            }
        }
        if let Ok(view) = read(&bad) {
            assert_consistent(&view, &format!("round {round}"));
        }
    }
}

#[test]
fn wrong_or_missing_identifier_is_not_an_adapter() {
    let mut bytes = fixture("math.onnx_adapter");
    bytes[4..8].copy_from_slice(b"ORTM");
    assert_eq!(
        read(&bytes),
        Err(AdapterError::NotAnAdapter {
            found: Some(*b"ORTM")
        })
    );
    assert_eq!(read(&[]), Err(AdapterError::NotAnAdapter { found: None }));
    assert_eq!(
        read(b"\x08\0\0\0TOR"),
        Err(AdapterError::NotAnAdapter { found: None })
    );
    // An ONNX model is not an adapter either.
    let model = fixture("lora.onnx");
    assert!(matches!(
        read(&model),
        Err(AdapterError::NotAnAdapter { found: Some(_) })
    ));
}

#[test]
fn offsets_out_of_the_file_are_refused() {
    // The identifier alone, with a root offset past the end, at the start, or at itself.
    for root in [u32::MAX, 8, 0, 4, 0x8000_0000] {
        let mut bytes = root.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"TORT");
        assert!(
            matches!(read(&bytes), Err(AdapterError::Invalid { .. })),
            "root offset {root}"
        );
    }
    // A parameter whose data claims 4 GiB, or whose dims claim a billion axes.
    let bytes = fixture("math.onnx_adapter");
    let view = read(&bytes).unwrap();
    let p = &view.parameters[1];
    let data_len_at = offset_in(&bytes, p.data) - 4;
    let mut bad = bytes.clone();
    bad[data_len_at..data_len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = read(&bad).unwrap_err();
    assert!(matches!(err, AdapterError::Invalid { .. }), "{err}");

    let dims_len_at = (0..bytes.len() - 20)
        .find(|&i| {
            bytes[i..i + 4] == 2u32.to_le_bytes()
                && bytes[i + 4..i + 12] == p.dims[0].to_le_bytes()
                && bytes[i + 12..i + 20] == p.dims[1].to_le_bytes()
        })
        .expect("the dims vector of lora_b.0");
    let mut bad = bytes.clone();
    bad[dims_len_at..dims_len_at + 4].copy_from_slice(&1_000_000_000u32.to_le_bytes());
    let err = read(&bad).unwrap_err();
    assert!(matches!(err, AdapterError::Invalid { .. }), "{err}");
}

#[test]
fn a_well_formed_file_reads_back_what_was_written() {
    let values: Vec<f32> = (0..6).map(|i| i as f32 * 0.5).collect();
    let bytes = Adapter::with(vec![
        float("lora_a.0", &[3, 2], &values),
        float("scale", &[], &[2.0]),
        float("empty", &[4, 0], &[]),
        Param {
            name: Some("ids".into()),
            dims: Some(vec![2]),
            element: Some(7),
            data: Some([5i64, -6].iter().flat_map(|v| v.to_le_bytes()).collect()),
        },
    ])
    .build();
    let view = read(&bytes).unwrap();
    assert_eq!(
        (
            view.format_version,
            view.adapter_version,
            view.model_version
        ),
        (1, 7, 9)
    );
    let names: Vec<&str> = view.parameters.iter().map(|p| p.name).collect();
    assert_eq!(names, ["lora_a.0", "scale", "empty", "ids"]);
    let a = view.parameter("lora_a.0").unwrap();
    assert_eq!(
        (a.dims.as_slice(), a.element, a.data.len()),
        (&[3, 2][..], 1, 24)
    );
    assert_eq!(a.data[4..8], 0.5f32.to_le_bytes());
    let scale = view.parameter("scale").unwrap();
    assert_eq!((scale.dims.len(), scale.element_count()), (0, Some(1)));
    assert_eq!(view.parameter("empty").unwrap().data, &[] as &[u8]);
    assert_eq!(
        view.parameter("ids").unwrap().data[8..],
        (-6i64).to_le_bytes()
    );
    assert!(view.parameter("lora_b.0").is_none());
    // No parameters at all is a valid (if useless) adapter.
    assert_eq!(read(&Adapter::with(vec![]).build()).unwrap().parameters, []);
}

#[test]
fn data_of_the_wrong_size_is_refused() {
    let short = Adapter::with(vec![float("w", &[2, 2], &[1.0, 2.0, 3.0])]).build();
    assert_eq!(
        read(&short),
        Err(AdapterError::SizeMismatch {
            param: "w".into(),
            expected_bytes: 16,
            found_bytes: 12
        })
    );
    let long = Adapter::with(vec![float("w", &[], &[1.0, 2.0])]).build();
    assert_eq!(
        read(&long),
        Err(AdapterError::SizeMismatch {
            param: "w".into(),
            expected_bytes: 4,
            found_bytes: 8
        })
    );
    // float16 [3] needs 6 bytes, not the 12 of three floats.
    let mut half = float("h", &[3], &[1.0, 2.0, 3.0]);
    half.element = Some(10);
    assert_eq!(
        read(&Adapter::with(vec![half]).build()),
        Err(AdapterError::SizeMismatch {
            param: "h".into(),
            expected_bytes: 6,
            found_bytes: 12
        })
    );
}

#[test]
fn negative_dims_are_refused() {
    let bytes = Adapter::with(vec![float("ok", &[1], &[1.0]), float("w", &[2, -1], &[])]).build();
    assert_eq!(
        read(&bytes),
        Err(AdapterError::NegativeDim {
            param: "w".into(),
            axis: 1,
            dim: -1
        })
    );
    let bytes = Adapter::with(vec![float("w", &[i64::MIN, 0], &[])]).build();
    assert!(matches!(
        read(&bytes),
        Err(AdapterError::NegativeDim {
            axis: 0,
            dim: i64::MIN,
            ..
        })
    ));
}

#[test]
fn sizes_past_usize_are_refused_without_overflow() {
    let bytes = Adapter::with(vec![float("w", &[i64::MAX, 2], &[1.0])]).build();
    assert_eq!(
        read(&bytes),
        Err(AdapterError::SizeOverflow {
            param: "w".into(),
            dims: vec![i64::MAX, 2]
        })
    );
    // Elements that fit but bytes that do not: 2^62 floats.
    let bytes = Adapter::with(vec![float("w", &[1 << 62], &[])]).build();
    assert!(matches!(
        read(&bytes),
        Err(AdapterError::SizeOverflow { .. })
    ));
    // A zero anywhere makes an empty tensor, however large the other dims.
    let bytes = Adapter::with(vec![float("w", &[i64::MAX, i64::MAX, 0], &[])]).build();
    let view = read(&bytes).unwrap();
    assert_eq!(view.parameters[0].element_count(), Some(0));
}

#[test]
fn duplicate_names_are_refused() {
    let bytes = Adapter::with(vec![
        float("lora_a.0", &[1], &[1.0]),
        float("lora_b.0", &[1], &[1.0]),
        float("lora_a.0", &[1], &[2.0]),
    ])
    .build();
    assert_eq!(
        read(&bytes),
        Err(AdapterError::DuplicateName {
            param: "lora_a.0".into()
        })
    );
}

#[test]
fn element_types_without_a_fixed_size_are_refused() {
    // undefined, string, complex64, complex128, past the schema (uint4, ...), negative.
    for code in [0, 8, 14, 15, 21, 22, 23, 25, 100, -1, i32::MIN] {
        let mut p = float("w", &[1], &[1.0]);
        p.element = Some(code);
        assert_eq!(
            read(&Adapter::with(vec![p]).build()),
            Err(AdapterError::UnsupportedElement {
                param: "w".into(),
                code
            }),
            "code {code}"
        );
    }
    // An absent data_type is the schema's default, UNDEFINED (0).
    let mut p = float("w", &[1], &[1.0]);
    p.element = None;
    assert_eq!(
        read(&Adapter::with(vec![p]).build()),
        Err(AdapterError::UnsupportedElement {
            param: "w".into(),
            code: 0
        })
    );
    // Every fixed-size code is read, with its own byte size.
    for code in [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20] {
        let size = element_size(code).unwrap();
        let p = Param {
            name: Some("w".into()),
            dims: Some(vec![3]),
            element: Some(code),
            data: Some(vec![0; 3 * size]),
        };
        let bytes = Adapter::with(vec![p]).build();
        assert_eq!(read(&bytes).unwrap().parameters[0].element, code);
    }
}

#[test]
fn other_format_versions_are_refused() {
    for (version, found) in [(Some(2), 2), (Some(0), 0), (Some(-1), -1), (None, 0)] {
        let mut adapter = Adapter::with(vec![float("w", &[1], &[1.0])]);
        adapter.format_version = version;
        assert_eq!(
            read(&adapter.build()),
            Err(AdapterError::UnsupportedFormatVersion {
                found,
                supported: 1
            })
        );
    }
}

#[test]
fn missing_fields_are_refused() {
    // ONNX Runtime's writer leaves an empty name out; both are refused by index.
    for name in [None, Some(String::new())] {
        let mut p = float("w", &[1], &[1.0]);
        p.name = name;
        let bytes = Adapter::with(vec![float("ok", &[1], &[1.0]), p]).build();
        assert_eq!(
            read(&bytes),
            Err(AdapterError::UnnamedParameter { index: 1 })
        );
    }
    // dims, raw_data and parameters are always written by ONNX Runtime and required here.
    let mut p = float("w", &[1], &[1.0]);
    p.dims = None;
    let err = read(&Adapter::with(vec![p]).build()).unwrap_err();
    assert!(
        matches!(&err, AdapterError::Invalid { reason } if reason.contains("dims")),
        "{err}"
    );
    let mut p = float("w", &[1], &[1.0]);
    p.data = None;
    let err = read(&Adapter::with(vec![p]).build()).unwrap_err();
    assert!(
        matches!(&err, AdapterError::Invalid { reason } if reason.contains("raw_data")),
        "{err}"
    );
    let mut adapter = Adapter::with(vec![]);
    adapter.parameters = None;
    let err = read(&adapter.build()).unwrap_err();
    assert!(
        matches!(&err, AdapterError::Invalid { reason } if reason.contains("parameters")),
        "{err}"
    );
}

#[test]
fn names_must_be_utf8() {
    let bytes = Adapter::with(vec![float("wé", &[1], &[1.0])]).build();
    let at = bytes.windows(3).position(|w| w == "wé".as_bytes()).unwrap();
    let mut bad = bytes.clone();
    bad[at + 1] = 0xFF; // a lone continuation-less byte
    let err = read(&bad).unwrap_err();
    assert!(matches!(err, AdapterError::Invalid { .. }), "{err}");
}

#[test]
fn one_long_name_shared_by_many_parameters_is_refused_quickly() {
    // Offsets may point many tables at the same bytes; verifying them all would read a
    // 64 KiB name thousands of times. The verifier's budget (twice the file) stops it.
    let mut b = flatbuffers::FlatBufferBuilder::new();
    let name = b.create_string(&"n".repeat(1 << 16));
    let dims = b.create_vector::<i64>(&[]);
    let data = b.create_vector(&1.0f32.to_le_bytes());
    let tables: Vec<_> = (0..5000)
        .map(|_| {
            let start = b.start_table();
            b.push_slot_always(4, name);
            b.push_slot_always(6, dims);
            b.push_slot_always(8, 1i32);
            b.push_slot_always(10, data);
            b.end_table(start)
        })
        .collect();
    let parameters = b.create_vector(&tables);
    let start = b.start_table();
    b.push_slot_always(4, 1i32);
    b.push_slot_always(10, parameters);
    let root = b.end_table(start);
    b.finish(root, Some("TORT"));
    let err = read(b.finished_data()).unwrap_err();
    assert!(
        matches!(&err, AdapterError::Invalid { reason } if reason.contains("Apparent size")),
        "{err}"
    );
}

#[test]
fn many_small_parameters_stay_within_the_verifier_budget() {
    let params: Vec<Param> = (0..20_000)
        .map(|i| float(&format!("p{i}"), &[1], &[i as f32]))
        .collect();
    let bytes = Adapter::with(params).build();
    let view = read(&bytes).unwrap();
    assert_eq!(view.parameters.len(), 20_000);
    assert_eq!(view.parameters[19_999].data, 19_999f32.to_le_bytes());
}
