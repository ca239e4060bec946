//! Shared by `tests/conformance.rs` and `tests/onnx_simple.rs`: the types the generated
//! conformance indexes (build/conformance.rs) name as `crate::harness::*`, loading ONNX's
//! test data sets, and running and tallying cases.
//!
//! Every case runs, through its generated bindings or (a model codegen refuses, or one
//! the runner does not fill typed) through `DynamicBinding`, and ends in exactly one
//! [`Verdict`]: it passed, or it failed (with the reason). Nothing is skipped.

#![allow(dead_code)] // each test target uses part of it

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ort_bind::dynamic::ValueInfo;
use ort_bind::{
    DynValue, DynamicBinding, HostArray, HostArrayRef, NumericElement, Session, SessionOptions,
    Shape, StringTensorMut, TensorMut, TensorRef,
};
use ort_bind_cli::data::{self, ProtoKind, Tolerance};

pub(crate) use values::{FromData, ToData};

#[path = "values.rs"]
mod values;

/// One model test of ONNX's backend test data.
#[derive(Debug)]
pub(crate) struct Case {
    /// `simple`, `pytorch-converted`, `pytorch-operator` or `light`.
    pub(crate) group: &'static str,
    /// The test's name (its folder, or the model's stem for `light`).
    pub(crate) name: &'static str,
    /// The model file.
    pub(crate) model: &'static str,
    /// Where its inputs and expected outputs are.
    pub(crate) data: Data,
    /// How it runs.
    pub(crate) run: Run,
}

/// Where a case's data is.
#[derive(Debug)]
pub(crate) enum Data {
    /// A folder with `test_data_set_*/{input,output}_*.pb`.
    Sets(&'static str),
    /// Inputs made like ONNX's runner makes them for its `light` models (float32
    /// `arange(n) / n` in these shapes), and expected outputs in these files.
    Dummy {
        /// One shape per model input.
        shapes: &'static [&'static [usize]],
        /// `output_N.pb` files, in output order.
        expected: &'static [&'static str],
    },
}

/// What the generated index says about running a case.
#[derive(Debug)]
pub(crate) enum Run {
    /// Bindings were generated; this runs them on the model file over the data sets.
    Bound(Bound),
    /// Codegen refused the model (its error); the case runs through
    /// [`ort_bind::DynamicBinding`] instead.
    Dynamic(&'static str),
    /// Reading the model or writing its bindings failed: a bug, counted as a failure.
    CodegenFailed(&'static str),
}

/// A case bound through generated code.
#[derive(Debug)]
pub(crate) struct Bound {
    /// Loads the model into the generated bindings, then for each data set binds, fills,
    /// runs and compares.
    pub(crate) run: fn(&str, &[DataSet]) -> Result<(), Failure>,
    /// The message each input file holds, in input order.
    pub(crate) inputs: &'static [ProtoKind],
    /// The message each expected output file holds, in output order.
    pub(crate) outputs: &'static [ProtoKind],
}

/// Why a case failed.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<ort_bind::Error> for Failure {
    fn from(e: ort_bind::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<data::DataError> for Failure {
    fn from(e: data::DataError) -> Self {
        Failure(e.to_string())
    }
}

/// The tolerance ONNX's runner applies (no test of these groups overrides it with a
/// `data.json`).
pub(crate) const TOLERANCE: Tolerance = Tolerance::ONNX_BACKEND;

/// One data set: inputs in model order and expected outputs in model order, each the value
/// its file holds (a tensor, a string tensor, a sequence, an optional).
#[derive(Debug)]
pub(crate) struct DataSet {
    /// Folder or file it came from, for messages.
    pub(crate) origin: String,
    pub(crate) inputs: Vec<DynValue>,
    pub(crate) expected: Vec<DynValue>,
}

/// The files `dir/<prefix>_0.pb`, `dir/<prefix>_1.pb`, ... up to the first gap.
fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.pb")))
        .take_while(|p| p.is_file())
        .collect()
}

/// Reads `files`, file `i` as the message `kinds[i]` (a tensor past the end of `kinds`:
/// the count is checked against the model's where the files are used).
fn read_all(files: &[PathBuf], kinds: &[ProtoKind]) -> Result<Vec<DynValue>, Failure> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let kind = kinds.get(i).copied().unwrap_or(ProtoKind::Tensor);
            data::value_proto::read(f, kind).map_err(Failure::from)
        })
        .collect()
}

/// The `test_data_set_*` folders of a case folder, sorted (at least one).
fn set_dirs(dir: &str) -> Result<Vec<PathBuf>, Failure> {
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Failure(format!("cannot list {dir}: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_"))
        })
        .collect();
    sets.sort();
    if sets.is_empty() {
        return Err(Failure(format!("{dir} has no test_data_set_* folder")));
    }
    Ok(sets)
}

/// ONNX's dummy input for the `light` models: `(arange(n) / n).astype(float32)`, computed
/// in float64 and rounded to float32 as numpy does.
pub(crate) fn dummy_input(shape: &[usize]) -> HostArray {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|i| (i as f64 / n as f64) as f32).collect();
    HostArray::from_vec(shape.to_vec(), values).expect("length is the product of the shape")
}

impl Data {
    /// Loads every data set of the case, reading its files as the messages `bound` says.
    pub(crate) fn load(&self, bound: &Bound) -> Result<Vec<DataSet>, Failure> {
        match self {
            Data::Sets(dir) => {
                let sets = set_dirs(dir)?;
                sets.iter()
                    .map(|set| {
                        Ok(DataSet {
                            origin: set.display().to_string(),
                            inputs: read_all(&numbered(set, "input"), bound.inputs)?,
                            expected: read_all(&numbered(set, "output"), bound.outputs)?,
                        })
                    })
                    .collect()
            }
            Data::Dummy { shapes, expected } => {
                let files: Vec<PathBuf> = expected.iter().map(PathBuf::from).collect();
                Ok(vec![DataSet {
                    origin: expected.first().copied().unwrap_or("(dummy)").to_owned(),
                    inputs: shapes
                        .iter()
                        .map(|s| DynValue::Tensor(dummy_input(s)))
                        .collect(),
                    expected: read_all(&files, bound.outputs)?,
                }])
            }
        }
    }
}

/// `Ok` when a bound input was sized like its data.
fn same_dims(name: &str, sized: &[usize], data: &[usize]) -> Result<(), Failure> {
    if sized == data {
        Ok(())
    } else {
        Err(Failure(format!(
            "input `{name}` was sized {sized:?}, the data is {data:?}"
        )))
    }
}

impl DataSet {
    fn input(&self, index: usize) -> Result<&DynValue, Failure> {
        self.inputs.get(index).ok_or_else(|| {
            Failure(format!(
                "{}: the model has an input {index}, the data set has {} inputs",
                self.origin,
                self.inputs.len()
            ))
        })
    }

    /// The dims of input `index`: a numeric or string tensor, which sizes the binding.
    pub(crate) fn input_dims(&self, index: usize) -> Result<&[usize], Failure> {
        match self.input(index)? {
            DynValue::Tensor(a) => Ok(a.dims()),
            DynValue::Strings(s) => Ok(s.dims()),
            other => Err(Failure(format!(
                "{}: input {index} sizes the binding, the data is {}",
                self.origin,
                other.describe()
            ))),
        }
    }

    fn tensor_input(&self, index: usize, name: &str) -> Result<&HostArray, Failure> {
        let input = self.input(index)?;
        input.as_tensor().ok_or_else(|| {
            Failure(format!(
                "input `{name}` is a numeric tensor, the data is {}",
                input.describe()
            ))
        })
    }

    /// Copies input `index` into a bound input tensor, in place.
    pub(crate) fn fill<T: NumericElement, S: Shape>(
        &self,
        index: usize,
        tensor: &mut TensorMut<'_, T, S>,
    ) -> Result<(), Failure> {
        let input = self.tensor_input(index, tensor.name())?;
        let values = input.as_slice::<T>().ok_or_else(|| {
            Failure(format!(
                "input `{}` is {} in the bindings, the data is {}",
                tensor.name(),
                T::NUMERIC_TYPE,
                input.dtype()
            ))
        })?;
        same_dims(tensor.name(), tensor.dims(), input.dims())?;
        tensor.copy_from_slice(values)?;
        Ok(())
    }

    /// Writes the strings of input `index` into a bound string tensor.
    pub(crate) fn fill_strings<S: Shape>(
        &self,
        index: usize,
        tensor: &mut StringTensorMut<'_, S>,
    ) -> Result<(), Failure> {
        let input = self.input(index)?;
        let strings = input.as_strings().ok_or_else(|| {
            Failure(format!(
                "input `{}` is a string tensor, the data is {}",
                tensor.name(),
                input.describe()
            ))
        })?;
        same_dims(tensor.name(), tensor.dims(), strings.dims())?;
        tensor.fill(&strings.to_vec())?;
        Ok(())
    }

    /// Input `index` built as the typed value `V` (a sequence, an optional) that a
    /// binding's `inputs()` view holds.
    pub(crate) fn value<V: FromData>(&self, index: usize, name: &str) -> Result<V, Failure> {
        V::from_data(name, self.input(index)?)
    }

    /// A checker of this set's expected outputs.
    pub(crate) fn check(&self) -> Check<'_> {
        Check {
            set: self,
            checked: 0,
            problems: Vec::new(),
        }
    }
}

/// Compares outputs, in model order, with the expected ones.
#[derive(Debug)]
pub(crate) struct Check<'s> {
    set: &'s DataSet,
    checked: usize,
    problems: Vec<String>,
}

impl Check<'_> {
    fn expected(&mut self, index: usize, name: &str) -> Option<&DynValue> {
        self.checked += 1;
        let expected = self.set.expected.get(index);
        if expected.is_none() {
            self.problems
                .push(format!("output {index} `{name}` has no expected value"));
        }
        expected
    }

    fn compare(&mut self, index: usize, name: &str, actual: HostArrayRef<'_>) {
        let Some(expected) = self.expected(index, name) else {
            return;
        };
        let problem = match expected.as_tensor() {
            Some(expected) => data::compare(actual, expected.view(), TOLERANCE)
                .err()
                .map(|m| m.to_string()),
            None => Some(format!(
                "a numeric tensor, the data expects {}",
                expected.describe()
            )),
        };
        if let Some(m) = problem {
            self.problems.push(format!("output `{name}`: {m}"));
        }
    }

    /// Checks output `index`, a value read through its typed view (a string tensor, a
    /// sequence, an optional; `None` if the run did not produce it).
    pub(crate) fn value<V: ToData + ?Sized>(
        &mut self,
        index: usize,
        name: &str,
        output: Option<&V>,
    ) {
        let Some(expected) = self.expected(index, name) else {
            return;
        };
        let problem = match output.map(|o| o.to_data(name)) {
            None => Some("was not produced".to_owned()),
            Some(Err(e)) => Some(e.0),
            Some(Ok(actual)) => data::compare_values(&actual, expected, TOLERANCE)
                .err()
                .map(|m| m.to_string()),
        };
        if let Some(m) = problem {
            self.problems.push(format!("output `{name}`: {m}"));
        }
    }

    /// Checks output `index`, read in place from its pre-allocated tensor.
    pub(crate) fn output<T: NumericElement, S: Shape>(
        &mut self,
        index: usize,
        output: &TensorRef<'_, T, S>,
    ) {
        match HostArrayRef::of(output.dims(), output.as_slice()) {
            Ok(view) => self.compare(index, output.name(), view),
            Err(e) => self
                .problems
                .push(format!("output `{}`: {e}", output.name())),
        }
    }

    /// Checks output `index`, allocated by ONNX Runtime (`None` if the run did not produce it).
    pub(crate) fn allocated<T: NumericElement, S: Shape>(
        &mut self,
        index: usize,
        output: Option<&TensorRef<'_, T, S>>,
    ) {
        match output {
            Some(output) => self.output(index, output),
            None => {
                self.checked += 1;
                self.problems
                    .push(format!("output {index} was not produced"));
            }
        }
    }

    /// The verdict over every output checked.
    pub(crate) fn finish(self) -> Result<(), Failure> {
        let mut problems = self.problems;
        if self.checked != self.set.expected.len() {
            problems.push(format!(
                "the model has {} outputs, the data set expects {}",
                self.checked,
                self.set.expected.len()
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Failure(format!(
                "{}: {}",
                self.set.origin,
                problems.join("; ")
            )))
        }
    }
}

/// Why ONNX Runtime 1.31 cannot load a model stamped with an old opset.
const OLD_OPSET: &str = "ONNX Runtime 1.31 has no kernel for this operator version (it supports \
                         opset 7 and later); Python onnxruntime 1.31.1 fails to load it the same way";
/// Why ONNX Runtime cannot load a model using the training-only `Gradient` operator.
const TRAINING_OP: &str = "`ai.onnx.preview.training.Gradient` exists only in ONNX Runtime's \
                           training builds; Python onnxruntime 1.31.1 fails to load it the same way";

/// Why ONNX Runtime cannot load a `StringNormalizer` that changes case here.
const NO_LOCALE: &str = "ONNX Runtime's StringNormalizer needs the en_US.UTF-8 locale to change \
                         case, which this machine lacks; Python onnxruntime 1.31.1 fails to load \
                         it the same way";

/// Cases known to fail for reasons outside ort-bind: `(group/name, text the failure must
/// contain, why)`. A listed case that fails differently, or passes, is an unexplained result.
/// Their bindings are still generated and compiled; only ONNX Runtime's session creation
/// refuses them.
pub(crate) const KNOWN_FAILURES: &[(&str, &str, &str)] = &[
    (
        "simple/test_strnorm_model_monday_casesensintive_lower",
        "Failed to construct locale with name:en_US.UTF-8",
        NO_LOCALE,
    ),
    (
        "simple/test_strnorm_model_monday_casesensintive_upper",
        "Failed to construct locale with name:en_US.UTF-8",
        NO_LOCALE,
    ),
    (
        "simple/test_strnorm_model_monday_empty_output",
        "Failed to construct locale with name:en_US.UTF-8",
        NO_LOCALE,
    ),
    (
        "simple/test_strnorm_model_monday_insensintive_upper_twodim",
        "Failed to construct locale with name:en_US.UTF-8",
        NO_LOCALE,
    ),
    (
        "simple/test_gradient_of_add",
        "Gradient(-1) is not a registered function/op",
        TRAINING_OP,
    ),
    (
        "simple/test_gradient_of_add_and_mul",
        "Gradient(-1) is not a registered function/op",
        TRAINING_OP,
    ),
    (
        "pytorch-converted/test_AvgPool1d",
        "no implementation for AveragePool(1)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_AvgPool1d_stride",
        "no implementation for AveragePool(1)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_AvgPool2d",
        "no implementation for AveragePool(1)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_AvgPool2d_stride",
        "no implementation for AveragePool(1)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_AvgPool3d",
        "no implementation for AveragePool(1)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_AvgPool3d_stride",
        "no implementation for AveragePool(1)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_AvgPool3d_stride1_pad0_gpu_input",
        "no implementation for AveragePool(1)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_BatchNorm1d_3d_input_eval",
        "no implementation for BatchNormalization(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_BatchNorm2d_eval",
        "no implementation for BatchNormalization(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_BatchNorm2d_momentum_eval",
        "no implementation for BatchNormalization(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_BatchNorm3d_eval",
        "no implementation for BatchNormalization(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_BatchNorm3d_momentum_eval",
        "no implementation for BatchNormalization(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_GLU",
        "no implementation for Mul(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_GLU_dim",
        "no implementation for Mul(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_Linear",
        "no implementation for Gemm(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_PReLU_1d",
        "no implementation for PRelu(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_PReLU_1d_multiparam",
        "no implementation for PRelu(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_PReLU_2d",
        "no implementation for PRelu(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_PReLU_2d_multiparam",
        "no implementation for PRelu(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_PReLU_3d",
        "no implementation for PRelu(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_PReLU_3d_multiparam",
        "no implementation for PRelu(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_PoissonNLLLLoss_no_reduce",
        "no implementation for Mul(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-converted/test_Softsign",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_add_broadcast",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_add_size1_broadcast",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_add_size1_right_broadcast",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_add_size1_singleton_broadcast",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_addconstant",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_addmm",
        "no implementation for Gemm(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_basic",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_mm",
        "no implementation for Gemm(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_non_float_params",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_params",
        "no implementation for Add(6)",
        OLD_OPSET,
    ),
    (
        "pytorch-operator/test_operator_pow",
        "no implementation for Pow(1)",
        OLD_OPSET,
    ),
];

/// Why a failure is expected, when `id` is listed in [`KNOWN_FAILURES`] and `failure` says
/// what the list says it does.
pub(crate) fn explain(id: &str, failure: &str) -> Option<&'static str> {
    KNOWN_FAILURES
        .iter()
        .find(|(k, _, _)| *k == id)
        // ONNX Runtime words it "Could not find an implementation for Op(N)".
        .filter(|(_, text, _)| failure.replace("Could not find an", "no").contains(text))
        .map(|(_, _, why)| *why)
}

/// Whether `id` is listed in [`KNOWN_FAILURES`].
pub(crate) fn is_listed(id: &str) -> bool {
    KNOWN_FAILURES.iter().any(|(k, _, _)| *k == id)
}

/// How a case ended.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Every data set matched.
    Passed,
    /// Something went wrong; why.
    Failed(String),
}

/// Runs one case the way the index says, catching panics (a panic is a failure of that
/// case, not of the run).
pub(crate) fn run_case(case: &Case) -> (Verdict, Duration) {
    let start = Instant::now();
    let verdict = match case.run {
        Run::CodegenFailed(reason) => Verdict::Failed(format!("codegen failed: {reason}")),
        Run::Bound(ref bound) => guarded(|| {
            case.data
                .load(bound)
                .and_then(|sets| (bound.run)(case.model, &sets))
        }),
        Run::Dynamic(_) => guarded(|| run_dynamic(case.model, &case.data)),
    };
    (verdict, start.elapsed())
}

/// Runs one case through [`DynamicBinding`] whatever the index says (the route of
/// `ort-bind run`), catching panics.
pub(crate) fn run_case_dynamic(case: &Case) -> Verdict {
    guarded(|| run_dynamic(case.model, &case.data))
}

/// The verdict of `run`, a panic included.
fn guarded(run: impl FnOnce() -> Result<(), Failure> + std::panic::UnwindSafe) -> Verdict {
    match std::panic::catch_unwind(run) {
        Ok(Ok(())) => Verdict::Passed,
        Ok(Err(failure)) => Verdict::Failed(failure.0),
        Err(panic) => Verdict::Failed(format!(
            "panicked: {}",
            panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        )),
    }
}

/// Runs a model through [`DynamicBinding`]: each data set's files are read
/// as the values the session declares (tensors of any element type, strings, sequences,
/// maps, optionals), set as inputs, and the outputs ONNX Runtime allocates are compared
/// with the expected values at [`TOLERANCE`].
pub(crate) fn run_dynamic(model: &str, data: &Data) -> Result<(), Failure> {
    let Data::Sets(dir) = data else {
        return Err(Failure(format!(
            "{model}: the dynamic route reads data sets from files, this case has none"
        )));
    };
    let session = Session::from_file(model, &SessionOptions::new())?;
    let mut binding = DynamicBinding::new(&session)?;
    let inputs: Vec<ValueInfo> = binding.input_info().cloned().collect();
    let outputs: Vec<ValueInfo> = binding.output_info().cloned().collect();
    for set in set_dirs(dir)? {
        let origin = set.display().to_string();
        let given = numbered(&set, "input").len();
        if given != inputs.len() {
            return Err(Failure(format!(
                "{origin}: the model has {} inputs, the data set has {given}",
                inputs.len()
            )));
        }
        for (index, info) in inputs.iter().enumerate() {
            let file = set.join(format!("input_{index}.pb"));
            let value = data::read_value(&file, Some(&info.ty))?;
            binding.set_input_value(index, &value)?;
        }
        binding.run()?;
        let expected = numbered(&set, "output");
        let mut problems = Vec::new();
        if expected.len() != outputs.len() {
            problems.push(format!(
                "the model has {} outputs, the data set expects {}",
                outputs.len(),
                expected.len()
            ));
        }
        for (index, (info, file)) in outputs.iter().zip(&expected).enumerate() {
            let want = data::read_value(file, Some(&info.ty))?;
            match binding.output_value(index) {
                Ok(actual) => {
                    if let Err(m) = data::compare_values(&actual, &want, TOLERANCE) {
                        problems.push(format!("output `{}`: {m}", info.name));
                    }
                }
                Err(e) => problems.push(format!("output `{}`: {e}", info.name)),
            }
        }
        if !problems.is_empty() {
            return Err(Failure(format!("{origin}: {}", problems.join("; "))));
        }
    }
    Ok(())
}

/// Node cases Python onnxruntime 1.31.1 passes that ort-bind does not, yet: `(name, text the
/// failure must contain, why)`. Each is a gap in ort-bind, printed as such; a listed case
/// that passes or fails differently is an unexplained result, so the list stays true.
pub(crate) const NODE_GAPS: &[(&str, &str, &str)] = &[];

/// Why the node case `name` fails here though Python onnxruntime passes it, when it is a
/// listed gap ([`NODE_GAPS`]) failing the way the list says.
pub(crate) fn node_gap(name: &str, failure: Option<&str>) -> Option<&'static str> {
    NODE_GAPS
        .iter()
        .find(|(n, _, _)| *n == name)
        .filter(|(_, text, _)| failure.is_none_or(|f| f.contains(text)))
        .map(|(_, _, why)| *why)
}

/// The node cases Python onnxruntime 1.31.1 fails, written by
/// `tests/reference/node_reference.py`: `case<TAB>stage<TAB>reason` per line.
const NODE_PYTHON_FAILURES: &str = include_str!("../reference/node_python_failures.txt");

/// Why Python onnxruntime fails the node case `name` (`stage: reason`), when it does.
pub(crate) fn python_fails(name: &str) -> Option<(&'static str, &'static str)> {
    NODE_PYTHON_FAILURES
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            Some((parts.next()?, parts.next()?, parts.next()?))
        })
        .find(|(case, _, _)| *case == name)
        .map(|(_, stage, reason)| (stage, reason))
}

/// How many node cases the Python reference ran, and how many it failed.
pub(crate) fn python_counts() -> (usize, usize) {
    let failed = NODE_PYTHON_FAILURES
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .count();
    let total = NODE_PYTHON_FAILURES
        .lines()
        .find_map(|l| {
            l.strip_prefix("# ")?
                .split_once(" of ")?
                .1
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    (total, failed)
}

/// Counts per group.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    /// Passed through generated bindings ([`Run::Bound`]).
    pub(crate) passed_typed: usize,
    /// Passed through [`DynamicBinding`] ([`Run::Dynamic`]).
    pub(crate) passed_dynamic: usize,
}

impl Tally {
    /// Counts the verdict of a case that ran as `run` says.
    pub(crate) fn add(&mut self, run: &Run, verdict: &Verdict) {
        match (verdict, run) {
            (Verdict::Passed, Run::Bound(_)) => self.passed_typed += 1,
            (Verdict::Passed, Run::Dynamic(_)) => self.passed_dynamic += 1,
            _ => {}
        }
        match verdict {
            Verdict::Passed => self.passed += 1,
            Verdict::Failed(_) => self.failed += 1,
        }
    }
}
