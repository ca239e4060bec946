//! Maps: [`Map<K, V>`] (`map(K, V)`) and [`MapSequence<K, V>`] (`sequence(map(K, V))`, what
//! `ai.onnx.ml` `ZipMap` produces).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::Hash;

use ort_sys::{ONNXTensorElementDataType as Onnx, ONNXType};

use super::{
    Strings, ValueInputSlot, ValueOutputSlot, bound_whole, expect_kind, filled, sealed, tensor_dims,
};
use crate::error::{Error, Result};
use crate::sys::Value;

/// A key or value type of a [`Map`]: `i64`, `f32`, `f64` or `String` (the types ONNX
/// Runtime's C API makes and reads maps of). Keys are [`MapKey`]s.
pub trait MapItem: sealed::Sealed + Sized + Send + Sync + 'static {
    /// The ONNX element code.
    const ONNX_TYPE: Onnx;
    /// How one key or value reads: the number itself, or `&str`.
    type Ref<'a>: Copy + fmt::Debug + PartialEq + PartialOrd;
    /// The column of keys or values a map keeps.
    #[doc(hidden)]
    type Column: Default + Clone + fmt::Debug + PartialEq + Send + Sync;
    /// The number of items in `column`.
    #[doc(hidden)]
    fn len(column: &Self::Column) -> usize;
    /// Item `index` of `column`.
    #[doc(hidden)]
    fn get(column: &Self::Column, index: usize) -> Option<Self::Ref<'_>>;
    /// Appends an item.
    #[doc(hidden)]
    fn push(column: &mut Self::Column, item: Self::Ref<'_>);
    /// Empties `column`, keeping capacity.
    #[doc(hidden)]
    fn clear(column: &mut Self::Column);
    /// An owned copy of an item.
    fn to_owned_item(item: Self::Ref<'_>) -> Self;
    /// Borrows an owned item.
    fn as_ref_item(&self) -> Self::Ref<'_>;
    /// Reads a one-dimensional tensor of ONNX Runtime into `column`.
    #[doc(hidden)]
    fn load(
        name: &str,
        value: &Value,
        column: &mut Self::Column,
        scratch: &mut Scratch,
    ) -> Result<()>;
    /// A one-dimensional tensor ONNX Runtime owns holding `column`.
    #[doc(hidden)]
    fn tensor(name: &str, column: &Self::Column, scratch: &mut Scratch) -> Result<Value>;
}

/// Why an empty [`MapSequence`] cannot be made (also said by the dynamic route).
pub(crate) const EMPTY_MAP_SEQUENCE: &str = "an empty sequence of maps cannot be made: ONNX \
    Runtime's C API takes a sequence's element type from its first element, and ONNX's \
    `SequenceEmpty` (which ort-bind runs to make empty sequences of tensors) makes no \
    sequences of maps";

/// A key type of a [`Map`]: `i64` or `String`.
pub trait MapKey: MapItem {
    /// Orders two keys (to find duplicates).
    fn cmp_keys(a: Self::Ref<'_>, b: Self::Ref<'_>) -> std::cmp::Ordering;
}

/// A value type of a [`Map`]: `i64`, `f32`, `f64` or `String`.
pub trait MapValue: MapItem {}

/// Buffers reused while reading and building maps.
#[doc(hidden)]
#[derive(Debug, Default, Clone, PartialEq)]
#[allow(unreachable_pub)] // named by the sealed `MapItem`, unreachable from outside
pub struct Scratch {
    dims_i64: Vec<i64>,
    dims: Vec<usize>,
}

fn one_dim(name: &str, dims: &[usize]) -> Result<usize> {
    match dims {
        [n] => Ok(*n),
        _ => Err(Error::Value {
            value: name.to_owned(),
            problem: format!("a map's keys or values have dims {dims:?}, expected one axis"),
        }),
    }
}

fn len_i64(name: &str, n: usize) -> Result<[i64; 1]> {
    Ok([i64::try_from(n).map_err(|_| Error::TooLarge {
        tensor: name.to_owned(),
        dims: vec![n],
    })?])
}

macro_rules! numeric_item {
    ($($t:ty),*) => {$(
        impl MapItem for $t {
            const ONNX_TYPE: Onnx = <$t as crate::element::Element>::ONNX_TYPE;
            type Ref<'a> = $t;
            type Column = Vec<$t>;
            fn len(column: &Vec<$t>) -> usize {
                column.len()
            }
            fn get(column: &Vec<$t>, index: usize) -> Option<$t> {
                column.get(index).copied()
            }
            fn push(column: &mut Vec<$t>, item: $t) {
                column.push(item);
            }
            fn clear(column: &mut Vec<$t>) {
                column.clear();
            }
            fn to_owned_item(item: $t) -> $t {
                item
            }
            fn as_ref_item(&self) -> $t {
                *self
            }
            fn load(name: &str, value: &Value, column: &mut Vec<$t>, scratch: &mut Scratch) -> Result<()> {
                tensor_dims(name, value, Self::ONNX_TYPE, &mut scratch.dims_i64, &mut scratch.dims)?;
                let n = one_dim(name, &scratch.dims)?;
                value.copy_elements(n, column)
            }
            fn tensor(name: &str, column: &Vec<$t>, _scratch: &mut Scratch) -> Result<Value> {
                Value::owned_tensor_from(&len_i64(name, column.len())?, column)
            }
        }
        impl MapValue for $t {}
    )*};
}

numeric_item!(i64, f32, f64);

impl MapKey for i64 {
    fn cmp_keys(a: i64, b: i64) -> std::cmp::Ordering {
        a.cmp(&b)
    }
}

impl MapItem for String {
    const ONNX_TYPE: Onnx = Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING;
    type Ref<'a> = &'a str;
    type Column = Strings;
    fn len(column: &Strings) -> usize {
        column.len()
    }
    fn get(column: &Strings, index: usize) -> Option<&str> {
        column.get(index)
    }
    fn push(column: &mut Strings, item: &str) {
        column.push(item);
    }
    fn clear(column: &mut Strings) {
        column.clear();
    }
    fn to_owned_item(item: &str) -> String {
        item.to_owned()
    }
    fn as_ref_item(&self) -> &str {
        self
    }
    fn load(name: &str, value: &Value, column: &mut Strings, scratch: &mut Scratch) -> Result<()> {
        column.load(name, value, &mut scratch.dims_i64)?;
        one_dim(name, column.dims()).map(drop)
    }
    fn tensor(name: &str, column: &Strings, scratch: &mut Scratch) -> Result<Value> {
        super::sequence::string_value(name, column, &mut scratch.dims_i64)
    }
}

impl MapValue for String {}

impl MapKey for String {
    fn cmp_keys(a: &str, b: &str) -> std::cmp::Ordering {
        a.cmp(b)
    }
}

/// `map(K, V)`: keys and values in two columns, read as `(key, value)` pairs.
///
/// ONNX Runtime gives a map's entries sorted by key (it keeps a `std::map`); a map filled
/// with [`Map::set_pairs`] or built with [`Map::with_pairs`] keeps the order it was given,
/// and a duplicate key is an error ([`Error::Value`]). [`Map::to_hash_map`] and
/// [`Map::to_btree_map`] convert to the std collections.
///
/// As an input, a binding hands the map out in its `inputs()` view, named after the model
/// input, to fill in place like a tensor: `binding.inputs().features.set_pairs(pairs)?`.
///
/// ```
/// use ort_bind_runtime::values::Map;
/// let m = Map::<String, f32>::with_pairs([("a".to_owned(), 1.0), ("c".to_owned(), 3.0)])?;
/// assert_eq!(m.get("c"), Some(3.0));
/// assert_eq!(m.iter().collect::<Vec<_>>(), [("a", 1.0), ("c", 3.0)]);
/// assert_eq!(m.to_btree_map()["a"], 1.0);
/// # Ok::<(), ort_bind_runtime::Error>(())
/// ```
pub struct Map<K: MapKey, V: MapValue> {
    name: Box<str>,
    keys: K::Column,
    values: V::Column,
    // The ONNX Runtime value: what a run produced, or what `with_pairs` built to bind.
    whole: Option<Value>,
    scratch: Scratch,
}

impl<K: MapKey, V: MapValue> fmt::Debug for Map<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Map")
            .field("name", &self.name)
            .field("entries", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

impl<K: MapKey, V: MapValue> Clone for Map<K, V> {
    /// Copies the entries, not the ONNX Runtime value: a clone is a map to read, or to
    /// put in a [`MapSequence::from_maps`] (which builds its value), not an input to bind.
    fn clone(&self) -> Self {
        Map {
            name: self.name.clone(),
            keys: self.keys.clone(),
            values: self.values.clone(),
            whole: None,
            scratch: Scratch::default(),
        }
    }
}

impl<K: MapKey, V: MapValue> PartialEq for Map<K, V> {
    /// Same entries in the same order (names are not compared).
    fn eq(&self, other: &Self) -> bool {
        self.keys == other.keys && self.values == other.values
    }
}

impl<K: MapKey, V: MapValue> Map<K, V> {
    /// An empty map named `name`, without a value: an output slot until a run fills it,
    /// or an input until [`Map::set_pairs`] fills it (a run before that is
    /// [`Error::MissingInput`]).
    pub fn new(name: &str) -> Self {
        Map {
            name: name.into(),
            keys: K::Column::default(),
            values: V::Column::default(),
            whole: None,
            scratch: Scratch::default(),
        }
    }

    /// A map holding `pairs`, in their order; a duplicate key is an error. It has no
    /// model name of its own: an input map is the one a binding's `inputs()` hands out
    /// (fill it with [`Map::set_pairs`]), and a map put in a sequence
    /// ([`MapSequence::from_maps`]) is named after the sequence and its position.
    pub fn with_pairs(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self> {
        let mut map = Map::new("map");
        map.set_pairs(pairs)?;
        Ok(map)
    }

    /// The previous release's constructor, named: now [`Map::with_pairs`] (a map needs no
    /// name of its own) or, for a binding's input map, `inputs().<map>.set_pairs(pairs)`.
    #[deprecated(
        note = "use `Map::with_pairs(pairs)` (no name), or fill a binding's input map in place with `binding.inputs().<map>.set_pairs(pairs)`"
    )]
    #[doc(hidden)]
    pub fn from_pairs(name: &str, pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self> {
        let mut map = Map::new(name);
        map.set_pairs(pairs)?;
        Ok(map)
    }

    /// Replaces the entries with `pairs`, in their order, reusing the columns' capacity, and
    /// makes the ONNX Runtime map to bind (ONNX Runtime copies the entries into it). A
    /// duplicate key is an [`Error::Value`] naming the map, which is then left without a
    /// value. Through a binding's `inputs()` view, the binding binds the new map before the
    /// next run.
    pub fn set_pairs(&mut self, pairs: impl IntoIterator<Item = (K, V)>) -> Result<()> {
        self.clear();
        for (k, v) in pairs {
            K::push(&mut self.keys, k.as_ref_item());
            V::push(&mut self.values, v.as_ref_item());
        }
        let built = self
            .check_unique()
            .and_then(|()| Ok(crate::library::init().map(drop)?))
            .and_then(|()| self.build());
        match built {
            Ok(value) => {
                self.whole = Some(value);
                Ok(())
            }
            Err(e) => {
                self.clear();
                Err(e)
            }
        }
    }

    /// The ONNX name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        K::len(&self.keys)
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `key` (a linear search).
    pub fn get(&self, key: K::Ref<'_>) -> Option<V::Ref<'_>> {
        (0..self.len())
            .find(|&i| {
                K::get(&self.keys, i)
                    .is_some_and(|k| K::cmp_keys(k, key) == std::cmp::Ordering::Equal)
            })
            .and_then(|i| V::get(&self.values, i))
    }

    /// The entries, in order.
    pub fn iter(&self) -> MapIter<'_, K, V> {
        MapIter { map: self, next: 0 }
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = K::Ref<'_>> + '_ {
        (0..self.len()).filter_map(move |i| K::get(&self.keys, i))
    }

    /// The values, in key order.
    pub fn values(&self) -> impl Iterator<Item = V::Ref<'_>> + '_ {
        (0..self.len()).filter_map(move |i| V::get(&self.values, i))
    }

    /// The entries as owned pairs.
    pub fn to_pairs(&self) -> Vec<(K, V)> {
        self.iter()
            .map(|(k, v)| (K::to_owned_item(k), V::to_owned_item(v)))
            .collect()
    }

    /// The entries as a `HashMap`.
    pub fn to_hash_map(&self) -> HashMap<K, V>
    where
        K: Hash + Eq,
    {
        self.to_pairs().into_iter().collect()
    }

    /// The entries as a `BTreeMap`.
    pub fn to_btree_map(&self) -> BTreeMap<K, V>
    where
        K: Ord,
    {
        self.to_pairs().into_iter().collect()
    }

    fn check_unique(&self) -> Result<()> {
        let n = self.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(
            |&a, &b| match (K::get(&self.keys, a), K::get(&self.keys, b)) {
                (Some(a), Some(b)) => K::cmp_keys(a, b),
                _ => std::cmp::Ordering::Equal,
            },
        );
        for pair in order.windows(2) {
            let (a, b) = (K::get(&self.keys, pair[0]), K::get(&self.keys, pair[1]));
            if let Some(key) = a
                && a == b
            {
                return Err(Error::Value {
                    value: self.name.to_string(),
                    problem: format!("the key {key:?} appears more than once"),
                });
            }
        }
        Ok(())
    }

    /// Forgets the entries, keeping capacity.
    pub fn clear(&mut self) {
        K::clear(&mut self.keys);
        V::clear(&mut self.values);
        self.whole = None;
    }

    /// Reads a map value (an output, or an element of a sequence of maps) into `self`.
    pub(crate) fn load_from(&mut self, value: &Value) -> Result<()> {
        K::clear(&mut self.keys);
        V::clear(&mut self.values);
        expect_kind(&self.name, value, ONNXType::ONNX_TYPE_MAP)?;
        let keys = value.element(0)?;
        K::load(&self.name, &keys, &mut self.keys, &mut self.scratch)?;
        let values = value.element(1)?;
        V::load(&self.name, &values, &mut self.values, &mut self.scratch)?;
        if K::len(&self.keys) != V::len(&self.values) {
            let (k, v) = (K::len(&self.keys), V::len(&self.values));
            self.clear();
            return Err(Error::Value {
                value: self.name.to_string(),
                problem: format!("ONNX Runtime produced a map with {k} keys and {v} values"),
            });
        }
        Ok(())
    }

    /// A new ONNX Runtime map value of the entries.
    fn build(&mut self) -> Result<Value> {
        let keys = K::tensor(&self.name, &self.keys, &mut self.scratch)?;
        let values = V::tensor(&self.name, &self.values, &mut self.scratch)?;
        Value::compose([&keys, &values], ONNXType::ONNX_TYPE_MAP)
    }
}

/// The entries of a [`Map`], in order.
pub struct MapIter<'a, K: MapKey, V: MapValue> {
    map: &'a Map<K, V>,
    next: usize,
}

impl<K: MapKey, V: MapValue> fmt::Debug for MapIter<'_, K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapIter")
            .field("map", &self.map.name)
            .field("next", &self.next)
            .finish()
    }
}

impl<'a, K: MapKey, V: MapValue> Iterator for MapIter<'a, K, V> {
    type Item = (K::Ref<'a>, V::Ref<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.next;
        let entry = (K::get(&self.map.keys, i)?, V::get(&self.map.values, i)?);
        self.next += 1;
        Some(entry)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.map.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl<K: MapKey, V: MapValue> ExactSizeIterator for MapIter<'_, K, V> {}

impl<'a, K: MapKey, V: MapValue> IntoIterator for &'a Map<K, V> {
    type Item = (K::Ref<'a>, V::Ref<'a>);
    type IntoIter = MapIter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K: MapKey, V: MapValue> sealed::Sealed for Map<K, V> {}

impl<K: MapKey, V: MapValue> ValueOutputSlot for Map<K, V> {
    type View<'a> = &'a Map<K, V>;

    fn name(&self) -> &str {
        &self.name
    }

    fn view(&self) -> Result<&Map<K, V>> {
        filled(self, &self.name, self.whole.as_ref())
    }

    fn clear(&mut self) {
        Map::clear(self);
    }

    fn accept(&mut self, value: Value) -> Result<()> {
        self.whole = None;
        self.load_from(&value)?;
        self.whole = Some(value);
        Ok(())
    }
}

impl<K: MapKey, V: MapValue> ValueInputSlot for Map<K, V> {
    fn name(&self) -> &str {
        &self.name
    }

    fn bound_value(&self) -> Result<Option<&Value>> {
        bound_whole(&self.name, self.whole.as_ref())
    }

    fn is_set(&self) -> bool {
        self.whole.is_some()
    }
}

/// `sequence(map(K, V))`: what `ai.onnx.ml` `ZipMap` produces (one map per row), read as
/// an iterator of [`&Map`](Map).
///
/// As an output, each run's maps are read into maps kept from earlier runs (their buffers
/// reused). ONNX Runtime's C API builds sequences of `map(i64, f32)` and `map(String, f32)`
/// only, so [`MapSequence::from_maps`] inputs are limited to those.
pub struct MapSequence<K: MapKey, V: MapValue> {
    name: Box<str>,
    maps: Vec<Map<K, V>>,
    len: usize,
    whole: Option<Value>,
}

impl<K: MapKey, V: MapValue> fmt::Debug for MapSequence<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapSequence")
            .field("name", &self.name)
            .field("maps", &&self.maps[..self.len])
            .finish()
    }
}

impl<K: MapKey, V: MapValue> MapSequence<K, V> {
    /// An empty sequence of maps named `name`, without a value: an output slot until a
    /// run fills it, or an input until [`MapSequence::set_maps`] fills it.
    pub fn new(name: &str) -> Self {
        MapSequence {
            name: name.into(),
            maps: Vec::new(),
            len: 0,
            whole: None,
        }
    }

    /// An input sequence named `name` of `maps` (each built with [`Map::with_pairs`],
    /// and named here `name[i]`). No maps is an [`Error::Value`]: ONNX Runtime's C API
    /// cannot make an empty sequence of maps (empty sequences of tensors,
    /// [`Sequence`](super::Sequence), it can).
    pub fn from_maps(name: &str, maps: impl IntoIterator<Item = Map<K, V>>) -> Result<Self> {
        let mut s = MapSequence::new(name);
        s.set_maps(maps)?;
        Ok(s)
    }

    /// Replaces the maps with `maps` (see [`MapSequence::from_maps`]), which are then named
    /// `name[i]`. On an error the sequence is left without a value. Through a binding's
    /// `inputs()` view, the binding binds the new sequence before the next run.
    pub fn set_maps(&mut self, maps: impl IntoIterator<Item = Map<K, V>>) -> Result<()> {
        self.clear();
        self.maps.clear();
        let mut parts = Vec::new();
        for (i, mut map) in maps.into_iter().enumerate() {
            map.name = format!("{}[{i}]", self.name).into();
            parts.push(match map.whole.take() {
                Some(v) => v,
                None => map.build()?,
            });
            self.maps.push(map);
        }
        if parts.is_empty() {
            return Err(Error::Value {
                value: self.name.to_string(),
                problem: EMPTY_MAP_SEQUENCE.to_owned(),
            });
        }
        let whole = Value::compose(&parts, ONNXType::ONNX_TYPE_SEQUENCE);
        match whole {
            Ok(whole) => {
                self.len = self.maps.len();
                self.whole = Some(whole);
                Ok(())
            }
            Err(e) => {
                self.maps.clear();
                Err(e)
            }
        }
    }

    /// The ONNX name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of maps.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no maps.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Map `index`.
    pub fn get(&self, index: usize) -> Option<&Map<K, V>> {
        self.maps[..self.len].get(index)
    }

    /// The maps, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Map<K, V>> {
        self.maps[..self.len].iter()
    }

    /// Forgets the maps, keeping their buffers for the next run.
    pub fn clear(&mut self) {
        self.len = 0;
        self.whole = None;
    }

    pub(crate) fn load(&mut self, value: Value) -> Result<()> {
        self.clear();
        expect_kind(&self.name, &value, ONNXType::ONNX_TYPE_SEQUENCE)?;
        let count = value.count()?;
        for i in 0..count {
            let element = value.element(i)?;
            if self.maps.len() <= i {
                self.maps.push(Map::new(&format!("{}[{i}]", self.name)));
            }
            self.maps[i].load_from(&element)?;
            self.len = i + 1;
        }
        self.whole = Some(value);
        Ok(())
    }
}

impl<'a, K: MapKey, V: MapValue> IntoIterator for &'a MapSequence<K, V> {
    type Item = &'a Map<K, V>;
    type IntoIter = std::slice::Iter<'a, Map<K, V>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K: MapKey, V: MapValue> sealed::Sealed for MapSequence<K, V> {}

impl<K: MapKey, V: MapValue> ValueOutputSlot for MapSequence<K, V> {
    type View<'a> = &'a MapSequence<K, V>;

    fn name(&self) -> &str {
        &self.name
    }

    fn view(&self) -> Result<&MapSequence<K, V>> {
        filled(self, &self.name, self.whole.as_ref())
    }

    fn clear(&mut self) {
        MapSequence::clear(self);
    }

    fn accept(&mut self, value: Value) -> Result<()> {
        self.load(value)
    }
}

impl<K: MapKey, V: MapValue> ValueInputSlot for MapSequence<K, V> {
    fn name(&self) -> &str {
        &self.name
    }

    fn bound_value(&self) -> Result<Option<&Value>> {
        bound_whole(&self.name, self.whole.as_ref())
    }

    fn is_set(&self) -> bool {
        self.whole.is_some()
    }
}
