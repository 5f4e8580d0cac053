//! The pythonic format (see [`Pythonic`]).

use serde_json::{Map, Number, Value};

use super::read::{excerpt, marker_end, value_end};
use super::scan::StartPattern;
use super::types::{Block, End, EndState, TextCall, TextCallFormat};

const START: &str = "<|python_start|>";
const END: &str = "<|python_end|>";

/// Deepest nesting of lists and dicts read in one argument value.
const MAX_DEPTH: usize = 64;

/// The pythonic format (Llama 3.2 / 4, `ToolACE`, many fine-tunes): a Python
/// list of calls with keyword arguments, `[get_weather(city='Paris'), now()]`,
/// optionally between Llama 4's `<|python_start|>` and `<|python_end|>`.
/// Argument values are Python literals: strings (`'…'`, `"…"`, with
/// backslash escapes), numbers, `True` / `False` / `None`, lists, tuples and
/// dicts. No expression is evaluated.
#[derive(Debug, Default, Clone, Copy)]
pub struct Pythonic;

impl TextCallFormat for Pythonic {
    fn name(&self) -> &'static str {
        "pythonic"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[StartPattern::Marker(START), StartPattern::CallList]
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        if kind == 0 {
            marker_end(block, START.len(), END, state)
        } else {
            value_end(block, 0, true, state)
        }
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        if !closed {
            return Block::Malformed(format!(
                "pythonic: the call list was cut by the end of the text: `{}`",
                excerpt(block)
            ));
        }
        let body = if kind == 0 {
            let b = &block[START.len()..];
            b.strip_suffix(END).unwrap_or(b)
        } else {
            block
        };
        match parse_call_list(body.trim()) {
            Ok(calls) => Block::Calls(calls, Vec::new()),
            Err(e) => Block::Malformed(format!("pythonic: {e}: `{}`", excerpt(body))),
        }
    }
}

/// Reads `[f(a=1), g()]` (a single call without brackets too).
pub(crate) fn parse_call_list(text: &str) -> Result<Vec<TextCall>, String> {
    let mut p = Reader {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    let bracketed = p.eat(b'[');
    let mut calls = Vec::new();
    loop {
        p.ws();
        if bracketed && p.eat(b']') {
            break;
        }
        calls.push(p.call()?);
        p.ws();
        if p.eat(b',') {
            continue;
        }
        if bracketed {
            p.expect(b']')?;
        }
        break;
    }
    p.ws();
    if p.i != p.s.len() {
        return Err(format!(
            "unexpected text after the call list at byte {}",
            p.i
        ));
    }
    if calls.is_empty() {
        return Err("an empty call list".to_owned());
    }
    Ok(calls)
}

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }
    fn ident(&mut self, dotted: bool) -> Result<&str, String> {
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || (dotted && *c == b'.'))
        {
            self.i += 1;
        }
        if start == self.i || self.s[start].is_ascii_digit() {
            return Err(format!("expected a name at byte {start}"));
        }
        Ok(&self.text[start..self.i])
    }
    fn call(&mut self) -> Result<TextCall, String> {
        let name = self.ident(true)?.to_owned();
        self.ws();
        self.expect(b'(')?;
        let mut args = Map::new();
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            let at = self.i;
            let key = match self.ident(false) {
                Ok(k) => k.to_owned(),
                Err(_) => {
                    return Err(format!(
                        "call `{name}`: arguments must be keyword arguments (`name=value`), at byte {at}"
                    ));
                }
            };
            self.ws();
            if !self.eat(b'=') {
                return Err(format!(
                    "call `{name}`: arguments must be keyword arguments (`name=value`), at byte {at}"
                ));
            }
            self.ws();
            let value = self
                .value(0)
                .map_err(|e| format!("call `{name}`, argument `{key}`: {e}"))?;
            args.insert(key, value);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(b')')?;
            break;
        }
        Ok(TextCall::new(name, args))
    }
    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("values nested deeper than {MAX_DEPTH}"));
        }
        self.ws();
        match self.s.get(self.i) {
            None => Err("the text ended inside a value".to_owned()),
            Some(b'\'' | b'"') => self.string().map(Value::String),
            Some(b'[') => {
                self.i += 1;
                self.seq(b']', depth)
            }
            Some(b'(') => {
                self.i += 1;
                self.seq(b')', depth)
            }
            Some(b'{') => {
                self.i += 1;
                let mut m = Map::new();
                loop {
                    self.ws();
                    if self.eat(b'}') {
                        break;
                    }
                    let k = match self.value(depth + 1)? {
                        Value::String(s) => s,
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        other => return Err(format!("a dict key must be a string, not {other}")),
                    };
                    self.ws();
                    self.expect(b':')?;
                    let v = self.value(depth + 1)?;
                    m.insert(k, v);
                    self.ws();
                    if self.eat(b',') {
                        continue;
                    }
                    self.expect(b'}')?;
                    break;
                }
                Ok(Value::Object(m))
            }
            Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.') => self.number(),
            Some(_) => {
                let at = self.i;
                match self.ident(false)? {
                    "True" | "true" => Ok(Value::Bool(true)),
                    "False" | "false" => Ok(Value::Bool(false)),
                    "None" | "null" => Ok(Value::Null),
                    other => Err(format!(
                        "`{other}` at byte {at} is not a literal (strings, numbers, True, False, None, lists, dicts)"
                    )),
                }
            }
        }
    }
    fn seq(&mut self, close: u8, depth: usize) -> Result<Value, String> {
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.eat(close) {
                break;
            }
            items.push(self.value(depth + 1)?);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(close)?;
            break;
        }
        Ok(Value::Array(items))
    }
    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(|c| {
            c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'_')
        }) {
            self.i += 1;
        }
        let raw: String = self.text[start..self.i]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        if let Ok(i) = raw.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        raw.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{raw}` at byte {start} is not a number"))
    }
    fn string(&mut self) -> Result<String, String> {
        let quote = self.s[self.i];
        let start = self.i;
        self.i += 1;
        let mut out = String::new();
        loop {
            let Some(rest) = self.text.get(self.i..) else {
                return Err(format!("a string starting at byte {start} is not closed"));
            };
            let mut chars = rest.chars();
            let Some(c) = chars.next() else {
                return Err(format!("a string starting at byte {start} is not closed"));
            };
            self.i += c.len_utf8();
            if c as u32 == u32::from(quote) {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = chars.next() else {
                return Err(format!("a string starting at byte {start} is not closed"));
            };
            self.i += e.len_utf8();
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' | '\'' | '"' => out.push(e),
                'u' => {
                    let hex = self.text.get(self.i..self.i + 4).unwrap_or("");
                    let ch = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                    match ch {
                        Some(ch) if hex.len() == 4 => {
                            out.push(ch);
                            self.i += 4;
                        }
                        _ => return Err(format!("a bad `\\u` escape at byte {}", self.i)),
                    }
                }
                '\n' => {}
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literals_of_every_kind() {
        let calls = parse_call_list(
            r#"[f(a='x\'y', b=-2, c=1.5, d=True, e=None, f=[1, (2, 3)], g={'k': "v"}), h()]"#,
        )
        .unwrap();
        assert_eq!(calls[0].name, "f");
        assert_eq!(
            Value::Object(calls[0].arguments.clone()),
            json!({"a": "x'y", "b": -2, "c": 1.5, "d": true, "e": null, "f": [1, [2, 3]], "g": {"k": "v"}})
        );
        assert_eq!((calls[1].name.as_str(), calls[1].arguments.len()), ("h", 0));
    }

    #[test]
    fn refusals_name_the_problem() {
        let e = parse_call_list("[f(1)]").unwrap_err();
        assert!(e.contains("keyword arguments"), "{e}");
        let e = parse_call_list("[f(a=os.system('x'))]").unwrap_err();
        assert!(e.contains("not a literal"), "{e}");
        let deep = format!("[f(a={}{})]", "[".repeat(100), "]".repeat(100));
        assert!(
            parse_call_list(&deep)
                .unwrap_err()
                .contains("nested deeper")
        );
    }
}
