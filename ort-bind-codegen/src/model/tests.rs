//! Unit tests: models are built in memory by encoding the decoder's own messages (with
//! `wire`'s test-only writer), plus a few richer test-only messages for initializer
//! payloads, encoded by prost (an encoder independent of the decoder).

use prost::Message;

use super::wire::Message as _;

use super::proto::{
    GraphProto, InitializerName, ModelProto, NodeProto, OperatorSetIdProto, SmallTensor,
    SparseTensorProto, StringStringEntryProto, TensorShapeProto, TypeProto, ValueInfoProto,
    tensor_shape_proto::Dimension, tensor_shape_proto::dimension, type_proto,
};
use super::{
    IN_MEMORY, MAX_TYPE_DEPTH, ModelError, read_signature, read_signature_with,
    signature_from_bytes,
};
use crate::element::ElementType;
use crate::sig::{Dim, ValueType};

// ---- writer helpers -------------------------------------------------------------------

/// A dimension as tests spell it.
enum D {
    V(i64),
    P(&'static str),
    Unset,
}

fn dimension(d: &D) -> Dimension {
    Dimension {
        value: match d {
            D::V(v) => Some(dimension::Value::DimValue(*v)),
            D::P(p) => Some(dimension::Value::DimParam((*p).to_owned())),
            D::Unset => None,
        },
    }
}

fn tensor_type(elem: i32, shape: Option<&[D]>) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::Tensor(type_proto::Tensor {
            elem_type: elem,
            shape: shape.map(|s| TensorShapeProto {
                dim: s.iter().map(dimension).collect(),
            }),
        })),
    }
}

fn seq_type(elem: TypeProto) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::Sequence(type_proto::Sequence {
            elem_type: Some(Box::new(elem)),
        })),
    }
}

fn opt_type(elem: Option<TypeProto>) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::Optional(type_proto::Optional {
            elem_type: elem.map(Box::new),
        })),
    }
}

fn map_type(key: i32, value: TypeProto) -> TypeProto {
    map_type_opt(key, Some(value))
}

fn map_type_opt(key: i32, value: Option<TypeProto>) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::Map(type_proto::Map {
            key_type: key,
            value_type: value.map(Box::new),
        })),
    }
}

fn value(name: &str, ty: Option<TypeProto>) -> ValueInfoProto {
    ValueInfoProto {
        name: name.to_owned(),
        r#type: ty,
        doc_string: Vec::new(),
    }
}

fn tensor(name: &str, elem: i32, shape: &[D]) -> ValueInfoProto {
    value(name, Some(tensor_type(elem, Some(shape))))
}

fn graph(inputs: Vec<ValueInfoProto>, outputs: Vec<ValueInfoProto>) -> GraphProto {
    GraphProto {
        node: Vec::new(),
        name: "g".to_owned(),
        initializer: Vec::new(),
        doc_string: Vec::new(),
        input: inputs,
        output: outputs,
        sparse_initializer: Vec::new(),
    }
}

fn model(graph: GraphProto) -> ModelProto {
    ModelProto {
        ir_version: 8,
        producer_name: "ort-bind-tests".to_owned(),
        producer_version: "0".to_owned(),
        doc_string: b"a test model".to_vec(),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        metadata_props: Vec::new(),
    }
}

/// The bytes of a model of float32 tensors (other tests write it to a file), each dim
/// a size or a name: `f32_model(&[("x", &["batch", "16"])], &[("y", &["batch", "16"])])`.
pub(crate) fn f32_model(
    inputs: &[(&str, &[&'static str])],
    outputs: &[(&str, &[&'static str])],
) -> Vec<u8> {
    let values = |vs: &[(&str, &[&'static str])]| {
        vs.iter()
            .map(|(name, dims)| {
                let dims: Vec<D> = dims
                    .iter()
                    .map(|d| d.parse().map_or(D::P(d), D::V))
                    .collect();
                tensor(name, F32, &dims)
            })
            .collect()
    };
    model(graph(values(inputs), values(outputs))).encode_to_vec()
}

fn decode(m: &ModelProto) -> Result<crate::ModelSignature, ModelError> {
    signature_from_bytes(&m.encode_to_vec(), "test.onnx")
}

fn dims_of(sig: &crate::ModelSignature, name: &str) -> Option<Vec<Dim>> {
    let v = sig
        .input(name)
        .or_else(|| sig.output(name))
        .unwrap_or_else(|| panic!("no value {name}"));
    match &v.kind {
        ValueType::Tensor { dims, .. } => dims.clone(),
        other => panic!("{name} is not a tensor: {other}"),
    }
}

/// Test-only `TensorProto` with payload fields, to check they are skipped.
#[derive(Clone, PartialEq, Message)]
struct RichTensor {
    #[prost(int64, repeated, tag = "1")]
    dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    data_type: i32,
    #[prost(float, repeated, tag = "4")]
    float_data: Vec<f32>,
    #[prost(string, tag = "8")]
    name: String,
    #[prost(bytes = "vec", tag = "9")]
    raw_data: Vec<u8>,
    #[prost(message, repeated, tag = "13")]
    external_data: Vec<RichEntry>,
    #[prost(int32, tag = "14")]
    data_location: i32,
}

/// Test-only `NodeProto` (a subset), to check nodes are skipped.
#[derive(Clone, PartialEq, Message)]
struct RichNode {
    #[prost(string, repeated, tag = "1")]
    input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    output: Vec<String>,
    #[prost(string, tag = "3")]
    name: String,
    #[prost(string, tag = "4")]
    op_type: String,
}

/// Test-only `GraphProto` carrying rich initializers and nodes.
#[derive(Clone, PartialEq, Message)]
struct RichGraph {
    #[prost(message, repeated, tag = "1")]
    node: Vec<RichNode>,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(message, repeated, tag = "5")]
    initializer: Vec<RichTensor>,
    /// Encoded `ValueInfoProto`s (an embedded message is its bytes on the wire).
    #[prost(bytes = "vec", repeated, tag = "11")]
    input: Vec<Vec<u8>>,
    #[prost(bytes = "vec", repeated, tag = "12")]
    output: Vec<Vec<u8>>,
}

/// Test-only `ModelProto` around a [`RichGraph`].
#[derive(Clone, PartialEq, Message)]
struct RichModel {
    #[prost(int64, tag = "1")]
    ir_version: i64,
    #[prost(message, optional, tag = "7")]
    graph: Option<RichGraph>,
    #[prost(message, repeated, tag = "8")]
    opset_import: Vec<RichOpset>,
}

/// Test-only `StringStringEntryProto`.
#[derive(Clone, PartialEq, Message)]
struct RichEntry {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(string, tag = "2")]
    value: String,
}

/// Test-only `OperatorSetIdProto`.
#[derive(Clone, PartialEq, Message)]
struct RichOpset {
    #[prost(string, tag = "1")]
    domain: String,
    #[prost(int64, tag = "2")]
    version: i64,
}

const F32: i32 = 1;
const I64: i32 = 7;
const F16: i32 = 10;
const COMPLEX64: i32 = 14;

/// A small valid model used by the hostile-input tests.
fn sample_bytes() -> Vec<u8> {
    let mut m = model(graph(
        vec![
            tensor(
                "gpu_0/data_0",
                F32,
                &[D::P("batch"), D::V(3), D::V(-1), D::Unset],
            ),
            tensor("sr", I64, &[]),
            tensor("w", F32, &[D::V(3)]),
        ],
        vec![tensor("out", F32, &[D::P("?"), D::V(0)])],
    ));
    if let Some(g) = m.graph.as_mut() {
        g.initializer.push(SmallTensor {
            name: "w".to_owned(),
            ..SmallTensor::default()
        });
    }
    m.metadata_props.push(StringStringEntryProto {
        key: "k".to_owned(),
        value: "v".to_owned(),
    });
    m.encode_to_vec()
}

// ---- dims -----------------------------------------------------------------------------

#[test]
fn dims_are_classified() {
    let m = model(graph(
        vec![tensor(
            "x",
            F32,
            &[
                D::V(1),
                D::V(16),
                D::P("batch"),
                D::P("p2o.DynamicDimension.0"),
                D::Unset,
                D::V(-1),
                D::V(0),
                D::P("?"),
                D::P(""),
                D::P(" "),
                D::P("*"),
                D::V(i64::MIN),
                D::V(i64::MAX),
            ],
        )],
        vec![tensor("y", F32, &[D::P("N")])],
    ));
    let sig = decode(&m).expect("decodes");
    assert_eq!(
        dims_of(&sig, "x"),
        Some(vec![
            Dim::Fixed(1),
            Dim::Fixed(16),
            Dim::Named("batch".into()),
            Dim::Named("p2o.DynamicDimension.0".into()),
            Dim::Dynamic,
            Dim::Dynamic,
            Dim::Dynamic,
            Dim::Dynamic,
            Dim::Dynamic,
            Dim::Dynamic,
            Dim::Dynamic,
            Dim::Dynamic,
            Dim::Fixed(i64::MAX as u64),
        ])
    );
    assert_eq!(dims_of(&sig, "y"), Some(vec![Dim::Named("N".into())]));
}

#[test]
fn scalar_and_unknown_rank() {
    let m = model(graph(
        vec![
            tensor("sr", I64, &[]),
            value("any", Some(tensor_type(F32, None))),
        ],
        vec![tensor("y", F32, &[D::V(2)])],
    ));
    let sig = decode(&m).expect("decodes");
    assert_eq!(dims_of(&sig, "sr"), Some(vec![]));
    assert_eq!(dims_of(&sig, "any"), None);
    assert_eq!(
        sig.input("sr").and_then(|v| v.tensor()).map(|t| t.0),
        Some(ElementType::I64)
    );
}

// ---- kinds ----------------------------------------------------------------------------

#[test]
fn element_types_and_unsupported_kinds() {
    let seq = TypeProto {
        value: Some(type_proto::Value::Sequence(type_proto::Sequence {
            elem_type: Some(Box::new(tensor_type(F32, Some(&[D::V(2)])))),
        })),
    };
    let map = TypeProto {
        value: Some(type_proto::Value::Map(type_proto::Map {
            key_type: I64,
            value_type: Some(Box::new(tensor_type(F32, None))),
        })),
    };
    let opt = TypeProto {
        value: Some(type_proto::Value::Optional(type_proto::Optional {
            elem_type: Some(Box::new(seq.clone())),
        })),
    };
    let sparse = TypeProto {
        value: Some(type_proto::Value::SparseTensor(type_proto::SparseTensor {
            elem_type: F32,
            shape: None,
        })),
    };
    let opaque = TypeProto {
        value: Some(type_proto::Value::Opaque(type_proto::Opaque {
            domain: "com.x".into(),
            name: "Thing".into(),
        })),
    };
    let empty_seq = TypeProto {
        value: Some(type_proto::Value::Sequence(type_proto::Sequence {
            elem_type: None,
        })),
    };
    let m = model(graph(
        vec![
            tensor("h", F16, &[D::V(2)]),
            tensor("c", COMPLEX64, &[D::V(2)]),
            tensor("undef", 0, &[D::V(2)]),
            tensor("future", 99, &[D::V(2)]),
            value("seq", Some(seq)),
            value("map", Some(map)),
            value("opt", Some(opt)),
            value("sparse", Some(sparse)),
            value("opaque", Some(opaque)),
            value("empty_seq", Some(empty_seq)),
            value("float_key", Some(map_type(F32, tensor_type(F32, None)))),
            value("bool_key", Some(map_type(9, tensor_type(F32, None)))),
            value("string_key", Some(map_type(8, tensor_type(F32, None)))),
            value(
                "zipmap",
                Some(seq_type(map_type(8, tensor_type(F32, None)))),
            ),
            value("opt_no_type", Some(opt_type(None))),
            value(
                "seq_of_complex",
                Some(seq_type(tensor_type(COMPLEX64, Some(&[D::V(2)])))),
            ),
            value("map_no_value", Some(map_type_opt(I64, None))),
            tensor("text", 8, &[D::P("n")]),
        ],
        vec![tensor("y", F32, &[D::V(2)])],
    ));
    let sig = decode(&m).expect("decodes");
    let kind = |n: &str| sig.input(n).map(|v| v.kind.clone());
    assert_eq!(
        kind("h"),
        Some(ValueType::Tensor {
            elem: ElementType::F16,
            dims: Some(vec![Dim::Fixed(2)])
        })
    );
    let unsupported = |n: &str, s: &str| {
        assert_eq!(kind(n), Some(ValueType::Unsupported(s.to_owned())), "{n}");
    };
    let shown = |n: &str| kind(n).expect("present").to_string();
    unsupported("c", "tensor(complex64)");
    unsupported("undef", "tensor(undefined)");
    unsupported("future", "tensor(element type code 99)");
    unsupported("sparse", "sparse_tensor(float32)");
    unsupported("opaque", "opaque(com.x.Thing)");
    let f32_2 = ValueType::Tensor {
        elem: ElementType::F32,
        dims: Some(vec![Dim::Fixed(2)]),
    };
    let f32_any = ValueType::Tensor {
        elem: ElementType::F32,
        dims: None,
    };
    assert_eq!(
        kind("seq"),
        Some(ValueType::Sequence(Box::new(f32_2.clone())))
    );
    assert_eq!(shown("seq"), "seq(float32[2])");
    assert_eq!(
        kind("map"),
        Some(ValueType::Map {
            key: ElementType::I64,
            value: Box::new(f32_any.clone())
        })
    );
    assert_eq!(shown("map"), "map(int64, float32)");
    assert_eq!(
        kind("opt"),
        Some(ValueType::Optional(Box::new(ValueType::Sequence(
            Box::new(f32_2)
        ))))
    );
    assert_eq!(shown("opt"), "optional(seq(float32[2]))");
    // skl2onnx's ZipMap output.
    assert_eq!(
        kind("zipmap"),
        Some(ValueType::Sequence(Box::new(ValueType::Map {
            key: ElementType::String,
            value: Box::new(f32_any.clone())
        })))
    );
    assert_eq!(shown("zipmap"), "seq(map(string, float32))");
    assert_eq!(shown("string_key"), "map(string, float32)");
    assert_eq!(kind("zipmap").unwrap().depth(), 3);
    // Keys ONNX does not allow make the whole map unsupported.
    unsupported("float_key", "map(float32, float32)");
    unsupported("bool_key", "map(bool, float32)");
    // Unset nested types and unknown element types are unsupported leaves.
    let no_type = || Box::new(ValueType::Unsupported("<no type>".into()));
    assert_eq!(kind("empty_seq"), Some(ValueType::Sequence(no_type())));
    assert_eq!(shown("empty_seq"), "seq(<no type>)");
    assert_eq!(kind("opt_no_type"), Some(ValueType::Optional(no_type())));
    assert_eq!(
        kind("map_no_value"),
        Some(ValueType::Map {
            key: ElementType::I64,
            value: no_type()
        })
    );
    assert_eq!(shown("seq_of_complex"), "seq(tensor(complex64))");
    assert_eq!(
        kind("seq_of_complex").unwrap().unsupported_part(),
        Some("tensor(complex64)")
    );
    assert_eq!(kind("zipmap").unwrap().unsupported_part(), None);
    // String tensors are tensors.
    assert_eq!(
        kind("text"),
        Some(ValueType::Tensor {
            elem: ElementType::String,
            dims: Some(vec![Dim::Named("n".into())])
        })
    );
    assert_eq!(shown("text"), "string[n]");
}

#[test]
fn type_nesting_is_limited() {
    let nest = |levels: usize| {
        let mut ty = tensor_type(F32, None);
        for i in 1..levels {
            ty = match i % 3 {
                0 => seq_type(ty),
                1 => opt_type(Some(ty)),
                _ => map_type(8, ty),
            };
        }
        ty
    };
    let m = |levels| {
        model(graph(
            vec![value("deep", Some(nest(levels)))],
            vec![tensor("y", F32, &[D::V(2)])],
        ))
    };
    let sig = decode(&m(MAX_TYPE_DEPTH)).expect("the deepest allowed type decodes");
    assert_eq!(sig.inputs[0].kind.depth(), MAX_TYPE_DEPTH);
    // An unset element type counts as a level too (found by the `decode_model` fuzz
    // target: an optional without element type at the last level decoded one too deep).
    let mut untyped = opt_type(None);
    for _ in 1..MAX_TYPE_DEPTH {
        untyped = seq_type(untyped);
    }
    let shallow = model(graph(
        vec![value("deep", Some(untyped))],
        vec![tensor("y", F32, &[D::V(2)])],
    ));
    assert!(
        matches!(decode(&shallow), Err(ModelError::TypeTooDeep { .. })),
        "{:?}",
        decode(&shallow).map(|s| s.inputs[0].kind.depth())
    );
    let fits = model(graph(
        vec![value("deep", Some(opt_type(None)))],
        vec![tensor("y", F32, &[D::V(2)])],
    ));
    assert_eq!(decode(&fits).unwrap().inputs[0].kind.depth(), 2);
    let err = decode(&m(MAX_TYPE_DEPTH + 1)).expect_err("one level deeper");
    assert!(
        matches!(&err, ModelError::TypeTooDeep { name, role: "input", limit, .. }
            if name == "deep" && *limit == MAX_TYPE_DEPTH),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "ONNX model `test.onnx`: the type of graph input `deep` nests sequences, maps and \
             optionals more than {MAX_TYPE_DEPTH} levels deep; ort-bind reads types up to \
             {MAX_TYPE_DEPTH} levels"
        )
    );
    // Past protobuf's own nesting limit the decode error says what it is.
    let err = decode(&m(200)).expect_err("far too deep");
    assert!(matches!(err, ModelError::Decode { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("a type nested too deeply: ort-bind reads types up to 16 levels"),
        "{err}"
    );
}

#[test]
fn every_known_element_type_decodes() {
    let inputs = ElementType::all()
        .map(|t| tensor(&format!("x_{t}"), t.onnx_code(), &[D::V(2)]))
        .collect();
    let m = model(graph(inputs, vec![tensor("y", F32, &[D::V(2)])]));
    let sig = decode(&m).expect("decodes");
    for t in ElementType::all() {
        let v = sig.input(&format!("x_{t}")).expect("input present");
        assert_eq!(v.tensor().map(|x| x.0), Some(t));
    }
}

// ---- initializers ---------------------------------------------------------------------

#[test]
fn initializers_listed_as_inputs_are_excluded() {
    let mut g = graph(
        vec![
            tensor("x", F32, &[D::V(1)]),
            tensor("w", F32, &[D::V(1)]),
            tensor("sw", F32, &[D::V(1)]),
        ],
        vec![tensor("y", F32, &[D::V(1)])],
    );
    g.initializer.push(SmallTensor {
        name: "w".into(),
        ..SmallTensor::default()
    });
    g.initializer.push(SmallTensor {
        name: "not_listed".into(),
        ..SmallTensor::default()
    });
    g.sparse_initializer.push(SparseTensorProto {
        values: Some(InitializerName { name: "sw".into() }),
    });
    g.sparse_initializer
        .push(SparseTensorProto { values: None });
    let mut m = model(g);
    m.ir_version = 3;
    let sig = decode(&m).expect("decodes");
    let names: Vec<&str> = sig.inputs.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["x"]);
    assert_eq!(sig.ir_version, 3);
}

/// A model whose one initializer carries a 1 MiB payload, one holds floats, and one points
/// at an external file that does not exist.
fn rich_bytes() -> Vec<u8> {
    let big = RichTensor {
        dims: vec![1 << 18],
        data_type: F32,
        float_data: Vec::new(),
        name: "big".into(),
        raw_data: vec![7; 1 << 20],
        external_data: Vec::new(),
        data_location: 0,
    };
    let floats = RichTensor {
        dims: vec![3],
        data_type: F32,
        float_data: vec![1.0, 2.0, 3.0],
        name: "floats".into(),
        raw_data: Vec::new(),
        external_data: Vec::new(),
        data_location: 0,
    };
    // data_location = EXTERNAL pointing at a file that does not exist.
    let external = RichTensor {
        dims: vec![4],
        data_type: F32,
        float_data: Vec::new(),
        name: "ext".into(),
        raw_data: Vec::new(),
        external_data: vec![
            RichEntry {
                key: "location".into(),
                value: "does-not-exist.data".into(),
            },
            RichEntry {
                key: "length".into(),
                value: "16".into(),
            },
        ],
        data_location: 1,
    };
    let m = RichModel {
        ir_version: 8,
        graph: Some(RichGraph {
            node: vec![RichNode {
                input: vec!["x".into(), "ext".into()],
                output: vec!["y".into()],
                name: "add".into(),
                op_type: "Add".into(),
            }],
            name: "rich".into(),
            initializer: vec![big, floats, external],
            input: vec![
                tensor("x", F32, &[D::V(4)]).encode_to_vec(),
                tensor("ext", F32, &[D::V(4)]).encode_to_vec(),
            ],
            output: vec![tensor("y", F32, &[D::V(4)]).encode_to_vec()],
        }),
        opset_import: vec![RichOpset {
            domain: String::new(),
            version: 17,
        }],
    };
    m.encode_to_vec()
}

#[test]
fn initializer_payloads_and_nodes_are_skipped() {
    let sig = signature_from_bytes(&rich_bytes(), "rich.onnx").expect("decodes");
    assert_eq!(sig.inputs.len(), 1);
    assert_eq!(sig.inputs[0].name, "x");
    assert_eq!(sig.outputs[0].name, "y");
    assert_eq!(sig.graph_name, "rich");
    assert_eq!(sig.default_opset(), Some(17));
}

// ---- names and metadata ---------------------------------------------------------------

#[test]
fn messy_names_metadata_and_docs() {
    let names = [
        "gpu_0/data_0",
        "save_infer_model/scale_0.tmp_1",
        "type",
        "1x",
        "sigmoid_0.tmp_0",
        "a.b",
        "a/b",
        "ünïcødé 名前",
    ];
    let mut m = model(graph(
        names.iter().map(|n| tensor(n, F32, &[D::V(1)])).collect(),
        vec![tensor("self", F32, &[D::V(1)])],
    ));
    m.metadata_props = vec![
        StringStringEntryProto {
            key: "author".into(),
            value: "me".into(),
        },
        StringStringEntryProto {
            key: "license".into(),
            value: "MIT".into(),
        },
    ];
    m.opset_import.push(OperatorSetIdProto {
        domain: "com.microsoft".into(),
        version: 1,
    });
    if let Some(g) = m.graph.as_mut() {
        g.input[0].doc_string = b"first input".to_vec();
        g.doc_string = b"graph doc".to_vec();
    }
    m.doc_string = b"bad \xff utf8 in a doc string is tolerated".to_vec();
    let sig = decode(&m).expect("decodes");
    let got: Vec<&str> = sig.inputs.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(got, names);
    assert_eq!(sig.inputs[0].doc_string, "first input");
    assert_eq!(
        sig.metadata,
        [
            ("author".to_owned(), "me".to_owned()),
            ("license".to_owned(), "MIT".to_owned())
        ]
    );
    assert_eq!(
        sig.opsets,
        [("".to_owned(), 17), ("com.microsoft".to_owned(), 1)]
    );
    assert_eq!(sig.producer_name, "ort-bind-tests");
    assert_eq!(sig.producer_version, "0");
    assert_eq!(sig.ir_version, 8);
    assert_eq!(sig.graph_name, "g");
    assert!(sig.doc_string.starts_with("bad "));
    assert!(sig.doc_string.contains('\u{FFFD}'));
}

#[test]
fn output_may_share_a_name_with_an_input() {
    let m = model(graph(
        vec![tensor("x", F32, &[D::V(1)])],
        vec![tensor("x", F32, &[D::V(1)])],
    ));
    assert!(decode(&m).is_ok());
}

// ---- structural errors ----------------------------------------------------------------

#[test]
fn structural_errors_name_the_origin() {
    let no_graph = ModelProto {
        graph: None,
        ..model(graph(vec![], vec![]))
    };
    let err = decode(&no_graph).expect_err("no graph");
    assert!(matches!(err, ModelError::NoGraph { .. }), "{err:?}");

    let dup_in = model(graph(
        vec![tensor("x", F32, &[]), tensor("x", F32, &[])],
        vec![],
    ));
    let err = decode(&dup_in).expect_err("dup input");
    assert!(
        matches!(&err, ModelError::DuplicateName { role: "input", name, .. } if name == "x"),
        "{err:?}"
    );

    let dup_out = model(graph(
        vec![],
        vec![tensor("y", F32, &[]), tensor("y", F32, &[])],
    ));
    let err = decode(&dup_out).expect_err("dup output");
    assert!(
        matches!(&err, ModelError::DuplicateName { role: "output", .. }),
        "{err:?}"
    );

    let untyped = model(graph(vec![value("x", None)], vec![]));
    let err = decode(&untyped).expect_err("no type");
    assert!(
        matches!(&err, ModelError::MissingType { role: "input", name, .. } if name == "x"),
        "{err:?}"
    );

    let empty_type = model(graph(
        vec![],
        vec![value("y", Some(TypeProto { value: None }))],
    ));
    let err = decode(&empty_type).expect_err("empty type");
    assert!(
        matches!(&err, ModelError::MissingType { role: "output", .. }),
        "{err:?}"
    );

    let unnamed = model(graph(vec![tensor("", F32, &[])], vec![]));
    let err = decode(&unnamed).expect_err("empty name");
    assert!(
        matches!(&err, ModelError::EmptyName { index: 0, .. }),
        "{err:?}"
    );

    for err in [
        decode(&no_graph),
        decode(&dup_in),
        decode(&dup_out),
        decode(&untyped),
        decode(&empty_type),
        decode(&unnamed),
    ] {
        let msg = err.expect_err("error").to_string();
        assert!(msg.contains("test.onnx"), "{msg}");
    }
}

#[test]
fn empty_graph_is_fine() {
    let sig = decode(&model(graph(vec![], vec![]))).expect("decodes");
    assert!(sig.inputs.is_empty() && sig.outputs.is_empty());
}

// ---- hostile bytes --------------------------------------------------------------------

#[test]
fn empty_bytes() {
    let err = signature_from_bytes(&[], "nothing.onnx").expect_err("empty");
    assert!(matches!(err, ModelError::Empty { .. }));
    assert!(err.to_string().contains("nothing.onnx"));
}

/// A deterministic xorshift generator from `seed`.
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut errors = 0;
    for round in 0..2000 {
        let len = (next() % 512) as usize + 1;
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if signature_from_bytes(&bytes, "random.onnx").is_err() {
            errors += 1;
        }
        // Also mutate a valid model.
        let mut sample = sample_bytes();
        for _ in 0..=(round % 8) {
            let at = (next() as usize) % sample.len();
            sample[at] = next() as u8;
        }
        let _ = signature_from_bytes(&sample, "mutated.onnx");
    }
    assert!(errors > 1500, "random bytes should mostly be rejected");
    let text = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n";
    let err = signature_from_bytes(text, "lfs.onnx").expect_err("text");
    assert!(err.to_string().contains("is this an ONNX file"), "{err}");
}

#[test]
fn every_truncation_is_handled() {
    let bytes = sample_bytes();
    let full = signature_from_bytes(&bytes, "full.onnx").expect("sample decodes");
    assert_eq!(full.inputs.len(), 2);
    let mut ok = 0;
    for cut in 0..bytes.len() {
        match signature_from_bytes(&bytes[..cut], "cut.onnx") {
            Ok(_) => ok += 1,
            Err(e) => assert!(e.to_string().contains("cut.onnx")),
        }
    }
    // Cutting exactly between top-level fields yields a valid (smaller) message.
    assert!(ok < bytes.len());
}

#[test]
fn huge_claimed_lengths_are_rejected() {
    // graph (field 7, length-delimited) claiming ~2^63 bytes.
    let mut bytes = vec![0x3a];
    bytes.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    bytes.extend_from_slice(&[0u8; 16]);
    assert!(matches!(
        signature_from_bytes(&bytes, "huge.onnx"),
        Err(ModelError::Decode { .. })
    ));
    // graph.input (field 11) claiming 1 GiB inside a small graph.
    let mut inner = vec![0x5a];
    inner.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x04]);
    let mut bytes = vec![0x3a, inner.len() as u8];
    bytes.extend_from_slice(&inner);
    assert!(matches!(
        signature_from_bytes(&bytes, "huge.onnx"),
        Err(ModelError::Decode { .. })
    ));
    // An overlong varint.
    let bytes = [
        0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    ];
    assert!(signature_from_bytes(&bytes, "varint.onnx").is_err());
}

#[test]
fn deep_type_nesting_is_rejected_not_overflowed() {
    let mut ty = tensor_type(F32, None);
    for _ in 0..200 {
        ty = TypeProto {
            value: Some(type_proto::Value::Sequence(type_proto::Sequence {
                elem_type: Some(Box::new(ty)),
            })),
        };
    }
    let m = model(graph(vec![value("deep", Some(ty))], vec![]));
    let bytes = m.encode_to_vec();
    // Dropping `m` recurses 200 levels, which is fine; decoding stops at prost's limit.
    assert!(matches!(
        signature_from_bytes(&bytes, "deep.onnx"),
        Err(ModelError::Decode { .. })
    ));
}

#[test]
fn invalid_utf8_in_a_name_is_an_error() {
    let mut bytes = model(graph(vec![tensor("xx", F32, &[])], vec![])).encode_to_vec();
    let at = bytes
        .windows(2)
        .position(|w| w == b"xx")
        .expect("name is in the encoding");
    bytes[at] = 0xff;
    let err = signature_from_bytes(&bytes, "utf8.onnx").expect_err("invalid utf-8");
    assert!(matches!(err, ModelError::Decode { .. }), "{err:?}");
    assert!(err.to_string().contains("utf8.onnx"));
}

// ---- files ----------------------------------------------------------------------------

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ort-bind-codegen-model-{tag}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn file_errors() {
    let dir = temp_dir("errors");

    let missing = dir.join("missing.onnx");
    let err = read_signature(&missing).expect_err("missing");
    assert!(matches!(err, ModelError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("missing.onnx"));

    let empty = dir.join("empty.onnx");
    std::fs::write(&empty, b"").expect("write");
    let err = read_signature(&empty).expect_err("empty");
    assert!(matches!(err, ModelError::Empty { .. }), "{err:?}");
    assert!(err.to_string().contains("empty.onnx"));

    let err = read_signature(&dir).expect_err("directory");
    assert!(matches!(err, ModelError::NotAFile { .. }), "{err:?}");

    let junk = dir.join("junk.onnx");
    std::fs::write(&junk, b"\x00\x01\x02 not a model").expect("write");
    let err = read_signature(&junk).expect_err("junk");
    assert!(matches!(err, ModelError::Decode { .. }), "{err:?}");
    assert!(err.to_string().contains("junk.onnx"));

    let good = dir.join("good.onnx");
    std::fs::write(&good, sample_bytes()).expect("write");
    let sig = read_signature(&good).expect("reads");
    assert_eq!(sig.inputs[0].name, "gpu_0/data_0");

    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn group_query_attention_pairs_are_in_place() {
    let node = |op: &str, domain: &str, inputs: &[&str], outputs: &[&str]| NodeProto {
        input: inputs.iter().map(|s| (*s).to_owned()).collect(),
        output: outputs.iter().map(|s| (*s).to_owned()).collect(),
        op_type: op.to_owned(),
        domain: domain.to_owned(),
        ..NodeProto::default()
    };
    let mut g = graph(
        vec![
            tensor("q", F32, &[D::V(1)]),
            tensor("past.key", F32, &[D::V(1)]),
            tensor("past.value", F32, &[D::V(1)]),
            tensor("past_other", F32, &[D::V(1)]),
        ],
        vec![
            tensor("out", F32, &[D::V(1)]),
            tensor("present.key", F32, &[D::V(1)]),
            tensor("present.value", F32, &[D::V(1)]),
            tensor("present_other", F32, &[D::V(1)]),
        ],
    );
    g.node = vec![
        node(
            "GroupQueryAttention",
            "com.microsoft",
            &["q", "", "", "past.key", "past.value"],
            &["out", "present.key", "present.value"],
        ),
        // Same positions, another operator: a Concat copies, nothing is in place.
        node(
            "MultiHeadAttention",
            "com.microsoft",
            &["q", "", "", "past_other", "past_other"],
            &["out", "present_other", "present_other"],
        ),
        // A node with fewer inputs than GroupQueryAttention reads: nothing.
        node("GroupQueryAttention", "com.microsoft", &["q"], &["out"]),
    ];
    let sig = decode(&model(g)).expect("decodes");
    assert_eq!(
        sig.in_place,
        [
            ("past.key".to_owned(), "present.key".to_owned()),
            ("past.value".to_owned(), "present.value".to_owned())
        ]
    );
}

// ---- reading files in place -------------------------------------------------------------

/// A file as a reader that counts the bytes read from it.
struct Counted {
    inner: std::io::Cursor<Vec<u8>>,
    read: u64,
}

impl std::io::Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for Counted {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }
}

#[test]
fn a_file_is_read_without_its_weights() {
    let bytes = rich_bytes();
    assert!(bytes.len() > 1 << 20);
    let len = bytes.len() as u64;
    let mut file = std::io::BufReader::new(Counted {
        inner: std::io::Cursor::new(bytes),
        read: 0,
    });
    let model = super::wire::decode_file::<ModelProto, _>(&mut file, len, IN_MEMORY).unwrap();
    assert_eq!(model.graph.unwrap().initializer.len(), 3);
    let read = file.get_ref().read;
    assert!(read < 64 << 10, "read {read} of {len} bytes");
}

/// Every model, however broken, reads from a file exactly as from memory (the same
/// signature or the same error), both with small messages read whole and with every
/// field read from the file.
#[test]
fn files_read_in_place_equal_bytes_decoded() {
    let dir = temp_dir("in-place");
    let mut corpus = vec![sample_bytes(), rich_bytes()];
    let sample = sample_bytes();
    corpus.extend((1..sample.len()).map(|cut| sample[..cut].to_vec()));
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    for round in 0..300 {
        let mut mutated = sample.clone();
        for _ in 0..=(round % 6) {
            let at = (next() as usize) % mutated.len();
            mutated[at] = next() as u8;
        }
        corpus.push(mutated);
    }
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests/tests/fixtures");
    for folder in [
        fixtures.clone(),
        fixtures.join("hostile"),
        fixtures.join("signatures"),
    ] {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "onnx") {
                corpus.push(std::fs::read(path).unwrap());
            }
        }
    }
    assert!(corpus.len() > 400);
    let path = dir.join("model.onnx");
    let origin = path.display().to_string();
    for (i, bytes) in corpus.iter().enumerate() {
        std::fs::write(&path, bytes).unwrap();
        let want = signature_from_bytes(bytes, &origin).map_err(|e| e.to_string());
        for in_memory in [0, IN_MEMORY] {
            let got = read_signature_with(&path, in_memory).map_err(|e| e.to_string());
            assert_eq!(got, want, "corpus entry {i}, in_memory {in_memory}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
