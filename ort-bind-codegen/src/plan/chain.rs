//! One `Dims` for a chain of models (a pipeline with no decoder): each model's dims
//! fields either become a field of the chain's dims or follow from an earlier model's,
//! where an edge equates them axis by axis (`embedding.num_image_tokens` is the 16 that
//! `vision.image_features` fixes; `embedding.batch_size` is `vision.batch_size`).
//!
//! A view edge (`as view`) equates no axes: the input reads the source's elements in its
//! own shape, and the runtime checks that the element counts agree.

use crate::planner::pipeline::PlannedEdge;
use crate::planner::{AxisSize, Plan, Storage};
use crate::shapes::DimExpr;

/// How one dims field of one model is had from the chain's dims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimValue {
    /// Field `index` of the chain's dims.
    Field(usize),
    /// A size the upstream model fixes.
    Const(u64),
    /// An expression of model `model`'s own dims (an output size shape inference
    /// derived from its inputs).
    Expr {
        /// The model whose dims the expression reads.
        model: usize,
        /// The expression, over that model's dims fields by name.
        expr: DimExpr,
        /// The upstream value and axis it sizes, for errors (`vision.image_features`, 1).
        value: String,
        /// That axis.
        axis: usize,
    },
}

/// A field of the chain's dims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainField {
    /// Rust field name (the model's own, or `model_field` where two models' differ).
    pub field: String,
    /// The whole shape of an input of unknown rank (a `Vec<usize>`), else one size.
    pub any_rank: bool,
    /// `(model, its dims field)` pairs it sizes, for the docs.
    pub sizes: Vec<(usize, String)>,
}

/// The chain's dims and how each model's follow from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainDims {
    /// The fields, in the order they were met (models in order, each model's in order).
    pub fields: Vec<ChainField>,
    /// `models[m][j]`: model `m`'s dims field `j`.
    pub models: Vec<Vec<DimValue>>,
    /// The models in an order in which every edge's source comes before its target.
    pub order: Vec<usize>,
}

/// Plans one dims struct for the models `plans` (named `names`) joined by `edges` (which
/// `plan_pipeline` checked and found acyclic).
pub fn plan_chain_dims(names: &[String], plans: &[&Plan], edges: &[PlannedEdge]) -> ChainDims {
    let order = topological(plans.len(), edges);
    let mut models: Vec<Vec<DimValue>> = vec![Vec::new(); plans.len()];
    let mut fields: Vec<ChainField> = Vec::new();
    for &m in &order {
        let plan = plans[m];
        let mut values = Vec::with_capacity(plan.dims.len());
        for (j, dim) in plan.dims.iter().enumerate() {
            let found = edges
                .iter()
                .filter(|e| e.to_model == m && !e.view)
                .find_map(|e| equated(plans, &models, e, j));
            let value = found.unwrap_or_else(|| {
                let taken = fields.iter().any(|f| f.field == dim.field);
                let field = if taken {
                    format!("{}_{}", names[m], dim.field)
                } else {
                    dim.field.clone()
                };
                fields.push(ChainField {
                    field,
                    any_rank: dim.source.is_shape(),
                    sizes: Vec::new(),
                });
                DimValue::Field(fields.len() - 1)
            });
            if let DimValue::Field(f) = value {
                fields[f].sizes.push((m, dim.field.clone()));
            }
            values.push(value);
        }
        models[m] = values;
    }
    ChainDims {
        fields,
        models,
        order,
    }
}

/// What edge `e` into model `e.to_model` says its dims field `j` is, if it says anything:
/// the size the upstream model gives the axis the field sizes.
fn equated(
    plans: &[&Plan],
    models: &[Vec<DimValue>],
    e: &PlannedEdge,
    j: usize,
) -> Option<DimValue> {
    let down = plans[e.to_model].inputs.iter().find(|v| v.name == e.to)?;
    let Storage::Owned(down_axes) = &down.storage else {
        return None;
    };
    let up_plan = plans[e.from_model];
    let list = if e.from_output {
        &up_plan.outputs
    } else {
        &up_plan.inputs
    };
    let up = list.iter().find(|v| v.name == e.from)?;
    let Storage::Owned(up_axes) = &up.storage else {
        return None;
    };
    if up_axes.len() != down_axes.len() || plans[e.to_model].dims[j].source.is_shape() {
        return None;
    }
    let axis = down_axes.iter().position(|a| *a == AxisSize::Field(j))?;
    Some(match &up_axes[axis] {
        AxisSize::Fixed(n) => DimValue::Const(*n),
        AxisSize::Field(k) => models[e.from_model].get(*k)?.clone(),
        AxisSize::Expr(expr) => DimValue::Expr {
            model: e.from_model,
            expr: expr.clone(),
            value: e.from.clone(),
            axis,
        },
    })
}

/// The models in an order where every edge's source precedes its target (edges are
/// acyclic); ties keep the pipeline's order.
fn topological(n: usize, edges: &[PlannedEdge]) -> Vec<usize> {
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while order.len() < n {
        let next = (0..n).find(|&m| {
            !placed[m]
                && edges
                    .iter()
                    .all(|e| e.to_model != m || e.from_model == m || placed[e.from_model])
        });
        // Acyclic (checked by `plan_pipeline`), so some model is always ready; the
        // fallback keeps the function total.
        let m = next.unwrap_or_else(|| (0..n).find(|&m| !placed[m]).unwrap_or(0));
        placed[m] = true;
        order.push(m);
    }
    order
}
