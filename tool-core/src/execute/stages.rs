//! The stages of one call, in pipeline order, each a method of [`Call`]:
//! the state one call carries from stage to stage.
#![allow(
    clippy::result_large_err,
    reason = "a stage's Err is the call's final ToolResult, returned as is on a rare path"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::{budget, invoke};
use crate::args::decode::resolve_injected;
use crate::args::messages::{join_or, quote};
use crate::args::{ArgumentRepair, ToolArgs, normalize_arguments, repair};
use crate::governance::approval::{ApprovalDefault, ApprovalRequest, scrub_shown};
use crate::governance::confirm::{self, Confirmation};
use crate::governance::secrets;
use crate::governance::stats::{CallPhase, ToolEvent};
use crate::layer::{Governed, LayerCall, LayerClock, LayerFuture, Next, ToolLayer};
use crate::read_cache::{Plan, ReadCache};
use crate::registry::history::Rendering;
use crate::registry::{Entry, ToolRegistry};
use crate::result::meta;
use crate::result::{ErrorKind, ToolError, ToolResult};
use crate::telemetry;
use crate::tool::context::ToolContext;
use tool_rules::text::{Clip, clip};

/// One call on its way through the pipeline.
pub(super) struct Call<'a> {
    registry: &'a ToolRegistry,
    entry: &'a Entry,
    ctx: &'a ToolContext,
    /// The registry's number for this call (events, the tracing span).
    id: u64,
    started: Instant,
    /// The arguments: as repaired; after `confirm`, as approved; after
    /// `substitute_secrets`, with the secret values in.
    args: Map<String, Value>,
    /// The model's arguments for events (placeholders, never secret values);
    /// empty when the registry has no observers.
    event_args: Map<String, Value>,
    repairs: Vec<ArgumentRepair>,
    /// The pipeline's notes for the model (an approver's edits), shown before the tool's own.
    notes: Vec<String>,
    /// The pipeline's metadata for the result (`ignored_hidden_params`, `approved_with_edits`).
    metadata: Map<String, Value>,
    /// The secret values substituted, by key (TOTP codes are masked from these).
    substituted: Vec<(String, String)>,
    /// What the application supplies, for the confirmation (`resolve_context`).
    injected: Map<String, Value>,
}

impl<'a> Call<'a> {
    /// The state of a call to the tool found by lookup.
    pub(super) fn new(registry: &'a ToolRegistry, entry: &'a Entry, ctx: &'a ToolContext) -> Self {
        Self {
            registry,
            entry,
            ctx,
            id: registry
                .call_ids
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            started: Instant::now(),
            args: Map::new(),
            event_args: Map::new(),
            repairs: Vec::new(),
            notes: Vec::new(),
            metadata: Map::new(),
            substituted: Vec::new(),
            injected: Map::new(),
        }
    }

    fn name(&self) -> &'a str {
        self.entry.tool.name()
    }

    /// Arguments: text parsed, the documented repairs applied and recorded,
    /// an object required; for provider calls, `null` for an optional field
    /// read as absent.
    pub(super) fn arguments(&mut self, args: ToolArgs, normalize: bool) -> Result<(), ToolResult> {
        let tool = &self.entry.tool;
        let types = &tool.derived().param_types;
        let mut map = repair::prepare(self.name(), args, types, &mut self.repairs)
            .map_err(|message| ToolResult::error(ErrorKind::InvalidArguments, message))?;
        if normalize {
            normalize_arguments(&tool.spec().parameters, &mut map);
        }
        if !self.registry.observers.is_empty() {
            self.event_args = map.clone();
        }
        self.args = map;
        Ok(())
    }

    /// The registry's number for this call (the span's `call_id`).
    pub(super) fn id(&self) -> u64 {
        self.id
    }

    /// The arguments as the model sent them (repaired, placeholders in), as
    /// JSON text for the span's `gen_ai.tool.call.arguments`.
    pub(super) fn arguments_json(&self) -> String {
        serde_json::to_string(&self.args).unwrap_or_default()
    }

    /// The stages between arguments and budget; the first refusal ends them.
    pub(super) async fn governed(&mut self) -> ToolResult {
        self.emit(CallPhase::Pending, None, None);
        let stages = async {
            // A call cancelled before its governed stages start (by the
            // host, or while a layer held it) is not run.
            if self.ctx.is_cancelled() {
                return Err(invoke::cancelled(self.name()));
            }
            self.url_scope()?;
            self.strip_hidden();
            self.resolve_context()?;
            self.check().await?;
            self.confirm().await?;
            self.substitute_secrets()?;
            let result = self.invoke_cached().await;
            Ok(self.mask(result))
        };
        match stages.await {
            Ok(result) => result,
            // A refusal still tells what the pipeline did before it (a
            // layer's rewrite, hidden parameters dropped).
            Err(mut refused) => {
                prepend_notes(&mut refused, std::mem::take(&mut self.notes));
                refused.metadata.append(&mut self.metadata);
                refused
            }
        }
    }

    /// The governed stages inside the registry's middleware layers: the
    /// first layer gets the call with the arguments as they stand.
    ///
    /// The call's timeout and cancellation token bound the layers too: the
    /// time spent in layers (outside the governed stages, which have their
    /// own bounds) over the call's timeout ends the call as `timeout`, the
    /// token firing at any point ends it as `cancelled`; the same results a
    /// tool that overruns gets. The outermost layer's result is masked
    /// (secret values back to placeholders), as the tool's own is.
    pub(super) async fn layered(&mut self, layers: &[Arc<dyn ToolLayer>]) -> ToolResult {
        let (spec, ctx, name) = (self.entry.tool.spec(), self.ctx, self.name());
        let timeout = invoke::timeout_for(self.registry, &self.entry.tool, ctx);
        let clock = LayerClock::new();
        let first = LayerCall::new(name, std::mem::take(&mut self.args));
        let cancel = ctx.cancellation_token();
        let mut result = {
            let mut next = Next::new(layers, self, spec, ctx, &clock);
            let run = next.run(first);
            tokio::pin!(run);
            loop {
                // The layers' time left. While the governed stages run the clock
                // stands still: wait for them to end instead.
                let governing = clock.governing();
                let left = timeout.saturating_sub(clock.in_layers());
                let waited = async {
                    if governing {
                        clock.governed_ended().await;
                    } else {
                        tokio::time::sleep(left).await;
                    }
                };
                tokio::select! {
                    biased;
                    result = &mut run => break result,
                    () = cancel.cancelled() => break invoke::cancelled(name),
                    () = waited => {
                        if !clock.governing() && clock.in_layers() >= timeout {
                            break invoke::timed_out(name, timeout);
                        }
                    }
                }
            }
        };
        // What a layer added to the result (its own text, a value it kept
        // from the arguments) is masked as the tool's output is.
        if let Some(masker) = secrets::masker_for(self.ctx.secrets(), &self.substituted) {
            masker.mask_result(&mut result);
        }
        result
    }

    /// URL scope: a tool with `url_patterns` runs only on a page they match.
    fn url_scope(&self) -> Result<(), ToolResult> {
        if self.entry.tool.available_on(self.ctx.page_url()) {
            return Ok(());
        }
        let message = match self.ctx.page_url() {
            Some(u) => format!(
                "The tool `{}` is not available on this page (the page {}); use one of the tools offered here.",
                self.name(),
                quote(&without_userinfo(u))
            ),
            None => format!(
                "The tool `{}` runs only on the pages its URL patterns match, and this call has no page URL ({}); use one of the tools offered here.",
                self.name(),
                self.ctx.page_url_hint().unwrap_or_else(|| {
                    "the application gives it with `ToolContext::with_page_url`".to_owned()
                })
            ),
        };
        Err(ToolResult::error(ErrorKind::Denied, message))
    }

    /// Strip hidden: hidden parameters are the framework's to fill, so what
    /// the model sent for them is dropped (and named in the metadata) here,
    /// once, before anyone is asked to approve it.
    fn strip_hidden(&mut self) {
        let ignored: Vec<Value> = self
            .entry
            .tool
            .spec()
            .hidden_params
            .iter()
            .filter(|h| self.args.remove(h.as_str()).is_some())
            .map(|h| Value::String(h.clone()))
            .collect();
        // The model is told, not silently rewritten (third review, L3).
        for name in ignored.iter().filter_map(Value::as_str) {
            self.notes.push(format!(
                "`{name}` is set by the application; the value you sent was ignored"
            ));
        }
        if !ignored.is_empty() {
            self.metadata.insert(
                meta::IGNORED_HIDDEN_PARAMS.to_owned(),
                Value::Array(ignored),
            );
        }
    }

    /// Resolve context: the values the application supplies (hidden
    /// parameters, `inject_params`) are worked out by the call shim's rules
    /// before anyone is asked, so a call that would fail for a missing
    /// hidden value fails here, unasked, and the confirmation shows what the
    /// tool will run with. Tools built at run time have no such parameters.
    fn resolve_context(&mut self) -> Result<(), ToolResult> {
        let params = self.entry.tool.derived().static_params;
        if params.is_empty() {
            return Ok(());
        }
        let injected = resolve_injected(self.name(), params, &self.args, self.ctx)?;
        let spec = self.entry.tool.spec();
        if spec.flags.requires_confirmation || self.ctx.confirms_kind(spec.kind) {
            self.injected = injected
                .into_iter()
                .map(|(k, v)| {
                    let v = scrub_shown(&k, v);
                    (k, v)
                })
                .collect();
        }
        Ok(())
    }

    /// Check: before a person is asked to approve a call, its arguments are
    /// decoded as the call would decode them, so a call that can never run
    /// fails here with its argument error, unasked. Calls that ask nobody
    /// skip it (the invoke stage decodes them once).
    async fn check(&mut self) -> Result<(), ToolResult> {
        let spec = self.entry.tool.spec();
        if !spec.flags.requires_confirmation && !self.ctx.confirms_kind(spec.kind) {
            return Ok(());
        }
        self.entry.tool.check_arguments(&self.args, self.ctx).await
    }

    /// Confirm: a `requires_confirmation` tool asks the approval gate.
    async fn confirm(&mut self) -> Result<(), ToolResult> {
        let spec = self.entry.tool.spec();
        if !spec.flags.requires_confirmation && !self.ctx.confirms_kind(spec.kind) {
            return Ok(());
        }
        let request = ApprovalRequest {
            tool: spec.name.clone(),
            kind: spec.kind,
            display: spec.display.clone(),
            arguments: self.args.clone(),
            editable_params: spec.editable_params.clone(),
            trace_id: self.ctx.trace_id().map(str::to_owned),
            injected: std::mem::take(&mut self.injected),
            editable_schemas: editable_schemas(&spec.parameters, &spec.editable_params),
            defaults: defaults_left_out(&spec.parameters, &self.args),
        };
        let decision = confirm::ask(self.ctx, request).await;
        if let Confirmation::TimedOut { default, after } = decision {
            self.metadata
                .insert(meta::APPROVAL_TIMED_OUT.to_owned(), Value::Bool(true));
            if default == ApprovalDefault::Approve {
                self.notes.push(format!(
                    "nobody answered the approval within {}; the caller's default (approve) let the call run",
                    humantime::format_duration(after)
                ));
            }
        }
        if let Some(refused) = decision.refusal(&spec.name) {
            return Err(refused);
        }
        if let Confirmation::Edited { arguments, changed } = decision {
            // The person's edit is checked as the model's arguments were:
            // a refused edit is the person's, and the call does not run.
            if let Err(refused) = self.entry.tool.check_arguments(&arguments, self.ctx).await {
                return Err(invalid_edit(&spec.name, &changed, &arguments, &refused));
            }
            self.notes.push(edit_note(&changed, &arguments));
            self.metadata
                .insert(meta::APPROVED_WITH_EDITS.to_owned(), Value::from(changed));
            self.args = arguments;
        }
        Ok(())
    }

    /// Substitute secrets: `<secret>key</secret>` → the value, from the context's store.
    fn substitute_secrets(&mut self) -> Result<(), ToolResult> {
        if !secrets::has_placeholder(&self.args) {
            return Ok(());
        }
        let Some(store) = self.ctx.secrets() else {
            return Err(ToolResult::error(
                ErrorKind::InvalidArguments,
                "The arguments contain a `<secret>` placeholder, but no secrets are configured for this run.",
            ));
        };
        self.substituted = store
            .substitute(&mut self.args, self.ctx.page_url())
            .map_err(|e| ToolResult::error(ErrorKind::InvalidArguments, e.message))?;
        Ok(())
    }

    /// Invoke through the context's [`ReadCache`], when it has one: a
    /// cacheable call may be answered from it, a call that may write empties
    /// it before and after it runs (see [`crate::read_cache`]).
    async fn invoke_cached(&mut self) -> ToolResult {
        let Some(cache) = self.ctx.state::<ReadCache>() else {
            return self.invoke().await;
        };
        let flags = self.entry.tool.spec().flags;
        let plan = cache.plan(
            self.ctx,
            &flags,
            self.name(),
            &self.args,
            !self.substituted.is_empty(),
        );
        match plan {
            Plan::Bypass => self.invoke().await,
            Plan::Hit(result) => result,
            Plan::Invalidate => {
                let result = self.invoke().await;
                cache.invalidate();
                result
            }
            Plan::Miss {
                key,
                generation,
                fingerprint,
            } => {
                let result = self.invoke().await;
                cache.store(key, generation, fingerprint, &result);
                result
            }
        }
    }

    /// Invoke: the handler, with panic containment, timeout and cancellation.
    async fn invoke(&mut self) -> ToolResult {
        self.emit(CallPhase::Running, None, None);
        let args = std::mem::take(&mut self.args);
        invoke::call_tool(self.registry, &self.entry.tool, args, self.ctx).await
    }

    /// Mask: the pipeline's notes go in first, then every secret value in the
    /// result becomes its placeholder again; the pipeline's metadata is added.
    fn mask(&mut self, mut result: ToolResult) -> ToolResult {
        prepend_notes(&mut result, std::mem::take(&mut self.notes));
        if let Some(masker) = secrets::masker_for(self.ctx.secrets(), &self.substituted) {
            masker.mask_result(&mut result);
        }
        result.metadata.append(&mut self.metadata);
        result
    }

    /// Budget and record: the repairs noted, the output cut to the registry's
    /// budget (after masking: a spill file holds masked text), statistics
    /// and the final event.
    pub(super) fn finish(self, mut result: ToolResult) -> ToolResult {
        if !self.repairs.is_empty() {
            result.metadata.insert(
                meta::ARGUMENT_REPAIRS.to_owned(),
                serde_json::to_value(&self.repairs).unwrap_or(Value::Null),
            );
            let notes = self.repairs.iter().map(|r| r.note().to_owned()).collect();
            prepend_notes(&mut result, notes);
        }
        if let Some(limits) = &self.registry.truncation {
            budget::apply(&mut result, limits, self.ctx.trace_id());
        }
        let phase = match result.error.as_ref().map(|e| e.kind) {
            None => CallPhase::Succeeded,
            Some(ErrorKind::Timeout) => CallPhase::TimedOut,
            Some(ErrorKind::Denied) => CallPhase::Denied,
            Some(_) => CallPhase::Failed,
        };
        let duration = self.started.elapsed();
        self.entry.stats.record(phase, duration, self.repairs.len());
        self.emit(phase, Some(duration), result.error.as_ref());
        result
    }

    /// Tells the registry's observers where the call is.
    fn emit(&self, phase: CallPhase, duration: Option<Duration>, error: Option<&ToolError>) {
        if self.registry.observers.is_empty() {
            return;
        }
        let event = ToolEvent {
            tool: self.name(),
            call_id: self.id,
            trace_id: self.ctx.trace_id(),
            phase,
            arguments: &self.event_args,
            duration,
            error,
        };
        for o in &self.registry.observers {
            o.on_event(&event);
        }
    }
}

impl Governed for Call<'_> {
    /// One run of the governed stages with a layer's arguments; its
    /// rewrites become notes and `metadata["rewritten_by"]`.
    fn run_governed(&mut self, call: LayerCall) -> LayerFuture<'_> {
        let (args, notes, layers) = call.into_parts();
        self.args = args;
        self.notes.extend(notes);
        if !layers.is_empty() {
            self.metadata
                .insert(meta::REWRITTEN_BY.to_owned(), Value::from(layers));
        }
        Box::pin(self.governed())
    }
}

/// The `tool_call` span a call runs in, named and shaped per OpenTelemetry's
/// GenAI conventions for tool execution ([`telemetry`](crate::telemetry)
/// lists every field). Created before lookup, so unknown tools and refused
/// arguments are spans too; the outcome is recorded by [`record_outcome`].
pub(super) fn span(name: &str, ctx: &ToolContext, call_id: Option<&str>) -> tracing::Span {
    let name = telemetry::tool_name(name);
    tracing::info_span!(
        target: "tool_core",
        "tool_call",
        otel.name = %SpanName(&name),
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %name,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.id = call_id.map(|id| tracing::field::display(clip(id, Clip::bytes(telemetry::NAME_LIMIT)))),
        error.type = tracing::field::Empty,
        gen_ai.tool.call.arguments = tracing::field::Empty,
        gen_ai.tool.call.result = tracing::field::Empty,
        trace_id = ctx.trace_id().unwrap_or(""),
        call_id = tracing::field::Empty,
    )
}

/// Records a finished call's outcome on its span: `error.type` and the
/// error status for an error result; with content capture the result text
/// (and the error message as the status description), masked and cut.
pub(super) fn record_outcome(span: &tracing::Span, result: &ToolResult, ctx: &ToolContext) {
    if span.is_disabled() {
        return;
    }
    if let Some(e) = &result.error {
        span.record("error.type", e.kind.as_str());
        span.record("otel.status_code", "error");
        if let Some(message) = telemetry::captured(ctx, &e.message) {
            span.record("otel.status_description", message.as_str());
        }
    }
    if ctx.captures_content()
        && let Some(text) = telemetry::captured(ctx, &result.render(Rendering::First))
    {
        span.record("gen_ai.tool.call.result", text.as_str());
    }
}

/// `execute_tool {name}`, formatted only when the span is enabled.
struct SpanName<'a>(&'a str);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "execute_tool {}", self.0)
    }
}

/// Puts `notes` before the result's own (the pipeline's describe the input the tool's follow from).
fn prepend_notes(result: &mut ToolResult, notes: Vec<String>) {
    if notes.is_empty() {
        return;
    }
    let own = std::mem::take(&mut result.notes);
    for n in notes {
        result.add_note(n);
    }
    result.notes.extend(own);
}

/// Lookup failed: `unknown_tool`, with up to three "did you mean" names, or
/// the list of tools when there are at most 30.
/// Only the tools offered on the context's page are named (URL scope: the
/// others would be refused).
pub(super) fn unknown_tool(registry: &ToolRegistry, name: &str, ctx: &ToolContext) -> ToolResult {
    let page = ctx.page_url();
    let suggestions: Vec<String> = registry
        .suggest(name)
        .iter()
        .filter(|n| registry.get(n).is_some_and(|t| t.available_on(page)))
        .map(|s| format!("`{s}`"))
        .collect();
    let mut message = format!("Unknown tool `{}`.", quote(name));
    if suggestions.is_empty() {
        let names = registry.tool_names(page);
        if names.len() <= 30 {
            message.push_str(&format!(" Available tools: {}.", names.join(", ")));
        }
    } else {
        message.push_str(&format!(" Did you mean {}?", join_or(&suggestions)));
    }
    ToolResult::error(ErrorKind::UnknownTool, message)
}

/// The model's note for an approver's edits: each changed parameter with its
/// new value (cut to 60 characters), or "removed".
fn edit_note(changed: &[String], edited: &Map<String, Value>) -> String {
    format!(
        "the person approving this call edited it first ({}); it ran with the edited arguments",
        edit_list(changed, edited)
    )
}

/// Each changed parameter with its new value (cut to 60 characters), or
/// "removed", joined with commas.
fn edit_list(changed: &[String], edited: &Map<String, Value>) -> String {
    let parts: Vec<String> = changed
        .iter()
        .map(|k| match edited.get(k) {
            Some(v) => format!(
                "`{}` set to {}",
                clip(k, Clip::chars(60)),
                clip(&v.to_string(), Clip::chars(60))
            ),
            None => format!("`{}` removed", clip(k, Clip::chars(60))),
        })
        .collect();
    parts.join(", ")
}

/// The refusal of a call whose approver's edit the tool does not accept
/// (`refused`, the argument check's error): kind `denied`, saying the edit
/// was the person's, which values it set, and that nothing ran, so the
/// model does not take the error for its own arguments'.
fn invalid_edit(
    tool: &str,
    changed: &[String],
    edited: &Map<String, Value>,
    refused: &ToolResult,
) -> ToolResult {
    let why = refused
        .error
        .as_ref()
        .map_or("the tool refuses them", |e| e.message.as_str());
    let edits = edit_list(changed, edited);
    ToolResult::error(
        ErrorKind::Denied,
        format!(
            "The person approving `{tool}` edited the call ({edits}), and the edited arguments are not valid: {why} The call was not made. The arguments you sent were not changed; calling again asks the person again."
        ),
    )
}

/// The schema of each of `editable` in the tool's `parameters` schema, a
/// `$ref` into its `$defs` resolved (the reference's own keys, such as
/// `description` and `default`, kept over the definition's).
fn editable_schemas(parameters: &Value, editable: &[String]) -> Map<String, Value> {
    let properties = parameters.get("properties").and_then(Value::as_object);
    editable
        .iter()
        .filter_map(|name| {
            let schema = properties?.get(name)?;
            let resolved = schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|def| parameters.get("$defs")?.get(def))
                .and_then(Value::as_object)
                .map_or_else(
                    || schema.clone(),
                    |def| {
                        let mut merged = def.clone();
                        if let Some(own) = schema.as_object() {
                            for (k, v) in own.iter().filter(|(k, _)| k.as_str() != "$ref") {
                                merged.insert(k.clone(), v.clone());
                            }
                        }
                        Value::Object(merged)
                    },
                );
            Some((name.clone(), resolved))
        })
        .collect()
}

/// The parameters of the tool's `parameters` schema that `args` leaves out
/// and whose schema has a `default`: the values the call runs with.
fn defaults_left_out(parameters: &Value, args: &Map<String, Value>) -> Map<String, Value> {
    parameters
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(name, _)| !args.contains_key(name.as_str()))
        .filter_map(|(name, schema)| Some((name.clone(), schema.get("default")?.clone())))
        .collect()
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
