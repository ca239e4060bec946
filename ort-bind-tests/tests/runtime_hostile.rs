//! Hostile use of the runtime: sizes that overflow or cannot be allocated, runs
//! after failures, concurrent runs on one session, bindings moved across threads.
//! Every case ends in an `Err` or in correct results, never a panic.

mod add {
    ort_bind::include_bindings!("add");
}
mod dynamic {
    ort_bind::include_bindings!("dynamic");
}
mod lying_shape {
    ort_bind::include_bindings!("lying_shape");
}
mod lying_allocated {
    ort_bind::include_bindings!("lying_allocated");
}

use ort_bind::Error;

#[test]
fn dims_whose_product_overflows_are_an_error() -> ort_bind::Result<()> {
    let model = dynamic::Model::load()?;
    // batch * 4 overflows usize.
    let err = model
        .bind(dynamic::Dims {
            batch: usize::MAX / 2,
        })
        .unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains("`x`"), "{err}");
    Ok(())
}

#[test]
fn unallocatable_sizes_are_an_error_not_an_abort() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    // 2^60 f32s: representable, far beyond any machine.
    let err = model.bind(add::Dims { n: 1 << 60 }).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert!(err.to_string().contains("`x`"), "{err}");
    Ok(())
}

#[test]
fn a_failed_resize_leaves_a_usable_binding() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut b = model.bind(add::Dims { n: 2 })?;
    assert!(b.set_dims(add::Dims { n: 1 << 60 }).is_err());
    // Whatever was resized before the failure, the binding rebinds before running.
    b.set_dims(add::Dims { n: 3 })?;
    b.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    b.inputs().y.copy_from_slice(&[1.0, 1.0, 1.0])?;
    b.run()?;
    assert_eq!(b.outputs().sum.as_slice(), &[2.0, 3.0, 4.0]);
    Ok(())
}

#[test]
fn concurrent_bindings_on_one_session_give_correct_results() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let model = model.clone();
            std::thread::spawn(move || -> ort_bind::Result<()> {
                let n = 8 + t;
                let mut b = model.bind(add::Dims { n })?;
                for i in 0..500 {
                    let base = (t * 1000 + i) as f32;
                    let x: Vec<f32> = (0..n).map(|k| base + k as f32).collect();
                    b.inputs().x.copy_from_slice(&x)?;
                    b.inputs().y.fill(0.5);
                    b.run()?;
                    let out = b.outputs().sum;
                    for (k, v) in out.as_slice().iter().enumerate() {
                        assert_eq!(*v, base + k as f32 + 0.5, "thread {t} run {i}");
                    }
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.join().expect("no thread panicked")?;
    }
    Ok(())
}

#[test]
fn a_binding_can_move_to_another_thread() -> ort_bind::Result<()> {
    fn assert_send<T: Send>(_: &T) {}
    let model = dynamic::Model::load()?;
    let mut b = model.bind(dynamic::Dims { batch: 1 })?;
    assert_send(&b);
    b.inputs().x.copy_from_slice(&[0.5; 4])?;
    let b = std::thread::spawn(move || -> ort_bind::Result<_> {
        b.run()?;
        Ok(b)
    })
    .join()
    .expect("no panic")?;
    let y = b.outputs().y;
    assert!((y.as_slice()[0] - 0.9).abs() < 1e-6);
    Ok(())
}

#[test]
fn an_output_larger_than_its_declared_shape_is_an_error_not_an_overflow() -> ort_bind::Result<()> {
    // `y` is declared `[n]`, so ort-bind pre-allocates n elements; the model writes 2n.
    let model = lying_shape::Model::load()?;
    let mut b = model.bind(lying_shape::Dims { n: 3 })?;
    b.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    for _ in 0..2 {
        let err = b
            .run()
            .expect_err("ONNX Runtime must refuse the too-small buffer");
        assert!(matches!(err, Error::Ort { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("running the model"), "{text}");
        assert!(
            text.contains("Shape mismatch") || text.contains("shape"),
            "{text}"
        );
        // Nothing was written into (or past) the bound buffer.
        assert_eq!(b.outputs().y.as_slice(), &[0.0, 0.0, 0.0]);
    }
    Ok(())
}

#[test]
fn an_allocated_output_that_breaks_its_declared_shape_is_an_error() -> ort_bind::Result<()> {
    // `z` is declared `[m, 2]` and allocated by ONNX Runtime; its real shape is `s`.
    let model = lying_allocated::Model::load()?;
    let x: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let run = |s: &[i64]| -> ort_bind::Result<Option<(Vec<usize>, Vec<f32>)>> {
        let mut b = model.bind(lying_allocated::Dims { n: 6, k: s.len() })?;
        b.inputs().x.copy_from_slice(&x)?;
        b.inputs().s.copy_from_slice(s)?;
        b.run()?;
        Ok(b.outputs()
            .z
            .get()
            .ok()
            .map(|z| (z.dims().to_vec(), z.to_vec())))
    };
    // As declared: [3, 2].
    assert_eq!(run(&[3, 2])?, Some((vec![3, 2], x.clone())));
    // Wrong rank ([6]) and wrong fixed axis ([2, 3]): errors that say so, no view.
    for (s, why) in [(&[6][..], "rank"), (&[2, 3][..], "2")] {
        let err = run(s).expect_err("a shape that breaks the declaration");
        assert!(matches!(err, Error::Shape { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("breaks the declared shape") && text.contains(why),
            "{text}"
        );
    }
    // After such a failure the output reads as absent, not as stale or foreign data.
    let mut b = model.bind(lying_allocated::Dims { n: 6, k: 1 })?;
    b.inputs().x.copy_from_slice(&x)?;
    b.inputs().s.copy_from_slice(&[6])?;
    assert!(b.run().is_err());
    assert!(b.outputs().z.get().is_err());
    // A run ONNX Runtime rejects (`Reshape` of 6 elements to [4, 4]) and a change of dims
    // leave no earlier result readable either.
    let mut b = model.bind(lying_allocated::Dims { n: 6, k: 2 })?;
    b.inputs().x.copy_from_slice(&x)?;
    b.inputs().s.copy_from_slice(&[3, 2])?;
    b.run()?;
    assert!(b.outputs().z.get().is_ok());
    b.inputs().s.copy_from_slice(&[4, 4])?;
    assert!(b.run().is_err());
    assert!(
        b.outputs().z.get().is_err(),
        "stale output after a failed run"
    );
    b.inputs().s.copy_from_slice(&[3, 2])?;
    b.run()?;
    assert!(b.outputs().z.get().is_ok());
    b.set_dims(lying_allocated::Dims { n: 6, k: 1 })?;
    assert!(b.outputs().z.get().is_err(), "stale output after set_dims");
    Ok(())
}
