//! The text tool-call parsers against the peer suite: cases re-expressed from
//! vLLM's tool-parser tests (`tests/data/text_calls/cases.json`), each run
//! whole and streamed in 1-, 3- and 7-byte pieces; a per-format pass count is
//! printed (README's table). Plus the bounds: what a stream holds back, 10 MB
//! inputs, unclosed markers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should stop the test"
)]

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tool_core::text_calls::{
    FORMAT_NAMES, MAX_BLOCK_BYTES, Parsed, Piece, StreamParser, ToolSchema, collect, format_named,
    parse, tool_prompt, tools_from_json,
};

fn suite() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/text_calls/cases.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `text` streamed in pieces of about `size` bytes (cut at character boundaries).
fn streamed(format: &str, text: &str, size: usize, tools: Option<&[ToolSchema]>) -> Parsed {
    let mut p = StreamParser::new(format_named(format).unwrap(), tools.map(<[_]>::to_vec));
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.extend(p.feed(&text[at..end]));
        at = end;
    }
    pieces.extend(p.finish());
    collect(pieces)
}

/// What is wrong with `got` against the case, if anything.
fn check(case: &Value, got: &Parsed) -> Option<String> {
    let calls: Vec<Value> = got
        .calls
        .iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect();
    if got.content != case["content"].as_str().unwrap() {
        return Some(format!("content {:?}", got.content));
    }
    if Value::Array(calls.clone()) != case["calls"] {
        return Some(format!("calls {}", Value::Array(calls)));
    }
    if got.notes.len() as u64 != case["notes"].as_u64().unwrap() {
        return Some(format!("notes {:?}", got.notes));
    }
    if let Some(phrase) = case["note_has"].as_str() {
        if !got.notes.iter().any(|n| n.contains(phrase)) {
            return Some(format!("no note holds {phrase:?}: {:?}", got.notes));
        }
    }
    None
}

#[test]
fn the_peer_suite_passes_whole_and_streamed() {
    let suite = suite();
    let tool_sets: BTreeMap<String, Vec<ToolSchema>> = suite["tools"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), tools_from_json(v).unwrap()))
        .collect();
    // format -> (cases, whole passed, streamed passed)
    let mut table: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in suite["cases"].as_array().unwrap() {
        let format = case["format"].as_str().unwrap();
        let id = case["id"].as_str().unwrap();
        let input = case["input"].as_str().unwrap();
        let tools = case["tools"].as_str().map(|t| tool_sets[t].as_slice());
        let row = table.entry(format).or_default();
        row.0 += 1;
        let whole = parse(format_named(format).unwrap(), input, tools);
        match check(case, &whole) {
            None => row.1 += 1,
            Some(why) => failures.push(format!("{format}/{id} whole: {why}")),
        }
        let mut stream_ok = true;
        for size in [1, 3, 7] {
            if let Some(why) = check(case, &streamed(format, input, size, tools)) {
                failures.push(format!("{format}/{id} streamed by {size}: {why}"));
                stream_ok = false;
                break;
            }
        }
        if stream_ok {
            row.2 += 1;
        }
    }
    println!("| format | cases | whole | streamed |\n| --- | --- | --- | --- |");
    for (format, (n, whole, stream)) in &table {
        println!("| `{format}` | {n} | {whole}/{n} | {stream}/{n} |");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for name in FORMAT_NAMES {
        assert!(
            table.get(name).is_some_and(|r| r.0 >= 10),
            "fewer than 10 cases for {name}"
        );
    }
}

#[test]
fn a_stream_holds_back_only_a_possible_marker() {
    // Text with no markup is released as it comes, but for a tail that could
    // start a marker (here `<tool_c`, `[TOOL_`) or trailing whitespace.
    let mut p = StreamParser::new(format_named("auto").unwrap(), None);
    let text = "Plain words < and [ brackets, then <tool_c";
    let mut released = String::new();
    let mut fed = 0;
    for ch in text.chars() {
        fed += ch.len_utf8();
        for piece in p.feed(&ch.to_string()) {
            if let Piece::Text(t) = piece {
                released.push_str(&t);
            }
        }
        assert!(
            fed - released.len() <= 32,
            "held {} bytes after {released:?}",
            fed - released.len()
        );
    }
    assert_eq!(released, "Plain words < and [ brackets, then");
    let rest: Vec<Piece> = p.finish();
    assert_eq!(rest, vec![Piece::Text(" <tool_c".into())]);
}

#[test]
fn calls_are_yielded_as_soon_as_their_markup_closes() {
    let mut p = StreamParser::new(format_named("hermes").unwrap(), None);
    assert_eq!(
        p.feed("Hi. <tool_call>{\"name\": \"a\", \"arguments\": {}}"),
        vec![Piece::Text("Hi.".into())]
    );
    let got = p.feed("</tool_call> and <tool_call>{\"name\": \"b\"");
    assert!(
        matches!(&got[..], [Piece::Call(c), Piece::Text(t)] if c.name == "a" && t == " and"),
        "{got:?}"
    );
    let got = p.feed(", \"arguments\": {}}</tool_call>");
    assert!(
        matches!(&got[..], [Piece::Call(c)] if c.name == "b"),
        "{got:?}"
    );
    assert!(p.finish().is_empty());
}

#[test]
fn ten_megabytes_of_anything_give_notes_never_a_panic() {
    let filler = "lorem ipsum <b> [x] {y} ".repeat(10 << 20 >> 5);
    for name in FORMAT_NAMES {
        let format = format_named(name).unwrap();
        // Plain text: all content, no calls, no notes.
        let out = parse(format, &filler, None);
        assert_eq!(out.content, filler.trim(), "{name}");
        assert!(
            out.calls.is_empty() && out.notes.is_empty(),
            "{name}: {:?}",
            out.notes
        );
    }
    // A marker that never closes: released as text once past the block bound, with a note.
    let open = format!("<tool_call>{filler}");
    let out = parse(format_named("hermes").unwrap(), &open, None);
    assert_eq!(out.content.len(), open.trim().len());
    assert!(
        out.notes[0].contains(&format!("longer than {MAX_BLOCK_BYTES} bytes")),
        "{:?}",
        out.notes
    );
    // Many calls spread through text: every one found.
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str("Some words between the calls, a few dozen bytes of them. ");
        text.push_str(&format!(
            "<tool_call>{{\"name\": \"t\", \"arguments\": {{\"i\": {i}}}}}</tool_call>\n"
        ));
    }
    let out = parse(format_named("auto").unwrap(), &text, None);
    assert_eq!(out.calls.len(), 20_000);
    assert_eq!(out.calls[19_999].arguments["i"], 19_999);
}

#[test]
fn unknown_format_names_get_a_suggestion() {
    let err = format_named("hermez").unwrap_err();
    assert!(err.contains("did you mean `hermes`"), "{err}");
}

#[test]
fn prompts_carry_the_tools_in_the_formats_shape() {
    let tools = tools_from_json(
        &json!([{"name": "read_file", "description": "Reads a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]),
    )
    .unwrap();
    let hermes = tool_prompt("hermes", &tools);
    assert!(hermes.contains("<tools>\n{\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"description\":\"Reads a file.\""), "{hermes}");
    assert!(hermes.ends_with(
        "<tool_call>\n{\"name\": \"<name>\", \"arguments\": {<arguments>}}\n</tool_call>"
    ));
    let mistral = tool_prompt("mistral", &tools);
    assert!(
        mistral.starts_with("[AVAILABLE_TOOLS][{\"type\":\"function\""),
        "{mistral}"
    );
    assert!(mistral.contains("[/AVAILABLE_TOOLS]") && mistral.contains("[TOOL_CALLS]["));
    let llama = tool_prompt("llama3_json", &tools);
    assert!(
        llama.contains("\"parameters\": {<arguments>}") && llama.contains("\"name\":\"read_file\"")
    );
    for name in FORMAT_NAMES {
        assert!(tool_prompt(name, &tools).contains("read_file"), "{name}");
    }
    assert_eq!(tool_prompt("hermes", &[]), "");
}

#[test]
fn rendered_calls_read_back_as_the_same_call() {
    let Value::Object(arguments) =
        json!({"path": "a b.txt", "limit": 10, "all": true, "tags": ["x"], "none": null})
    else {
        unreachable!()
    };
    let call = tool_core::text_calls::TextCall::new("read_file", arguments);
    for name in FORMAT_NAMES {
        let text = tool_core::text_calls::render_call(name, &call);
        let tools = tools_from_json(
            &json!([{"name": "read_file", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "limit": {"type": "integer"}, "all": {"type": "boolean"},
            "tags": {"type": "array"}, "none": {"type": "null"}}}}]),
        )
        .unwrap();
        let out = parse(format_named(name).unwrap(), &text, Some(&tools));
        assert_eq!(
            (out.content.as_str(), out.notes.len()),
            ("", 0),
            "{name}: {text}"
        );
        assert_eq!(out.calls.len(), 1, "{name}: {text}");
        assert_eq!(out.calls[0].name, "read_file", "{name}");
        assert_eq!(out.calls[0].arguments, call.arguments, "{name}: {text}");
    }
}

#[test]
fn markers_before_multibyte_text_never_split_a_character() {
    let markers = [
        "[TOOL_CALLS]",
        "<tool_call>",
        "<|tool_call|>",
        "<|python_tag|>",
        "<|python_start|>",
        "```json",
        "{\"name\":",
        "[{",
        "[f(",
        "<function=",
        "<｜tool▁calls▁begin｜>",
        "<|tool_calls_section_begin|>",
        "",
    ];
    for name in FORMAT_NAMES {
        for m in markers {
            for tail in ["你好", "é{\"a\": 1}", "😀]", "]你"] {
                let text = format!("x {m}{tail} y");
                let whole = parse(format_named(name).unwrap(), &text, None);
                let by_one = streamed(name, &text, 1, None);
                assert_eq!(whole, by_one, "{name} on {text:?}");
                assert!(
                    whole.calls.is_empty(),
                    "{name} on {text:?}: {:?}",
                    whole.calls
                );
            }
        }
    }
}

mod props {
    use proptest::prelude::*;

    use super::{FORMAT_NAMES, format_named, parse, streamed};

    /// Pieces that make markup, half-markup and text.
    const PARTS: &[&str] = &[
        "<tool_call>",
        "</tool_call>",
        "[TOOL_CALLS]",
        "<|tool_call|>",
        "<|python_tag|>",
        "<function=f>",
        "<parameter=a>",
        "</parameter>",
        "</function>",
        "<arg_key>k</arg_key>",
        "<arg_value>v</arg_value>",
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>",
        "<|tool_calls_section_begin|>",
        "<|tool_call_begin|>",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        "<|tool_calls_section_end|>",
        "```json",
        "```",
        "{\"name\": \"f\", \"arguments\": {}}",
        "{\"name\": ",
        "\"f\"",
        "{",
        "}",
        "[",
        "]",
        "(",
        ")",
        "f(a=1)",
        "'",
        "\"",
        "\\",
        ";",
        " ",
        "\n",
        "text",
        "你好",
        "😀",
        "[{",
        "a=",
        "1",
        "null",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn whole_and_streamed_agree_and_never_panic(
            parts in proptest::collection::vec(0..PARTS.len(), 0..40),
            size in 1usize..12,
            format in 0..FORMAT_NAMES.len(),
        ) {
            let text: String = parts.iter().map(|i| PARTS[*i]).collect();
            let name = FORMAT_NAMES[format];
            let whole = parse(format_named(name).unwrap(), &text, None);
            let pieces = streamed(name, &text, size, None);
            prop_assert_eq!(&whole, &pieces, "{} on {:?}", name, text);
        }
    }
}
