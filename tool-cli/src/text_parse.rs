//! `tool parse`: a model's raw answer on stdin, the tool calls written in it
//! as text on stdout (`tool_core::text_calls`), for scripts and for checking
//! a format by hand.

use std::io::{self, Read, Write};
use std::path::Path;

use tool_core::text_calls::{format_named, parse, tools_from_json};

use crate::failure::Failure;
use crate::small_file;

/// Largest answer read from stdin (bytes, 64 MiB, as much as the agent's
/// streamed-answer cap): more is refused rather than half-read.
pub(crate) const MAX_PARSE_INPUT: u64 = 64 << 20;

/// Largest `--tools` file (bytes, 16 MiB: a few thousand schemas).
const MAX_TOOLS_FILE: u64 = 16 << 20;

/// Reads stdin, prints `{"content", "calls": [{"name", "arguments"}], "notes"}`
/// as one JSON line.
///
/// # Errors
/// A usage error (exit 2) for an unknown format, an unreadable or malformed
/// `--tools` file, stdin over [`MAX_PARSE_INPUT`] or not UTF-8.
pub(crate) fn run(
    format: &str,
    tools: Option<&Path>,
    input: &mut impl Read,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let format = format_named(format).map_err(|e| Failure::Usage(format!("--format: {e}")))?;
    let tools = match tools {
        None => None,
        Some(path) => {
            let bytes = small_file::read(
                path,
                "--tools",
                "a JSON array of tool schemas",
                MAX_TOOLS_FILE,
            )
            .map_err(Failure::Usage)?;
            let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
                Failure::Usage(format!("--tools {}: not JSON: {e}", path.display()))
            })?;
            Some(
                tools_from_json(&value)
                    .map_err(|e| Failure::Usage(format!("--tools {}: {e}", path.display())))?,
            )
        }
    };
    let mut bytes = Vec::new();
    input.take(MAX_PARSE_INPUT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PARSE_INPUT {
        return Err(Failure::Usage(format!(
            "stdin holds more than {MAX_PARSE_INPUT} bytes; `parse` reads one model answer"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::Usage(format!(
            "stdin is not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let parsed = parse(format, &text, tools.as_deref());
    serde_json::to_writer(&mut *out, &parsed).map_err(io::Error::from)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}
