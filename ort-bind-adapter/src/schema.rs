//! The adapter flatbuffer's layout, its verification, and reading it once verified.
//!
//! ONNX Runtime's schema (`onnxruntime/lora/adapter_format/adapter_schema.fbs`, file
//! identifier `TORT`, root table `Adapter`) has two tables:
//!
//! | table | field (id) | type |
//! | --- | --- | --- |
//! | `Adapter` | `format_version` (0), `adapter_version` (1), `model_version` (2) | `int` (i32) |
//! | | `parameters` (3) | `[Parameter]` |
//! | `Parameter` | `name` (0) | `string` |
//! | | `dims` (1) | `[int64]` |
//! | | `data_type` (2) | `TensorDataType`, an `int32` enum (ONNX's element codes) |
//! | | `raw_data` (3) | `[uint8]` (`force_align: 8`) |
//!
//! No field is `required` in the schema, but ONNX Runtime's writer always writes
//! `parameters`, `dims` and `raw_data` (empty vectors included) and its reader dereferences
//! them unchecked, so the verifier here requires them. `name` is left out by ONNX Runtime's
//! writer when it is empty; the caller (`crate::read`) refuses such a parameter by index.
//!
//! Verification goes through `flatbuffers`' own [`Verifier`], driven by the [`Verifiable`]
//! impls below (what flatc would generate, written by hand). Reading uses [`Table`] with the
//! same slots and types, and only through [`Verified`], which only [`verify`] makes: that is
//! what the two `unsafe` blocks in [`Verified::read`] rely on.

use flatbuffers::{
    ForwardsUOffset, InvalidFlatbuffer, Table, VOffsetT, Vector, Verifiable, Verifier,
    VerifierOptions,
};

/// The file identifier, bytes 4..8 of every adapter file.
pub(crate) const IDENTIFIER: [u8; 4] = *b"TORT";

/// A field's slot in its table's vtable: 4 bytes of vtable header, then 2 bytes per field id.
const fn slot(id: u16) -> VOffsetT {
    4 + 2 * id
}

/// `Adapter`'s fields.
const FORMAT_VERSION: VOffsetT = slot(0);
const ADAPTER_VERSION: VOffsetT = slot(1);
const MODEL_VERSION: VOffsetT = slot(2);
const PARAMETERS: VOffsetT = slot(3);

/// `Parameter`'s fields.
const NAME: VOffsetT = slot(0);
const DIMS: VOffsetT = slot(1);
const DATA_TYPE: VOffsetT = slot(2);
const RAW_DATA: VOffsetT = slot(3);

/// The type of `Adapter.parameters` as the verifier sees it, and as it is read: a vector of
/// offsets to tables (`Table` reads the same bytes that `ParameterSchema` verifies).
type ParametersVerify<'a> = ForwardsUOffset<Vector<'a, ForwardsUOffset<ParameterSchema>>>;
type ParametersRead<'a> = ForwardsUOffset<Vector<'a, ForwardsUOffset<Table<'a>>>>;

/// The `Adapter` table, for the verifier only.
struct AdapterSchema;

/// The `Parameter` table, for the verifier only.
struct ParameterSchema;

impl Verifiable for AdapterSchema {
    fn run_verifier(v: &mut Verifier<'_, '_>, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<i32>("format_version", FORMAT_VERSION, false)?
            .visit_field::<i32>("adapter_version", ADAPTER_VERSION, false)?
            .visit_field::<i32>("model_version", MODEL_VERSION, false)?
            .visit_field::<ParametersVerify<'_>>("parameters", PARAMETERS, true)?
            .finish();
        Ok(())
    }
}

impl Verifiable for ParameterSchema {
    fn run_verifier(v: &mut Verifier<'_, '_>, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_field::<ForwardsUOffset<&str>>("name", NAME, false)?
            .visit_field::<ForwardsUOffset<Vector<'_, i64>>>("dims", DIMS, true)?
            .visit_field::<i32>("data_type", DATA_TYPE, false)?
            .visit_field::<ForwardsUOffset<Vector<'_, u8>>>("raw_data", RAW_DATA, true)?
            .finish();
        Ok(())
    }
}

/// Bytes that passed [`verify`]: the only way to [`read`](Verified::read) them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Verified<'a>(&'a [u8]);

/// Runs the flatbuffer verifier over `bytes` as an `Adapter` root (the identifier is the
/// caller's check).
pub(crate) fn verify(bytes: &[u8]) -> Result<Verified<'_>, InvalidFlatbuffer> {
    let options = VerifierOptions {
        // The verifier adds up the bytes it visits, counting data reached twice twice. An
        // honest file visits each of its bytes once, except the vtable that all parameters
        // share (a few bytes per parameter, each of which takes more than that of its own), so
        // twice the file's length bounds it; a file whose offsets make it read the same long
        // name or data over and over is refused instead of costing time.
        max_apparent_size: bytes.len().saturating_mul(2).saturating_add(1024),
        ..VerifierOptions::default()
    };
    let mut verifier = Verifier::new(&options, bytes);
    <ForwardsUOffset<AdapterSchema>>::run_verifier(&mut verifier, 0)?;
    Ok(Verified(bytes))
}

/// The `Adapter` table's fields, as stored (defaults filled in).
#[derive(Debug)]
pub(crate) struct RawAdapter<'a> {
    pub(crate) format_version: i32,
    pub(crate) adapter_version: i32,
    pub(crate) model_version: i32,
    pub(crate) parameters: Vec<RawParameter<'a>>,
}

/// One `Parameter` table's fields, as stored.
#[derive(Debug)]
pub(crate) struct RawParameter<'a> {
    /// `None` when the field is absent (ONNX Runtime's writer leaves an empty name out).
    pub(crate) name: Option<&'a str>,
    pub(crate) dims: Vector<'a, i64>,
    /// `TensorDataType`, ONNX's element code; 0 (`UNDEFINED`) when absent.
    pub(crate) data_type: i32,
    pub(crate) raw_data: &'a [u8],
}

impl<'a> Verified<'a> {
    /// Reads the tables that [`verify`] checked.
    pub(crate) fn read(self) -> RawAdapter<'a> {
        let buf = self.0;
        // SAFETY: `verify` ran `AdapterSchema`'s verifier from offset 0 of these same bytes:
        // the root offset leads to a table with an in-bounds vtable, and each field read here
        // was visited at the same slot with the same type (`i32` scalars; `parameters` as a
        // vector of offsets to tables, which `ParametersRead` reads through `Table` exactly as
        // `ParametersVerify` laid it out). Absent fields give the default or `None`.
        let (format_version, adapter_version, model_version, tables) = unsafe {
            let root = flatbuffers::root_unchecked::<Table<'a>>(buf);
            (
                root.get::<i32>(FORMAT_VERSION, Some(0)),
                root.get::<i32>(ADAPTER_VERSION, Some(0)),
                root.get::<i32>(MODEL_VERSION, Some(0)),
                root.get::<ParametersRead<'a>>(PARAMETERS, None),
            )
        };
        let tables = tables.unwrap_or_default();
        let mut parameters = Vec::with_capacity(tables.len());
        for table in tables.iter() {
            // SAFETY: each element of the verified `parameters` vector was verified as a
            // `Parameter` table (`ParameterSchema`): name a UTF-8 string, dims a vector of
            // i64, data_type an i32, raw_data a vector of u8, each in bounds, at these slots.
            let (name, dims, data_type, raw_data) = unsafe {
                (
                    table.get::<ForwardsUOffset<&'a str>>(NAME, None),
                    table.get::<ForwardsUOffset<Vector<'a, i64>>>(DIMS, None),
                    table.get::<i32>(DATA_TYPE, Some(0)),
                    table.get::<ForwardsUOffset<Vector<'a, u8>>>(RAW_DATA, None),
                )
            };
            parameters.push(RawParameter {
                name,
                dims: dims.unwrap_or_default(),
                data_type: data_type.unwrap_or(0),
                raw_data: raw_data.map_or(&[], |data| data.bytes()),
            });
        }
        RawAdapter {
            format_version: format_version.unwrap_or(0),
            adapter_version: adapter_version.unwrap_or(0),
            model_version: model_version.unwrap_or(0),
            parameters,
        }
    }
}
