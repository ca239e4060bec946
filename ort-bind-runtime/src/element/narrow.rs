//! The narrow element types of ONNX: 8-bit floats, and 4- and 2-bit integers and floats
//! packed several to a byte.
//!
//! Each type is one byte, `#[repr(transparent)]` over its bits, laid out exactly as
//! ONNX (and ONNX Runtime) store it, so a tensor of them is bound with no conversion:
//!
//! | type | ONNX type | elements per byte | range |
//! | --- | --- | ---: | --- |
//! | [`Float8E4M3FN`] | `float8e4m3fn` | 1 | ±448, NaN, no infinity |
//! | [`Float8E4M3FNUZ`] | `float8e4m3fnuz` | 1 | ±240, one NaN (`0x80`), no -0, no infinity |
//! | [`Float8E5M2`] | `float8e5m2` | 1 | ±57344, ±infinity, NaN |
//! | [`Float8E5M2FNUZ`] | `float8e5m2fnuz` | 1 | ±57344, one NaN (`0x80`), no -0, no infinity |
//! | [`Float8E8M0`] | `float8e8m0` | 1 | powers of two 2^-127 .. 2^127, NaN (`0xFF`); no sign, no zero |
//! | [`Int4x2`] | `int4` | 2 | -8 ..= 7 |
//! | [`UInt4x2`] | `uint4` | 2 | 0 ..= 15 |
//! | [`Float4E2M1x2`] | `float4e2m1` | 2 | ±{0, 0.5, 1, 1.5, 2, 3, 4, 6} |
//! | [`Int2x4`] | `int2` | 4 | -2 ..= 1 |
//! | [`UInt2x4`] | `uint2` | 4 | 0 ..= 3 |
//!
//! **Packing.** As ONNX defines it: the first element of a byte is in its lowest bits
//! (element `2k` of a 4-bit tensor is byte `k`'s low nibble, element `2k + 1` its high
//! nibble; a 2-bit tensor holds element `4k + j` in bits `2j..2j + 2` of byte `k`). A
//! tensor of `n` elements occupies `ceil(n / PACKING)` bytes; the unused bits of the last
//! byte are zero when ort-bind writes them. [`Element::PACKING`](super::Element::PACKING)
//! says how many elements one value of the type holds, and a tensor's
//! [`len`](crate::Tensor::len) counts those values (bytes), while its dims count elements.
//!
//! **Conversions** follow ONNX's `Cast` with its defaults (`saturate = 1`, and
//! `round_mode = "up"` for `float8e8m0`), as `onnx.reference` computes them: from `f32`,
//! round to nearest (ties to even), values beyond the largest finite value (infinity
//! included) clamp to it, NaN stays NaN (in `float4e2m1`, which has no NaN, it becomes
//! +0); to `f32`, exact. `float8e8m0` takes the exponent of `|x|` rounded up (`0.3 ->
//! 0.5`, `100 -> 128`), zero and subnormals give 2^-127, infinity and NaN give NaN. The
//! 4- and 2-bit integers convert from `i8`/`u8` saturating (`Int4x2::pack(-9, 20)` holds
//! `[-8, 7]`).
//!
//! These are written here rather than taken from a crate: the `float8` crate covers two
//! of the five 8-bit formats (E4M3FN, E5M2) and none of the packed ones, and one
//! implementation of ONNX's rules for all of them is easier to check against ONNX's
//! reference (`ort-bind-tests/tests/narrow.rs` compares every type with values computed by
//! `onnx.reference` and `ml_dtypes`).

/// An 8-bit or 4-bit float format: its mantissa width, exponent bias, the largest finite
/// magnitude code, and how it spells NaN and infinity.
struct Format {
    /// Mantissa bits.
    mbits: u32,
    /// Exponent bias.
    bias: i32,
    /// The sign bit (`0x80` for 8-bit formats, `0x8` for 4-bit).
    sign: u8,
    /// The largest finite magnitude code (sign bit clear).
    max: u8,
    /// NaN: `Some(code)` ORed with the sign, or `None` when the format has none.
    nan: Option<u8>,
    /// `Some(code)` when the format has infinities.
    inf: Option<u8>,
    /// "Finite, unsigned zero" formats: `0x80` (the negative zero code) is the one NaN.
    fnuz: bool,
}

const E4M3FN: Format = Format {
    mbits: 3,
    bias: 7,
    sign: 0x80,
    max: 0x7E,
    nan: Some(0x7F),
    inf: None,
    fnuz: false,
};
const E4M3FNUZ: Format = Format {
    mbits: 3,
    bias: 8,
    sign: 0x80,
    max: 0x7F,
    nan: Some(0x80),
    inf: None,
    fnuz: true,
};
const E5M2: Format = Format {
    mbits: 2,
    bias: 15,
    sign: 0x80,
    max: 0x7B,
    nan: Some(0x7E),
    inf: Some(0x7C),
    fnuz: false,
};
const E5M2FNUZ: Format = Format {
    mbits: 2,
    bias: 16,
    sign: 0x80,
    max: 0x7F,
    nan: Some(0x80),
    inf: None,
    fnuz: true,
};
const E2M1: Format = Format {
    mbits: 1,
    bias: 1,
    sign: 0x8,
    max: 0x7,
    nan: None,
    inf: None,
    fnuz: false,
};

/// `2^k` for `k` in the range of normal `f32` exponents.
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `x` rounded to the nearest code of `f` (ties to even), saturating.
fn encode(x: f32, f: &Format) -> u8 {
    if x.is_nan() {
        return match (f.nan, f.fnuz) {
            (Some(n), true) => n,
            (Some(n), false) => n | if x.is_sign_negative() { f.sign } else { 0 },
            (None, _) => 0,
        };
    }
    let sign = if x.is_sign_negative() { f.sign } else { 0 };
    let bits = x.abs().to_bits();
    let e32 = (bits >> 23) as i32;
    let mant = bits & 0x7F_FFFF;
    // The magnitude code, before saturation (may exceed `f.max`).
    let code: u32 = if e32 == 0xFF {
        // Infinity (NaN was handled above): saturates.
        u32::MAX
    } else if e32 == 0 {
        // Zero or an f32 subnormal: far below half the smallest subnormal of every format.
        0
    } else {
        let e = e32 - 127 + f.bias;
        let sig = mant | 0x80_0000;
        // Bits of the 24-bit significand dropped to reach the target's precision.
        let shift = if e >= 1 {
            23 - f.mbits
        } else {
            ((23 - f.mbits) as i32 + 1 - e) as u32
        };
        if shift > 25 {
            0
        } else {
            let kept = if e >= 1 {
                ((e as u32) << f.mbits) | (mant >> shift)
            } else {
                sig >> shift
            };
            let rem = sig & ((1 << shift) - 1);
            let half = 1 << (shift - 1);
            if rem > half || (rem == half && kept & 1 == 1) {
                kept + 1
            } else {
                kept
            }
        }
    };
    let code = if code > u32::from(f.max) {
        f.max
    } else {
        code as u8
    };
    if f.fnuz && code == 0 { 0 } else { sign | code }
}

/// The exact value of `code` in format `f`.
fn decode(code: u8, f: &Format) -> f32 {
    let magnitude = code & !f.sign;
    let negative = code & f.sign != 0;
    if f.fnuz && code == 0x80 {
        return f32::NAN;
    }
    if let Some(n) = f.nan
        && !f.fnuz
    {
        let exp_mask = (f.sign - 1) & !((1 << f.mbits) - 1);
        let is_nan = match f.inf {
            // E5M2: all-ones exponent with a mantissa.
            Some(inf) => magnitude & exp_mask == exp_mask && magnitude != inf,
            None => magnitude == n,
        };
        if is_nan {
            return f32::NAN;
        }
        if f.inf == Some(magnitude) {
            return if negative {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            };
        }
    }
    let e = i32::from(magnitude >> f.mbits);
    let m = f32::from(magnitude & ((1 << f.mbits) - 1));
    let scale = (1u32 << f.mbits) as f32;
    let v = if e == 0 {
        m / scale * pow2(1 - f.bias)
    } else {
        (1.0 + m / scale) * pow2(e - f.bias)
    };
    if negative { -v } else { v }
}

macro_rules! float8 {
    ($($(#[$doc:meta])* $name:ident => $format:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $name(u8);

        impl $name {
            /// The value with these bits.
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }

            /// The bits of this value.
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// `x` rounded to nearest (ties to even), saturating at the largest finite
            /// value; NaN stays NaN (ONNX `Cast` with `saturate = 1`).
            pub fn from_f32(x: f32) -> Self {
                Self(encode(x, &$format))
            }

            /// The exact value as `f32`.
            pub fn to_f32(self) -> f32 {
                decode(self.0, &$format)
            }

            /// Whether this is NaN.
            pub fn is_nan(self) -> bool {
                self.to_f32().is_nan()
            }
        }

        impl From<$name> for f32 {
            fn from(v: $name) -> f32 {
                v.to_f32()
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:#04x} = {})", stringify!($name), self.0, self.to_f32())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    )*};
}

float8! {
    /// ONNX `float8e4m3fn`: 4 exponent bits (bias 7), 3 mantissa bits; finite (no
    /// infinity), NaN is `S.1111.111`; largest value 448.
    Float8E4M3FN => E4M3FN;
    /// ONNX `float8e4m3fnuz`: 4 exponent bits (bias 8), 3 mantissa bits; no infinity,
    /// no negative zero, the one NaN is `0x80`; largest value 240.
    Float8E4M3FNUZ => E4M3FNUZ;
    /// ONNX `float8e5m2`: 5 exponent bits (bias 15), 2 mantissa bits, with infinities
    /// and NaNs like IEEE half precision; largest finite value 57344.
    Float8E5M2 => E5M2;
    /// ONNX `float8e5m2fnuz`: 5 exponent bits (bias 16), 2 mantissa bits; no infinity,
    /// no negative zero, the one NaN is `0x80`; largest value 57344.
    Float8E5M2FNUZ => E5M2FNUZ;
}

/// ONNX `float8e8m0`: an unsigned 8-bit exponent (bias 127) and no mantissa, the scale
/// type of microscaling formats: `2^(bits - 127)` for bits `0..=254`, NaN for `0xFF`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Float8E8M0(u8);

impl Float8E8M0 {
    /// The value with these bits.
    pub const fn from_bits(bits: u8) -> Self {
        Self(bits)
    }

    /// The bits of this value.
    pub const fn to_bits(self) -> u8 {
        self.0
    }

    /// The power of two at or above `|x|` (ONNX `Cast` with `round_mode = "up"`,
    /// `saturate = 1`): the sign is dropped, zero and subnormals give 2^-127, values
    /// above 2^127 give 2^127, infinity and NaN give NaN.
    pub fn from_f32(x: f32) -> Self {
        let bits = x.to_bits();
        let exponent = (bits >> 23) & 0xFF;
        if exponent == 0xFF {
            return Self(0xFF);
        }
        let up = bits & 0x7F_FFFF != 0 && exponent < 0xFE;
        Self((exponent + u32::from(up)) as u8)
    }

    /// The exact value as `f32` (`2^-127` is an `f32` subnormal).
    pub fn to_f32(self) -> f32 {
        match self.0 {
            0xFF => f32::NAN,
            0 => f32::from_bits(0x40_0000),
            e => f32::from_bits(u32::from(e) << 23),
        }
    }

    /// Whether this is NaN (`0xFF`).
    pub fn is_nan(self) -> bool {
        self.0 == 0xFF
    }
}

impl From<Float8E8M0> for f32 {
    fn from(v: Float8E8M0) -> f32 {
        v.to_f32()
    }
}

impl std::fmt::Debug for Float8E8M0 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Float8E8M0({:#04x} = {})", self.0, self.to_f32())
    }
}

impl std::fmt::Display for Float8E8M0 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.to_f32(), f)
    }
}

macro_rules! packed_int {
    ($($(#[$doc:meta])* $name:ident: $int:ty, $per:literal x $bits:literal, $min:literal ..= $max:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $name(u8);

        impl $name {
            /// Elements in one byte.
            pub const PER_BYTE: usize = $per;
            /// The smallest element value.
            pub const MIN: $int = $min;
            /// The largest element value.
            pub const MAX: $int = $max;
            const MASK: u8 = (1 << $bits) - 1;

            /// The byte with these bits.
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }

            /// The bits of this byte.
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// A byte holding `values` (the first in the lowest bits), each clamped to
            /// `MIN..=MAX`.
            pub fn pack(values: [$int; $per]) -> Self {
                let mut byte = Self(0);
                for (i, v) in values.into_iter().enumerate() {
                    byte.set(i, v);
                }
                byte
            }

            /// The elements of this byte, first one first.
            pub fn unpack(self) -> [$int; $per] {
                std::array::from_fn(|i| self.get(i))
            }

            /// Element `index` (`0..PER_BYTE`) of this byte.
            ///
            /// # Panics
            /// When `index >= PER_BYTE`.
            pub fn get(self, index: usize) -> $int {
                assert!(index < $per, "element {index} of a byte of {} elements", $per);
                let raw = (self.0 >> ($bits * index)) & Self::MASK;
                Self::widen(raw)
            }

            /// Sets element `index` (`0..PER_BYTE`) to `value` clamped to `MIN..=MAX`.
            ///
            /// # Panics
            /// When `index >= PER_BYTE`.
            pub fn set(&mut self, index: usize, value: $int) {
                assert!(index < $per, "element {index} of a byte of {} elements", $per);
                let raw = (value.clamp(Self::MIN, Self::MAX) as u8) & Self::MASK;
                let shift = $bits * index;
                self.0 = (self.0 & !(Self::MASK << shift)) | (raw << shift);
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.unpack())
            }
        }
    )*};
}

packed_int! {
    /// Two ONNX `int4` elements (-8..=7, two's complement) in one byte, the first in the
    /// low nibble.
    Int4x2: i8, 2 x 4, -8 ..= 7;
    /// Two ONNX `uint4` elements (0..=15) in one byte, the first in the low nibble.
    UInt4x2: u8, 2 x 4, 0 ..= 15;
    /// Four ONNX `int2` elements (-2..=1, two's complement) in one byte, the first in
    /// the lowest two bits.
    Int2x4: i8, 4 x 2, -2 ..= 1;
    /// Four ONNX `uint2` elements (0..=3) in one byte, the first in the lowest two bits.
    UInt2x4: u8, 4 x 2, 0 ..= 3;
}

macro_rules! widen {
    ($($name:ident: signed $bits:literal;)*) => {$(
        impl $name {
            fn widen(raw: u8) -> i8 {
                // Sign-extend the low `$bits` bits.
                ((raw << (8 - $bits)) as i8) >> (8 - $bits)
            }
        }
    )*};
    ($($name:ident: unsigned;)*) => {$(
        impl $name {
            fn widen(raw: u8) -> u8 {
                raw
            }
        }
    )*};
}

widen! { Int4x2: signed 4; Int2x4: signed 2; }
widen! { UInt4x2: unsigned; UInt2x4: unsigned; }

/// Two ONNX `float4e2m1` elements in one byte, the first in the low nibble. Each is 1
/// sign, 2 exponent (bias 1) and 1 mantissa bit: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, no
/// infinity, no NaN.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Float4E2M1x2(u8);

impl Float4E2M1x2 {
    /// Elements in one byte.
    pub const PER_BYTE: usize = 2;

    /// The byte with these bits.
    pub const fn from_bits(bits: u8) -> Self {
        Self(bits)
    }

    /// The bits of this byte.
    pub const fn to_bits(self) -> u8 {
        self.0
    }

    /// A byte holding `values` rounded to nearest (ties to even), saturating at ±6; NaN
    /// becomes +0 (the format has no NaN).
    pub fn pack(values: [f32; 2]) -> Self {
        Self(encode(values[0], &E2M1) | (encode(values[1], &E2M1) << 4))
    }

    /// The two elements, exactly.
    pub fn unpack(self) -> [f32; 2] {
        [self.get(0), self.get(1)]
    }

    /// Element `index` (0 or 1), exactly.
    ///
    /// # Panics
    /// When `index >= 2`.
    pub fn get(self, index: usize) -> f32 {
        assert!(index < 2, "element {index} of a byte of 2 elements");
        decode((self.0 >> (4 * index)) & 0xF, &E2M1)
    }

    /// Sets element `index` (0 or 1) to `value`, rounded as [`pack`](Self::pack) does.
    ///
    /// # Panics
    /// When `index >= 2`.
    pub fn set(&mut self, index: usize, value: f32) {
        assert!(index < 2, "element {index} of a byte of 2 elements");
        let shift = 4 * index;
        self.0 = (self.0 & !(0xF << shift)) | (encode(value, &E2M1) << shift);
    }
}

impl std::fmt::Debug for Float4E2M1x2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Float4E2M1x2({:?})", self.unpack())
    }
}

// Device memory holds these types as it holds `u8`.
#[cfg(feature = "cuda")]
macro_rules! device_repr {
    ($($t:ty),*) => {$(
        // SAFETY: `$t` is `#[repr(transparent)]` over a `u8`, so it has `u8`'s layout and
        // every bit pattern (all zeros included) is a valid value, which is what both
        // traits require for copies to and from device memory and zeroed allocations.
        unsafe impl cudarc::driver::DeviceRepr for $t {}
        // SAFETY: as above: all-zero bits are a valid value of `$t`.
        unsafe impl cudarc::driver::ValidAsZeroBits for $t {}
    )*};
}

#[cfg(feature = "cuda")]
device_repr!(
    Float8E4M3FN,
    Float8E4M3FNUZ,
    Float8E5M2,
    Float8E5M2FNUZ,
    Float8E8M0,
    Int4x2,
    UInt4x2,
    Float4E2M1x2,
    Int2x4,
    UInt2x4
);

/// A packed element type: several elements of type `Value` per byte.
///
/// Implemented for [`Int4x2`], [`UInt4x2`], [`Int2x4`], [`UInt2x4`] and
/// [`Float4E2M1x2`]; [`unpack`] and [`pack_into`] read and write the elements of a packed
/// buffer (a tensor's `as_slice`) by element index.
pub trait Packed: Copy + Default + sealed::Sealed {
    /// The type of one element.
    type Value: Copy;
    /// Elements per byte.
    const PER_BYTE: usize;
    /// Element `index` of this byte.
    fn element(self, index: usize) -> Self::Value;
    /// Sets element `index` of this byte (clamped or rounded as the type's `set` does).
    fn set_element(&mut self, index: usize, value: Self::Value);
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! packed_impl {
    ($($name:ident: $value:ty;)*) => {$(
        impl sealed::Sealed for $name {}
        impl Packed for $name {
            type Value = $value;
            const PER_BYTE: usize = $name::PER_BYTE;
            fn element(self, index: usize) -> $value {
                self.get(index)
            }
            fn set_element(&mut self, index: usize, value: $value) {
                self.set(index, value);
            }
        }
    )*};
}

packed_impl! {
    Int4x2: i8;
    UInt4x2: u8;
    Int2x4: i8;
    UInt2x4: u8;
    Float4E2M1x2: f32;
}

/// The first `count` elements of the packed buffer `bytes`, in order. Yields fewer when
/// `bytes` is too short for `count`.
pub fn unpack<P: Packed>(bytes: &[P], count: usize) -> impl Iterator<Item = P::Value> + '_ {
    (0..count.min(bytes.len() * P::PER_BYTE))
        .map(move |i| bytes[i / P::PER_BYTE].element(i % P::PER_BYTE))
}

/// Writes `values` into the packed buffer `bytes` from element 0 on, and zeroes the
/// unused bits of the last byte written.
///
/// # Errors
/// When `bytes` holds fewer than `values.len()` elements: `Err` with the number of bytes
/// needed, and nothing is written.
pub fn pack_into<P: Packed>(bytes: &mut [P], values: &[P::Value]) -> Result<(), usize> {
    let needed = values.len().div_ceil(P::PER_BYTE);
    if bytes.len() < needed {
        return Err(needed);
    }
    for (byte, chunk) in bytes.iter_mut().zip(values.chunks(P::PER_BYTE)) {
        let mut b = P::default();
        for (i, &v) in chunk.iter().enumerate() {
            b.set_element(i, v);
        }
        *byte = b;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float8_round_trips_every_code() {
        // Every code that is not NaN decodes to a value that encodes back to it.
        for bits in 0..=255u8 {
            for (v, back) in [
                (
                    Float8E4M3FN::from_bits(bits).to_f32(),
                    Float8E4M3FN::from_f32(Float8E4M3FN::from_bits(bits).to_f32()).to_bits(),
                ),
                (
                    Float8E4M3FNUZ::from_bits(bits).to_f32(),
                    Float8E4M3FNUZ::from_f32(Float8E4M3FNUZ::from_bits(bits).to_f32()).to_bits(),
                ),
                (
                    Float8E5M2::from_bits(bits).to_f32(),
                    Float8E5M2::from_f32(Float8E5M2::from_bits(bits).to_f32()).to_bits(),
                ),
                (
                    Float8E5M2FNUZ::from_bits(bits).to_f32(),
                    Float8E5M2FNUZ::from_f32(Float8E5M2FNUZ::from_bits(bits).to_f32()).to_bits(),
                ),
            ] {
                if !v.is_nan() && !v.is_infinite() {
                    assert_eq!(back, bits, "{bits:#04x} = {v}");
                }
            }
        }
    }

    #[test]
    fn float8_limits_and_rounding() {
        assert_eq!(Float8E4M3FN::from_f32(448.0).to_f32(), 448.0);
        assert_eq!(Float8E4M3FN::from_f32(1e9).to_f32(), 448.0);
        assert_eq!(Float8E4M3FN::from_f32(f32::NEG_INFINITY).to_f32(), -448.0);
        assert!(Float8E4M3FN::from_f32(f32::NAN).is_nan());
        assert_eq!(Float8E4M3FNUZ::from_f32(1e9).to_f32(), 240.0);
        assert_eq!(Float8E4M3FNUZ::from_f32(-0.0).to_bits(), 0);
        assert_eq!(Float8E5M2::from_f32(1e9).to_f32(), 57344.0);
        assert_eq!(Float8E5M2::from_bits(0x7C).to_f32(), f32::INFINITY);
        assert_eq!(Float8E5M2FNUZ::from_f32(f32::INFINITY).to_f32(), 57344.0);
        // Ties to even: 1.0625 lies halfway between 1.0 and 1.125 in E4M3.
        assert_eq!(Float8E4M3FN::from_f32(1.0625).to_f32(), 1.0);
        assert_eq!(Float8E4M3FN::from_f32(1.1875).to_f32(), 1.25);
        // Smallest subnormals.
        assert_eq!(Float8E4M3FN::from_bits(1).to_f32(), 1.0 / 512.0); // 2^-9
        assert_eq!(Float8E5M2FNUZ::from_bits(1).to_f32(), 1.0 / 131_072.0); // 2^-17
        assert_eq!(Float8E8M0::from_f32(0.3).to_f32(), 0.5);
        assert_eq!(Float8E8M0::from_f32(100.0).to_f32(), 128.0);
        assert_eq!(Float8E8M0::from_f32(64.0).to_f32(), 64.0);
        assert!(Float8E8M0::from_f32(f32::INFINITY).is_nan());
        // 2^-127, a subnormal, by its bits: `powi` need not be exact (Miri varies it).
        assert_eq!(Float8E8M0::from_bits(0).to_f32(), f32::from_bits(1 << 22));
    }

    #[test]
    fn packing_is_low_bits_first_and_saturates() {
        let b = Int4x2::pack([-9, 20]);
        assert_eq!(b.unpack(), [-8, 7]);
        assert_eq!(Int4x2::pack([1, -1]).to_bits(), 0xF1);
        assert_eq!(UInt4x2::pack([3, 12]).to_bits(), 0xC3);
        assert_eq!(Int2x4::pack([1, -2, -1, 0]).to_bits(), 0b00_11_10_01);
        assert_eq!(Int2x4::from_bits(0b00_11_10_01).unpack(), [1, -2, -1, 0]);
        assert_eq!(UInt2x4::pack([3, 0, 1, 9]).unpack(), [3, 0, 1, 3]);
        assert_eq!(Float4E2M1x2::pack([6.0, -0.5]).to_bits(), 0x97);
        assert_eq!(Float4E2M1x2::pack([100.0, 2.5]).unpack(), [6.0, 2.0]);
        // Odd lengths: 5 int4 elements take 3 bytes, the last high nibble zero.
        let mut bytes = [Int4x2::from_bits(0xFF); 3];
        pack_into(&mut bytes, &[1i8, 2, 3, 4, -5]).unwrap();
        assert_eq!(bytes.map(Int4x2::to_bits), [0x21, 0x43, 0x0B]);
        assert_eq!(unpack(&bytes, 5).collect::<Vec<_>>(), [1, 2, 3, 4, -5]);
        assert_eq!(pack_into(&mut bytes[..2], &[0i8; 5]), Err(3));
        assert_eq!(unpack(&bytes[..1], 5).count(), 2);
    }
}
