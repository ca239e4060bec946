//! A JSON value with its parser and writer: exactly what the signature's JSON forms need,
//! so the macro path compiles no JSON library (`serde_json` and `serde` were a fifth of
//! what a user's first build added to `ort` alone).
//!
//! Objects keep their keys in the order written (the cache lists a value's fields in a
//! fixed order for diffs that read well), and numbers are integers: every number in a
//! signature is a version, a dim or a byte count. Text is written the way `serde_json`
//! writes it (the same escapes), so hashes of caches written before stay valid.

use std::fmt;

/// A JSON value. Objects are key-value pairs in the order written; numbers are integers.
///
/// ```
/// use ort_bind_codegen::__private::json::Value;
///
/// let v = Value::parse(r#"{"name": "x", "shape": [1, "n", null]}"#).unwrap();
/// assert_eq!(v.get("name").and_then(Value::as_str), Some("x"));
/// assert_eq!(v.to_string(), r#"{"name":"x","shape":[1,"n",null]}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer (any `i64` or `u64`).
    Int(i128),
    /// A string.
    String(String),
    /// A list.
    Array(Vec<Value>),
    /// An object: its keys and values in the order written.
    Object(Vec<(String, Value)>),
}

/// Deepest nesting [`Value::parse`] accepts (`serde_json`'s limit), so hostile text cannot
/// exhaust the stack.
pub const MAX_DEPTH: usize = 128;

impl Value {
    /// An object of `fields`, in that order.
    pub fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
        Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }

    /// The value of `key` in an object (`None` for other values or an absent key).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?
            .iter()
            .find_map(|(k, v)| (k == key).then_some(v))
    }

    /// Sets `key` of an object, replacing its value or appending it; other values are
    /// left as they are.
    pub fn insert(&mut self, key: &str, value: Value) {
        if let Value::Object(fields) = self {
            match fields.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => fields.push((key.to_owned(), value)),
            }
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// An integer that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(n) => i64::try_from(*n).ok(),
            _ => None,
        }
    }

    /// An integer that fits `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(n) => u64::try_from(*n).ok(),
            _ => None,
        }
    }

    /// The items of a list.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The fields of an object, in order.
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(fields) => Some(fields),
            _ => None,
        }
    }

    /// Parses JSON text holding one value. Numbers with a fraction or an exponent, keys
    /// given twice and nesting deeper than [`MAX_DEPTH`] are errors; so is anything after
    /// the value but whitespace.
    pub fn parse(text: &str) -> Result<Value, ParseError> {
        let mut parser = Parser { text, pos: 0 };
        let value = parser.value(0)?;
        parser.skip_space();
        if parser.pos < text.len() {
            return Err(parser.error("text after the value"));
        }
        Ok(value)
    }

    /// Writes the value with `sep` between items and `colon` after keys (`","` and `":"`
    /// are compact), sorting each object's keys when `sorted`.
    pub fn write(&self, out: &mut String, sep: &str, colon: &str, sorted: bool) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(n) => out.push_str(&n.to_string()),
            Value::String(s) => write_string(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(sep);
                    }
                    item.write(out, sep, colon, sorted);
                }
                out.push(']');
            }
            Value::Object(fields) => {
                let mut fields: Vec<&(String, Value)> = fields.iter().collect();
                if sorted {
                    fields.sort_by(|a, b| a.0.cmp(&b.0));
                }
                out.push('{');
                for (i, (k, v)) in fields.into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(sep);
                    }
                    write_string(k, out);
                    out.push_str(colon);
                    v.write(out, sep, colon, sorted);
                }
                out.push('}');
            }
        }
    }
}

/// Compact text, keys in the order written.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out, ",", ":", false);
        f.write_str(&out)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n.into())
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Int(n.into())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
}

impl FromIterator<Value> for Value {
    fn from_iter<I: IntoIterator<Item = Value>>(items: I) -> Value {
        Value::Array(items.into_iter().collect())
    }
}

/// `s` as a JSON string: `"` and `\` escaped, control characters as `\n`-style escapes or
/// `\u00XX`, everything else as it is (serde_json's choice, which cache hashes rely on).
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Why text is not JSON [`Value::parse`] reads, and where (1-based line and column, in
/// characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What is wrong.
    pub message: String,
    /// The line it is on.
    pub line: usize,
    /// The column it is at.
    pub column: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for ParseError {}

struct Parser<'t> {
    text: &'t str,
    /// Byte offset of the next character.
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> ParseError {
        let before = &self.text[..self.pos];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ParseError {
            message: message.into(),
            line,
            column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Consumes `byte` (after whitespace) or says what was expected.
    fn expect(&mut self, byte: u8, what: &str) -> Result<(), ParseError> {
        self.skip_space();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_space();
        match self.peek() {
            None => Err(self.error("unexpected end of text")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => {
                for (word, value) in [
                    ("null", Value::Null),
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                ] {
                    if self.text[self.pos..].starts_with(word) {
                        self.pos += word.len();
                        return Ok(value);
                    }
                }
                Err(self.error("expected a value"))
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut fields: Vec<(String, Value)> = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(fields));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key"));
            }
            let key_at = self.pos;
            let key = self.string()?;
            if fields.iter().any(|(k, _)| *k == key) {
                self.pos = key_at;
                return Err(self.error(format!("key `{key}` given twice")));
            }
            self.expect(b':', "`:`")?;
            let value = self.value(depth + 1)?;
            fields.push((key, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(fields));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        let text = &self.text[start..self.pos];
        if self.pos == digits {
            return Err(self.error("expected a digit"));
        }
        if self.text.as_bytes()[digits] == b'0' && self.pos > digits + 1 {
            self.pos = start;
            return Err(self.error("a number with a leading zero"));
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            self.pos = start;
            return Err(self.error("not an integer (every number here is one)"));
        }
        match text.parse::<i128>() {
            Ok(n) if i64::try_from(n).is_ok() || u64::try_from(n).is_ok() => Ok(Value::Int(n)),
            _ => {
                self.pos = start;
                Err(self.error("an integer out of range"))
            }
        }
    }

    /// A string from its opening quote, escapes decoded.
    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            // The plain run up to the next quote, backslash or control character.
            let plain = rest
                .find(|c: char| c == '"' || c == '\\' || u32::from(c) < 0x20)
                .unwrap_or(rest.len());
            out.push_str(&rest[..plain]);
            self.pos += plain;
            match self.peek() {
                None => return Err(self.error("a string without its closing quote")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.escape()?;
                    out.push(c);
                }
                Some(_) => return Err(self.error("a control character in a string")),
            }
        }
    }

    /// The character an escape (after its backslash) stands for.
    fn escape(&mut self) -> Result<char, ParseError> {
        let Some(b) = self.peek() else {
            return Err(self.error("a string without its closing quote"));
        };
        self.pos += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                if !(0xD800..0xDC00).contains(&first) {
                    return char::from_u32(first).ok_or_else(|| self.error("a lone low surrogate"));
                }
                // A high surrogate: its low half must follow as another `\u` escape.
                if !self.text[self.pos..].starts_with("\\u") {
                    return Err(self.error("a lone high surrogate"));
                }
                self.pos += 2;
                let second = self.hex4()?;
                if !(0xDC00..0xE000).contains(&second) {
                    return Err(self.error("a high surrogate without its low half"));
                }
                let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                char::from_u32(code).ok_or_else(|| self.error("a bad surrogate pair"))?
            }
            _ => {
                self.pos -= 1;
                return Err(self.error("an unknown escape"));
            }
        })
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("`\\u` without four hex digits"))?;
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.error("`\\u` without four hex digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Value::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_every_kind_of_value_and_writes_it_back() {
        let text =
            r#"{"a":null,"b":[true,false],"c":-12,"d":"x\"y\\z\n\u00e9\ud83d\ude00","e":{}}"#;
        let v = Value::parse(text).unwrap();
        assert_eq!(v.get("c").and_then(Value::as_i64), Some(-12));
        assert_eq!(v.get("c").and_then(Value::as_u64), None);
        assert_eq!(v.get("d").and_then(Value::as_str), Some("x\"y\\z\né😀"));
        assert_eq!(v.get("e").and_then(Value::as_object), Some(&[][..]));
        assert_eq!(
            v.to_string(),
            r#"{"a":null,"b":[true,false],"c":-12,"d":"x\"y\\z\né😀","e":{}}"#
        );
        assert_eq!(Value::parse(&v.to_string()).unwrap(), v);
    }

    #[test]
    fn escapes_control_characters_as_serde_json_does() {
        let mut out = String::new();
        write_string("\u{0}\u{8}\u{c}\t\r\u{1f}\u{7f}/", &mut out);
        assert_eq!(out, "\"\\u0000\\b\\f\\t\\r\\u001f\u{7f}/\"");
        assert_eq!(
            Value::parse(&out).unwrap().as_str(),
            Some("\u{0}\u{8}\u{c}\t\r\u{1f}\u{7f}/")
        );
    }

    #[test]
    fn integers_cover_i64_and_u64_and_nothing_else() {
        for n in ["0", "-9223372036854775808", "18446744073709551615"] {
            assert_eq!(Value::parse(n).unwrap().to_string(), n);
        }
        assert!(err("18446744073709551616").starts_with("an integer out of range"));
        assert!(err("-9223372036854775809").starts_with("an integer out of range"));
        assert!(err("1.5").starts_with("not an integer"));
        assert!(err("1e3").starts_with("not an integer"));
        assert!(err("012").starts_with("a number with a leading zero"));
        assert!(err("-").starts_with("expected a digit"));
    }

    #[test]
    fn sorted_writing_orders_keys_and_spacing_is_chosen() {
        let v = Value::object([("b", 1i64.into()), ("a", vec![Value::Null].into())]);
        let mut out = String::new();
        v.write(&mut out, ", ", ": ", true);
        assert_eq!(out, r#"{"a": [null], "b": 1}"#);
        let mut with = v.clone();
        with.insert("b", "two".into());
        with.insert("c", true.into());
        assert_eq!(with.to_string(), r#"{"b":"two","a":[null],"c":true}"#);
    }

    #[test]
    fn bad_text_is_an_error_with_its_place() {
        assert_eq!(
            err("{\n  \"a\": tru\n}"),
            "expected a value at line 2 column 8"
        );
        assert_eq!(err("[1 2]"), "expected `,` or `]` at line 1 column 4");
        assert_eq!(
            err(r#"{"a":1,"a":2}"#),
            "key `a` given twice at line 1 column 8"
        );
        assert_eq!(err(r#"{"a" 1}"#), "expected `:` at line 1 column 6");
        assert_eq!(err(r#"{1:2}"#), "expected a key at line 1 column 2");
        assert_eq!(
            err("\"abc"),
            "a string without its closing quote at line 1 column 5"
        );
        assert_eq!(
            err("\"a\tb\""),
            "a control character in a string at line 1 column 3"
        );
        assert_eq!(err(r#""\x""#), "an unknown escape at line 1 column 3");
        assert_eq!(
            err(r#""\ud800""#),
            "a lone high surrogate at line 1 column 8"
        );
        assert_eq!(
            err(r#""\udc00""#),
            "a lone low surrogate at line 1 column 8"
        );
        assert_eq!(
            err(r#""\ud800\u0041""#),
            "a high surrogate without its low half at line 1 column 14"
        );
        assert_eq!(
            err(r#""\u12""#),
            "`\\u` without four hex digits at line 1 column 4"
        );
        assert_eq!(err("[] x"), "text after the value at line 1 column 4");
        assert_eq!(err(""), "unexpected end of text at line 1 column 1");
    }

    #[test]
    fn nesting_is_limited() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(Value::parse(&ok).is_ok());
        let deep = "[".repeat(100_000);
        assert!(err(&deep).starts_with("nested too deeply"));
        let deep = "{\"a\":".repeat(MAX_DEPTH + 1) + "1" + &"}".repeat(MAX_DEPTH + 1);
        assert!(err(&deep).starts_with("nested too deeply"));
    }

    /// Every prefix and every one-byte change of a valid document parses or fails cleanly.
    #[test]
    fn truncated_and_mangled_text_never_panics() {
        let text = r#"{"k": [1, -2, "s\u00e9\n", {"x": null, "y": true}], "z": "😀"}"#;
        for end in 0..=text.len() {
            if let Some(prefix) = text.get(..end) {
                let _ = Value::parse(prefix);
            }
        }
        let bytes = text.as_bytes();
        for i in 0..bytes.len() {
            for b in [
                b'"', b'\\', b'{', b'[', b']', b'}', b',', b':', b'-', b'0', b'u', b' ',
            ] {
                let mut mangled = bytes.to_vec();
                mangled[i] = b;
                if let Ok(s) = std::str::from_utf8(&mangled) {
                    let _ = Value::parse(s);
                }
            }
        }
    }
}
