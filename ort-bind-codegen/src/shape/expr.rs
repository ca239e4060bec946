//! [`DimExpr`]: the size of an axis as an expression of named dims, kept in one canonical
//! form so that equal sizes compare equal.
//!
//! The form is a sum of terms, each an integer coefficient times a product of atoms, plus
//! a constant. An atom is a named dim, a floor division, a `min` or a `max`. Every
//! operation re-normalises: like terms merge, constant factors leave a floor division
//! (`floor((2*w - 1) / 2)` is `w - 1`), nested floor divisions by constants become one
//! (`floor(floor(x / 2) / 4)` is `floor(x / 8)`), and a `min`/`max` whose operands differ
//! by a constant resolves. Ceiling division and `mod` are written through floor division.
//!
//! Named dims are sizes, so they are taken to be at least 1 when a `min`/`max` is decided
//! (`max(n - 1, 0)` is `n - 1`); ONNX Runtime checks every pre-allocated output's shape
//! at each run, so a model fed a zero-sized axis gets an error, never wrong data.
//!
//! Every operation is checked: an integer overflow, a division by zero or an expression
//! past [`MAX_TERMS`] terms gives `None`, and inference then leaves the axis open.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The most terms one expression may hold (products multiply term counts).
pub const MAX_TERMS: usize = 32;
/// The deepest nesting of atoms (a floor division inside a `min` inside ...).
pub const MAX_DEPTH: usize = 12;

/// One factor of a term.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// A named dim (an input's symbolic dim, or an unnamed input axis as `x[0]`).
    Sym(Arc<str>),
    /// `floor(numerator / denominator)`.
    FloorDiv(Box<DimExpr>, Box<DimExpr>),
    /// The smaller of two sizes (operands in canonical order).
    Min(Box<DimExpr>, Box<DimExpr>),
    /// The larger of two sizes (operands in canonical order).
    Max(Box<DimExpr>, Box<DimExpr>),
}

impl Atom {
    /// A value the atom is at least for every dim >= 1, when one is known.
    fn least(&self) -> Option<i64> {
        match self {
            Atom::Sym(_) => Some(1),
            Atom::FloorDiv(n, d) => {
                let d = d.as_int().filter(|&d| d > 0)?;
                Some(n.least()?.div_euclid(d))
            }
            Atom::Min(a, b) => Some(a.least()?.min(b.least()?)),
            Atom::Max(a, b) => match (a.least(), b.least()) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (Some(x), None) | (None, Some(x)) => Some(x),
                (None, None) => None,
            },
        }
    }
}

/// A product of atoms, sorted (repetition is a power).
type Monomial = Vec<Atom>;

/// An integer expression over named dims in canonical form (see the [module docs](self)).
///
/// ```
/// use ort_bind_codegen::DimExpr;
/// let w = DimExpr::sym("w");
/// // floor((w + 2 - 3) / 2) + 1, twice: a recognizer's stride-2 convs.
/// let conv = |x: &DimExpr| x.add(&DimExpr::int(-1))?.floor_div(&DimExpr::int(2))?.add(&DimExpr::int(1));
/// let once = conv(&w).unwrap();
/// assert_eq!(once.to_string(), "floor((w + 1) / 2)");
/// assert_eq!(once.eval(&|_| Some(100)), Ok(50));
/// // Equal sizes compare equal: 2*w / 2 is w.
/// assert_eq!(w.mul(&DimExpr::int(2)).unwrap().floor_div(&DimExpr::int(2)), Some(w));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DimExpr {
    /// Non-constant terms, sorted by monomial, no zero coefficient.
    terms: Vec<(Monomial, i64)>,
    constant: i64,
}

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// A named dim without a value.
    Unknown(String),
    /// A result past `i64`.
    Overflow,
    /// A division by zero.
    DivisionByZero,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unknown(s) => write!(f, "`{s}` has no value"),
            EvalError::Overflow => f.write_str("it overflows"),
            EvalError::DivisionByZero => f.write_str("it divides by zero"),
        }
    }
}

impl DimExpr {
    /// The constant `n`.
    pub fn int(n: i64) -> DimExpr {
        DimExpr {
            terms: Vec::new(),
            constant: n,
        }
    }

    /// The named dim `name`.
    pub fn sym(name: &str) -> DimExpr {
        DimExpr::atom(Atom::Sym(Arc::from(name)))
    }

    fn atom(a: Atom) -> DimExpr {
        DimExpr {
            terms: vec![(vec![a], 1)],
            constant: 0,
        }
    }

    /// The value when the expression is a constant.
    pub fn as_int(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The name when the expression is exactly one named dim.
    pub fn as_sym(&self) -> Option<&str> {
        match self.terms.as_slice() {
            [(m, 1)] if self.constant == 0 => match m.as_slice() {
                [Atom::Sym(s)] => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    /// The named dims the expression reads, each once, sorted.
    pub fn symbols(&self) -> Vec<Arc<str>> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        out.sort();
        out.dedup();
        out
    }

    fn collect_symbols(&self, out: &mut Vec<Arc<str>>) {
        for (m, _) in &self.terms {
            for a in m {
                match a {
                    Atom::Sym(s) => out.push(s.clone()),
                    Atom::FloorDiv(x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
                        x.collect_symbols(out);
                        y.collect_symbols(out);
                    }
                }
            }
        }
    }

    /// Nesting depth of atoms (0 for a polynomial of named dims).
    fn depth(&self) -> usize {
        self.terms
            .iter()
            .flat_map(|(m, _)| m)
            .map(|a| match a {
                Atom::Sym(_) => 0,
                Atom::FloorDiv(x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
                    1 + x.depth().max(y.depth())
                }
            })
            .max()
            .unwrap_or(0)
    }

    fn from_map(map: BTreeMap<Monomial, i64>, constant: i64) -> Option<DimExpr> {
        let terms: Vec<_> = map.into_iter().filter(|(_, c)| *c != 0).collect();
        if terms.len() > MAX_TERMS {
            return None;
        }
        let e = DimExpr { terms, constant };
        (e.depth() <= MAX_DEPTH).then_some(e)
    }

    /// `self + other`.
    pub fn add(&self, other: &DimExpr) -> Option<DimExpr> {
        let mut map: BTreeMap<Monomial, i64> = self.terms.iter().cloned().collect();
        for (m, c) in &other.terms {
            let slot = map.entry(m.clone()).or_insert(0);
            *slot = slot.checked_add(*c)?;
        }
        DimExpr::from_map(map, self.constant.checked_add(other.constant)?)
    }

    /// `self * k` for a constant `k`.
    pub fn scale(&self, k: i64) -> Option<DimExpr> {
        let map = self
            .terms
            .iter()
            .map(|(m, c)| Some((m.clone(), c.checked_mul(k)?)))
            .collect::<Option<BTreeMap<_, _>>>()?;
        DimExpr::from_map(map, self.constant.checked_mul(k)?)
    }

    /// `-self`.
    pub fn neg(&self) -> Option<DimExpr> {
        self.scale(-1)
    }

    /// `self - other`.
    pub fn sub(&self, other: &DimExpr) -> Option<DimExpr> {
        self.add(&other.neg()?)
    }

    /// `self * other`.
    pub fn mul(&self, other: &DimExpr) -> Option<DimExpr> {
        if let Some(k) = other.as_int() {
            return self.scale(k);
        }
        if let Some(k) = self.as_int() {
            return other.scale(k);
        }
        if self.terms.len().saturating_add(1) * other.terms.len().saturating_add(1) > 4 * MAX_TERMS
        {
            return None;
        }
        let mut map: BTreeMap<Monomial, i64> = BTreeMap::new();
        let mut add = |m: Monomial, c: i64| -> Option<()> {
            let slot = map.entry(m).or_insert(0);
            *slot = slot.checked_add(c)?;
            Some(())
        };
        let lhs_const = [(Vec::new(), self.constant)];
        let rhs_const = [(Vec::new(), other.constant)];
        let mut constant = 0i64;
        for (ma, ca) in self.terms.iter().chain(&lhs_const) {
            for (mb, cb) in other.terms.iter().chain(&rhs_const) {
                let c = ca.checked_mul(*cb)?;
                if c == 0 {
                    continue;
                }
                let mut m: Monomial = ma.iter().chain(mb).cloned().collect();
                if m.len() > 8 {
                    return None;
                }
                m.sort();
                if m.is_empty() {
                    constant = constant.checked_add(c)?;
                } else {
                    add(m, c)?;
                }
            }
        }
        DimExpr::from_map(map, constant)
    }

    /// `floor(self / other)`.
    pub fn floor_div(&self, other: &DimExpr) -> Option<DimExpr> {
        match other.as_int() {
            Some(0) => None,
            Some(d) if d < 0 => self.neg()?.floor_div(&DimExpr::int(d.checked_neg()?)),
            Some(d) => self.floor_div_const(d),
            None => self.floor_div_expr(other),
        }
    }

    fn floor_div_const(&self, d: i64) -> Option<DimExpr> {
        if d == 1 {
            return Some(self.clone());
        }
        // Terms whose coefficient `d` divides leave the division whole.
        let mut quotient: BTreeMap<Monomial, i64> = BTreeMap::new();
        let mut rest: BTreeMap<Monomial, i64> = BTreeMap::new();
        for (m, c) in &self.terms {
            if c % d == 0 {
                quotient.insert(m.clone(), c / d);
            } else {
                rest.insert(m.clone(), *c);
            }
        }
        let q_const = self.constant.div_euclid(d);
        let r_const = self.constant.rem_euclid(d);
        let quotient = DimExpr::from_map(quotient, q_const)?;
        if rest.is_empty() {
            return Some(quotient);
        }
        let rest = DimExpr::from_map(rest, r_const)?;
        // floor((floor(x / a) + c) / b) = floor((x + c*a) / (a*b)).
        if let [(m, 1)] = rest.terms.as_slice()
            && let [Atom::FloorDiv(x, a)] = m.as_slice()
            && let Some(a) = a.as_int()
        {
            let inner = x.add(&DimExpr::int(rest.constant.checked_mul(a)?))?;
            return quotient.add(&inner.floor_div_const(a.checked_mul(d)?)?);
        }
        // A factor common to every coefficient, the constant and `d` cancels.
        let g = rest
            .terms
            .iter()
            .map(|(_, c)| *c)
            .chain([rest.constant])
            .fold(d, gcd);
        let (rest, d) = if g > 1 {
            (
                DimExpr {
                    terms: rest.terms.iter().map(|(m, c)| (m.clone(), c / g)).collect(),
                    constant: rest.constant / g,
                },
                d / g,
            )
        } else {
            (rest, d)
        };
        quotient.add(&DimExpr::atom(Atom::FloorDiv(
            Box::new(rest),
            Box::new(DimExpr::int(d)),
        )))
    }

    fn floor_div_expr(&self, other: &DimExpr) -> Option<DimExpr> {
        // Exact division by one term: `(b*s*32) / b` is `s*32`.
        if let [(dm, dc)] = other.terms.as_slice()
            && other.constant == 0
            && self.constant == 0
        {
            let mut map = BTreeMap::new();
            let mut exact = true;
            for (m, c) in &self.terms {
                match (remove_factors(m, dm), c % dc) {
                    (Some(q), 0) => {
                        map.insert(q, c / dc);
                    }
                    _ => {
                        exact = false;
                        break;
                    }
                }
            }
            if exact {
                // A term that was exactly `dm` becomes a constant.
                let constant = map.remove(&Vec::new()).unwrap_or(0);
                return DimExpr::from_map(map, constant);
            }
        }
        if self == other {
            return Some(DimExpr::int(1));
        }
        Some(DimExpr::atom(Atom::FloorDiv(
            Box::new(self.clone()),
            Box::new(other.clone()),
        )))
    }

    /// `ceil(self / other)`: `floor((self + d - 1) / d)` for a positive constant `d`
    /// (which nests with other floor divisions), `-floor(-self / other)` otherwise.
    pub fn ceil_div(&self, other: &DimExpr) -> Option<DimExpr> {
        match other.as_int() {
            Some(d) if d > 0 => self.add(&DimExpr::int(d - 1))?.floor_div(other),
            _ => self.neg()?.floor_div(other)?.neg(),
        }
    }

    /// `self mod other` (the sign of `other`, as floor division gives).
    pub fn modulo(&self, other: &DimExpr) -> Option<DimExpr> {
        self.sub(&self.floor_div(other)?.mul(other)?)
    }

    /// The smaller of the two.
    pub fn min_with(&self, other: &DimExpr) -> Option<DimExpr> {
        self.extremum(other, false)
    }

    /// The larger of the two.
    pub fn max_with(&self, other: &DimExpr) -> Option<DimExpr> {
        self.extremum(other, true)
    }

    fn extremum(&self, other: &DimExpr, larger: bool) -> Option<DimExpr> {
        let diff = self.sub(other)?;
        if let Some(sign) = diff.sign() {
            let self_larger = sign >= 0;
            return Some(if self_larger == larger {
                self.clone()
            } else {
                other.clone()
            });
        }
        let (a, b) = if self <= other {
            (self, other)
        } else {
            (other, self)
        };
        let (a, b) = (Box::new(a.clone()), Box::new(b.clone()));
        Some(DimExpr::atom(if larger {
            Atom::Max(a, b)
        } else {
            Atom::Min(a, b)
        }))
    }

    /// `Some(1)` when the expression is at least 0 for every dim >= 1, `Some(-1)` when it
    /// is below 0 for all of them, `None` when that depends on the dims. (`0` counts as
    /// non-negative: `Some(1)`.)
    fn sign(&self) -> Option<i8> {
        // With every coefficient positive, the expression is at least the constant plus
        // each coefficient times its monomial's least value (named dims are >= 1, and a
        // floor division, min or max of such has a least value too: `floor((w + 1) / 2)`
        // is at least 1).
        if self.terms.iter().all(|(_, c)| *c > 0)
            && let Some(low) = self.least()
            && low >= 0
        {
            return Some(1);
        }
        // Each term of named dims only (every one >= 1) is at most its coefficient when
        // the coefficient is negative.
        let pure = |m: &Monomial| m.iter().all(|a| matches!(a, Atom::Sym(_)));
        if self.terms.iter().all(|(m, c)| pure(m) && *c < 0) {
            let high = self
                .terms
                .iter()
                .try_fold(self.constant, |acc, (_, c)| acc.checked_add(*c))?;
            if high < 0 {
                return Some(-1);
            }
        }
        None
    }

    /// A value the expression is at least for every dim >= 1, when one is known (every
    /// coefficient positive and every atom bounded below by a non-negative value).
    fn least(&self) -> Option<i64> {
        let mut low = self.constant;
        for (m, c) in &self.terms {
            if *c <= 0 {
                return None;
            }
            let mut product: i64 = 1;
            for atom in m {
                let a = atom.least()?;
                if a < 0 {
                    return None;
                }
                product = product.checked_mul(a)?;
            }
            low = low.checked_add(c.checked_mul(product)?)?;
        }
        Some(low)
    }

    /// Replaces each named dim by what `map` gives for it (`None`: kept).
    pub fn substitute(&self, map: &dyn Fn(&str) -> Option<DimExpr>) -> Option<DimExpr> {
        let mut out = DimExpr::int(self.constant);
        for (m, c) in &self.terms {
            let mut term = DimExpr::int(*c);
            for a in m {
                let value = match a {
                    Atom::Sym(s) => map(s).unwrap_or_else(|| DimExpr::atom(a.clone())),
                    Atom::FloorDiv(x, y) => x.substitute(map)?.floor_div(&y.substitute(map)?)?,
                    Atom::Min(x, y) => x.substitute(map)?.min_with(&y.substitute(map)?)?,
                    Atom::Max(x, y) => x.substitute(map)?.max_with(&y.substitute(map)?)?,
                };
                term = term.mul(&value)?;
            }
            out = out.add(&term)?;
        }
        Some(out)
    }

    /// The value under `env` (each named dim's value), with checked arithmetic.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Result<i64, EvalError> {
        let mut total = self.constant;
        for (m, c) in &self.terms {
            let mut term = *c;
            for a in m {
                let v = match a {
                    Atom::Sym(s) => env(s).ok_or_else(|| EvalError::Unknown(s.to_string()))?,
                    Atom::FloorDiv(x, y) => floor_div_i64(x.eval(env)?, y.eval(env)?)?,
                    Atom::Min(x, y) => x.eval(env)?.min(y.eval(env)?),
                    Atom::Max(x, y) => x.eval(env)?.max(y.eval(env)?),
                };
                term = term.checked_mul(v).ok_or(EvalError::Overflow)?;
            }
            total = total.checked_add(term).ok_or(EvalError::Overflow)?;
        }
        Ok(total)
    }

    /// The expression as a postfix program over the dims `symbols` lists: what generated
    /// code hands the runtime's evaluator. `None` when a named dim is not in `symbols`.
    pub fn program(&self, symbols: &[&str]) -> Option<Vec<Op>> {
        let mut out = Vec::new();
        self.emit(symbols, &mut out)?;
        Some(out)
    }

    fn emit(&self, symbols: &[&str], out: &mut Vec<Op>) -> Option<()> {
        let mut first = true;
        for (m, c) in &self.terms {
            out.push(Op::Const(*c));
            for a in m {
                match a {
                    Atom::Sym(s) => out.push(Op::Dim(symbols.iter().position(|x| x == &&**s)?)),
                    Atom::FloorDiv(x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
                        x.emit(symbols, out)?;
                        y.emit(symbols, out)?;
                        out.push(match a {
                            Atom::FloorDiv(..) => Op::FloorDiv,
                            Atom::Min(..) => Op::Min,
                            _ => Op::Max,
                        });
                    }
                }
                out.push(Op::Mul);
            }
            if !first {
                out.push(Op::Add);
            }
            first = false;
        }
        if first || self.constant != 0 {
            out.push(Op::Const(self.constant));
            if !first {
                out.push(Op::Add);
            }
        }
        Some(())
    }

    /// Whether the expression prints as one term (no parentheses needed in a product).
    fn is_single_term(&self) -> bool {
        (self.terms.len() == 1 && self.constant == 0) || self.terms.is_empty()
    }
}

/// One step of a [`DimExpr::program`]: a stack machine over `i64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Push a constant.
    Const(i64),
    /// Push the dim at this index of the program's dims.
    Dim(usize),
    /// Pop two, push their sum.
    Add,
    /// Pop two, push their product.
    Mul,
    /// Pop the divisor, then the dividend; push the floor of their quotient.
    FloorDiv,
    /// Pop two, push the smaller.
    Min,
    /// Pop two, push the larger.
    Max,
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1)
}

/// `m` without one occurrence of each atom of `factors`, when it has them all.
fn remove_factors(m: &Monomial, factors: &Monomial) -> Option<Monomial> {
    let mut rest = m.clone();
    for f in factors {
        let at = rest.iter().position(|a| a == f)?;
        rest.remove(at);
    }
    Some(rest)
}

/// Floor division of integers.
pub fn floor_div_i64(a: i64, b: i64) -> Result<i64, EvalError> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    let q = a.checked_div(b).ok_or(EvalError::Overflow)?;
    Ok(if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

impl fmt::Display for DimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (m, c) in &self.terms {
            let magnitude = c.unsigned_abs();
            if first {
                if *c < 0 {
                    f.write_str("-")?;
                }
            } else {
                f.write_str(if *c < 0 { " - " } else { " + " })?;
            }
            first = false;
            if magnitude != 1 {
                write!(f, "{magnitude}*")?;
            }
            for (i, a) in m.iter().enumerate() {
                if i > 0 {
                    f.write_str("*")?;
                }
                write!(f, "{a}")?;
            }
        }
        if first {
            write!(f, "{}", self.constant)?;
        } else if self.constant != 0 {
            let sign = if self.constant < 0 { " - " } else { " + " };
            write!(f, "{sign}{}", self.constant.unsigned_abs())?;
        }
        Ok(())
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wrapped = |e: &DimExpr| {
            if e.is_single_term() {
                e.to_string()
            } else {
                format!("({e})")
            }
        };
        match self {
            Atom::Sym(s) => f.write_str(s),
            Atom::FloorDiv(x, y) => write!(f, "floor({} / {})", wrapped(x), wrapped(y)),
            Atom::Min(x, y) => write!(f, "min({x}, {y})"),
            Atom::Max(x, y) => write!(f, "max({x}, {y})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(n: i64) -> DimExpr {
        DimExpr::int(n)
    }

    /// floor((x + 2*pad - kernel) / stride) + 1.
    fn conv(x: &DimExpr, kernel: i64, stride: i64, pad: i64) -> DimExpr {
        x.add(&i(2 * pad - kernel))
            .unwrap()
            .floor_div(&i(stride))
            .unwrap()
            .add(&i(1))
            .unwrap()
    }

    #[test]
    fn like_terms_merge_and_print_readably() {
        let (w, h) = (DimExpr::sym("w"), DimExpr::sym("h"));
        let e = w.add(&h).unwrap().add(&w).unwrap().sub(&i(3)).unwrap();
        assert_eq!(e.to_string(), "h + 2*w - 3");
        assert_eq!(w.sub(&w).unwrap(), i(0));
        assert_eq!(h.mul(&w).unwrap(), w.mul(&h).unwrap());
        assert_eq!(h.mul(&w).unwrap().to_string(), "h*w");
        assert_eq!(i(0).to_string(), "0");
        assert_eq!(w.neg().unwrap().add(&i(1)).unwrap().to_string(), "-w + 1");
    }

    #[test]
    fn nested_strided_convs_are_one_floor_division() {
        let w = DimExpr::sym("w");
        // Three stride-2 convs with kernel 3, pad 1: floor((w - 1) / 8) + 1.
        let e = conv(&conv(&conv(&w, 3, 2, 1), 3, 2, 1), 3, 2, 1);
        // The remainder's constant is kept in [0, 8): one form for ceil(w / 8).
        assert_eq!(e.to_string(), "floor((w + 7) / 8)");
        for v in 1..200 {
            let mut x: i64 = v;
            for _ in 0..3 {
                x = (x + 2 - 3).div_euclid(2) + 1;
            }
            assert_eq!(e.eval(&|_| Some(v)), Ok(x), "w = {v}");
        }
        // Kernel 2, stride 2, no pad: floor(w / 2), then floor(. / 2): floor(w / 4).
        assert_eq!(
            conv(&conv(&w, 2, 2, 0), 2, 2, 0).to_string(),
            "floor(w / 4)"
        );
    }

    #[test]
    fn exact_divisions_cancel() {
        let (b, s) = (DimExpr::sym("b"), DimExpr::sym("s"));
        let total = b.mul(&s).unwrap().scale(32).unwrap();
        assert_eq!(total.floor_div(&b).unwrap().to_string(), "32*s");
        assert_eq!(total.floor_div(&total).unwrap(), i(1));
        assert_eq!(
            b.scale(6).unwrap().floor_div(&i(4)).unwrap().to_string(),
            "floor(3*b / 2)"
        );
        assert_eq!(
            b.scale(4)
                .unwrap()
                .add(&i(2))
                .unwrap()
                .floor_div(&i(6))
                .unwrap()
                .to_string(),
            "floor((2*b + 1) / 3)"
        );
    }

    #[test]
    fn ceil_mod_min_max() {
        let n = DimExpr::sym("n");
        let c = n.ceil_div(&i(4)).unwrap();
        assert_eq!(c.to_string(), "floor((n + 3) / 4)");
        // ceil(floor(x / 4) / 2) nests: floor((x + 4) / 8).
        let nested = n.floor_div(&i(4)).unwrap().ceil_div(&i(2)).unwrap();
        assert_eq!(nested.to_string(), "floor((n + 4) / 8)");
        for v in 1..20 {
            assert_eq!(c.eval(&|_| Some(v)), Ok((v + 3) / 4));
            assert_eq!(n.modulo(&i(3)).unwrap().eval(&|_| Some(v)), Ok(v % 3));
        }
        assert_eq!(
            n.sub(&i(1)).unwrap().max_with(&i(0)).unwrap(),
            n.sub(&i(1)).unwrap()
        );
        assert_eq!(n.min_with(&n.add(&i(2)).unwrap()).unwrap(), n);
        let m = DimExpr::sym("m");
        assert_eq!(n.min_with(&m), m.min_with(&n));
        assert_eq!(m.min_with(&n).unwrap().to_string(), "min(m, n)");
    }

    #[test]
    fn overflow_division_by_zero_and_size_limits_give_none() {
        let n = DimExpr::sym("n");
        assert_eq!(i(i64::MAX).add(&i(1)), None);
        assert_eq!(n.scale(i64::MAX).unwrap().scale(2), None);
        assert_eq!(n.floor_div(&i(0)), None);
        assert_eq!(i(i64::MIN).floor_div(&i(-1)), None);
        let mut e = n.clone();
        for k in 0..40 {
            match e.add(&DimExpr::sym(&format!("s{k}")).mul(&n).unwrap()) {
                Some(next) => e = next,
                None => return,
            }
        }
        panic!("past {MAX_TERMS} terms");
    }

    #[test]
    fn evaluation_is_checked() {
        let n = DimExpr::sym("n");
        let m = DimExpr::sym("m");
        let q = n.floor_div(&m).unwrap();
        assert_eq!(
            q.eval(&|s| Some(if s == "n" { 7 } else { 0 })),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(
            n.mul(&m).unwrap().eval(&|_| Some(i64::MAX)),
            Err(EvalError::Overflow)
        );
        assert_eq!(n.eval(&|_| None), Err(EvalError::Unknown("n".into())));
    }

    #[test]
    fn programs_evaluate_like_the_expression() {
        let (w, h) = (DimExpr::sym("w"), DimExpr::sym("h"));
        let e = conv(&w, 3, 2, 1)
            .mul(&h)
            .unwrap()
            .min_with(&w.scale(3).unwrap())
            .unwrap()
            .sub(&i(5))
            .unwrap();
        let p = e.program(&["h", "w"]).unwrap();
        for (hv, wv) in [(1, 1), (4, 9), (7, 100)] {
            let mut stack: Vec<i64> = Vec::new();
            for op in &p {
                match *op {
                    Op::Const(c) => stack.push(c),
                    Op::Dim(k) => stack.push([hv, wv][k]),
                    _ => {
                        let (b, a) = (stack.pop().unwrap(), stack.pop().unwrap());
                        stack.push(match op {
                            Op::Add => a + b,
                            Op::Mul => a * b,
                            Op::FloorDiv => floor_div_i64(a, b).unwrap(),
                            Op::Min => a.min(b),
                            _ => a.max(b),
                        });
                    }
                }
            }
            let env = |s: &str| Some(if s == "h" { hv } else { wv });
            assert_eq!(stack, vec![e.eval(&env).unwrap()]);
        }
        assert_eq!(e.program(&["h"]), None);
    }
}
