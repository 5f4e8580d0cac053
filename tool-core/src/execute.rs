//! The execution pipeline: lookup → argument parsing → call with panic
//! containment, timeout and cancellation → result.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::context::ToolContext;
use crate::governance::approval::{ApprovalDecision, ApprovalRequest, check_edits};
use crate::governance::repair::{self, ArgumentRepair};
use crate::governance::secrets::Masker;
use crate::governance::stats::{CallPhase, ToolEvent};
use crate::registry::{Entry, ToolRegistry};
use crate::result::{ErrorKind, ToolResult};
use crate::tool::Tool;
use crate::truncate::{self, Truncation};

/// Longest excerpt of a model's value quoted back in an error message, in characters.
const QUOTE_LIMIT: usize = 200;

/// The arguments of a tool call: a parsed JSON value, or the raw text a provider returned.
///
/// Built with `From`/`Into` from `serde_json::Value`, a JSON object map,
/// `&str` or `String` (raw text, parsed by [`ToolRegistry::execute`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolArgs {
    /// Already-parsed JSON.
    Value(Value),
    /// Raw argument text, e.g. OpenAI's `function.arguments` string.
    Text(String),
}

impl From<Value> for ToolArgs {
    fn from(v: Value) -> Self {
        Self::Value(v)
    }
}

impl From<Map<String, Value>> for ToolArgs {
    fn from(m: Map<String, Value>) -> Self {
        Self::Value(Value::Object(m))
    }
}

impl From<&str> for ToolArgs {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<String> for ToolArgs {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<&String> for ToolArgs {
    fn from(s: &String) -> Self {
        Self::Text(s.clone())
    }
}

impl ToolRegistry {
    /// Executes one tool call end to end and returns its result. Never panics
    /// on any input and never returns an `Err`: every failure is a
    /// [`ToolResult`] with an [`ErrorKind`] and a message the model can act on.
    ///
    /// The pipeline, in order:
    /// 1. lookup: an unknown tool is `unknown_tool`, with up to three "did you mean" names;
    /// 2. arguments: parsed from text if needed, with the documented
    ///    [repairs](crate::governance::repair) recorded in `metadata["argument_repairs"]`
    ///    and each told to the model as a [note](ToolResult::notes);
    ///    arguments that are not an object are `invalid_arguments`;
    /// 3. URL scoping: a tool with `url_patterns` whose patterns do not match
    ///    the context's `page_url` is `denied` ("not available on this page");
    /// 4. confirmation: a tool with `requires_confirmation` asks the context's
    ///    [`Approver`](crate::Approver) (none configured: `denied`); edits the
    ///    approver made are listed in `metadata["approved_with_edits"]` and told
    ///    to the model in one note naming each changed parameter and its new value;
    /// 5. secrets: `<secret>key</secret>` placeholders are replaced from the
    ///    context's [`SecretStore`](crate::SecretStore); an unknown key or one
    ///    not allowed on this page is `invalid_arguments`;
    /// 6. the call: wrong types, missing or unknown parameters are
    ///    `invalid_arguments` naming the parameter, the expected type and (cut to
    ///    200 characters) what was sent; a panic is `panicked` naming the tool
    ///    (the payload goes to `tracing`, target `tool_core`); the timeout (the
    ///    tool's, else the context's, else the registry's, 120 s by default) is
    ///    `timeout`; the context's cancellation token firing is `cancelled`;
    /// 7. secret values in the result are masked back to placeholders;
    /// 8. output over the registry's budget keeps head and tail, the full
    ///    (masked) text is spilled to a file in the folder of the context's
    ///    trace id (`metadata["truncated"]`, `metadata["output_path"]`; see
    ///    [`truncate`](crate::truncate#where-spill-files-go));
    /// 9. statistics, lifecycle events and the `tool_call` tracing span
    ///    (arguments as the model sent them: placeholders, never secret values).
    ///
    /// Must run inside a Tokio runtime with the time driver enabled (the
    /// default for `#[tokio::main]`); sync tools run on its blocking pool.
    pub async fn execute(
        &self,
        name: &str,
        args: impl Into<ToolArgs>,
        ctx: &ToolContext,
    ) -> ToolResult {
        self.execute_repaired(name, args.into(), ctx, Vec::new())
            .await
    }

    /// [`execute`](Self::execute) with repairs already applied by the caller
    /// (e.g. [`execute_call`](Self::execute_call) parsing the provider's text),
    /// recorded and noted like the pipeline's own.
    pub(crate) async fn execute_repaired(
        &self,
        name: &str,
        args: ToolArgs,
        ctx: &ToolContext,
        mut repairs: Vec<ArgumentRepair>,
    ) -> ToolResult {
        let Some(entry) = self.entry(name) else {
            return unknown_tool(self, name);
        };
        let started = Instant::now();
        let call_id = self.call_ids.fetch_add(1, Ordering::Relaxed);
        let prepared = repair::prepare(name, args, &entry.tool.derived().param_types, &mut repairs);
        let (mut result, phase, event_args) = match prepared {
            Err(message) => (
                ToolResult::error(ErrorKind::InvalidArguments, message),
                CallPhase::Failed,
                Map::new(),
            ),
            Ok(map) => {
                let span = tracing::info_span!(
                    target: "tool_core",
                    "tool_call",
                    tool = name,
                    trace_id = ctx.trace_id().unwrap_or(""),
                    call_id,
                    arguments = %JsonDisplay(&map),
                );
                self.run_call(entry, map, ctx, call_id)
                    .instrument(span)
                    .await
            }
        };
        if !repairs.is_empty() {
            result.metadata.insert(
                "argument_repairs".to_owned(),
                serde_json::to_value(&repairs).unwrap_or(Value::Null),
            );
            // The pipeline's notes come first: they describe the input the tool's own notes follow from.
            let tool_notes = std::mem::take(&mut result.notes);
            for r in &repairs {
                result.add_note(r.note());
            }
            result.notes.extend(tool_notes);
        }
        if let Some(budget) = &self.truncation {
            // After the masking in `run_call`: the spill file holds masked text.
            apply_budget(&mut result, budget, ctx.trace_id());
        }
        let duration = started.elapsed();
        entry.stats.record(phase, duration, repairs.len());
        self.emit(
            name,
            call_id,
            ctx,
            phase,
            &event_args,
            Some(duration),
            result.error.as_ref(),
        );
        result
    }

    /// Lookup and the call alone (step 6 of [`execute`](Self::execute)), for
    /// the `governance` benchmark to measure what the other steps add. Only
    /// with the `bench-internals` feature: it bypasses confirmation and URL scoping.
    #[cfg(feature = "bench-internals")]
    #[doc(hidden)]
    pub async fn execute_ungoverned(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &ToolContext,
    ) -> ToolResult {
        match self.entry(name) {
            Some(entry) => self.call_tool(&entry.tool, args, ctx).await,
            None => unknown_tool(self, name),
        }
    }

    /// Steps 3–7 of [`execute`](Self::execute). Returns the result, how it
    /// ended, and the model's arguments for the final event (empty when
    /// there are no observers).
    async fn run_call(
        &self,
        entry: &Entry,
        mut args: Map<String, Value>,
        ctx: &ToolContext,
        call_id: u64,
    ) -> (ToolResult, CallPhase, Map<String, Value>) {
        let tool = &entry.tool;
        let spec = tool.spec();
        let name = spec.name.as_str();
        let event_args = if self.observers.is_empty() {
            Map::new()
        } else {
            args.clone()
        };
        self.emit(
            name,
            call_id,
            ctx,
            CallPhase::Pending,
            &event_args,
            None,
            None,
        );

        if !tool.available_on(ctx.page_url()) {
            let page = ctx.page_url().map_or_else(
                || "no page".to_owned(),
                |u| format!("the page {}", quote(&without_userinfo(u))),
            );
            let r = ToolResult::error(
                ErrorKind::Denied,
                format!(
                    "The tool `{name}` is not available on this page ({page}); use one of the tools offered here."
                ),
            );
            return (r, CallPhase::Denied, event_args);
        }

        let mut notes = Map::new();
        let mut model_notes: Vec<String> = Vec::new();
        // Hidden parameters are the framework's to fill: what the model sent
        // for them is dropped here (and noted), before anyone is asked to approve it.
        let ignored: Vec<Value> = spec
            .hidden_params
            .iter()
            .filter(|h| args.remove(h.as_str()).is_some())
            .map(|h| Value::String(h.clone()))
            .collect();
        if !ignored.is_empty() {
            notes.insert("ignored_hidden_params".to_owned(), Value::Array(ignored));
        }
        if spec.flags.requires_confirmation {
            let decision = tokio::select! {
                biased;
                () = ctx.cancellation_token().cancelled() => {
                    let r = ToolResult::error(
                        ErrorKind::Cancelled,
                        format!("The call to `{name}` was cancelled while waiting for confirmation."),
                    );
                    return (r, CallPhase::Failed, event_args);
                }
                d = confirm(tool, &args, ctx) => d,
            };
            match decision {
                Confirmation::Approved => {}
                Confirmation::Edited(edited, changed) => {
                    model_notes.push(edit_note(&changed, &edited));
                    notes.insert("approved_with_edits".to_owned(), Value::from(changed));
                    args = edited;
                }
                Confirmation::Denied(message) => {
                    return (
                        ToolResult::error(ErrorKind::Denied, message),
                        CallPhase::Denied,
                        event_args,
                    );
                }
            }
        }

        let mut substituted = Vec::new();
        if has_placeholder(&args) {
            let Some(store) = ctx.secrets() else {
                let r = ToolResult::error(
                    ErrorKind::InvalidArguments,
                    "The arguments contain a `<secret>` placeholder, but no secrets are configured for this run.",
                );
                return (r, CallPhase::Failed, event_args);
            };
            match store.substitute(&mut args, ctx.page_url()) {
                Ok(used) => substituted = used,
                Err(e) => {
                    return (
                        ToolResult::error(ErrorKind::InvalidArguments, e.message),
                        CallPhase::Failed,
                        event_args,
                    );
                }
            }
        }

        self.emit(
            name,
            call_id,
            ctx,
            CallPhase::Running,
            &event_args,
            None,
            None,
        );
        let mut result = self.call_tool(tool, args, ctx).await;
        if !model_notes.is_empty() {
            let tool_notes = std::mem::take(&mut result.notes);
            for n in model_notes {
                result.add_note(n);
            }
            result.notes.extend(tool_notes);
        }

        if let Some(store) = ctx.secrets().filter(|s| !s.is_empty()) {
            mask_result(&mut result, &store.masker(&substituted));
        }
        for (k, v) in notes {
            result.metadata.insert(k, v);
        }
        let phase = match result.error.as_ref().map(|e| e.kind) {
            None => CallPhase::Succeeded,
            Some(ErrorKind::Timeout) => CallPhase::TimedOut,
            Some(ErrorKind::Denied) => CallPhase::Denied,
            Some(_) => CallPhase::Failed,
        };
        (result, phase, event_args)
    }

    /// Runs the handler with panic containment, timeout and cancellation.
    async fn call_tool(
        &self,
        tool: &Tool,
        args: Map<String, Value>,
        ctx: &ToolContext,
    ) -> ToolResult {
        let name = tool.name();
        let timeout = tool
            .spec()
            .timeout
            .or_else(|| ctx.timeout())
            .unwrap_or(self.default_timeout);
        let start = std::panic::catch_unwind(AssertUnwindSafe(|| tool.start(args, ctx.clone())));
        let future = match start {
            Ok(f) => AssertUnwindSafe(f).catch_unwind(),
            Err(payload) => return panicked(name, payload.as_ref(), ctx),
        };
        let cancel = ctx.cancellation_token();
        tokio::select! {
            biased;
            outcome = tokio::time::timeout(timeout, future) => match outcome {
                Ok(Ok(result)) => result,
                Ok(Err(payload)) => panicked(name, payload.as_ref(), ctx),
                Err(_) => timed_out(name, timeout),
            },
            () = cancel.cancelled() => ToolResult::error(
                ErrorKind::Cancelled,
                format!("The call to `{name}` was cancelled before it finished."),
            ),
        }
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "one flat event, built in one place"
    )]
    fn emit(
        &self,
        tool: &str,
        call_id: u64,
        ctx: &ToolContext,
        phase: CallPhase,
        arguments: &Map<String, Value>,
        duration: Option<Duration>,
        error: Option<&crate::result::ToolError>,
    ) {
        if self.observers.is_empty() {
            return;
        }
        let event = ToolEvent {
            tool,
            call_id,
            trace_id: ctx.trace_id(),
            phase,
            arguments,
            duration,
            error,
        };
        for o in &self.observers {
            o.on_event(&event);
        }
    }

    /// Executes several calls for one turn, returning results in call order.
    ///
    /// Runs of consecutive calls whose tools are both `read_only` and
    /// `concurrency_safe` run concurrently; every other call runs alone, in
    /// order, after the calls before it finished (a write never overlaps a read
    /// that the model placed before or after it).
    pub async fn execute_batch<N, A>(
        &self,
        calls: Vec<(N, A)>,
        ctx: &ToolContext,
    ) -> Vec<ToolResult>
    where
        N: AsRef<str>,
        A: Into<ToolArgs>,
    {
        let parallel_ok = |name: &str| {
            self.get(name)
                .is_some_and(|t| t.spec().flags.read_only && t.spec().flags.concurrency_safe)
        };
        let mut results = Vec::with_capacity(calls.len());
        let mut group: Vec<(N, ToolArgs)> = Vec::new();
        for (name, args) in calls {
            if parallel_ok(name.as_ref()) {
                group.push((name, args.into()));
                continue;
            }
            if !group.is_empty() {
                let batch = std::mem::take(&mut group);
                results.extend(
                    join_all(
                        batch
                            .iter()
                            .map(|(n, a)| self.execute(n.as_ref(), a.clone(), ctx)),
                    )
                    .await,
                );
            }
            results.push(self.execute(name.as_ref(), args, ctx).await);
        }
        if !group.is_empty() {
            results.extend(
                join_all(
                    group
                        .iter()
                        .map(|(n, a)| self.execute(n.as_ref(), a.clone(), ctx)),
                )
                .await,
            );
        }
        results
    }
}

enum Confirmation {
    Approved,
    Edited(Map<String, Value>, Vec<String>),
    Denied(String),
}

async fn confirm(tool: &Tool, args: &Map<String, Value>, ctx: &ToolContext) -> Confirmation {
    let spec = tool.spec();
    let name = spec.name.as_str();
    let Some(approver) = ctx.approver() else {
        return Confirmation::Denied(format!(
            "The tool `{name}` needs confirmation, and no approver is configured, so the call was not made."
        ));
    };
    let request = ApprovalRequest {
        tool: spec.name.clone(),
        kind: spec.kind,
        display: spec.display.clone(),
        arguments: args.clone(),
        editable_params: spec.editable_params.clone(),
        trace_id: ctx.trace_id().map(str::to_owned),
    };
    let Ok(decision) = AssertUnwindSafe(approver.approve(request))
        .catch_unwind()
        .await
    else {
        return Confirmation::Denied(format!(
            "The approval of `{name}` failed, so the call was not made."
        ));
    };
    match decision {
        ApprovalDecision::Approve => Confirmation::Approved,
        ApprovalDecision::Deny(reason) => {
            Confirmation::Denied(format!("The user denied the call to `{name}`: {reason}"))
        }
        ApprovalDecision::ApproveWithEdits(edited) => {
            match check_edits(args, &edited, &spec.editable_params) {
                Ok(()) => {
                    let mut changed: Vec<String> = edited
                        .iter()
                        .filter(|(k, v)| args.get(*k) != Some(*v))
                        .map(|(k, _)| k.clone())
                        .collect();
                    changed.extend(args.keys().filter(|k| !edited.contains_key(*k)).cloned());
                    Confirmation::Edited(edited, changed)
                }
                Err(param) => Confirmation::Denied(format!(
                    "The approval of `{name}` changed `{param}`, which is not editable, so the call was not made."
                )),
            }
        }
    }
}

/// The model's note for an approver's edits: each changed parameter with its
/// new value (cut to 60 characters), or "removed".
fn edit_note(changed: &[String], edited: &Map<String, Value>) -> String {
    let parts: Vec<String> = changed
        .iter()
        .map(|k| match edited.get(k) {
            Some(v) => format!("`{}` set to {}", cut(k, 60), cut(&v.to_string(), 60)),
            None => format!("`{}` removed", cut(k, 60)),
        })
        .collect();
    format!(
        "the person approving this call edited it first ({}); it ran with the edited arguments",
        parts.join(", ")
    )
}

fn has_placeholder(args: &Map<String, Value>) -> bool {
    fn walk(v: &Value) -> bool {
        match v {
            Value::String(s) => crate::governance::secrets::contains_placeholder(s),
            Value::Array(items) => items.iter().any(walk),
            Value::Object(m) => m.values().any(walk),
            _ => false,
        }
    }
    args.values().any(walk)
}

fn mask_result(result: &mut ToolResult, masker: &Masker) {
    masker.mask_string(&mut result.output);
    if let Some(t) = &mut result.title {
        masker.mask_string(t);
    }
    if let Some(m) = &mut result.long_term_memory {
        masker.mask_string(m);
    }
    if let Some(e) = &mut result.error {
        masker.mask_string(&mut e.message);
    }
    for n in &mut result.notes {
        masker.mask_string(n);
    }
    for a in &mut result.attachments {
        masker.mask_string(&mut a.name);
        if let Some(p) = &mut a.path {
            masker.mask_string(p);
        }
    }
    let mut meta = Value::Object(std::mem::take(&mut result.metadata));
    masker.mask_value(&mut meta);
    if let Value::Object(m) = meta {
        result.metadata = m;
    }
}

/// Cuts the output to the registry's budget. A result that already names the
/// file holding its full output (`metadata["output_path"]`, e.g. from a tool
/// that truncated itself) keeps that path: the marker points there and no
/// second, partial spill file is written. New spill files go to the folder of
/// `trace_id`. The result is already masked (secret values are placeholders),
/// so spill files never hold a secret value.
fn apply_budget(result: &mut ToolResult, budget: &Truncation, trace_id: Option<&str>) {
    if truncate::fits(&result.output, budget)
        && result
            .error
            .as_ref()
            .is_none_or(|e| truncate::fits(&e.message, budget))
    {
        return;
    }
    let budget = &budget.clone().for_trace(trace_id);
    if let Some(error) = result.error.as_mut()
        && !truncate::fits(&error.message, budget)
    {
        let cut = truncate::truncate(&error.message, budget);
        error.message = cut.text;
        result
            .metadata
            .insert("error_truncated".to_owned(), Value::Bool(true));
    }
    if truncate::fits(&result.output, budget) {
        return;
    }
    let existing = result
        .metadata
        .get("output_path")
        .and_then(Value::as_str)
        .map(std::path::PathBuf::from);
    let cut = match existing {
        Some(path) => truncate::truncate_saved(&result.output, budget, &path),
        None => truncate::truncate(&result.output, budget),
    };
    if !cut.truncated {
        return;
    }
    result.output = cut.text;
    result
        .metadata
        .insert("truncated".to_owned(), Value::Bool(true));
    if let Some(path) = cut.spill_path {
        result.metadata.insert(
            "output_path".to_owned(),
            Value::String(path.display().to_string()),
        );
    }
}

/// Formats a JSON map for tracing fields only when the span is enabled.
struct JsonDisplay<'a>(&'a Map<String, Value>);

impl std::fmt::Display for JsonDisplay<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self.0).map_err(|_| std::fmt::Error)?;
        f.write_str(&quote(&text))
    }
}

fn unknown_tool(registry: &ToolRegistry, name: &str) -> ToolResult {
    let suggestions = registry.suggest(name);
    let mut message = format!("Unknown tool `{}`.", quote(name));
    if suggestions.is_empty() {
        let names = registry.names();
        if names.len() <= 30 {
            message.push_str(&format!(" Available tools: {}.", names.join(", ")));
        }
    } else {
        message.push_str(&format!(" Did you mean {}?", join_or(&suggestions)));
    }
    ToolResult::error(ErrorKind::UnknownTool, message)
}

fn join_or(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn panicked(tool: &str, payload: &(dyn Any + Send), ctx: &ToolContext) -> ToolResult {
    let mut detail = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<non-string panic payload>".to_owned());
    if let Some(store) = ctx.secrets().filter(|s| !s.is_empty()) {
        store.masker(&[]).mask_string(&mut detail);
    }
    tracing::error!(target: "tool_core", tool, panic = %detail, "tool panicked; the panic was contained");
    ToolResult::error(
        ErrorKind::Panicked,
        format!(
            "The tool `{tool}` crashed with an internal error and returned no result. Do not retry the same call; try another approach."
        ),
    )
}

fn timed_out(tool: &str, timeout: Duration) -> ToolResult {
    ToolResult::error(
        ErrorKind::Timeout,
        format!(
            "The call to `{tool}` did not finish within {} and was stopped. Try a smaller request.",
            human_duration(timeout)
        ),
    )
}

fn human_duration(d: Duration) -> String {
    let micros = d.as_micros();
    if micros % 1_000_000 == 0 {
        format!("{} s", micros / 1_000_000)
    } else if micros % 1000 == 0 {
        format!("{} ms", micros / 1000)
    } else {
        format!("{micros} µs")
    }
}

/// The URL without user name and password, for messages.
fn without_userinfo(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Ok(_) => url.to_owned(),
        Err(_) => "(an unparsable URL)".to_owned(),
    }
}

/// Cuts `text` to [`QUOTE_LIMIT`] characters (never inside a character), marking the cut.
pub(crate) fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
    }
}

/// Cuts `text` to `limit` characters (never inside a character), ending a cut text with `…`.
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// "a string", "an integer", … for messages.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What JSON a Rust type expects, for messages ("an integer", "an array of …").
fn expected_json(rust_type: &str) -> String {
    let t: String = rust_type.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = t
        .strip_prefix("Option<")
        .and_then(|s| s.strip_suffix('>'))
        .unwrap_or(&t);
    let head = inner.split('<').next().unwrap_or(inner);
    let head = head.rsplit("::").next().unwrap_or(head);
    let kind = match head {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "an integer",
        "NonZeroU8" | "NonZeroU16" | "NonZeroU32" | "NonZeroU64" | "NonZeroUsize" => {
            "a positive integer"
        }
        "f32" | "f64" => "a number",
        "bool" => "a boolean",
        "String" | "str" | "&str" | "char" | "PathBuf" | "Url" => "a string",
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => "an array",
        "HashMap" | "BTreeMap" | "Map" => "an object",
        _ => return format!("a value of type `{rust_type}`"),
    };
    format!("{kind} (`{rust_type}`)")
}

/// The error for a parameter whose JSON did not deserialise.
pub(crate) fn bad_parameter(
    tool: &str,
    param: &str,
    rust_type: &str,
    sent: &Value,
    error: &str,
) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Invalid value for parameter `{param}` of `{tool}`: expected {}, but received {} {}. ({})",
            expected_json(rust_type),
            json_kind(sent),
            quote(&sent.to_string()),
            quote(error)
        ),
    )
}

/// The error for a missing required parameter.
pub(crate) fn missing_parameter(tool: &str, param: &str, rust_type: &str) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Missing required parameter `{param}` of `{tool}`: expected {}.",
            expected_json(rust_type)
        ),
    )
}

/// The error for parameters the tool does not have.
pub(crate) fn unknown_parameters(tool: &str, unknown: &[&str], valid: &[&str]) -> ToolResult {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{}`", quote(n)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (noun, verb) = if unknown.len() == 1 {
        ("parameter", "is")
    } else {
        ("parameters", "are")
    };
    let valid_text = if valid.is_empty() {
        format!("`{tool}` takes no parameters.")
    } else {
        format!("Valid parameters: {}.", list(valid))
    };
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Unknown {noun} {} {verb} not accepted by `{tool}`. {valid_text}",
            list(unknown)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_cuts_on_char_boundary() {
        let s = "é".repeat(300);
        let q = quote(&s);
        assert!(q.starts_with(&"é".repeat(200)));
        assert!(q.ends_with("(200 more bytes)"));
    }

    #[test]
    fn expected_json_names_kinds() {
        assert_eq!(expected_json("u32"), "an integer (`u32`)");
        assert_eq!(
            expected_json("Option<Vec<String>>"),
            "an array (`Option<Vec<String>>`)"
        );
        assert_eq!(expected_json("MyType"), "a value of type `MyType`");
    }

    /// The output budget's spill file holds the masked text, in the trace's folder.
    #[tokio::test]
    async fn output_budget_spill_is_masked_and_per_trace() {
        use crate::{SecretStore, Tool, ToolSpec};
        let parent =
            std::env::temp_dir().join(format!("tool-core-pipe-spill-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let spec = ToolSpec::new(
            "echo_lines",
            "Repeat a line.",
            serde_json::json!({"type": "object", "properties": {"line": {"type": "string"}, "error": {"type": "boolean"}}, "required": ["line"]}),
        );
        let tool = Tool::new(spec, |args: Map<String, Value>, _ctx| async move {
            let line = args["line"].as_str().unwrap_or_default().to_owned();
            // The value in the head, the omitted middle and the tail, raw and JSON-escaped.
            let text: String = (0..500)
                .map(|i| {
                    format!(
                        "{i} {line} {}\n",
                        serde_json::to_string(&line).unwrap_or_default()
                    )
                })
                .collect();
            if args.get("error").and_then(Value::as_bool) == Some(true) {
                ToolResult::error(ErrorKind::Failed, text)
            } else {
                ToolResult::ok(text)
            }
        })
        .unwrap();
        let mut registry = crate::ToolRegistry::new()
            .with_truncation(Some(Truncation::new().max_lines(40).spill_dir(&parent)));
        registry.register(tool).unwrap();
        let secrets = [
            ("api_key", "sk-live-0123456789"),
            ("quoted", "pa\"ss"),
            ("umlaut", "pässwörd"),
            ("spaced", "two words here"),
        ];
        let mut store = SecretStore::new();
        for (k, v) in secrets {
            store = store.with_secret(k, v).unwrap();
        }
        for (i, (key, value)) in secrets.iter().enumerate() {
            let trace = format!("pipe-{i}");
            let ctx = ToolContext::new()
                .with_trace_id(trace.clone())
                .with_secrets(store.clone());
            let args =
                serde_json::json!({"line": format!("<secret>{key}</secret>"), "error": i == 3});
            let res = registry.execute("echo_lines", args, &ctx).await;
            let shown = res.error.as_ref().map_or(&res.output, |e| &e.message);
            assert!(!shown.contains(value), "{shown}");
            let spill = if i == 3 {
                // An error message over the budget is cut too; its marker names the file.
                let marker = shown.lines().find(|l| l.contains("saved to ")).unwrap();
                let at = marker.find(&*parent.to_string_lossy()).unwrap();
                std::path::PathBuf::from(marker[at..].split(" (read").next().unwrap())
            } else {
                assert_eq!(res.metadata["truncated"], true);
                std::path::PathBuf::from(res.metadata["output_path"].as_str().unwrap())
            };
            assert_eq!(spill.parent().unwrap(), parent.join(&trace));
            let saved = std::fs::read_to_string(&spill).unwrap();
            assert_eq!(saved.lines().count(), 500);
            assert!(!saved.contains(value), "{value} in {}", spill.display());
            let placeholder = format!("<secret>{key}</secret>");
            assert_eq!(saved.matches(&placeholder).count(), 1000, "{saved:.200}");
        }
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
