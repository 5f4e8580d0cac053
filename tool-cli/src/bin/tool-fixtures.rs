//! `tool-fixtures`: the `tool` program with a handful of test tools next to
//! the built-ins, for this crate's integration tests and the start-up
//! benchmark. A binary of its own (built only with the `fixtures` feature,
//! which the tests' dev-dependency turns on) so that no build of `tool`,
//! whatever the flags or feature unification, contains the test tools:
//! `cli_fixture_panic`, `cli_fixture_block` and `cli_fixture_context` must
//! never be offered by a real `tool serve`.
//!
//! Built with the runtime API, except [`FixtureNotes`], a `#[toolset]` whose
//! methods the CLI calls like any other tool. Every name starts with
//! `cli_fixture_`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tool_core::{
    Attachment, ErrorKind, Image, State, Tool, ToolContext, ToolKind, ToolRegistry, ToolResult,
    ToolSpec,
};

fn main() -> std::process::ExitCode {
    tool_cli::main_with(&registry(), extend_context)
}

/// Calls counted across one context (proves `tool batch` shares its context).
#[derive(Debug, Default)]
struct CallCounter(AtomicU64);

/// Adds the fixtures' own state to a session's context.
fn extend_context(ctx: ToolContext) -> ToolContext {
    ctx.with_state(CallCounter::default())
}

/// The fixture tools.
fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    // The specs below are valid and their names distinct; a mistake shows up
    // as a missing fixture in the tests.
    for tool in tools().into_iter().flatten() {
        let _ = registry.register(tool);
    }
    let _ = registry.add_toolset(std::sync::Arc::new(FixtureNotes::default()));
    registry
}

/// Notes held by one instance: the tools of a `#[toolset]` impl block.
#[derive(Debug, Default)]
struct FixtureNotes {
    notes: std::sync::Mutex<Vec<String>>,
}

#[tool_core::toolset]
impl FixtureNotes {
    /// Add a note; returns how many notes the instance holds.
    ///
    /// # Arguments
    /// * `text` - The note.
    #[tool(name = "cli_fixture_note_add", kind = "write")]
    fn add(&self, text: String) -> String {
        let mut notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        notes.push(text);
        notes.len().to_string()
    }

    /// The notes that contain some words, newest last.
    #[tool(name = "cli_fixture_note_find", kind = "read", read_only)]
    fn find(&self, #[arg(flatten)] find: FixtureFind, limit: Option<usize>) -> Vec<String> {
        let notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let fold = |s: &str| {
            if find.case_sensitive {
                s.to_owned()
            } else {
                s.to_lowercase()
            }
        };
        notes
            .iter()
            .filter(|n| fold(n).contains(&fold(&find.words)))
            .take(limit.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    }

    /// The notes, newest last.
    #[tool(name = "cli_fixture_note_list", kind = "read", read_only)]
    async fn list(self: std::sync::Arc<Self>) -> Vec<String> {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The search of `cli_fixture_note_find`: a whole-argument struct
/// (`#[arg(flatten)]`) whose fields are the tool's parameters.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct FixtureFind {
    /// Words the note contains.
    words: String,
    /// Match case exactly.
    #[serde(default, rename = "caseSensitive")]
    case_sensitive: bool,
}

fn any_object() -> Value {
    json!({"type": "object", "additionalProperties": true})
}

fn tools() -> Vec<Result<Tool, tool_core::RegistryError>> {
    vec![
        Tool::new(
            ToolSpec::new(
                "cli_fixture_args",
                "Return the arguments received, as JSON text.",
                any_object(),
            )
            .with_kind(ToolKind::Read),
            |args: Map<String, Value>, _ctx: ToolContext| async move {
                ToolResult::ok(Value::Object(args).to_string())
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_echo",
                "Return `text` unchanged.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            )
            .with_kind(ToolKind::Read)
            .with_tags(["fixture-echo"]),
            |args: Map<String, Value>, _ctx: ToolContext| async move {
                match args.get("text") {
                    Some(Value::String(t)) => ToolResult::ok(t.clone()).with_title("echo"),
                    _ => ToolResult::error(ErrorKind::InvalidArguments, "`text` must be a string"),
                }
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_fail",
                "Fail with partial output.",
                any_object(),
            ),
            |_args: Map<String, Value>, _ctx: ToolContext| async move {
                ToolResult::failed("the fixture failed on purpose").with_output("partial")
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_binary",
                "Return one PNG image, one inline attachment and one attachment on disk.",
                any_object(),
            ),
            |_args: Map<String, Value>, _ctx: ToolContext| async move {
                // 1x1 PNG, and "hello\n" as inline text.
                ToolResult::ok("made binary output")
                    .with_image(Image::new(
                        "image/png",
                        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
                    ))
                    .with_image(Image::new("image/png", "not base64!"))
                    .with_attachment(Attachment::inline("../notes.txt", "text/plain", "aGVsbG8K"))
                    .with_attachment(Attachment::file("log", "text/plain", "/var/log/x.log"))
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_context",
                "Report what the context holds, as JSON.",
                any_object(),
            )
            .with_kind(ToolKind::Read),
            |_args: Map<String, Value>, ctx: ToolContext| async move {
                let report = json!({
                    "trace_id": ctx.trace_id(),
                    "page_url": ctx.page_url(),
                    "workspace": ctx.value("workspace"),
                    "timeout_ms": ctx.timeout().map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
                    "approval_policy": ctx.value("approval_policy"),
                    "has_approver": ctx.approver().is_some(),
                    "secret_keys": ctx.secrets().map(|s| s.keys_for(ctx.page_url())),
                    "has_workspace": ctx.state::<tool_builtins::Workspace>().is_some(),
                    "has_ledger": ctx.state::<tool_builtins::FileLedger>().is_some(),
                });
                ToolResult::ok(report.to_string())
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_secret_echo",
                "Return `text` after secret substitution (the pipeline masks it again).",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            |args: Map<String, Value>, _ctx: ToolContext| async move {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                ToolResult::ok(format!("got {} chars: {text}", text.len()))
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_tree",
                "Take a recursive tree (Gemini's reference-free schemas cannot express it).",
                json!({
                    "type": "object",
                    "properties": {"root": {"$ref": "#/$defs/Node"}},
                    "$defs": {"Node": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                        }
                    }}
                }),
            ),
            |_args: Map<String, Value>, _ctx: ToolContext| async move { ToolResult::ok("a tree") },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_count",
                "Count calls made in this context.",
                any_object(),
            ),
            |_args: Map<String, Value>, ctx: ToolContext| async move {
                match ctx.state::<CallCounter>() {
                    Some(State(counter)) => {
                        ToolResult::ok((counter.0.fetch_add(1, Ordering::SeqCst) + 1).to_string())
                    }
                    None => ToolResult::error(ErrorKind::MissingContext, "no CallCounter state"),
                }
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_sleep",
                "Sleep `ms` milliseconds, then answer.",
                json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            ),
            |args: Map<String, Value>, _ctx: ToolContext| async move {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ToolResult::ok(format!("slept {ms} ms"))
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_block",
                "Block a thread of the blocking pool for `ms` milliseconds (as a stuck sync tool would).",
                json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            ),
            |args: Map<String, Value>, _ctx: ToolContext| async move {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                let slept = tokio::task::spawn_blocking(move || {
                    std::thread::sleep(Duration::from_millis(ms));
                })
                .await;
                match slept {
                    Ok(()) => ToolResult::ok(format!("blocked {ms} ms")),
                    Err(e) => ToolResult::failed(e.to_string()),
                }
            },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_confirm_read",
                "A read tool that requires confirmation.",
                any_object(),
            )
            .with_kind(ToolKind::Read)
            .requires_confirmation(&[]),
            |_args: Map<String, Value>, _ctx: ToolContext| async move { ToolResult::ok("read done") },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_confirm_write",
                "A write tool that requires confirmation.",
                any_object(),
            )
            .with_kind(ToolKind::Write)
            .requires_confirmation(&[]),
            |_args: Map<String, Value>, _ctx: ToolContext| async move { ToolResult::ok("write done") },
        ),
        Tool::new(
            ToolSpec::new(
                "cli_fixture_panic",
                "Panic (the pipeline contains it).",
                any_object(),
            ),
            |_args: Map<String, Value>, _ctx: ToolContext| async move {
                #[allow(clippy::panic, reason = "the fixture exists to panic")]
                {
                    panic!("fixture panic")
                }
            },
        ),
    ]
}
