//! The `unsafe` read behind [`TensorRef::as_slice`], exercised without ONNX Runtime so
//! that it runs under Miri (`cargo +nightly miri test -p ort-bind-runtime --lib
//! tensor::miri_tests`; see `UNSAFE.md`). A [`Tensor`](super::Tensor) cannot be made
//! without an ONNX Runtime value (FFI), so these views are built exactly the way
//! [`Tensor::view`](super::Tensor::view) builds them, over a buffer from the
//! [`Cpu`] device's own allocator.

use std::marker::PhantomData;

use super::TensorRef;
use crate::device::Cpu;
use crate::device::private::DeviceImpl;
use crate::element::{Element, bf16, f16};
use crate::shape::{Dyn, Fix};

/// A view of the first `len` elements of `buf`, as `Tensor::view` makes it.
fn view<'a, T: Element>(
    buf: &'a Vec<T>,
    dims: &'a [usize],
    len: usize,
) -> TensorRef<'a, T, (Dyn,), Cpu> {
    TensorRef {
        name: "x",
        dims,
        data: Cpu::data_ptr_const(buf).cast(),
        len,
        device: &Cpu,
        buffer: Some(buf),
        _marker: PhantomData,
    }
}

fn reads_in_place<T: Element + PartialEq + std::fmt::Debug>(make: impl Fn(usize) -> T) {
    let mut buf = Cpu.alloc::<T>(6).expect("allocate");
    for (i, v) in buf.iter_mut().enumerate() {
        *v = make(i);
    }
    // A tensor shrunk to 4 elements keeps its capacity of 6: the view sees 4.
    let dims = [4];
    let v = view(&buf, &dims, 4);
    let slice = v.as_slice();
    assert_eq!(slice.len(), 4);
    assert_eq!(slice.as_ptr(), buf.as_ptr(), "read in place, not copied");
    for (i, x) in slice.iter().enumerate() {
        assert_eq!(*x, make(i));
    }
    // The slice lives for the buffer's borrow, not the view's: views are `Copy` and may
    // be dropped while the slice is still read.
    let detached = {
        let copy = v;
        copy.as_slice()
    };
    assert_eq!(detached, &buf[..4]);
    assert_eq!(v.to_vec(), buf[..4].to_vec());
    // The whole buffer.
    let all = [6];
    assert_eq!(view(&buf, &all, 6).as_slice(), &buf[..]);
}

#[test]
fn views_read_host_buffers_in_place_for_every_element_type() {
    reads_in_place(|i| i as f32 * 0.5);
    reads_in_place(|i| i as f64 - 1.0);
    reads_in_place(|i| f16::from_f32(i as f32));
    reads_in_place(|i| bf16::from_f32(-(i as f32)));
    reads_in_place(|i| i as i8);
    reads_in_place(|i| i as i16 * 300);
    reads_in_place(|i| i as i32 * -70_000);
    reads_in_place(|i| i as i64 * 5_000_000_000);
    reads_in_place(|i| i as u8);
    reads_in_place(|i| i as u16 * 1000);
    reads_in_place(|i| i as u32 * 70_000);
    reads_in_place(|i| i as u64 * 5_000_000_000);
    reads_in_place(|i| i % 2 == 0);
}

#[test]
fn empty_and_not_yet_run_views_are_empty_slices() {
    // Zero elements over an empty (dangling, never dereferenced) buffer.
    let empty: Vec<f32> = Cpu.alloc(0).expect("allocate");
    let dims = [0];
    assert!(view(&empty, &dims, 0).as_slice().is_empty());
    // An ONNX Runtime-allocated output before its first run: null data, no buffer.
    let dims = [3];
    let unset: TensorRef<'_, f32, (Fix<3>,), Cpu> = TensorRef {
        name: "y",
        dims: &dims,
        data: std::ptr::null(),
        len: 3,
        device: &Cpu,
        buffer: None,
        _marker: PhantomData,
    };
    assert!(unset.as_slice().is_empty());
    assert!(unset.to_vec().is_empty());
}

#[test]
fn a_view_and_its_slices_outlive_nothing_they_borrow() {
    // Many views and slices of one buffer at once (shared reads only), then the buffer
    // is written again once they are gone: Miri's aliasing model checks the reads
    // through the raw pointer do not conflict with the later write.
    let mut buf = Cpu.alloc::<i32>(8).expect("allocate");
    buf.iter_mut().enumerate().for_each(|(i, v)| *v = i as i32);
    let dims = [8];
    {
        let a = view(&buf, &dims, 8);
        let b = view(&buf, &dims, 5);
        let (sa, sb) = (a.as_slice(), b.as_slice());
        assert_eq!(sa[..5], *sb);
        assert_eq!(buf[7], sa[7]);
    }
    let writable = Cpu::host_slice_mut(&mut buf, 8).expect("host memory");
    writable[0] = 42;
    assert_eq!(view(&buf, &dims, 8).as_slice()[0], 42);
}
