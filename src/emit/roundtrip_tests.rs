//! Property test: for many generated values, loading the emitted YAML gives the value
//! back, types included (YAML has one integer type, so `Uint` is only distinct above
//! `i64::MAX`), and the JSON output is valid JSON with the same content.

use super::{to_json, to_yaml};
use crate::files::FileId;
use crate::value::{Equality, Map, Value};
use crate::yaml::parse;

/// splitmix64: small, deterministic, good enough to explore shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "",
    " ",
    "true",
    "False",
    "NULL",
    "~",
    "null",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "1",
    "-1",
    "0x1F",
    "0o7",
    "0755",
    "1.5",
    ".5",
    "1.",
    "1e3",
    "-.inf",
    ".NaN",
    "inf",
    "1_000",
    "12:30",
    "2024-01-02",
    "-",
    "--",
    "---",
    "...",
    "?",
    ":",
    "- a",
    "? b",
    ": c",
    "a: b",
    "a:b",
    "#",
    "a #b",
    "a#b",
    "&x",
    "*x",
    "!tag",
    "|",
    ">",
    "'",
    "\"",
    "%",
    "@",
    "`",
    "{",
    "}",
    "[",
    "]",
    ",",
    "<<",
    "=",
    "${x.y}",
    "$${x}",
    "\\",
    "é",
    "日本",
    "\t",
    "\n",
    "\r\n",
    "  ",
    "\u{85}",
    "\u{2028}",
    "\u{feff}",
    "\u{7f}",
    "\u{0}",
    "plain",
    "with space",
    "trailing ",
    " leading",
    "line\n",
    "two\nlines",
    "\nlead",
    "x\n\n",
    "  x\ny",
    "end:",
    "http://a/b?c=d#e",
];

fn random_string(rng: &mut Rng) -> String {
    let parts = 1 + rng.below(3);
    (0..parts).map(|_| WORDS[rng.below(WORDS.len())]).collect()
}

fn random_float(rng: &mut Rng) -> f64 {
    match rng.below(8) {
        0 => f64::INFINITY,
        1 => f64::NEG_INFINITY,
        2 => f64::NAN,
        3 => (rng.below(2000) as f64) - 1000.0,
        4 => f64::from_bits(rng.next()),
        5 => 1e300 * (rng.below(10) as f64 + 1.0),
        6 => 1e-300 / (rng.below(10) as f64 + 1.0),
        _ => (rng.next() as f64) / 7.0 - 1e18,
    }
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    let choice = rng.below(if depth >= 4 { 7 } else { 10 });
    match choice {
        0 => Value::Nil,
        1 => Value::Bool(rng.below(2) == 0),
        2 => Value::Int(match rng.below(3) {
            0 => rng.next() as i64,
            1 => rng.below(100) as i64 - 50,
            _ => i64::MIN,
        }),
        3 => Value::Uint(u64::MAX - rng.below(1000) as u64),
        4 => {
            let f = random_float(rng);
            Value::Float(if f.is_nan() { f64::NAN } else { f })
        }
        5 | 6 => Value::from(random_string(rng)),
        7 => Value::list(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let mut map = Map::default();
            for _ in 0..rng.below(4) {
                map.insert(random_string(rng).into(), random_value(rng, depth + 1));
            }
            Value::map(map)
        }
    }
}

fn has_non_finite(value: &Value) -> bool {
    match value {
        Value::Float(f) => !f.is_finite(),
        Value::List(items) => items.iter().any(has_non_finite),
        Value::Map(map) => map.values().any(has_non_finite),
        _ => false,
    }
}

#[test]
fn yaml_round_trips_generated_values() {
    let mut rng = Rng(0x5EED);
    for case in 0..3000 {
        let value = random_value(&mut rng, 0);
        let text = to_yaml(&value);
        let back = match parse(&text, FileId(0)) {
            Ok(node) => node.to_value(),
            Err(err) => panic!("case {case}: emitted YAML does not parse: {err}\n{text}"),
        };
        assert!(
            value.equals(&back, Equality::SAME_DOCUMENT),
            "case {case}: round trip changed the value\n{value:?}\n{text}\n{back:?}"
        );
    }
}

#[test]
fn json_is_valid_for_generated_values() {
    let mut rng = Rng(0xC0FFEE);
    for case in 0..1000 {
        let value = random_value(&mut rng, 0);
        match to_json(&value) {
            Ok(text) => {
                let parsed: Result<serde_json::Value, _> = serde_json::from_str(&text);
                assert!(parsed.is_ok(), "case {case}: invalid JSON\n{text}");
                assert!(!has_non_finite(&value));
            }
            Err(_) => assert!(has_non_finite(&value), "case {case}: unexpected error"),
        }
    }
}

#[test]
fn long_keys_round_trip() {
    let mut inner = Map::default();
    inner.insert("x".repeat(1500).into(), Value::list(vec![Value::Int(1)]));
    inner.insert("y".into(), Value::Int(2));
    let mut map = Map::default();
    map.insert("k".repeat(2000).into(), Value::Int(1));
    map.insert("é".repeat(600).into(), Value::map(inner));
    let value = Value::list(vec![Value::map(map)]);
    let text = to_yaml(&value);
    let back = parse(&text, FileId(0)).map(|n| n.to_value());
    assert!(
        back.is_ok_and(|b| value.equals(&b, Equality::SAME_DOCUMENT)),
        "{text}"
    );
}

/// Every string of up to five pieces of lines, blanks and tabs, as a map value, a
/// nested map value, a list item, an item of a nested list and a value in a list's
/// map: whatever style the writer picks (a goccy/go-yaml literal block where it reads
/// back, double quotes where it would not), the string reads back unchanged.
#[test]
fn multi_line_strings_round_trip_at_every_depth() {
    const PIECES: &[&str] = &["a", " ", "  ", "\t", "\n", "b "];
    let mut strings = vec![String::new()];
    let mut all = Vec::new();
    for _ in 0..5 {
        let mut next = Vec::new();
        for s in &strings {
            for piece in PIECES {
                next.push(format!("{s}{piece}"));
            }
        }
        all.extend(next.iter().filter(|s| s.contains('\n')).cloned());
        strings = next;
    }
    let map = |k: &str, v: Value| {
        let mut m = Map::default();
        m.insert(k.into(), v);
        Value::map(m)
    };
    for s in &all {
        let v = || Value::from(s.as_str());
        let shapes = [
            map("k", v()),
            map("a", map("b", map("c", v()))),
            map("l", Value::list(vec![v(), v()])),
            map("l", Value::list(vec![Value::list(vec![v()])])),
            map("l", Value::list(vec![map("k", map("n", v()))])),
        ];
        for value in shapes {
            let text = to_yaml(&value);
            let back = match parse(&text, FileId(0)) {
                Ok(node) => node.to_value(),
                Err(err) => panic!("{s:?}: emitted YAML does not parse: {err}\n{text}"),
            };
            assert!(
                value.equals(&back, Equality::SAME_DOCUMENT),
                "{s:?}: round trip changed the value\n{text}\n{back:?}"
            );
        }
    }
}
