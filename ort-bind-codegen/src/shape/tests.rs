//! Unit tests of the operators' rules: tiny models written with the model reader's own
//! messages (`crate::onnx::proto`, encoded by the test-only writer), read back through
//! [`signature_from_bytes`], and each output's inferred shape compared as text (`?` for an
//! axis left open, `unknown rank`). The sizes of the ONNX backend cases come from ONNX's
//! own test data (`tests/shape_inference.rs` in ort-bind-tests measures all of them).

use super::{InferredShape, StopReason};
use crate::onnx::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, SmallTensor,
    TensorShapeProto, TypeProto, ValueInfoProto, tensor_shape_proto::Dimension,
    tensor_shape_proto::dimension, type_proto,
};
use crate::onnx::signature_from_bytes;
use crate::onnx::wire::Message as _;

const F32: i32 = 1;
const I32: i32 = 6;
const I64: i32 = 7;
const STRING: i32 = 8;

// ---- writer helpers -------------------------------------------------------------------

/// A tensor value; each dim a size (`"3"`), a name (`"n"`) or unset (`"?"`).
fn tensor(name: &str, elem: i32, dims: &[&str]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: match (*d, d.parse::<i64>()) {
                (_, Ok(v)) => Some(dimension::Value::DimValue(v)),
                ("?", _) => None,
                (p, _) => Some(dimension::Value::DimParam(p.to_owned())),
            },
        })
        .collect();
    ValueInfoProto {
        name: name.to_owned(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::Tensor(type_proto::Tensor {
                elem_type: elem,
                shape: Some(TensorShapeProto { dim }),
            })),
        }),
        doc_string: Vec::new(),
    }
}

/// A graph output as exporters often declare it: a tensor of unknown shape.
fn output(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: name.to_owned(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::Tensor(type_proto::Tensor {
                elem_type: F32,
                shape: None,
            })),
        }),
        doc_string: Vec::new(),
    }
}

fn node(op: &str, inputs: &[&str], outputs: &[&str], attribute: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| (*s).to_owned()).collect(),
        output: outputs.iter().map(|s| (*s).to_owned()).collect(),
        name: String::new(),
        op_type: op.to_owned(),
        attribute,
        domain: String::new(),
    }
}

fn ml(mut n: NodeProto) -> NodeProto {
    n.domain = "ai.onnx.ml".to_owned();
    n
}

fn attr(name: &str, r#type: i32) -> AttributeProto {
    AttributeProto {
        name: name.to_owned(),
        r#type,
        ..AttributeProto::default()
    }
}

fn a_i(name: &str, i: i64) -> AttributeProto {
    AttributeProto { i, ..attr(name, 2) }
}

fn a_ints(name: &str, ints: &[i64]) -> AttributeProto {
    AttributeProto {
        ints: ints.to_vec(),
        ..attr(name, 7)
    }
}

fn a_s(name: &str, s: &str) -> AttributeProto {
    AttributeProto {
        s: s.as_bytes().to_vec(),
        ..attr(name, 3)
    }
}

fn a_t(name: &str, t: SmallTensor) -> AttributeProto {
    AttributeProto {
        t: Some(t),
        ..attr(name, 4)
    }
}

fn a_g(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        g: Some(Box::new(g)),
        ..attr(name, 5)
    }
}

/// An int64 tensor (an initializer, or a `Constant`'s value).
fn ints(name: &str, dims: &[i64], values: &[i64]) -> SmallTensor {
    SmallTensor {
        name: name.to_owned(),
        dims: dims.to_vec(),
        data_type: I64,
        int64_data: values.to_vec(),
        ..SmallTensor::default()
    }
}

/// A float tensor.
fn floats(name: &str, dims: &[i64], values: &[f32]) -> SmallTensor {
    SmallTensor {
        name: name.to_owned(),
        dims: dims.to_vec(),
        data_type: F32,
        float_data: values.to_vec(),
        ..SmallTensor::default()
    }
}

/// A `Constant` node of an int64 tensor.
fn constant(out: &str, dims: &[i64], values: &[i64]) -> NodeProto {
    node(
        "Constant",
        &[],
        &[out],
        vec![a_t("value", ints("", dims, values))],
    )
}

fn graph(
    inputs: Vec<ValueInfoProto>,
    initializer: Vec<SmallTensor>,
    nodes: Vec<NodeProto>,
    outputs: &[&str],
) -> GraphProto {
    GraphProto {
        node: nodes,
        name: "g".to_owned(),
        initializer,
        doc_string: Vec::new(),
        input: inputs,
        output: outputs.iter().map(|o| output(o)).collect(),
        sparse_initializer: Vec::new(),
    }
}

/// What inference gives each of `outputs` of the model.
fn infer(
    opset: i64,
    inputs: Vec<ValueInfoProto>,
    initializer: Vec<SmallTensor>,
    nodes: Vec<NodeProto>,
    outputs: &[&str],
) -> Vec<InferredShape> {
    let model = ModelProto {
        ir_version: 8,
        producer_name: "shape tests".to_owned(),
        producer_version: String::new(),
        doc_string: Vec::new(),
        graph: Some(graph(inputs, initializer, nodes, outputs)),
        opset_import: vec![
            OperatorSetIdProto {
                domain: String::new(),
                version: opset,
            },
            OperatorSetIdProto {
                domain: "ai.onnx.ml".to_owned(),
                version: 5,
            },
        ],
        metadata_props: Vec::new(),
    };
    let sig = signature_from_bytes(&model.encode_to_vec(), "test.onnx").expect("the model reads");
    assert_eq!(sig.inferred.len(), outputs.len());
    sig.inferred
}

/// A shape as text: `[n, 3, ?]`, or `unknown rank`.
fn show(s: &InferredShape) -> String {
    match &s.dims {
        None => "unknown rank".to_owned(),
        Some(d) => {
            let axes: Vec<String> = d
                .iter()
                .map(|x| {
                    x.as_ref()
                        .map_or_else(|| "?".to_owned(), ToString::to_string)
                })
                .collect();
            format!("[{}]", axes.join(", "))
        }
    }
}

fn shown(shapes: &[InferredShape]) -> Vec<String> {
    shapes.iter().map(show).collect()
}

fn reason(s: &InferredShape) -> &StopReason {
    &s.stop.as_ref().expect("a stop").reason
}

// ---- data dependence ------------------------------------------------------------------

#[test]
fn values_read_from_inputs_are_data_dependent_and_values_computed_from_shapes_are_not() {
    let out = infer(
        17,
        vec![
            tensor("x", F32, &["n", "6"]),
            tensor("s", I64, &["2"]),
            tensor("k", I64, &[]),
        ],
        vec![],
        vec![
            // A shape the model reads.
            node("Reshape", &["x", "s"], &["y"], vec![]),
            // A shape computed from shapes by an operator whose values are not followed.
            node("Shape", &["x"], &["sx"], vec![]),
            node("ReduceSum", &["sx"], &["total"], vec![]),
            node("Reshape", &["x", "total"], &["z"], vec![]),
            // A range whose limit the model reads (its start is a constant).
            constant("zero", &[], &[0]),
            constant("one", &[], &[1]),
            node("Range", &["zero", "k", "one"], &["r"], vec![]),
        ],
        &["y", "z", "r"],
    );
    assert_eq!(shown(&out), ["unknown rank"; 3]);
    assert_eq!(reason(&out[0]), &StopReason::DataDependent);
    assert!(
        matches!(reason(&out[1]), StopReason::Other(why) if why.contains("computed from shapes")),
        "{:?}",
        out[1].stop
    );
    assert_eq!(reason(&out[2]), &StopReason::DataDependent);
}

#[test]
fn comparisons_logic_and_where_carry_small_values() {
    // The head count of an expanded `Attention`: 2 query heads per key head, picked by
    // `Where` from conditions on the shapes.
    let out = infer(
        17,
        vec![tensor("x", F32, &["b", "4", "6"])],
        vec![],
        vec![
            node("Shape", &["x"], &["batch"], vec![a_i("end", 1)]),
            node(
                "Shape",
                &["x"],
                &["h"],
                vec![a_i("start", 1), a_i("end", 2)],
            ),
            constant("two", &[1], &[2]),
            constant("zero", &[1], &[0]),
            constant("one", &[1], &[1]),
            constant("minus_one", &[1], &[-1]),
            node("Equal", &["h", "two"], &["same"], vec![]),
            node("Not", &["same"], &["differ"], vec![]),
            node("Mod", &["h", "two"], &["rem"], vec![]),
            node("Equal", &["rem", "zero"], &["divides"], vec![]),
            node("And", &["differ", "divides"], &["grouped"], vec![]),
            node("Div", &["h", "two"], &["per"], vec![]),
            node("Where", &["grouped", "per", "one"], &["groups"], vec![]),
            node(
                "Concat",
                &["batch", "groups", "minus_one"],
                &["shape"],
                vec![a_i("axis", 0)],
            ),
            node("Reshape", &["x", "shape"], &["y"], vec![]),
            // Equal expressions are equal: the batch equals itself.
            node("Equal", &["batch", "batch"], &["always"], vec![]),
            constant("three", &[1], &[3]),
            constant("five", &[1], &[5]),
            node("Where", &["always", "three", "five"], &["picked"], vec![]),
            node("ConstantOfShape", &["picked"], &["filled"], vec![]),
            // Whether the batch is over 1 depends on the batch: nothing is claimed.
            node("Greater", &["batch", "one"], &["big"], vec![]),
            node("Where", &["big", "three", "five"], &["either"], vec![]),
            node("ConstantOfShape", &["either"], &["unsure"], vec![]),
        ],
        &["y", "filled", "unsure"],
    );
    assert_eq!(shown(&out), ["[b, 2, 12]", "[3]", "unknown rank"]);
    assert!(matches!(reason(&out[2]), StopReason::Other(_)));
}

#[test]
fn casts_turn_whole_floats_into_sizes() {
    let out = infer(
        17,
        vec![tensor("x", F32, &["6"])],
        vec![],
        vec![
            node(
                "Constant",
                &[],
                &["f"],
                vec![a_t("value", floats("", &[2], &[2.0, 3.0]))],
            ),
            node("Cast", &["f"], &["s"], vec![a_i("to", i64::from(I64))]),
            node("Reshape", &["x", "s"], &["y"], vec![]),
            node(
                "Constant",
                &[],
                &["g"],
                vec![a_t("value", floats("", &[2], &[2.5, 2.4]))],
            ),
            node("Cast", &["g"], &["t"], vec![a_i("to", i64::from(I64))]),
            node("Reshape", &["x", "t"], &["z"], vec![]),
        ],
        &["y", "z"],
    );
    assert_eq!(shown(&out), ["[2, 3]", "unknown rank"]);
}

// ---- elementwise family ---------------------------------------------------------------

#[test]
fn batch_normalization_statistics_have_the_channels() {
    let stat = |name: &str| floats(name, &[3], &[0.0, 1.0, 2.0]);
    let out = infer(
        15,
        vec![tensor("x", F32, &["n", "3", "h", "w"])],
        vec![stat("scale"), stat("bias"), stat("mean"), stat("var")],
        vec![node(
            "BatchNormalization",
            &["x", "scale", "bias", "mean", "var"],
            &["y", "running_mean", "running_var"],
            vec![a_i("training_mode", 1)],
        )],
        &["y", "running_mean", "running_var"],
    );
    assert_eq!(shown(&out), ["[n, 3, h, w]", "[3]", "[3]"]);
}

#[test]
fn bit_cast_keeps_the_shape_between_types_of_one_width() {
    let out = infer(
        26,
        vec![tensor("x", F32, &["n", "3"])],
        vec![],
        vec![
            node(
                "BitCast",
                &["x"],
                &["same"],
                vec![a_i("to", i64::from(I32))],
            ),
            node(
                "BitCast",
                &["x"],
                &["wider"],
                vec![a_i("to", i64::from(I64))],
            ),
        ],
        &["same", "wider"],
    );
    assert_eq!(shown(&out), ["[n, 3]", "unknown rank"]);
}

#[test]
fn cumulative_products_caches_and_strings_keep_their_shapes() {
    let out = infer(
        24,
        vec![
            tensor("x", F32, &["n", "3"]),
            tensor("past", F32, &["2", "1", "4", "5"]),
            tensor("update", F32, &["2", "1", "1", "5"]),
            tensor("at", I64, &["2"]),
            tensor("s", STRING, &["m"]),
            tensor("t", STRING, &["1"]),
        ],
        vec![ints("axis", &[], &[0])],
        vec![
            node("CumProd", &["x", "axis"], &["prod"], vec![]),
            node(
                "TensorScatter",
                &["past", "update", "at"],
                &["present"],
                vec![],
            ),
            node("StringConcat", &["s", "t"], &["joined"], vec![]),
            node("StringNormalizer", &["s"], &["normal"], vec![]),
            // Stop words remove strings: how many is data.
            node(
                "StringNormalizer",
                &["s"],
                &["filtered"],
                vec![attr("stopwords", 8)],
            ),
        ],
        &["prod", "present", "joined", "normal", "filtered"],
    );
    assert_eq!(
        shown(&out),
        ["[n, 3]", "[2, 1, 4, 5]", "[m]", "[m]", "unknown rank"]
    );
    assert_eq!(reason(&out[4]), &StopReason::DataDependent);
}

// ---- network layers -------------------------------------------------------------------

#[test]
fn losses_are_scalars_unless_not_reduced() {
    let out = infer(
        22,
        vec![
            tensor("scores", F32, &["n", "5", "d"]),
            tensor("labels", I64, &["n", "d"]),
        ],
        vec![],
        vec![
            node(
                "NegativeLogLikelihoodLoss",
                &["scores", "labels"],
                &["none"],
                vec![a_s("reduction", "none")],
            ),
            node(
                "NegativeLogLikelihoodLoss",
                &["scores", "labels"],
                &["mean"],
                vec![],
            ),
            node(
                "SoftmaxCrossEntropyLoss",
                &["scores", "labels"],
                &["sum", "log_prob"],
                vec![a_s("reduction", "sum")],
            ),
            node(
                "SoftmaxCrossEntropyLoss",
                &["scores", "labels"],
                &["each"],
                vec![a_s("reduction", "none")],
            ),
        ],
        &["none", "mean", "sum", "log_prob", "each"],
    );
    assert_eq!(shown(&out), ["[n, d]", "[]", "[]", "[n, 5, d]", "[n, d]"]);
}

#[test]
fn sampling_unpooling_determinants_and_tf_idf() {
    let out = infer(
        22,
        vec![
            tensor("x", F32, &["n", "1", "4", "4"]),
            tensor("grid", F32, &["n", "6", "7", "2"]),
            tensor("small", F32, &["1", "1", "3", "3"]),
            tensor("offset", F32, &["1", "8", "4", "4"]),
            tensor("pooled", F32, &["1", "c", "h", "w"]),
            tensor("where", I64, &["1", "c", "h", "w"]),
            tensor("m", F32, &["k", "2", "2"]),
            tensor("words", I32, &["r", "6"]),
        ],
        vec![floats("weights", &[1, 1, 2, 2], &[1.0; 4])],
        vec![
            node("GridSample", &["x", "grid"], &["sampled"], vec![]),
            node(
                "DeformConv",
                &["small", "weights", "offset"],
                &["deformed"],
                vec![
                    a_ints("kernel_shape", &[2, 2]),
                    a_ints("pads", &[1, 1, 1, 1]),
                ],
            ),
            node(
                "MaxUnpool",
                &["pooled", "where"],
                &["unpooled"],
                vec![a_ints("kernel_shape", &[2, 2]), a_ints("strides", &[2, 2])],
            ),
            node("Det", &["m"], &["det"], vec![]),
            node(
                "TfIdfVectorizer",
                &["words"],
                &["tf"],
                vec![
                    a_i("max_gram_length", 2),
                    a_i("min_gram_length", 2),
                    a_i("max_skip_count", 0),
                    a_s("mode", "TF"),
                    a_ints("ngram_counts", &[0, 4]),
                    a_ints("ngram_indexes", &[0, 1, 2, 3, 4, 5, 6]),
                    a_ints("pool_int64s", &[2, 3, 5, 4, 5, 6, 7, 8, 6, 7]),
                ],
            ),
        ],
        &["sampled", "deformed", "unpooled", "det", "tf"],
    );
    assert_eq!(
        shown(&out),
        [
            "[n, 1, 6, 7]",
            "[1, 1, 4, 4]",
            "[1, c, 2*h, 2*w]",
            "[k]",
            "[r, 7]"
        ]
    );
}

#[test]
fn ceil_mode_pooling_drops_a_last_window_that_starts_in_the_padding() {
    // ONNX's test_averagepool_2d_ceil_last_window_starts_on_pad and
    // test_maxpool_2d_ceil_output_size_reduce_by_one.
    let average = vec![
        a_i("ceil_mode", 1),
        a_ints("kernel_shape", &[3, 3]),
        a_ints("pads", &[1, 1, 1, 1]),
        a_ints("strides", &[3, 3]),
    ];
    let max = vec![
        a_i("ceil_mode", 1),
        a_ints("kernel_shape", &[1, 1]),
        a_ints("strides", &[2, 2]),
    ];
    let out = infer(
        22,
        vec![
            tensor("x", F32, &["1", "3", "2", "2"]),
            tensor("y", F32, &["1", "1", "2", "2"]),
            tensor("z", F32, &["1", "1", "h", "w"]),
        ],
        vec![],
        vec![
            node("AveragePool", &["x"], &["a"], average.clone()),
            node("MaxPool", &["y"], &["m"], max),
            // Whether the last window is dropped depends on the size: left open.
            node("AveragePool", &["z"], &["open"], average),
        ],
        &["a", "m", "open"],
    );
    assert_eq!(
        shown(&out),
        ["[1, 3, 1, 1]", "[1, 1, 1, 1]", "[1, 1, ?, ?]"]
    );
}

#[test]
fn resize_keeps_the_aspect_ratio_of_constant_sizes() {
    // ONNX's test_resize_{down,up}sample_sizes_nearest_not_{larger,smaller}.
    let resize = |x: &str, sizes: &str, policy: &str, out: &str| {
        node(
            "Resize",
            &[x, "", "", sizes],
            &[out],
            vec![
                a_ints("axes", &[2, 3]),
                a_s("keep_aspect_ratio_policy", policy),
                a_s("mode", "nearest"),
            ],
        )
    };
    let out = infer(
        19,
        vec![
            tensor("wide", F32, &["1", "1", "2", "4"]),
            tensor("square", F32, &["1", "1", "2", "2"]),
            tensor("odd", F32, &["1", "1", "6", "3"]),
            tensor("given", I64, &["2"]),
        ],
        vec![
            ints("down", &[2], &[1, 3]),
            ints("up", &[2], &[7, 8]),
            ints("sixths", &[2], &[5, 9]),
        ],
        vec![
            resize("wide", "down", "not_larger", "a"),
            resize("wide", "down", "not_smaller", "b"),
            resize("square", "up", "not_larger", "c"),
            resize("square", "up", "not_smaller", "d"),
            // Scale 5/6: 3 * 5/6 is 2.5 exactly, which `float` does not hold.
            resize("odd", "sixths", "not_larger", "e"),
            resize("wide", "given", "not_larger", "f"),
        ],
        &["a", "b", "c", "d", "e", "f"],
    );
    assert_eq!(
        shown(&out),
        [
            "[1, 1, 1, 2]",
            "[1, 1, 2, 3]",
            "[1, 1, 7, 7]",
            "[1, 1, 8, 8]",
            "[1, 1, ?, ?]",
            "unknown rank"
        ]
    );
    assert_eq!(reason(&out[5]), &StopReason::DataDependent);
}

#[test]
fn attention_present_states_and_scores() {
    // ONNX's test_attention_3d_with_past_and_present_qk_matmul, with named sizes.
    let heads = vec![a_i("q_num_heads", 3), a_i("kv_num_heads", 3)];
    let out = infer(
        23,
        vec![
            tensor("q", F32, &["b", "s", "24"]),
            tensor("k", F32, &["b", "t", "24"]),
            tensor("v", F32, &["b", "t", "30"]),
            tensor("mask", F32, &["s", "total"]),
            tensor("past_k", F32, &["b", "3", "p", "8"]),
            tensor("past_v", F32, &["b", "3", "p", "10"]),
            tensor("q4", F32, &["2", "3", "4", "8"]),
            tensor("k4", F32, &["2", "3", "6", "8"]),
        ],
        vec![],
        vec![
            node(
                "Attention",
                &["q", "k", "v", "mask", "past_k", "past_v"],
                &["y", "present_k", "present_v", "qk"],
                heads,
            ),
            // 4-D, no past: the scores span the new positions.
            node(
                "Attention",
                &["q4", "k4", "k4"],
                &["y4", "", "", "qk4"],
                vec![],
            ),
        ],
        &["y", "present_k", "present_v", "qk", "y4", "qk4"],
    );
    assert_eq!(
        shown(&out),
        [
            "[b, s, 30]",
            "[b, 3, p + t, 8]",
            "[b, 3, p + t, 10]",
            "[b, 3, s, p + t]",
            "[2, 3, 4, 8]",
            "[2, 3, 4, 6]"
        ]
    );
}

// ---- sizes read from values -----------------------------------------------------------

#[test]
fn crops_images_grids_and_windows_are_sized_by_their_constant_inputs() {
    // The sizes of ONNX's test_center_crop_pad_crop_axes_hwc, test_col2im_strides,
    // test_affine_grid_3d, test_hannwindow_symmetric and test_melweightmatrix.
    let out = infer(
        20,
        vec![
            tensor("x", F32, &["20", "8", "3"]),
            tensor("columns", F32, &["1", "9", "4"]),
            tensor("theta", F32, &["2", "3", "4"]),
            tensor("length", I64, &[]),
        ],
        vec![
            ints("crop", &[2], &[10, 9]),
            ints("image", &[2], &[5, 5]),
            ints("block", &[2], &[3, 3]),
            ints("size", &[5], &[2, 3, 4, 5, 6]),
            ints("ten", &[], &[10]),
            ints("bins", &[], &[8]),
            ints("dft", &[], &[16]),
            ints("rate", &[], &[8192]),
            floats("low", &[], &[0.0]),
            floats("high", &[], &[4096.0]),
        ],
        vec![
            node(
                "CenterCropPad",
                &["x", "crop"],
                &["cropped"],
                vec![a_ints("axes", &[0, 1])],
            ),
            node(
                "Col2Im",
                &["columns", "image", "block"],
                &["im"],
                vec![a_ints("strides", &[2, 2])],
            ),
            node("AffineGrid", &["theta", "size"], &["grid"], vec![]),
            node(
                "HannWindow",
                &["ten"],
                &["window"],
                vec![a_i("periodic", 0)],
            ),
            node(
                "MelWeightMatrix",
                &["bins", "dft", "rate", "low", "high"],
                &["mel"],
                vec![],
            ),
            node("HannWindow", &["length"], &["read"], vec![]),
        ],
        &["cropped", "im", "grid", "window", "mel", "read"],
    );
    assert_eq!(
        shown(&out),
        [
            "[10, 9, 3]",
            "[1, 1, 5, 5]",
            "[2, 4, 5, 6, 3]",
            "[10]",
            "[9, 8]",
            "unknown rank"
        ]
    );
    assert_eq!(reason(&out[5]), &StopReason::DataDependent);
}

// ---- ai.onnx.ml -----------------------------------------------------------------------

#[test]
fn machine_learning_operators() {
    let out = infer(
        17,
        vec![
            tensor("x", F32, &["n", "4"]),
            tensor("picks", I64, &["2"]),
            tensor("words", STRING, &["m"]),
        ],
        vec![],
        vec![
            ml(node("Binarizer", &["x"], &["bits"], vec![])),
            ml(node("LabelEncoder", &["words"], &["codes"], vec![])),
            ml(node(
                "ArrayFeatureExtractor",
                &["x", "picks"],
                &["picked"],
                vec![],
            )),
            ml(node(
                "TreeEnsemble",
                &["x"],
                &["trees"],
                vec![a_i("n_targets", 2)],
            )),
        ],
        &["bits", "codes", "picked", "trees"],
    );
    assert_eq!(shown(&out), ["[n, 4]", "[m]", "[n, 2]", "[n, 2]"]);
}

// ---- control flow ---------------------------------------------------------------------

#[test]
fn scan_before_opset_9_has_a_batch_axis() {
    // ONNX's test_scan_sum: a running sum over the sequence axis (axis 1).
    let body = graph(
        vec![tensor("sum_in", F32, &["2"]), tensor("step", F32, &["2"])],
        vec![],
        vec![
            node("Add", &["sum_in", "step"], &["sum_out"], vec![]),
            node("Identity", &["sum_out"], &["scan_out"], vec![]),
        ],
        &["sum_out", "scan_out"],
    );
    let out = infer(
        8,
        vec![
            tensor("initial", F32, &["b", "2"]),
            tensor("x", F32, &["b", "s", "2"]),
        ],
        vec![],
        vec![node(
            "Scan",
            &["", "initial", "x"],
            &["y", "z"],
            vec![a_g("body", body), a_i("num_scan_inputs", 1)],
        )],
        &["y", "z"],
    );
    assert_eq!(shown(&out), ["[b, 2]", "[b, s, 2]"]);
}

/// A length that is a floor division of named dims is at least its least value, so `Range`
/// over it (positional encodings: `Range(0, Shape(x)[1], 1)`) has that length, not
/// `max(length, 0)`, and broadcasts against the axis it came from.
#[test]
fn a_range_over_a_computed_length_keeps_that_length() {
    use crate::shapes::DimExpr;
    let f = DimExpr::sym("num_frames");
    let t = f
        .add(&DimExpr::int(1))
        .and_then(|x| x.floor_div(&DimExpr::int(2)))
        .unwrap();
    assert_eq!(t.max_with(&DimExpr::int(0)), Some(t.clone()));
    assert_eq!(t.min_with(&DimExpr::int(0)), Some(DimExpr::int(0)));
    // Unknown sign (a difference) stays a max.
    let d = f.sub(&DimExpr::sym("k")).unwrap();
    assert_ne!(d.max_with(&DimExpr::int(0)), Some(d));
}
