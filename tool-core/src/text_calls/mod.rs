//! Tool calls that models write as text: parsers for the formats open-weight
//! models use when the server does not turn their markup into structured
//! calls (llama.cpp without `--jinja`, raw Ollama templates, vLLM without
//! `--tool-call-parser`, most fine-tunes), and the matching prompt side.
//!
//! | name (as vLLM spells it) | markup |
//! | --- | --- |
//! | `hermes` | `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (Hermes 2 Pro, Qwen 2.5 / 3) |
//! | `mistral` | `[TOOL_CALLS][{"name": …, "arguments": {…}}]`, or `[TOOL_CALLS]name{…}` (v11+) |
//! | `llama3_json` | `{"name": …, "parameters": {…}}`, optionally after `<\|python_tag\|>`, `;`-separated |
//! | `pythonic` | `[f(a=1, b='x'), g()]` (Llama 3.2 / 4, optionally in `<\|python_start\|>…<\|python_end\|>`) |
//! | `deepseek_v3` | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name` + ```` ```json ```` (V3; V3.1's `name<｜tool▁sep｜>{…}` too) |
//! | `qwen3_coder` | `<tool_call><function=name><parameter=key>value</parameter></function></tool_call>` |
//! | `kimi_k2` | `<\|tool_calls_section_begin\|><\|tool_call_begin\|>functions.name:0<\|tool_call_argument_begin\|>{…}<\|tool_call_end\|>…` |
//! | `granite` | `<\|tool_call\|>[{"name": …, "arguments": {…}}]` (or `<tool_call>[…]`, or the bare list) |
//! | `xlam` | `[{"name": …, "arguments": {…}}]`, bare, fenced as ```` ```json ````, after `[TOOL_CALLS]` or in `<tool_call>` |
//! | `glm45` | `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` (GLM-4.5 / 4.6) |
//! | `auto` | all of the above; see [`Auto`] for the confidence rule |
//!
//! One trait, [`TextCallFormat`], says how a format's markup starts, where a
//! block ends and how a block reads; one driver, [`StreamParser`], runs any
//! format over text that arrives in pieces, and [`parse`] runs it over a
//! whole text, so both read alike. What the driver guarantees:
//! - calls are yielded as soon as their markup is complete, text at once
//!   except a tail that could start a marker (the longest marker, or 64
//!   bytes of a bare pattern) and trailing whitespace; markup never leaks
//!   into the text unless it proved malformed;
//! - malformed markup (unclosed, arguments that are not JSON, an unknown
//!   shape) stays in the content as written and gets a model-readable note;
//!   nothing is dropped silently and no input panics;
//! - bounded: a block open past [`MAX_BLOCK_BYTES`] is released as text with a
//!   note; at most [`MAX_NOTES`] notes; linear time in the input.
//!
//! With a tool list ([`ToolSchema`]s), a call to a tool that is not in it is
//! kept with a note (naming close names through `tool_rules::suggest`), and
//! text argument values are coerced to the parameter's declared type.
//! Without one, arguments are taken as written.
//!
//! ```
//! use tool_core::text_calls::{format_named, StreamParser, Piece};
//!
//! let mut p = StreamParser::new(format_named("auto").unwrap(), None);
//! let mut pieces = Vec::new();
//! for chunk in ["Let me look. [TOOL_CA", "LLS][{\"name\": \"ls\", \"argu", "ments\": {}}]"] {
//!     pieces.extend(p.feed(chunk));
//! }
//! pieces.extend(p.finish());
//! assert_eq!(pieces[0], Piece::Text("Let me look.".into()));
//! assert!(matches!(&pieces[1], Piece::Call(c) if c.name == "ls"));
//! assert_eq!(pieces.len(), 2);
//! ```

mod auto;
mod coerce;
mod json_formats;
mod prompt;
mod pythonic;
mod read;
mod scan;
mod stream;
mod token_formats;
mod types;
mod xml_formats;

pub use auto::Auto;
pub use json_formats::{Granite, Hermes, Llama3Json, Mistral, Xlam};
pub use prompt::{render_call, tool_prompt};
pub use pythonic::Pythonic;
pub use scan::{Start, StartPattern, ValueEnd, ValueScan};
pub use stream::{
    FORMAT_NAMES, MAX_BLOCK_BYTES, MAX_NOTES, StreamParser, collect, format_named, parse,
    tools_from_json,
};
pub use token_formats::{DeepSeekV3, KimiK2};
pub use types::{Block, End, EndState, Parsed, Piece, TextCall, TextCallFormat, ToolSchema};
pub use xml_formats::{Glm45, Qwen3Coder};
