//! The four commands. Each writes its answer to `out` and returns how the program exits.

use std::io::{self, BufRead, Write};

use serde_json::Value;
use tool_core::format::{Format, OnRefusal};
use tool_core::{ErrorKind, RegistryView, ToolArgs, ToolRegistry, ToolResult};

use crate::args;
use crate::failure::Failure;
use crate::render::{self, OutDir};
use crate::session::Session;

/// `tool list [--json]`.
pub(crate) fn list(
    registry: &ToolRegistry,
    json: bool,
    out: &mut impl Write,
) -> Result<(), Failure> {
    if json {
        let specs: Vec<_> = registry.specs().collect();
        serde_json::to_writer_pretty(&mut *out, &specs).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        let width = registry.names().iter().map(|n| n.len()).max().unwrap_or(0);
        for spec in registry.specs() {
            let summary = spec
                .summary()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            // A URL-scoped tool runs only with a matching --page-url: said at its line.
            let scope = if spec.url_patterns.is_empty() {
                String::new()
            } else {
                format!(
                    " [only with --page-url matching {}]",
                    spec.url_patterns.join(" or ")
                )
            };
            writeln!(
                out,
                "{:<width$}  {:<7}  {summary}{scope}",
                spec.name,
                spec.kind.as_str()
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `tool schema [NAME...] [--format F] [--no-fallback]`: the request's tool
/// list in that format (for `json` with named tools, in the order named).
/// Without names it is the view's list as a new session gets it
/// ([`RegistryView::schemas_with`]): deferred tools left out and
/// `tool_search` in, or for `anthropic-tool-search-*` every tool, the
/// deferred ones with `"defer_loading": true`.
/// Each tool rendered in a looser form than the format's strictest is
/// reported on `err` (one `warning:` line each, then a count; success).
/// Tools a format cannot express (with [`OnRefusal::Refuse`]: also those
/// that would fall back) are left out and reported; that ends with
/// [`Failure::ToolError`].
pub(crate) fn schema(
    view: &RegistryView,
    registry: &ToolRegistry,
    names: &[String],
    format: Format,
    on_refusal: OnRefusal,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<(), Failure> {
    let unknown: Vec<String> = names
        .iter()
        .filter(|n| !registry.contains(n))
        .map(|n| unknown_tool_message(registry, n))
        .collect();
    if !unknown.is_empty() {
        return Err(Failure::Usage(unknown.join("\n")));
    }
    let (value, failures, fallbacks) = if format == Format::Json && !names.is_empty() {
        let picked = names
            .iter()
            .filter_map(|n| registry.get(n))
            .map(|t| t.spec().canonical_schema())
            .collect();
        (Value::Array(picked), Vec::new(), Vec::new())
    } else {
        let rendered = if names.is_empty() {
            view.schemas_with(format, on_refusal)
        } else {
            let mut selected = ToolRegistry::new();
            for tool in names.iter().filter_map(|n| registry.get(n)) {
                // Names are distinct here unless given twice; a repeat is skipped.
                let _ = selected.register_with(tool.clone(), tool_core::OnConflict::Skip);
            }
            selected.schemas_with(format, on_refusal)
        };
        let report = |schemas: &tool_core::format::ToolSchemas| -> Vec<String> {
            schemas
                .fallbacks()
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        match rendered {
            Ok(schemas) => {
                let fallbacks = report(&schemas);
                (schemas.into_value(), Vec::new(), fallbacks)
            }
            Err(e) => {
                let failures: Vec<String> = e.errors().iter().map(ToString::to_string).collect();
                let fallbacks = report(e.partial());
                (e.into_partial().into_value(), failures, fallbacks)
            }
        }
    };
    serde_json::to_writer_pretty(&mut *out, &value).map_err(io::Error::from)?;
    writeln!(out)?;
    out.flush()?;
    // A URL-scoped tool is marked as `list` marks it (third review, L9):
    // `call`, `serve` and an agent offer it only on a matching page.
    let shown: Vec<&str> = if names.is_empty() {
        registry.names()
    } else {
        names.iter().map(String::as_str).collect()
    };
    for tool in shown.iter().filter_map(|n| registry.get(n)) {
        let patterns = &tool.spec().url_patterns;
        if !patterns.is_empty() {
            writeln!(
                err,
                "note: `{}` runs only with --page-url matching {}",
                tool.name(),
                patterns.join(" or ")
            )?;
        }
    }
    for fallback in &fallbacks {
        writeln!(err, "warning: {fallback}")?;
    }
    if !fallbacks.is_empty() {
        writeln!(
            err,
            "{} tool(s) rendered in a looser form than {format} asks; --no-fallback leaves them out instead.",
            fallbacks.len()
        )?;
    }
    if failures.is_empty() {
        return Ok(());
    }
    for failure in &failures {
        writeln!(err, "error: {failure}")?;
    }
    writeln!(
        err,
        "{} tool(s) left out of the {format} rendering above.",
        failures.len()
    )?;
    Err(Failure::ToolError)
}

/// `tool call NAME [ARGS_JSON] [--key=value ...]`.
pub(crate) fn call(
    registry: &ToolRegistry,
    session: &Session,
    runtime: &tokio::runtime::Runtime,
    name: &str,
    words: &[String],
    output: CallOutput,
    out: &mut impl Write,
) -> Result<(), Failure> {
    if !registry.contains(name) {
        let message = unknown_tool_message(registry, name);
        return refuse_call(session, name, ErrorKind::UnknownTool, message, output, out);
    }
    let parameters = registry
        .get(name)
        .map(|t| t.spec().parameters.clone())
        .unwrap_or_default();
    let arguments =
        match args::parse_call_args(words, args::read_stdin, &parameters).and_then(|a| {
            args::check_own_options(name, &a, &parameters, &crate::cli::own_options()).map(|()| a)
        }) {
            Ok(arguments) => arguments,
            Err(e) => {
                let message = format!(
                    "{e}\nRun `{program} call --help` for the argument syntax.",
                    program = crate::app::program_name()
                );
                return refuse_call(
                    session,
                    name,
                    ErrorKind::InvalidArguments,
                    message,
                    output,
                    out,
                );
            }
        };
    let dir = OutDir::new(session.out_dir.as_deref(), &session.trace_id).map_err(Failure::Usage)?;
    // Ctrl-C cancels the call (its MCP server is told) before the exit.
    let result = crate::interrupt::block_on(
        runtime,
        session.ctx.cancellation_token(),
        session.call(registry, name, arguments),
    );
    let printed = render::render(&result, Some(name), &session.trace_id, None, &dir);
    match output {
        CallOutput::Json => serde_json::to_writer(&mut *out, &printed).map_err(io::Error::from)?,
        CallOutput::PrettyJson => {
            serde_json::to_writer_pretty(&mut *out, &printed).map_err(io::Error::from)?;
        }
        CallOutput::Text => {
            let value = serde_json::to_value(&printed).map_err(io::Error::from)?;
            out.write_all(render::readable(&value).as_bytes())?;
        }
    }
    writeln!(out)?;
    out.flush()?;
    let write_failed = report_write_failures(&printed)?;
    report_ignored_hidden(&result)?;
    match &result.error {
        // On a terminal the readable result above already shows the message:
        // stderr adds only the hint (the review of 2026-12-02 saw it twice).
        Some(e) if e.kind == ErrorKind::InvalidArguments => Err(Failure::InvalidArguments(
            if output == CallOutput::Text {
                String::new()
            } else {
                e.message.clone()
            },
            name.to_owned(),
        )),
        Some(e) => {
            if e.kind == ErrorKind::Denied {
                page_url_hint(registry, &session.ctx, name)?;
            }
            Err(Failure::ToolError)
        }
        None if write_failed => Err(Failure::ToolError),
        None => Ok(()),
    }
}

/// A call refused before it ran (unknown tool, arguments that do not
/// parse): the usage message on stderr, and, when stdout carries JSON, the
/// same JSON object a call's error prints, so a script reading stdout gets
/// one object for every usage error of `call` (third review, L6). On a
/// terminal (text) stdout stays empty: stderr already shows the message.
fn refuse_call(
    session: &Session,
    name: &str,
    kind: ErrorKind,
    message: String,
    output: CallOutput,
    out: &mut impl Write,
) -> Result<(), Failure> {
    if output != CallOutput::Text {
        let result = ToolResult::error(kind, message.clone());
        let dir = OutDir::new(None, &session.trace_id).map_err(Failure::Usage)?;
        let printed = render::render(&result, Some(name), &session.trace_id, None, &dir);
        if output == CallOutput::PrettyJson {
            serde_json::to_writer_pretty(&mut *out, &printed).map_err(io::Error::from)?;
        } else {
            serde_json::to_writer(&mut *out, &printed).map_err(io::Error::from)?;
        }
        writeln!(out)?;
        out.flush()?;
    }
    Err(Failure::Usage(message))
}

/// A `note:` line on stderr for each hidden parameter the caller gave: the
/// application sets it, and the value given was dropped (third review, L3).
fn report_ignored_hidden(result: &tool_core::ToolResult) -> io::Result<()> {
    let Some(Value::Array(names)) = result.metadata.get("ignored_hidden_params") else {
        return Ok(());
    };
    let mut err = io::stderr().lock();
    for name in names.iter().filter_map(Value::as_str) {
        writeln!(
            err,
            "note: `{name}` is set by the application; the value given was ignored"
        )?;
    }
    Ok(())
}

/// For a call refused by URL scope, the option that gives the page, on
/// stderr: the pipeline's message speaks to a model ("use one of the tools
/// offered here"); a person at a shell needs `--page-url`.
fn page_url_hint(
    registry: &ToolRegistry,
    ctx: &tool_core::ToolContext,
    name: &str,
) -> io::Result<()> {
    let Some(tool) = registry.get(name) else {
        return Ok(());
    };
    let patterns = &tool.spec().url_patterns;
    if patterns.is_empty() || tool.available_on(ctx.page_url()) {
        return Ok(());
    }
    writeln!(
        io::stderr(),
        "hint: `{name}` runs only on pages matching {}; give the page with `{} --page-url URL call {name} …`",
        patterns.join(" or "),
        crate::app::program_name()
    )
}

/// How `tool call` prints its result (cross-cutting decision 9: readable
/// text only when stdout is a terminal, exactly the JSON object otherwise;
/// `--json` and `--text` force one; stdin plays no part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallOutput {
    /// One JSON object on one line.
    Json,
    /// The JSON object indented (`--pretty`).
    PrettyJson,
    /// Title, output, error, notes and files as lines of text.
    Text,
}

impl CallOutput {
    /// The form the options and the kind of stdout ask for.
    pub(crate) fn choose(pretty: bool, json: bool, text: bool, stdout_is_terminal: bool) -> Self {
        if text {
            Self::Text
        } else if pretty {
            Self::PrettyJson
        } else if json || !stdout_is_terminal {
            Self::Json
        } else {
            Self::Text
        }
    }
}

/// `tool call NAME --help` (or `-h`) for a tool without a `help` parameter:
/// the tool's description and its parameters as `--key=value` options.
pub(crate) fn tool_help(registry: &ToolRegistry, name: &str, words: &[String]) -> Option<String> {
    let [word] = words else { return None };
    let spec = registry.get(name)?.spec();
    let params = spec.parameter_names();
    if !matches!(word.as_str(), "--help" | "-h") || params.contains(&"help") {
        return None;
    }
    let required: Vec<&str> = spec.parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let program = crate::app::program_name();
    let mut text = format!(
        "{} ({})\n\n{}\n",
        spec.name,
        spec.kind,
        spec.description.trim()
    );
    // What a user otherwise learns from refusals (review 24, finding 15).
    if spec.flags.requires_confirmation {
        text.push_str(
            "\nAsks for confirmation before it runs: a y/N question on a terminal, else as \
             `--approve` says (before the tool name; `--approve all` runs it unasked).\n",
        );
        let editable: Vec<String> = spec
            .editable_params
            .iter()
            .map(|p| format!("--{}", p.replace('_', "-")))
            .collect();
        if !editable.is_empty() {
            text.push_str(&format!(
                "The person confirming may change: {}.\n",
                editable.join(", ")
            ));
        }
    }
    if !spec.url_patterns.is_empty() {
        text.push_str(&format!(
            "\nRuns only on pages matching {}: give the page with `{program} --page-url URL call {} …`.\n",
            spec.url_patterns.join(" or "),
            spec.name
        ));
    }
    if params.is_empty() {
        text.push_str("\nNo parameters.\n");
    } else {
        text.push_str("\nParameters (as --key=value, or one JSON object):\n");
    }
    for param in params {
        let schema = &spec.parameters["properties"][param];
        let kind = value_hint(schema, &spec.parameters, 0).unwrap_or_else(|| "json".to_owned());
        // Required, or optional with the default it then takes (as `schema` shows).
        let need = if required.contains(&param) {
            ", required".to_owned()
        } else {
            match schema.get("default") {
                Some(default) => format!(", optional, default {default}"),
                None => ", optional".to_owned(),
            }
        };
        let limits = limits(schema);
        text.push_str(&format!(
            "  --{}=<{kind}>{need}{limits}\n",
            param.replace('_', "-")
        ));
        if let Some(doc) = schema["description"].as_str() {
            for line in doc.lines() {
                text.push_str(&format!("      {line}\n"));
            }
        }
    }
    text.push_str(&format!(
        "\nRun `{program} schema {}` for the full JSON Schema, `{program} call --help` for the syntax.\n",
        spec.name,
    ));
    Some(text)
}

/// The bounds a parameter's own schema sets, for `tool call NAME --help`:
/// `, at least 1, at most 100` (`minimum` / `maximum`), `, 1 to 64
/// characters`-style length limits (`minLength` / `maxLength`), or nothing.
/// An exclusive bound reads "more than" / "less than".
fn limits(schema: &Value) -> String {
    let mut parts = Vec::new();
    let bound = |key: &str| schema.get(key).filter(|v| v.is_number());
    if let Some(min) = bound("minimum") {
        parts.push(format!("at least {min}"));
    }
    if let Some(min) = bound("exclusiveMinimum") {
        parts.push(format!("more than {min}"));
    }
    if let Some(max) = bound("maximum") {
        parts.push(format!("at most {max}"));
    }
    if let Some(max) = bound("exclusiveMaximum") {
        parts.push(format!("less than {max}"));
    }
    if let Some(min) = bound("minLength") {
        parts.push(format!("at least {min} characters"));
    }
    if let Some(max) = bound("maxLength") {
        parts.push(format!("at most {max} characters"));
    }
    parts.iter().map(|p| format!(", {p}")).collect()
}

/// The `<…>` of a parameter in `tool call NAME --help`: its listed values
/// (`grid|separate`) when it takes only those, else its JSON type
/// (`string`, `integer|null`); local `$ref`s followed, `anyOf` / `oneOf`
/// branches joined (a `null` branch left out when others remain: the
/// parameter is optional either way). `None` when nothing readable is there.
fn value_hint(schema: &Value, root: &Value, depth: u8) -> Option<String> {
    if depth > 8 {
        return None;
    }
    if let Some(target) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/"))
        .map(|r| format!("/{r}"))
        .and_then(|pointer| root.pointer(&pointer))
    {
        return value_hint(target, root, depth + 1);
    }
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    if let Some(values) = schema["enum"].as_array() {
        return Some(
            values
                .iter()
                .filter(|v| !v.is_null())
                .map(text)
                .collect::<Vec<_>>()
                .join("|"),
        );
    }
    if let Some(value) = schema.get("const") {
        return Some(text(value));
    }
    if let Some(branches) = schema["anyOf"]
        .as_array()
        .or_else(|| schema["oneOf"].as_array())
    {
        let mut hints: Vec<String> = Vec::new();
        for branch in branches {
            for hint in value_hint(branch, root, depth + 1)?.split('|') {
                if !hints.iter().any(|h| h == hint) {
                    hints.push(hint.to_owned());
                }
            }
        }
        if hints.len() > 1 {
            hints.retain(|h| h != "null");
        }
        return (!hints.is_empty()).then(|| hints.join("|"));
    }
    match &schema["type"] {
        Value::String(t) => Some(t.clone()),
        Value::Array(ts) => {
            let mut types: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            if types.len() > 1 {
                types.retain(|t| *t != "null");
            }
            Some(types.join("|"))
        }
        _ => None,
    }
}

/// One line of `tool batch` input.
struct BatchLine {
    name: String,
    arguments: Option<Value>,
    id: Option<Value>,
}

/// Reads one batch line as a call; the error says, in the input's own terms,
/// what the line is instead (never the JSON library's internal names).
fn batch_line(line: &str, number: usize) -> Result<BatchLine, String> {
    const SHAPE: &str =
        "each line must be one JSON object {\"name\": \"tool_name\", \"arguments\": {...}}";
    let value: Value = serde_json::from_str(line).map_err(|e| {
        format!(
            "line {number} is not JSON (line {number}, column {}: {}); {SHAPE}",
            e.column(),
            match e.classify() {
                serde_json::error::Category::Eof => "it ends too early",
                serde_json::error::Category::Syntax => "a syntax error",
                _ => "it cannot be read",
            }
        )
    })?;
    let Value::Object(mut object) = value else {
        let kind = match value {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(format!("line {number} is {kind}, not an object; {SHAPE}"));
    };
    let name = match object.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err(format!("line {number}: \"name\" must be a string; {SHAPE}")),
        None => return Err(format!("line {number} has no \"name\"; {SHAPE}")),
    };
    let arguments = object.remove("arguments");
    let id = object.remove("id");
    if let Some(key) = object.keys().next() {
        return Err(format!(
            "line {number} has an unknown key `{}` (the keys are name, arguments and id); {SHAPE}",
            &key[..tool_core::truncate::floor_char_boundary(key, 100)]
        ));
    }
    Ok(BatchLine {
        name,
        arguments,
        id,
    })
}

/// Longest `tool batch` input line: 16 MiB, as one MCP message.
pub(crate) const MAX_BATCH_LINE: usize = 16 << 20;

/// Reads one line into `raw` (at most [`MAX_BATCH_LINE`] bytes; the rest of
/// a longer line is read and dropped in bounded memory). `None` at end of
/// input, `Some(false)` for a line that was too long.
fn read_line_bounded(input: &mut impl BufRead, raw: &mut Vec<u8>) -> io::Result<Option<bool>> {
    let mut seen = false;
    let mut whole = true;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok(seen.then_some(whole));
        }
        seen = true;
        let (part, done) = match memchr_newline(chunk) {
            Some(i) => (&chunk[..=i], true),
            None => (chunk, false),
        };
        let used = part.len();
        if whole && raw.len() + part.len() <= MAX_BATCH_LINE {
            raw.extend_from_slice(part);
        } else {
            whole = false;
            raw.clear();
        }
        input.consume(used);
        if done {
            return Ok(Some(whole));
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// `tool batch`: one call per input line, in order, in the session's one
/// context; each result is written and flushed before the next line is read.
pub(crate) fn batch(
    registry: &ToolRegistry,
    session: &Session,
    runtime: &tokio::runtime::Runtime,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let dir = OutDir::new(session.out_dir.as_deref(), &session.trace_id).map_err(Failure::Usage)?;
    let mut raw = Vec::new();
    let mut number = 0usize;
    let mut write_failed = false;
    loop {
        raw.clear();
        let Some(whole) = read_line_bounded(input, &mut raw)? else {
            return if write_failed {
                Err(Failure::ToolError)
            } else {
                Ok(())
            };
        };
        number += 1;
        let line = String::from_utf8_lossy(&raw);
        if whole && line.trim().is_empty() {
            continue;
        }
        let parsed = if whole {
            batch_line(&line, number)
        } else {
            Err(format!(
                "line {number} is longer than {} MiB; it was read to its end and skipped. Put large \
                 content in a file and pass its path.",
                MAX_BATCH_LINE >> 20
            ))
        };
        let (id, name, result) = match parsed {
            Ok(call) => {
                let args = match call.arguments {
                    None | Some(Value::Null) => ToolArgs::Value(Value::Object(Default::default())),
                    Some(Value::String(text)) => ToolArgs::Text(text),
                    Some(other) => ToolArgs::Value(other),
                };
                let result = runtime.block_on(session.call(registry, &call.name, args));
                (call.id, Some(call.name), result)
            }
            Err(message) => (
                None,
                None,
                ToolResult::error(ErrorKind::InvalidArguments, message),
            ),
        };
        let printed = render::render(
            &result,
            name.as_deref(),
            &session.trace_id,
            id.as_ref(),
            &dir,
        );
        serde_json::to_writer(&mut *out, &printed).map_err(io::Error::from)?;
        writeln!(out)?;
        out.flush()?;
        write_failed |= report_write_failures(&printed)?;
    }
}

/// Writes an `error:` line on stderr for every image or file of `printed`
/// that could not be written (each names its path and the OS error);
/// whether there was one.
fn report_write_failures(printed: &render::Printed<'_>) -> io::Result<bool> {
    let failures = printed.write_failures();
    let mut err = io::stderr().lock();
    for failure in &failures {
        writeln!(err, "error: {failure}")?;
    }
    Ok(!failures.is_empty())
}

/// "unknown tool `x`" with up to three suggestions, or a pointer to `tool list`.
pub(crate) fn unknown_tool_message(registry: &ToolRegistry, name: &str) -> String {
    let suggestions = registry.suggest(name);
    let mut message = format!("unknown tool `{name}`.");
    if !suggestions.is_empty() {
        let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        message.push_str(&format!(" Did you mean {}?", quoted.join(" or ")));
    }
    message.push_str(&format!(
        " Run `{} list` to see every tool.",
        crate::app::program_name()
    ));
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_core::{Tool, ToolResult, ToolSpec};

    /// Review 24, finding 15: per-tool help says what a user otherwise
    /// learns from refusals: confirmation, the page rule, the bounds.
    #[test]
    fn tool_help_names_confirmation_the_page_rule_and_bounds() {
        let mut spec = ToolSpec::new(
            "place_order",
            "Order an item.",
            json!({"type": "object", "properties": {
                "sku": {"type": "string", "minLength": 3, "description": "What to order"},
                "quantity": {"type": "integer", "minimum": 1, "maximum": 99, "default": 1}
            }, "required": ["sku"]}),
        )
        .requires_confirmation(&["quantity"]);
        spec.url_patterns = vec!["https://*.shop.example/**".to_owned()];
        let tool = Tool::new(spec, |_args, _ctx| async { ToolResult::ok("ok") }).expect("valid");
        let mut registry = ToolRegistry::new();
        registry.register(tool).expect("registers");
        let text = tool_help(&registry, "place_order", &["--help".to_owned()]).expect("help");
        let program = crate::app::program_name();
        assert_eq!(
            text,
            format!(
                "place_order (other)\n\nOrder an item.\n\n\
                 Asks for confirmation before it runs: a y/N question on a terminal, else as \
                 `--approve` says (before the tool name; `--approve all` runs it unasked).\n\
                 The person confirming may change: --quantity.\n\n\
                 Runs only on pages matching https://*.shop.example/**: give the page with \
                 `{program} --page-url URL call place_order …`.\n\n\
                 Parameters (as --key=value, or one JSON object):\n\
                 \x20 --sku=<string>, required, at least 3 characters\n\
                 \x20     What to order\n\
                 \x20 --quantity=<integer>, optional, default 1, at least 1, at most 99\n\n\
                 Run `{program} schema place_order` for the full JSON Schema, `{program} call --help` for the syntax.\n"
            )
        );
    }
}
