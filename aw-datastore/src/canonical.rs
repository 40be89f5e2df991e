//! Whether a data text a client sent is exactly what would be stored for
//! it ([`is_canonical_data`]), so an import may store it as it is.

/// Whether `text`, a JSON object as a document sent it, is exactly what
/// [`data_text`] stores for it, so that an import may store it as it is
/// instead of building its map and writing it out again (half of the
/// parsing side of a year's import). `false` means "not known to be":
/// whitespace, keys out of order, repeated or escaped, escapes other than
/// the short ones serde_json writes, numbers other than plain integers
/// (floats are written back in their shortest form), and nesting deeper
/// than [`CANONICAL_DEPTH`] all answer `false`. Export documents, written
/// by [`data_text`]'s serializer, are canonical.
pub(crate) fn is_canonical_data(text: &str) -> bool {
    let mut scan = CanonicalScan {
        bytes: text.as_bytes(),
        at: 0,
    };
    text.starts_with('{') && scan.value(0) && scan.at == text.len()
}

/// Deepest nesting [`is_canonical_data`] follows.
pub(crate) const CANONICAL_DEPTH: usize = 32;

/// A cursor over a JSON text checked by [`is_canonical_data`].
struct CanonicalScan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> CanonicalScan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'{') => depth < CANONICAL_DEPTH && self.object(depth + 1),
            Some(b'[') => depth < CANONICAL_DEPTH && self.array(depth + 1),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.integer(),
            _ => false,
        }
    }

    /// `{...}` with its keys in strictly rising order, as a map writes them.
    fn object(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b'}') {
            return true;
        }
        let mut previous: Option<&[u8]> = None;
        loop {
            let Some(key) = self.string() else {
                return false;
            };
            // Escaped keys order as strings, not as the text shows them.
            if key.contains(&b'\\') || previous.is_some_and(|previous| previous >= key) {
                return false;
            }
            previous = Some(key);
            if !self.eat(b':') || !self.value(depth) {
                return false;
            }
            if self.eat(b'}') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value(depth) {
                return false;
            }
            if self.eat(b']') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    /// A string whose escapes are the ones serde_json writes for the
    /// characters they stand for; returns its text between the quotes.
    fn string(&mut self) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        loop {
            match *bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(&bytes[start..self.at - 1]);
                }
                b'\\' => match bytes.get(self.at + 1)? {
                    b'"' | b'\\' | b'n' | b't' | b'r' | b'b' | b'f' => self.at += 2,
                    _ => return None,
                },
                0..=0x1f => return None,
                _ => self.at += 1,
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        let found = self.bytes[self.at..].starts_with(word);
        self.at += if found { word.len() } else { 0 };
        found
    }

    /// An integer as serde_json writes one it read: no `-0`, no leading
    /// zero, no fraction or exponent, and short enough to fit 64 bits.
    fn integer(&mut self) -> bool {
        let negative = self.eat(b'-');
        let start = self.at;
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
        let digits = &self.bytes[start..self.at];
        let plain = match digits {
            [] => false,
            [b'0'] => !negative,
            [b'0', ..] => false,
            _ => digits.len() <= 18,
        };
        plain && !matches!(self.peek(), Some(b'.' | b'e' | b'E'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::rows::{data_text, parse_data};

    /// What serde_json stores for `text`, if it is a JSON object.
    fn stored_form(text: &str) -> Option<String> {
        parse_data(text).ok().map(|data| data_text(&data))
    }

    #[test]
    fn canonical_data_is_exactly_what_would_be_stored() {
        let canonical = [
            r#"{}"#,
            r#"{"app":"vim","title":"a \"quoted\" \\ path\n\t\r\b\f"}"#,
            r#"{"a":[],"b":{},"c":[1,-2,0,true,false,null,"x",{"d":[[]]}]}"#,
            r#"{"audible":false,"tabCount":6,"url":"https://x.org/a?b=1"}"#,
            r#"{"A":1,"B":2,"a":3,"é":"ünï","😀":"~"}"#,
            "{\"del\":\"\x7f\"}",
            r#"{"m":-123456789012345678,"n":123456789012345678}"#,
        ];
        for text in canonical {
            assert!(is_canonical_data(text), "{text}");
            assert_eq!(stored_form(text).as_deref(), Some(text), "{text}");
        }
        // 32 levels: 16 objects, each holding an array.
        let deep = format!("{}1{}", r#"{"a":["#.repeat(16), "]}".repeat(16));
        assert!(is_canonical_data(&deep));
        assert_eq!(stored_form(&deep).as_deref(), Some(deep.as_str()));
    }

    #[test]
    fn data_stored_differently_is_never_called_canonical() {
        let other = [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"y":1,"x":2}}"#,
            r#"{ "a":1}"#,
            r#"{"a": 1}"#,
            r#"{"a":1 }"#,
            "{\"a\":1}\n",
            r#"{"a":1.0}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":007}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":"\u001f"}"#,
            r#"{"\u0061":1}"#,
            r#"{"a\"":1,"a":2}"#,
            r#"[1]"#,
            r#""text""#,
            r#"{"a":tru}"#,
            r#"{"a":1"#,
            r#"{"a":1}}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":,}"#,
            r#"{,}"#,
        ];
        for text in other {
            assert!(!is_canonical_data(text), "{text}");
        }
        let too_deep = format!("{}1{}", r#"{"a":["#.repeat(17), "]}".repeat(17));
        assert!(!is_canonical_data(&too_deep));
    }

    #[test]
    fn canonical_agrees_with_a_round_trip_on_every_variation() {
        // Every text made of these pieces that the check accepts is what
        // storing it gives; the pieces cover each rule's edges.
        let values = [
            "1",
            "-1",
            "0",
            "-0",
            "01",
            "1.0",
            "2e1",
            "\"s\"",
            "\"\\u00e9\"",
            "\"\\/\"",
            "\"\\n\"",
            "true",
            "null",
            "[]",
            "[1,2]",
            "{}",
            "{\"k\":1}",
            "{\"k\":1,\"j\":2}",
            " 1",
        ];
        let keys = ["\"a\"", "\"b\"", "\"B\"", "\"\\u0062\"", "\"é\""];
        let mut checked = 0;
        for first_key in keys {
            for second_key in keys {
                for first in values {
                    for second in values {
                        let text = format!("{{{first_key}:{first},{second_key}:{second}}}");
                        if is_canonical_data(&text) {
                            checked += 1;
                            assert_eq!(stored_form(&text).as_deref(), Some(text.as_str()));
                        }
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
