//! The execution pipeline: one call from the model's tool name and arguments
//! to the [`ToolResult`] the model reads, as a straight line of named stages
//! ([`stages`]), each a function over one private call state:
//!
//! lookup → arguments → URL scope → strip hidden → resolve context →
//! confirm → substitute secrets → invoke → mask → budget → record.
//!
//! A stage that refuses the call returns the error result; the stages after
//! it up to `mask` are skipped, `budget` and `record` always run. A new
//! governance stage is one function in `stages.rs` and one line in
//! [`ToolRegistry::run`].

use futures_util::future::join_all;
use tracing::Instrument;

use crate::args::ToolArgs;
use crate::format::ToolCall;
use crate::registry::ToolRegistry;
use crate::result::ToolResult;
use crate::tool::context::ToolContext;

mod budget;
pub(crate) mod invoke;
mod stages;

use stages::{Call, unknown_tool};

/// Whether the arguments get strict mode's "`null` means absent" (calls read from a provider).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Normalize {
    Yes,
    No,
}

impl ToolRegistry {
    /// Executes one tool call end to end and returns its result. Never panics
    /// on any input and never returns an `Err`: every failure is a
    /// [`ToolResult`] with an [`ErrorKind`](crate::ErrorKind) and a message the model can act on.
    ///
    /// The pipeline, in order:
    /// 1. lookup: an unknown tool is `unknown_tool`, with up to three "did you mean" names;
    /// 2. arguments: parsed from text if needed, with the documented
    ///    [repairs](crate::args::repair) recorded in `metadata["argument_repairs"]`
    ///    and each told to the model as a [note](ToolResult::notes);
    ///    arguments that are not an object are `invalid_arguments`;
    /// 3. middleware: the registry's [`ToolLayer`](crate::layer::ToolLayer)s, in
    ///    order, around steps 4 to 10; a layer may rewrite the arguments
    ///    (they go through steps 4 to 10 again, and the model reads a note),
    ///    refuse the call, retry it, or change its result;
    /// 4. URL scoping: a tool with `url_patterns` whose patterns do not match
    ///    the context's `page_url` is `denied` ("not available on this page");
    /// 5. hidden parameters: what the model sent for them is dropped, and
    ///    named in `metadata["ignored_hidden_params"]`;
    /// 6. context: a `#[tool]` fn's hidden parameters and `inject_params`
    ///    values are looked up in the context; a required hidden parameter
    ///    without a value is `missing_context` here, before anyone is asked;
    /// 7. confirmation: a tool with `requires_confirmation`, or of a kind the
    ///    context gates ([`ToolContext::with_confirmed_kinds`](crate::ToolContext::with_confirmed_kinds)),
    ///    has its arguments decoded first (a call that can never run fails
    ///    unasked), then goes through the
    ///    [approval gate](crate::governance::confirm) (no approver configured:
    ///    `denied`), with the values of step 6 in
    ///    [`ApprovalRequest::injected`](crate::ApprovalRequest::injected); edits the approver made are listed in
    ///    `metadata["approved_with_edits"]` and told to the model in one note
    ///    naming each changed parameter and its new value;
    /// 8. secrets: `<secret>key</secret>` placeholders are replaced from the
    ///    context's [`SecretStore`](crate::SecretStore); an unknown key or one
    ///    not allowed on this page is `invalid_arguments`;
    /// 9. the call: wrong types, missing or unknown parameters are
    ///    `invalid_arguments` naming the parameter, the expected type (from its
    ///    JSON Schema) and (cut to 200 characters) what was sent (a `#[tool]`
    ///    fn's or [`Tool::typed`](crate::Tool::typed)'s arguments are decoded,
    ///    nested values included; a [`Tool::new`](crate::Tool::new) tool's are
    ///    checked against its schema at the top level: `required`,
    ///    `additionalProperties: false`, each parameter's JSON type,
    ///    `minimum`/`maximum`); a panic is
    ///    `panicked` naming the tool (the payload goes to `tracing`, target
    ///    `tool_core`); the timeout (the tool's, else the context's, else the
    ///    registry's, 120 s by default) is `timeout`; the context's
    ///    cancellation token firing is `cancelled`;
    /// 10. secret values in the result are masked back to placeholders;
    /// 11. after the middleware, on the result it returns: output over the
    ///     registry's budget keeps head and tail, the full
    ///     (masked) text is spilled to a file in the folder of the context's
    ///     trace id (`metadata["truncated"]`, `metadata["output_path"]`; see
    ///     [`truncate`](crate::truncate#where-spill-files-go));
    /// 12. statistics, lifecycle events and the `tool_call` tracing span
    ///     (OpenTelemetry's GenAI `execute_tool` span; arguments and result
    ///     only with [content capture](crate::telemetry#content-capture),
    ///     masked: see [`telemetry`](crate::telemetry)).
    ///
    /// Must run inside a Tokio runtime with the time driver enabled (the
    /// default for `#[tokio::main]`); sync tools run on its blocking pool.
    pub async fn execute(
        &self,
        name: &str,
        args: impl Into<ToolArgs>,
        ctx: &ToolContext,
    ) -> ToolResult {
        self.run(name, args.into(), ctx, Normalize::No, None).await
    }

    /// Executes a call read from a provider ([`ToolCall::parse`]): as
    /// [`execute`](Self::execute), with
    /// [`normalize_arguments`](crate::args::normalize_arguments) applied to the
    /// arguments (an explicit `null` for an optional field means absent, as
    /// strict renderings make models send). Never panics, never fails:
    /// problems are error results, as with `execute`.
    pub async fn execute_call(&self, call: &ToolCall, ctx: &ToolContext) -> ToolResult {
        self.run(
            &call.name,
            call.arguments.clone(),
            ctx,
            Normalize::Yes,
            Some(&call.id),
        )
        .await
    }

    /// The stages, in order (the module docs and [`execute`](Self::execute)
    /// say what each does), in the call's `tool_call` span; `call_id` is the
    /// model's id for the call, when it came with one.
    async fn run(
        &self,
        name: &str,
        args: ToolArgs,
        ctx: &ToolContext,
        normalize: Normalize,
        call_id: Option<&str>,
    ) -> ToolResult {
        let span = stages::span(name, ctx, call_id);
        let result = async {
            let Some(entry) = self.entry(name) else {
                return unknown_tool(self, name, ctx);
            };
            let mut call = Call::new(self, entry, ctx);
            span.record("call_id", call.id());
            let result = match call.arguments(args, normalize == Normalize::Yes) {
                Err(refused) => refused,
                Ok(()) => {
                    if ctx.captures_content()
                        && !span.is_disabled()
                        && let Some(text) = crate::telemetry::captured(ctx, &call.arguments_json())
                    {
                        span.record("gen_ai.tool.call.arguments", text.as_str());
                    }
                    if self.layers.is_empty() {
                        call.governed().await
                    } else {
                        call.layered(&self.layers).await
                    }
                }
            };
            call.finish(result)
        }
        .instrument(span.clone())
        .await;
        stages::record_outcome(&span, &result, ctx);
        result
    }

    /// Lookup and the call alone (the invoke stage of [`execute`](Self::execute)),
    /// for the `governance` benchmark to measure what the other stages add.
    /// Only with the `bench-internals` feature: it bypasses every governance stage.
    #[cfg(feature = "bench-internals")]
    #[doc(hidden)]
    pub async fn execute_ungoverned(
        &self,
        name: &str,
        args: serde_json::Map<String, serde_json::Value>,
        ctx: &ToolContext,
    ) -> ToolResult {
        match self.entry(name) {
            Some(entry) => invoke::call_tool(self, &entry.tool, args, ctx).await,
            None => unknown_tool(self, name, ctx),
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
        let calls = calls.into_iter().map(|(n, a)| (n, a.into(), None));
        self.run_grouped(calls, ctx, Normalize::No).await
    }

    /// Executes one turn's calls read from a provider ([`ToolCall::parse`]),
    /// returning results in call order: the grouping of
    /// [`execute_batch`](Self::execute_batch) (consecutive `read_only` +
    /// `concurrency_safe` calls together, every other call alone and in
    /// order) with each call handled as [`execute_call`](Self::execute_call)
    /// handles it (text arguments parsed and repaired, each repair told to
    /// the model as a note, then strict mode's "`null` means absent"). What an
    /// agent loop runs with the calls of one answer. Never panics, never
    /// fails: problems are error results, one per call.
    pub async fn execute_calls(&self, calls: &[ToolCall], ctx: &ToolContext) -> Vec<ToolResult> {
        let calls = calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.clone(), Some(c.id.as_str())));
        self.run_grouped(calls, ctx, Normalize::Yes).await
    }

    /// The batch grouping of [`execute_batch`](Self::execute_batch) and
    /// [`execute_calls`](Self::execute_calls).
    async fn run_grouped<'c, N: AsRef<str>>(
        &self,
        calls: impl ExactSizeIterator<Item = (N, ToolArgs, Option<&'c str>)>,
        ctx: &ToolContext,
        normalize: Normalize,
    ) -> Vec<ToolResult> {
        let parallel_ok = |name: &str| {
            self.get(name)
                .is_some_and(|t| t.spec().flags.read_only && t.spec().flags.concurrency_safe)
        };
        // Runs the waiting group of parallel calls together, leaving it empty.
        let flush =
            |group: &mut Vec<(N, ToolArgs, Option<&'c str>)>| {
                let batch = std::mem::take(group);
                join_all(batch.into_iter().map(|(n, a, id)| async move {
                    self.run(n.as_ref(), a, ctx, normalize, id).await
                }))
            };
        let mut results = Vec::with_capacity(calls.len());
        let mut group: Vec<(N, ToolArgs, Option<&'c str>)> = Vec::new();
        for (name, args, id) in calls {
            if parallel_ok(name.as_ref()) {
                group.push((name, args, id));
                continue;
            }
            results.extend(flush(&mut group).await);
            results.push(self.run(name.as_ref(), args, ctx, normalize, id).await);
        }
        results.extend(flush(&mut group).await);
        results
    }
}
