//! The protobuf wire format, as far as reading an ONNX model's signature needs it.
//!
//! A message is a sequence of fields, each a key (field number and wire type) and a value:
//! a varint, a fixed 4 or 8 bytes, a length-delimited run of bytes (strings, bytes and
//! nested messages), or a group (obsolete; only skipped). Fields a message does not declare
//! are skipped without being copied: that is how initializer payloads are never read. A
//! model file is read in place ([`decode_file`]): small embedded messages are read whole,
//! large ones (a graph, an initializer) field by field, seeking past what is skipped.
//!
//! Written here rather than derived with `prost-derive`: the macros run this at compile
//! time, and the derive brought four crates and syn's `extra-traits` into every user's
//! build for seventeen small messages. The rules are protobuf's: the last value of a
//! scalar field wins, a repeated message field appends, an embedded message field that
//! appears twice is merged. Nesting is limited to [`RECURSION_LIMIT`] messages (groups
//! included), as prost limits it, so hostile files cannot exhaust the stack.

use std::borrow::Cow;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Seek};

/// How deep messages (and skipped groups) may nest below the top-level message.
pub(crate) const RECURSION_LIMIT: u32 = 100;

/// The wire type of a field: how its value is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// A base-128 varint.
    Varint,
    /// 8 bytes.
    Fixed64,
    /// A varint length, then that many bytes.
    LengthDelimited,
    /// The start of a group (ended by an end-group key of the same field).
    StartGroup,
    /// The end of a group.
    EndGroup,
    /// 4 bytes.
    Fixed32,
}

/// Why bytes are not a valid message: what is wrong, and the fields it was found in
/// (outermost first), as `ModelProto.graph: GraphProto.input: invalid varint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WireError {
    problem: String,
    // Innermost first: each message a decoding error passes through adds its field.
    path: Vec<(&'static str, &'static str)>,
}

impl WireError {
    fn new(problem: impl Into<String>) -> Self {
        WireError {
            problem: problem.into(),
            path: Vec::new(),
        }
    }

    /// Adds the field the error was found in: field `field` of message `message`.
    pub(crate) fn within(mut self, message: &'static str, field: &'static str) -> Self {
        self.path.push((message, field));
        self
    }

    /// Whether the error is the nesting limit (callers explain it in their own terms).
    pub(crate) fn is_recursion_limit(&self) -> bool {
        self.problem == RECURSION_PROBLEM
    }
}

const RECURSION_PROBLEM: &str = "recursion limit reached";

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (message, field) in self.path.iter().rev() {
            write!(f, "{message}.{field}: ")?;
        }
        f.write_str(&self.problem)
    }
}

/// A message that can be read from (and, for tests, written to) the wire.
pub(crate) trait Message: Default {
    /// The message's name in `onnx.proto`, for errors.
    const NAME: &'static str;

    /// Reads the value of field `number` (of wire type `wire`) into `self`; fields the
    /// message does not declare are skipped with [`Reader::skip`].
    fn merge_field(&mut self, number: u32, wire: Wire, r: &mut Reader<'_>)
    -> Result<(), WireError>;

    /// Appends the message's fields (the declared ones that are not at their default).
    #[cfg(test)]
    fn encode(&self, w: &mut Writer);

    /// The encoded message.
    #[cfg(test)]
    fn encode_to_vec(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.encode(&mut w);
        w.bytes
    }
}

/// Decodes `bytes` as one `M`.
pub(crate) fn decode<M: Message>(bytes: &[u8]) -> Result<M, WireError> {
    let mut message = M::default();
    Reader {
        source: Source::Bytes(bytes),
        depth: 0,
    }
    .merge_fields(&mut message)?;
    Ok(message)
}

/// Decodes the `len` bytes `file` holds from its position as one `M`, reading only what the
/// messages declare: a skipped field is sought past, never read, and an embedded message of
/// at most `in_memory` bytes is read whole and decoded from memory. The same rules and
/// errors as [`decode`].
pub(crate) fn decode_file<M: Message, F: Read + Seek>(
    file: &mut BufReader<F>,
    len: u64,
    in_memory: u64,
) -> Result<M, WireError> {
    let mut message = M::default();
    Reader {
        source: Source::File {
            file,
            left: len,
            in_memory,
        },
        depth: 0,
    }
    .merge_sized(len, 0, &mut message)?;
    Ok(message)
}

/// Reads the fields of one message: the bytes left of it, and how deep it is nested.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    source: Source<'a>,
    depth: u32,
}

/// Where a message's bytes are.
enum Source<'a> {
    /// In memory: the bytes left of the message.
    Bytes(&'a [u8]),
    /// In a file, from its position: `left` bytes of the message remain; embedded messages
    /// of at most `in_memory` bytes are read whole.
    File {
        file: &'a mut dyn ReadSeek,
        left: u64,
        in_memory: u64,
    },
}

impl fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Bytes(bytes) => write!(f, "Bytes({} left)", bytes.len()),
            Source::File { left, .. } => write!(f, "File({left} left)"),
        }
    }
}

/// A buffered file, as [`Source::File`] reads it (a trait object: one copy of the reader).
trait ReadSeek: BufRead + Seek {}

impl<T: BufRead + Seek> ReadSeek for T {}

fn underflow() -> WireError {
    WireError::new("buffer underflow")
}

/// Takes `n` bytes off the `left` of a message in a file, or says there are not so many.
fn claim(left: &mut u64, n: u64) -> Result<(), WireError> {
    if n > *left {
        return Err(underflow());
    }
    *left -= n;
    Ok(())
}

fn io_error(e: std::io::Error) -> WireError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        underflow()
    } else {
        WireError::new(format!("the file could not be read: {e}"))
    }
}

impl<'a> Reader<'a> {
    /// Reads every field into `message`.
    fn merge_fields<M: Message>(&mut self, message: &mut M) -> Result<(), WireError> {
        while !self.at_end() {
            // An end-group key here is an error: a declared field reports it as the wrong
            // wire type (naming the field), an undeclared one through `skip`.
            let (number, wire) = self.key()?;
            message.merge_field(number, wire, self)?;
        }
        Ok(())
    }

    fn at_end(&self) -> bool {
        match &self.source {
            Source::Bytes(bytes) => bytes.is_empty(),
            Source::File { left, .. } => *left == 0,
        }
    }

    /// The next byte of the message, if it has one.
    fn next_byte(&mut self) -> Result<Option<u8>, WireError> {
        match &mut self.source {
            Source::Bytes(bytes) => Ok(bytes.split_first().map(|(&b, rest)| {
                *bytes = rest;
                b
            })),
            Source::File { left: 0, .. } => Ok(None),
            Source::File { file, left, .. } => {
                let mut byte = [0u8];
                file.read_exact(&mut byte).map_err(io_error)?;
                *left -= 1;
                Ok(Some(byte[0]))
            }
        }
    }

    fn key(&mut self) -> Result<(u32, Wire), WireError> {
        let key = self.varint()?;
        let wire = match key & 7 {
            0 => Wire::Varint,
            1 => Wire::Fixed64,
            2 => Wire::LengthDelimited,
            3 => Wire::StartGroup,
            4 => Wire::EndGroup,
            5 => Wire::Fixed32,
            other => return Err(WireError::new(format!("invalid wire type value: {other}"))),
        };
        let number = u32::try_from(key >> 3)
            .ok()
            .filter(|&n| (1..(1 << 29)).contains(&n))
            .ok_or_else(|| WireError::new(format!("invalid field number: {}", key >> 3)))?;
        Ok((number, wire))
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(byte) = self.next_byte()? else {
                return Err(underflow());
            };
            // The tenth byte may only hold the top bit of a 64-bit value.
            if i == 9 && byte > 1 {
                break;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(WireError::new("invalid varint"))
    }

    /// The next `n` bytes of the message: borrowed from memory, read from a file.
    fn read(&mut self, n: u64) -> Result<Cow<'a, [u8]>, WireError> {
        match &mut self.source {
            Source::Bytes(bytes) => {
                let n = usize::try_from(n).map_err(|_| underflow())?;
                if n > bytes.len() {
                    return Err(underflow());
                }
                let (head, rest) = bytes.split_at(n);
                *bytes = rest;
                Ok(Cow::Borrowed(head))
            }
            Source::File { file, left, .. } => {
                claim(left, n)?;
                // Never allocated from a claimed length alone: `n` is within the file.
                let mut bytes = vec![0u8; usize::try_from(n).map_err(|_| underflow())?];
                file.read_exact(&mut bytes).map_err(io_error)?;
                Ok(Cow::Owned(bytes))
            }
        }
    }

    /// Passes over the next `n` bytes of the message (a file seeks past them).
    fn pass(&mut self, n: u64) -> Result<(), WireError> {
        match &mut self.source {
            Source::Bytes(_) => self.read(n).map(drop),
            Source::File { file, left, .. } => {
                claim(left, n)?;
                let offset = i64::try_from(n).map_err(|_| underflow())?;
                file.seek_relative(offset).map_err(io_error)
            }
        }
    }

    fn expect(wire: Wire, expected: Wire) -> Result<(), WireError> {
        if wire == expected {
            Ok(())
        } else {
            Err(WireError::new(format!(
                "invalid wire type: {wire:?} (expected {expected:?})"
            )))
        }
    }

    fn delimited(&mut self) -> Result<Cow<'a, [u8]>, WireError> {
        let len = self.varint()?;
        self.read(len)
    }

    /// Skips a field this message does not declare.
    pub(crate) fn skip(&mut self, wire: Wire) -> Result<(), WireError> {
        match wire {
            Wire::Varint => self.varint().map(drop),
            Wire::Fixed64 => self.pass(8),
            Wire::Fixed32 => self.pass(4),
            Wire::LengthDelimited => {
                let len = self.varint()?;
                self.pass(len)
            }
            Wire::StartGroup => self.skip_group(),
            Wire::EndGroup => Err(WireError::new("unexpected end group tag")),
        }
    }

    /// Skips a group, nested groups included (each level counts toward the limit).
    fn skip_group(&mut self) -> Result<(), WireError> {
        let mut open = 1u32;
        while open > 0 {
            if self.depth + open > RECURSION_LIMIT {
                return Err(WireError::new(RECURSION_PROBLEM));
            }
            let (_, wire) = self.key()?;
            match wire {
                Wire::StartGroup => open += 1,
                Wire::EndGroup => open -= 1,
                other => self.skip(other)?,
            }
        }
        Ok(())
    }

    /// An `int64` field.
    pub(crate) fn int64(&mut self, wire: Wire, slot: &mut i64) -> Result<(), WireError> {
        Self::expect(wire, Wire::Varint)?;
        // Two's complement: the varint holds the 64 bits as they are.
        *slot = self.varint()? as i64;
        Ok(())
    }

    /// An `int32` field (negative values are sign-extended to 64 bits on the wire).
    pub(crate) fn int32(&mut self, wire: Wire, slot: &mut i32) -> Result<(), WireError> {
        Self::expect(wire, Wire::Varint)?;
        // Truncation is protobuf's rule for an int32 read from a wider varint.
        *slot = self.varint()? as i32;
        Ok(())
    }

    /// A `float` field.
    pub(crate) fn float(&mut self, wire: Wire, slot: &mut f32) -> Result<(), WireError> {
        Self::expect(wire, Wire::Fixed32)?;
        let bytes = self.read(4)?;
        *slot = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        Ok(())
    }

    /// A `repeated int64` (or `int32`) field, packed or not.
    pub(crate) fn int64s(&mut self, wire: Wire, slot: &mut Vec<i64>) -> Result<(), WireError> {
        match wire {
            Wire::Varint => {
                slot.push(self.varint()? as i64);
                Ok(())
            }
            Wire::LengthDelimited => {
                let bytes = self.delimited()?;
                let mut packed = Reader {
                    source: Source::Bytes(&bytes),
                    depth: self.depth,
                };
                while !packed.at_end() {
                    slot.push(packed.varint()? as i64);
                }
                Ok(())
            }
            other => Self::expect(other, Wire::Varint),
        }
    }

    /// A `repeated float` field, packed or not.
    pub(crate) fn floats(&mut self, wire: Wire, slot: &mut Vec<f32>) -> Result<(), WireError> {
        self.fixed(wire, Wire::Fixed32, |b| {
            slot.extend(
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        })
    }

    /// A `repeated double` field, packed or not.
    pub(crate) fn doubles(&mut self, wire: Wire, slot: &mut Vec<f64>) -> Result<(), WireError> {
        self.fixed(wire, Wire::Fixed64, |b| {
            slot.extend(
                b.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
            );
        })
    }

    /// A repeated fixed-size field (`size` is its wire type), packed or not: `take` gets
    /// its bytes, a whole number of values.
    fn fixed(&mut self, wire: Wire, size: Wire, take: impl FnOnce(&[u8])) -> Result<(), WireError> {
        let width = if size == Wire::Fixed32 { 4 } else { 8 };
        let bytes = if wire == size {
            self.read(width)?
        } else {
            Self::expect(wire, Wire::LengthDelimited)?;
            self.delimited()?
        };
        if bytes.len() % width as usize != 0 {
            return Err(WireError::new("packed field of a partial value"));
        }
        take(&bytes);
        Ok(())
    }

    /// A length-delimited field read by `read` only when it holds at most `limit` bytes;
    /// a larger one is passed over (sought past in a file) and sets `skipped`. A field
    /// that is not length-delimited (an unpacked number) is read as it is.
    pub(crate) fn small(
        &mut self,
        wire: Wire,
        limit: u64,
        skipped: &mut bool,
        read: impl for<'r> FnOnce(&mut Reader<'r>, Wire) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        if wire != Wire::LengthDelimited {
            return read(self, wire);
        }
        let len = self.varint()?;
        if len > limit {
            *skipped = true;
            return self.pass(len);
        }
        let bytes = self.read(len)?;
        // The field again, from memory: `read` takes its length prefix first.
        let mut framed = Vec::with_capacity(bytes.len() + 10);
        let mut n = len;
        while n >= 0x80 {
            framed.push((n as u8) | 0x80);
            n >>= 7;
        }
        framed.push(n as u8);
        framed.extend_from_slice(&bytes);
        let mut inner = Reader {
            source: Source::Bytes(&framed),
            depth: self.depth,
        };
        read(&mut inner, wire)
    }

    /// A `bytes` field.
    pub(crate) fn bytes(&mut self, wire: Wire, slot: &mut Vec<u8>) -> Result<(), WireError> {
        Self::expect(wire, Wire::LengthDelimited)?;
        let bytes = self.delimited()?;
        slot.clear();
        slot.extend_from_slice(&bytes);
        Ok(())
    }

    fn utf8(&mut self, wire: Wire) -> Result<String, WireError> {
        Self::expect(wire, Wire::LengthDelimited)?;
        let bytes = self.delimited()?;
        std::str::from_utf8(&bytes)
            .map(str::to_owned)
            .map_err(|_| WireError::new("invalid string value: data is not UTF-8 encoded"))
    }

    /// A `string` field.
    pub(crate) fn string(&mut self, wire: Wire, slot: &mut String) -> Result<(), WireError> {
        *slot = self.utf8(wire)?;
        Ok(())
    }

    /// A `repeated string` field.
    pub(crate) fn strings(&mut self, wire: Wire, slot: &mut Vec<String>) -> Result<(), WireError> {
        slot.push(self.utf8(wire)?);
        Ok(())
    }

    /// Reads an embedded message into `message` (merging into what it holds).
    pub(crate) fn merge<M: Message>(
        &mut self,
        wire: Wire,
        message: &mut M,
    ) -> Result<(), WireError> {
        Self::expect(wire, Wire::LengthDelimited)?;
        if self.depth >= RECURSION_LIMIT {
            return Err(WireError::new(RECURSION_PROBLEM));
        }
        let len = self.varint()?;
        self.merge_sized(len, self.depth + 1, message)
    }

    /// Reads the next `len` bytes as a message at nesting `depth` into `message`. In memory,
    /// or a message of at most `in_memory` bytes in a file: read whole and decoded from
    /// memory. A larger one in a file (a graph, an initializer with its payload) is read in
    /// place, so that the fields it does not declare are sought past.
    fn merge_sized<M: Message>(
        &mut self,
        len: u64,
        depth: u32,
        message: &mut M,
    ) -> Result<(), WireError> {
        if let Source::File {
            file,
            left,
            in_memory,
        } = &mut self.source
            && len > *in_memory
        {
            claim(left, len)?;
            return Reader {
                source: Source::File {
                    file: &mut **file,
                    left: len,
                    in_memory: *in_memory,
                },
                depth,
            }
            .merge_fields(message);
        }
        let bytes = self.read(len)?;
        Reader {
            source: Source::Bytes(&bytes),
            depth,
        }
        .merge_fields(message)
    }

    /// An embedded message field.
    pub(crate) fn message<M: Message>(
        &mut self,
        wire: Wire,
        slot: &mut Option<M>,
    ) -> Result<(), WireError> {
        self.merge(wire, slot.get_or_insert_with(M::default))
    }

    /// An embedded message field held in a `Box` (a message that can contain itself).
    pub(crate) fn boxed<M: Message>(
        &mut self,
        wire: Wire,
        slot: &mut Option<Box<M>>,
    ) -> Result<(), WireError> {
        self.merge(wire, &mut **slot.get_or_insert_with(Box::default))
    }

    /// A `repeated` message field.
    pub(crate) fn messages<M: Message>(
        &mut self,
        wire: Wire,
        slot: &mut Vec<M>,
    ) -> Result<(), WireError> {
        let mut message = M::default();
        self.merge(wire, &mut message)?;
        slot.push(message);
        Ok(())
    }
}

/// Writes messages (tests build models with it).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Writer {
    bytes: Vec<u8>,
}

#[cfg(test)]
impl Writer {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.bytes.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.bytes.push(v as u8);
    }

    fn key(&mut self, number: u32, wire: u64) {
        self.varint((u64::from(number) << 3) | wire);
    }

    fn delimited(&mut self, number: u32, bytes: &[u8]) {
        self.key(number, 2);
        self.varint(bytes.len() as u64);
        self.bytes.extend_from_slice(bytes);
    }

    pub(crate) fn int64(&mut self, number: u32, v: &i64) {
        if *v != 0 {
            self.key(number, 0);
            self.varint(*v as u64);
        }
    }

    pub(crate) fn int32(&mut self, number: u32, v: &i32) {
        if *v != 0 {
            self.key(number, 0);
            self.varint(i64::from(*v) as u64);
        }
    }

    pub(crate) fn bytes(&mut self, number: u32, v: &[u8]) {
        if !v.is_empty() {
            self.delimited(number, v);
        }
    }

    pub(crate) fn float(&mut self, number: u32, v: &f32) {
        if *v != 0.0 {
            self.key(number, 5);
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
    }

    pub(crate) fn int64s(&mut self, number: u32, v: &[i64]) {
        for x in v {
            self.key(number, 0);
            self.varint(*x as u64);
        }
    }

    pub(crate) fn floats(&mut self, number: u32, v: &[f32]) {
        if !v.is_empty() {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            self.delimited(number, &bytes);
        }
    }

    pub(crate) fn string(&mut self, number: u32, v: &str) {
        self.bytes(number, v.as_bytes());
    }

    pub(crate) fn strings(&mut self, number: u32, v: &[String]) {
        for s in v {
            self.delimited(number, s.as_bytes());
        }
    }

    pub(crate) fn message<M: Message>(&mut self, number: u32, v: &Option<M>) {
        if let Some(m) = v {
            self.delimited(number, &m.encode_to_vec());
        }
    }

    pub(crate) fn boxed<M: Message>(&mut self, number: u32, v: &Option<Box<M>>) {
        if let Some(m) = v {
            self.delimited(number, &m.encode_to_vec());
        }
    }

    pub(crate) fn messages<M: Message>(&mut self, number: u32, v: &[M]) {
        for m in v {
            self.delimited(number, &m.encode_to_vec());
        }
    }

    /// An `int64` oneof member: written even when 0 (it is present).
    pub(crate) fn present_int64(&mut self, number: u32, v: i64) {
        self.key(number, 0);
        self.varint(v as u64);
    }

    /// A `string` oneof member: written even when empty (it is present).
    pub(crate) fn present_string(&mut self, number: u32, v: &str) {
        self.delimited(number, v.as_bytes());
    }

    /// An embedded message that is present even when empty (a oneof's variant).
    pub(crate) fn present<M: Message>(&mut self, number: u32, m: &M) {
        self.delimited(number, &m.encode_to_vec());
    }
}

/// Declares a message the way `onnx.proto` does, one field per line
/// (`number => name: kind<Type>`), and implements [`Message`] for it. Kinds: `int64`,
/// `int32`, `bytes`, `string`, `strings` (repeated), `message<M>` (optional),
/// `boxed<M>` (optional, boxed), `messages<M>` (repeated).
macro_rules! message {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident = $proto:literal {
            $( $(#[$field_meta:meta])* $number:literal => $field:ident: $kind:ident $(<$ty:ty>)?, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        $vis struct $name {
            $( $(#[$field_meta])* pub(crate) $field: $crate::onnx::wire::field_type!($kind $(<$ty>)?), )*
        }

        impl $crate::onnx::wire::Message for $name {
            const NAME: &'static str = $proto;

            fn merge_field(
                &mut self,
                number: u32,
                wire: $crate::onnx::wire::Wire,
                r: &mut $crate::onnx::wire::Reader<'_>,
            ) -> Result<(), $crate::onnx::wire::WireError> {
                match number {
                    $( $number => r
                        .$kind(wire, &mut self.$field)
                        .map_err(|e| e.within(Self::NAME, stringify!($field))), )*
                    _ => r.skip(wire),
                }
            }

            #[cfg(test)]
            fn encode(&self, w: &mut $crate::onnx::wire::Writer) {
                $( w.$kind($number, &self.$field); )*
            }
        }
    };
}

/// The Rust type of a field kind (see [`message!`]).
macro_rules! field_type {
    (int64) => { i64 };
    (int32) => { i32 };
    (float) => { f32 };
    (floats) => { Vec<f32> };
    (int64s) => { Vec<i64> };
    (bytes) => { Vec<u8> };
    (string) => { String };
    (strings) => { Vec<String> };
    (message<$ty:ty>) => { Option<$ty> };
    (boxed<$ty:ty>) => { Option<Box<$ty>> };
    (messages<$ty:ty>) => { Vec<$ty> };
}

pub(crate) use {field_type, message};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::{GraphProto, ModelProto, OperatorSetIdProto};

    fn key(number: u32, wire: u8) -> u8 {
        u8::try_from(number << 3).unwrap() | wire
    }

    #[test]
    fn a_message_reads_back_what_was_written() {
        let m = ModelProto {
            ir_version: -3,
            producer_name: "p".into(),
            graph: Some(GraphProto {
                name: "g".into(),
                ..GraphProto::default()
            }),
            opset_import: vec![OperatorSetIdProto::default(); 2],
            ..ModelProto::default()
        };
        assert_eq!(decode::<ModelProto>(&m.encode_to_vec()), Ok(m));
    }

    #[test]
    fn an_embedded_message_given_twice_is_merged_and_a_scalar_is_replaced() {
        let graph = |field: u32, text: &[u8]| {
            let inner = [&[key(field, 2), text.len() as u8][..], text].concat();
            [&[key(7, 2), inner.len() as u8][..], &inner].concat()
        };
        let bytes = [
            graph(2, b"first"),
            graph(2, b"second"),
            vec![key(1, 0), 5, key(1, 0), 6],
        ]
        .concat();
        let m = decode::<ModelProto>(&bytes).unwrap();
        assert_eq!(m.graph.unwrap().name, "second");
        assert_eq!(m.ir_version, 6);
    }

    #[test]
    fn errors_name_the_fields_they_were_found_in() {
        // graph { input { <length 9, but 1 byte follows> } }
        let bytes = [key(7, 2), 3, key(11, 2), 9, 0];
        let e = decode::<ModelProto>(&bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ModelProto.graph: GraphProto.input: buffer underflow"
        );
        let e = decode::<ModelProto>(&[key(2, 0), 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ModelProto.producer_name: invalid wire type: Varint (expected LengthDelimited)"
        );
    }

    #[test]
    fn varints_take_at_most_ten_bytes() {
        let mut max = vec![key(1, 0)];
        max.extend([0xff; 9]);
        max.push(0x01);
        assert_eq!(decode::<ModelProto>(&max).unwrap().ir_version, -1);
        let mut long = vec![key(1, 0)];
        long.extend([0xff; 10]);
        long.push(0x01);
        assert_eq!(
            decode::<ModelProto>(&long).unwrap_err().to_string(),
            "ModelProto.ir_version: invalid varint"
        );
        assert_eq!(
            decode::<ModelProto>(&[key(1, 0), 0x80])
                .unwrap_err()
                .to_string(),
            "ModelProto.ir_version: buffer underflow"
        );
    }

    #[test]
    fn unknown_fields_and_groups_are_skipped_and_nesting_is_limited() {
        // Field 20 as each wire type, then a group holding a group.
        let bytes = [
            vec![0xa0, 0x01, 7],          // 20: varint
            vec![0xa1, 0x01],             // 20: fixed64
            vec![0; 8],                   //
            vec![0xa5, 0x01, 0, 0, 0, 0], // 20: fixed32
            vec![0xa2, 0x01, 2, 9, 9],    // 20: length-delimited
            vec![0xa3, 0x01, 0xa3, 0x01], // 20: start group, twice
            vec![0xa4, 0x01, 0xa4, 0x01], // 20: end group, twice
            vec![key(2, 2), 1, b'p'],     // producer_name
        ]
        .concat();
        assert_eq!(decode::<ModelProto>(&bytes).unwrap().producer_name, "p");
        let deep = [0xa3, 0x01].repeat(RECURSION_LIMIT as usize + 1);
        let e = decode::<ModelProto>(&deep).unwrap_err();
        assert!(e.is_recursion_limit(), "{e}");
        let e = decode::<ModelProto>(&[0xa4, 0x01]).unwrap_err();
        assert_eq!(e.to_string(), "unexpected end group tag");
    }
}
