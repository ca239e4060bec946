//! `DynamicBinding` (the runtime's binding for any model, used by `ort-bind run`): element
//! types and shapes read from the session, inputs sized by the data, outputs allocated by
//! ONNX Runtime and read in place.

use ort_bind::{
    DynamicBinding, Error, HostArray, HostArrayRef, HostData, NumericType, Session, SessionOptions,
    bf16, f16,
};
use ort_bind_tests::paths::fixture;

fn binding(model: &str) -> DynamicBinding {
    let session = Session::from_file(fixture(model), &SessionOptions::new()).unwrap();
    DynamicBinding::new(&session).unwrap()
}

#[test]
fn runs_add_at_two_sizes() -> ort_bind::Result<()> {
    let mut b = binding("add.onnx");
    let names: Vec<_> = b
        .input_info()
        .map(|i| {
            (
                i.name.clone(),
                i.dtype().unwrap(),
                i.dims().unwrap().to_vec(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("x".to_owned(), NumericType::F32, vec![None]),
            ("y".to_owned(), NumericType::F32, vec![None])
        ]
    );
    let (x, y) = (b.input_index("x").unwrap(), b.input_index("y").unwrap());
    b.set_input(x, HostArrayRef::of(&[3], &[1.0f32, 2.0, 3.0])?)?;
    b.set_input(y, HostArrayRef::of(&[3], &[10.0f32, 20.0, 30.0])?)?;
    b.run()?;
    let sum = b.output(0)?;
    assert_eq!(sum.dims(), &[3]);
    assert_eq!(sum.as_slice::<f32>(), Some(&[11.0f32, 22.0, 33.0][..]));

    // Smaller, then larger: buffers are resized (and regrown) and rebound.
    b.set_input(x, HostArrayRef::of(&[1], &[0.5f32])?)?;
    b.set_input(y, HostArrayRef::of(&[1], &[0.25f32])?)?;
    b.run()?;
    assert_eq!(b.output(0)?.as_slice::<f32>(), Some(&[0.75f32][..]));
    let big: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    b.set_input(x, HostArrayRef::of(&[1000], &big)?)?;
    b.set_input(y, HostArrayRef::of(&[1000], &big)?)?;
    b.run()?;
    let out = b.output(0)?;
    assert_eq!(out.dims(), &[1000]);
    assert_eq!(out.as_slice::<f32>().unwrap()[999], 1998.0);
    Ok(())
}

#[test]
fn every_element_type_round_trips() -> ort_bind::Result<()> {
    let mut b = binding("alltypes.onnx");
    let arrays = [
        HostArray::from_vec(vec![2], vec![1.5f32, -2.0])?,
        HostArray::from_vec(vec![2], vec![1.5f64, -2.0])?,
        HostArray::from_vec(vec![2], vec![f16::from_f32(1.5), f16::from_f32(-2.0)])?,
        HostArray::from_vec(vec![2], vec![bf16::from_f32(1.5), bf16::from_f32(-2.0)])?,
        HostArray::from_vec(vec![2], vec![i8::MIN, i8::MAX])?,
        HostArray::from_vec(vec![2], vec![i16::MIN, i16::MAX])?,
        HostArray::from_vec(vec![2], vec![i32::MIN, i32::MAX])?,
        HostArray::from_vec(vec![2], vec![i64::MIN, i64::MAX])?,
        HostArray::from_vec(vec![2], vec![0u8, u8::MAX])?,
        HostArray::from_vec(vec![2], vec![0u16, u16::MAX])?,
        HostArray::from_vec(vec![2], vec![0u32, u32::MAX])?,
        HostArray::from_vec(vec![2], vec![0u64, u64::MAX])?,
        HostArray::from_vec(vec![2], vec![true, false])?,
    ];
    for (i, a) in arrays.iter().enumerate() {
        let info = b.input_info().nth(i).unwrap().clone();
        assert_eq!(info.dtype(), Some(a.dtype()), "{}", info.name);
        assert_eq!(info.name, format!("x_{}", a.dtype()));
        b.set_input(i, a.view())?;
    }
    b.run()?;
    for (i, a) in arrays.iter().enumerate() {
        assert_eq!(b.output(i)?.to_owned_array(), *a, "output {i}");
    }
    Ok(())
}

#[test]
fn scalars_and_data_dependent_outputs() -> ort_bind::Result<()> {
    let mut b = binding("scalar.onnx");
    b.set_input(0, HostArrayRef::of(&[], &[1.25f32])?)?;
    b.run()?;
    let y = b.output(0)?;
    assert_eq!(y.dims(), &[] as &[usize]);
    assert_eq!(y.as_slice::<f32>(), Some(&[2.5f32][..]));

    let mut b = binding("nonzero.onnx");
    b.set_input(
        0,
        HostArrayRef::of(&[6], &[0.0f32, 1.5, 0.0, -2.0, 0.0, 3.0])?,
    )?;
    b.run()?;
    let indices = b.output(0)?;
    assert_eq!(indices.dims(), &[1, 3]);
    assert_eq!(indices.as_slice::<i64>(), Some(&[1i64, 3, 5][..]));
    Ok(())
}

#[test]
fn mistakes_are_errors() -> ort_bind::Result<()> {
    let mut b = binding("add.onnx");
    assert!(matches!(b.output(0), Err(Error::NotRun { .. })));
    b.set_input(0, HostArrayRef::of(&[2], &[1.0f32, 2.0])?)?;
    let err = b.run().unwrap_err();
    assert!(
        matches!(&err, Error::MissingInput { input } if input == "y"),
        "{err}"
    );
    let err = b
        .set_input(1, HostArrayRef::of(&[2], &[1i64, 2])?)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "input `y` is float32 in the model, the data is int64"
    );
    let err = b
        .set_input(1, HostArrayRef::of(&[1, 2], &[1.0f32, 2.0])?)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("rank 2 where the model declares rank 1"),
        "{err}"
    );
    assert!(b.set_input(2, HostArrayRef::of(&[1], &[1.0f32])?).is_err());
    assert!(b.output(1).is_err());

    // Shapes ONNX Runtime rejects (x and y differ) fail the run, and a later run works.
    b.set_input(1, HostArrayRef::of(&[2], &[5.0f32, 5.0])?)?;
    b.run()?;
    assert_eq!(b.output(0)?.as_slice::<f32>(), Some(&[6.0f32, 7.0][..]));
    b.set_input(1, HostArrayRef::of(&[3], &[1.0f32, 2.0, 3.0])?)?;
    assert!(matches!(b.run(), Err(Error::Ort { .. })));
    // The previous run's output is not passed off as this one's.
    assert!(matches!(b.output(0), Err(Error::NotRun { .. })));
    b.set_input(1, HostArrayRef::of(&[2], &[1.0f32, 2.0])?)?;
    b.run()?;
    assert_eq!(b.output(0)?.as_slice::<f32>(), Some(&[2.0f32, 4.0][..]));

    // A fixed dim is checked before ONNX Runtime sees the data.
    let mut b = binding("add16.onnx");
    let err = b
        .set_input(0, HostArrayRef::of(&[15], &[0.0f32; 15])?)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("axis 0 is 15 where the model fixes it to 16"),
        "{err}"
    );
    assert!(matches!(
        HostArray::new(vec![2], HostData::U8(vec![1])),
        Err(Error::Length { .. })
    ));
    Ok(())
}

/// ONNX's narrow element types through the dynamic route: `narrow.onnx` (every float8 type
/// cast both ways, int4/uint4/int2/uint2 through QuantizeLinear/DequantizeLinear, five
/// elements each) with the inputs of `tests/reference/narrow.txt`, whose outputs are what
/// Python onnxruntime 1.31.1 computed. Narrow inputs are copied in as their packed bytes;
/// narrow outputs are allocated by ONNX Runtime and read in place.
#[test]
fn narrow_types_cross_the_dynamic_binding() -> ort_bind::Result<()> {
    use ort_bind::element::narrow::pack_into;
    use ort_bind::{
        Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Int2x4, Int4x2,
        UInt2x4, UInt4x2,
    };
    let text = std::fs::read_to_string(fixture("../reference/narrow.txt")).unwrap();
    let words = |key: &str| -> Vec<String> {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("narrow.txt has no `{key}`"))
            .split(' ')
            .map(str::to_owned)
            .collect()
    };
    let float = |s: &String| -> f64 {
        match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            _ => s.parse().unwrap(),
        }
    };
    let code = |s: &String| u8::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let same = |a: &[f64], b: &[f64]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x == y || x.is_nan() && y.is_nan())
    };

    let mut b = binding("narrow.onnx");
    let x: Vec<f32> = words("x").iter().map(|s| float(s) as f32).collect();
    let ix = b.input_index("x").unwrap();
    b.set_input(ix, HostArrayRef::of(&[5], &x)?)?;
    macro_rules! float8_in {
        ($($t:ident: $name:literal => $dtype:ident;)*) => {$(
            let values: Vec<$t> = words(concat!("in ", $name))
                .iter()
                .map(|s| $t::from_bits(code(s)))
                .collect();
            let i = b.input_index(concat!("in_", $name)).unwrap();
            assert_eq!(b.input_info().nth(i).unwrap().dtype(), Some(NumericType::$dtype));
            b.set_input(i, HostArrayRef::of(&[5], &values)?)?;
        )*};
    }
    float8_in! {
        Float8E4M3FN: "float8e4m3fn" => F8E4M3FN;
        Float8E4M3FNUZ: "float8e4m3fnuz" => F8E4M3FNUZ;
        Float8E5M2: "float8e5m2" => F8E5M2;
        Float8E5M2FNUZ: "float8e5m2fnuz" => F8E5M2FNUZ;
        Float8E8M0: "float8e8m0" => F8E8M0;
    }
    macro_rules! packed_in {
        ($($t:ident($v:ty): $name:literal => $dtype:ident, $bytes:literal;)*) => {$(
            let elements: Vec<$v> = words(concat!("in ", $name))
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
            let mut bytes = vec![$t::default(); $bytes];
            pack_into(&mut bytes, &elements).unwrap();
            let i = b.input_index(concat!("in_", $name)).unwrap();
            assert_eq!(b.input_info().nth(i).unwrap().dtype(), Some(NumericType::$dtype));
            // Five elements are `$bytes` packed values, not five.
            assert!(HostArrayRef::of(&[5], &vec![$t::default(); 5][..]).is_err());
            b.set_input(i, HostArrayRef::of(&[5], &bytes)?)?;
        )*};
    }
    packed_in! {
        Int4x2(i8): "int4" => I4, 3;
        UInt4x2(u8): "uint4" => U4, 3;
        Int2x4(i8): "int2" => I2, 2;
        UInt2x4(u8): "uint2" => U2, 2;
    }
    // Another packed type of the same size is still the wrong type.
    let i = b.input_index("in_int4").unwrap();
    let err = b
        .set_input(i, HostArrayRef::of(&[5], &[UInt4x2::default(); 3][..])?)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "input `in_int4` is int4 in the model, the data is uint4"
    );
    b.run()?;

    let elements = |name: &str| -> Vec<f64> {
        let o = b.output(b.output_index(name).unwrap()).unwrap();
        assert_eq!(o.dims(), &[5], "{name}");
        (0..o.element_count())
            .map(|i| o.data().get_f64(i).unwrap())
            .collect()
    };
    macro_rules! float8_out {
        ($($t:ident: $name:literal;)*) => {$(
            let q = b.output(b.output_index(concat!("q_", $name)).unwrap())?;
            let bits: Vec<u8> = q
                .as_slice::<$t>()
                .expect(concat!("q_", $name, " holds ", stringify!($t)))
                .iter()
                .map(|v| v.to_bits())
                .collect();
            let want: Vec<u8> = words(concat!("ort q ", $name)).iter().map(code).collect();
            assert_eq!(bits, want, "q_{}", $name);
            // get_f64 reads the exact value of each code.
            let as_f64: Vec<f64> = (0..5).map(|i| q.data().get_f64(i).unwrap()).collect();
            let exact: Vec<f64> = want.iter().map(|&c| f64::from($t::from_bits(c).to_f32())).collect();
            assert!(same(&as_f64, &exact), "q_{}: {as_f64:?}", $name);
            let want_d: Vec<f64> = words(concat!("ort d ", $name)).iter().map(float).collect();
            assert!(same(&elements(concat!("d_", $name)), &want_d), "d_{}", $name);
        )*};
    }
    float8_out! {
        Float8E4M3FN: "float8e4m3fn";
        Float8E4M3FNUZ: "float8e4m3fnuz";
        Float8E5M2: "float8e5m2";
        Float8E5M2FNUZ: "float8e5m2fnuz";
        Float8E8M0: "float8e8m0";
    }
    for name in ["int4", "uint4", "int2", "uint2"] {
        let q = b.output(b.output_index(&format!("q_{name}")).unwrap())?;
        assert_eq!(q.dtype().name(), name);
        assert_eq!(q.data().len(), 5usize.div_ceil(q.dtype().packing()));
        let want: Vec<f64> = words(&format!("ort q {name}")).iter().map(float).collect();
        assert_eq!(elements(&format!("q_{name}")), want, "q_{name}");
        let want_d: Vec<f64> = words(&format!("ort d {name}")).iter().map(float).collect();
        assert!(same(&elements(&format!("d_{name}")), &want_d), "d_{name}");
    }
    Ok(())
}
