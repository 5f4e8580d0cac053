//! Middleware around a call: [`ToolLayer`]s that may rewrite a call's
//! arguments, refuse it, retry it, or replace or post-process its result.
//!
//! A layer sits *outside* governance: it receives the call after the
//! arguments stage (text parsed, repairs applied) and hands it on with
//! [`Next::run`], which runs the next layer, and after the last one the
//! governed stages of [`ToolRegistry::execute`](crate::ToolRegistry::execute)
//! (URL scope, hidden parameters, context, confirmation, secrets, the call
//! with its argument validation, masking). Arguments a layer rewrote are
//! therefore validated, scoped and approved again, exactly as if the model
//! had sent them, and the model is told of each rewrite in a note (as of an
//! argument repair), with the layer's name in `metadata["rewritten_by"]`.
//! The output budget and the statistics run after every layer.
//!
//! # A layer is host code, outside governance
//! A layer is trusted as the host's own code is: the governed stages guard
//! what reaches the *tool*, not what a layer does. A layer that returns a
//! result without calling [`Next::run`] (a cached answer, a refusal, a
//! stub) answers for the tool with no URL-scope check, no confirmation and
//! no approver asked, even for a `requires_confirmation` tool or one scoped
//! to other pages; a layer that reaches the outside world itself is not
//! sandboxed or approved either. Add only layers you would trust with the
//! tools' own powers. What a layer puts in the result is masked (secret
//! values back to `<secret>` placeholders) after the outermost layer, as
//! the tool's output is, so every output leaving
//! [`execute`](crate::ToolRegistry::execute) is masked.
//!
//! # Timeout and cancellation
//! The call's timeout (the tool's, else the context's
//! [`with_timeout`](crate::ToolContext::with_timeout), else the registry's)
//! and the context's cancellation token bound the layers as they bound the
//! tool: time spent in layers (outside the governed stages, which keep their
//! own bounds: each run of the tool its timeout, an approval the approval
//! timeout) beyond the timeout ends the call as `timeout`, and the token
//! firing at any point ends it as `cancelled`, with the messages a tool that
//! overruns gets. A call whose token fired before the governed stages start
//! is not run.
//!
//! Layers are attached to a registry ([`ToolRegistry::with_layer`](crate::ToolRegistry::with_layer))
//! or to a view ([`RegistryView::layer`](crate::RegistryView::layer)); a
//! view's layers run outside its registry's. Within each, the first layer
//! added is the outermost: it sees the call first and the result last.
//!
//! ```
//! use serde_json::{json, Map, Value};
//! use tool_core::layer::{LayerCall, LayerFuture, Next, ToolLayer};
//! use tool_core::{Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
//!
//! /// Caps `limit` at 50 and tells the model so.
//! struct CapLimit;
//! impl ToolLayer for CapLimit {
//!     fn name(&self) -> &str { "cap_limit" }
//!     fn call<'a>(&'a self, mut call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
//!         Box::pin(async move {
//!             if call.arguments().get("limit").and_then(Value::as_u64).is_some_and(|l| l > 50) {
//!                 let mut args = call.arguments().clone();
//!                 args.insert("limit".into(), json!(50));
//!                 call.rewrite(self.name(), args, "`limit` is at most 50 here");
//!             }
//!             next.run(call).await
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let spec = ToolSpec::new("list", "List items.", json!({"type": "object", "properties": {"limit": {"type": "integer"}}}));
//! let mut tools = ToolRegistry::new().with_layer(CapLimit);
//! tools.register(Tool::new(spec, |a: Map<String, Value>, _| async move {
//!     ToolResult::ok(format!("limit {}", a["limit"]))
//! }).unwrap()).unwrap();
//! let r = tools.execute("list", json!({"limit": 500}), &ToolContext::new()).await;
//! assert_eq!(r.output, "limit 50");
//! assert_eq!(r.metadata["rewritten_by"], json!(["cap_limit"]));
//! assert!(r.notes[0].contains("`limit` is at most 50 here"));
//! # });
//! ```
//!
//! # Why not `tower`
//! `tower-layer` and `tower-service` are in the tree (through axum and
//! rmcp), and a [`ToolLayer`] has their shape (a layer gets the rest of the
//! stack and calls it). Their traits do not fit here: a call borrows the
//! registry and the context (a `tower::Service` future is used as `'static`
//! once boxed, as a run-time list of layers needs), layers are added to a
//! registry or a view at run time rather than stacked into one generic type,
//! `poll_ready` has nothing to say about a tool call, and a retry would need
//! the inner service cloned per attempt. An own trait of one method keeps
//! layers object-safe, borrow-friendly and retryable ([`Next::run`] may be
//! called again, up to [`MAX_RUNS_PER_LAYER`] times).

mod retry;
mod views;

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde_json::{Map, Value};

pub use retry::Retry;
pub use views::{BRIEF_BYTES, BRIEF_LINES, ResultView, ResultViews};

use crate::result::{ErrorKind, ToolResult, meta};
use crate::tool::context::ToolContext;
use crate::tool::spec::ToolSpec;

/// How often one layer may run the rest of the stack for one call (its
/// first run and retries): 8. A further [`Next::run`] returns a `failed`
/// error result instead of running the call again, so a looping layer
/// cannot call a tool without end.
pub const MAX_RUNS_PER_LAYER: u32 = 8;

/// The future a [`ToolLayer`] returns: the call's result.
pub type LayerFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// Middleware around one call (see the [module docs](self)).
///
/// A layer calls [`next.run(call)`](Next::run) to go on (possibly with
/// rewritten arguments, possibly again to retry), or returns a result of its
/// own without calling it (a refusal: [`LayerCall::refuse`]). It may change
/// the result `run` returned before returning it.
pub trait ToolLayer: Send + Sync + 'static {
    /// The layer's name, as notes, metadata and errors show it (`snake_case`
    /// by convention, at most 64 characters shown).
    fn name(&self) -> &str;

    /// Handles one call.
    fn call<'a>(&'a self, call: LayerCall, next: Next<'a>) -> LayerFuture<'a>;
}

/// One call as a layer sees it: the tool's name and the arguments (after
/// the documented repairs; `<secret>` placeholders, never secret values).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerCall {
    tool: String,
    arguments: Map<String, Value>,
    rewrites: Vec<Rewrite>,
}

/// One rewrite of the arguments: the layer and the note for the model.
#[derive(Debug, Clone, PartialEq)]
struct Rewrite {
    layer: String,
    note: String,
}

impl LayerCall {
    pub(crate) fn new(tool: &str, arguments: Map<String, Value>) -> Self {
        Self {
            tool: tool.to_owned(),
            arguments,
            rewrites: Vec::new(),
        }
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The arguments as they stand (rewrites included).
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.arguments
    }

    /// Replaces the arguments. The model reads a note naming `layer` and
    /// `why` (cut to 300 characters); the new arguments go through the
    /// governed stages (validation, URL scope, confirmation) as the model's
    /// own would.
    pub fn rewrite(&mut self, layer: &str, arguments: Map<String, Value>, why: &str) {
        use tool_rules::text::{Clip, clip};
        let note = format!(
            "the middleware `{}` changed the arguments before the call: {}",
            clip(layer, Clip::chars(64)),
            clip(why, Clip::chars(300))
        );
        self.rewrites.push(Rewrite {
            layer: layer.to_owned(),
            note,
        });
        self.arguments = arguments;
    }

    /// The names of the layers that rewrote the arguments so far, in order.
    pub fn rewritten_by(&self) -> Vec<&str> {
        self.rewrites.iter().map(|r| r.layer.as_str()).collect()
    }

    /// The result of a call `layer` refuses: kind `denied`, the message
    /// "The call to `tool` was refused by `layer`: reason" (the reason cut
    /// to 1000 characters), `metadata["refused_by"]` the layer's name.
    pub fn refuse(&self, layer: &str, reason: &str) -> ToolResult {
        use tool_rules::text::{Clip, clip};
        let mut r = ToolResult::error(
            ErrorKind::Denied,
            format!(
                "The call to `{}` was refused by `{}`: {}",
                self.tool,
                clip(layer, Clip::chars(64)),
                clip(reason, Clip::chars(1000))
            ),
        );
        r.metadata
            .insert(meta::REFUSED_BY.to_owned(), Value::String(layer.to_owned()));
        r
    }

    /// The rewrites' notes and layer names, for the pipeline.
    pub(crate) fn into_parts(self) -> (Map<String, Value>, Vec<String>, Vec<String>) {
        let (layers, notes) = self.rewrites.into_iter().map(|r| (r.layer, r.note)).unzip();
        (self.arguments, notes, layers)
    }
}

/// A view's layers (Debug shows their names).
#[derive(Clone, Default)]
pub(crate) struct Layers(pub(crate) Vec<Arc<dyn ToolLayer>>);

impl std::fmt::Debug for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|l| l.name()))
            .finish()
    }
}

/// What runs after a layer: the layers inside it, then the governed stages.
pub(crate) trait Governed: Send {
    /// Runs the governed stages on `call`'s arguments.
    fn run_governed(&mut self, call: LayerCall) -> LayerFuture<'_>;
}

/// The time one call spends in its layers: the time since the first layer
/// got the call, less the time spent in the governed stages (which have
/// their own bounds: the tool's run its timeout, an approval its approval
/// timeout). The pipeline stops a call whose layers overrun the call's
/// timeout.
#[derive(Debug)]
pub(crate) struct LayerClock {
    started: Instant,
    state: Mutex<ClockState>,
    /// Told when a run of the governed stages ends.
    left_governed: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct ClockState {
    /// Time spent in finished runs of the governed stages.
    governed: Duration,
    /// When the governed stages now running started.
    entered: Option<Instant>,
}

impl LayerClock {
    pub(crate) fn new() -> Self {
        Self {
            started: Instant::now(),
            state: Mutex::new(ClockState::default()),
            left_governed: tokio::sync::Notify::new(),
        }
    }

    /// Whether the governed stages are running (the clock stands still).
    pub(crate) fn governing(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.entered.is_some()
    }

    /// Resolves when a run of the governed stages ended (at once if one
    /// ended since the last wait).
    pub(crate) async fn governed_ended(&self) {
        self.left_governed.notified().await;
    }

    /// The time spent in layers so far.
    pub(crate) fn in_layers(&self) -> Duration {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let governed = state.governed + state.entered.map_or(Duration::ZERO, |e| now - e);
        now.duration_since(self.started).saturating_sub(governed)
    }

    fn enter(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.entered = Some(Instant::now());
    }

    fn leave(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = state.entered.take() {
            state.governed += e.elapsed();
        }
        drop(state);
        self.left_governed.notify_one();
    }
}

/// Stops the layer clock's governed span when dropped (a run that ends, or
/// one dropped when the call is stopped).
struct Governing<'c>(&'c LayerClock);

impl Drop for Governing<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// The rest of the stack, handed to a [`ToolLayer`].
pub struct Next<'a> {
    layers: &'a [Arc<dyn ToolLayer>],
    inner: &'a mut (dyn Governed + 'a),
    spec: &'a ToolSpec,
    ctx: &'a ToolContext,
    clock: &'a LayerClock,
    runs: u32,
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("tool", &self.spec.name)
            .field("layers", &self.layers.len())
            .field("runs", &self.runs)
            .finish_non_exhaustive()
    }
}

impl<'a> Next<'a> {
    pub(crate) fn new(
        layers: &'a [Arc<dyn ToolLayer>],
        inner: &'a mut (dyn Governed + 'a),
        spec: &'a ToolSpec,
        ctx: &'a ToolContext,
        clock: &'a LayerClock,
    ) -> Self {
        Self {
            layers,
            inner,
            spec,
            ctx,
            clock,
            runs: 0,
        }
    }

    /// The called tool's spec (description, kind, flags such as `read_only`).
    pub fn spec(&self) -> &'a ToolSpec {
        self.spec
    }

    /// The call's context (trace id, cancellation, approver).
    pub fn context(&self) -> &'a ToolContext {
        self.ctx
    }

    /// How often [`run`](Self::run) ran so far.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// Runs the rest of the stack on `call` and returns its result. May be
    /// called again to retry, up to [`MAX_RUNS_PER_LAYER`] times in all;
    /// beyond that it returns a `failed` error result naming the limit
    /// and does not run the call. A layer inside that panics (when called
    /// or while its future runs) is contained: `run` returns a `panicked`
    /// error result naming that layer and the tool.
    pub async fn run(&mut self, call: LayerCall) -> ToolResult {
        if self.runs >= MAX_RUNS_PER_LAYER {
            return ToolResult::error(
                ErrorKind::Failed,
                format!(
                    "The call to `{}` was not run again: a middleware layer ran it {MAX_RUNS_PER_LAYER} times already (the limit).",
                    self.spec.name
                ),
            );
        }
        self.runs += 1;
        match self.layers.split_first() {
            Some((first, rest)) => {
                let next = Next::new(rest, &mut *self.inner, self.spec, self.ctx, self.clock);
                // A layer's panic (when called or while running) is
                // contained as a tool's is: the call's result says which
                // layer crashed.
                let started = std::panic::catch_unwind(AssertUnwindSafe(|| first.call(call, next)));
                let outcome = match started {
                    Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
                    Err(payload) => Err(payload),
                };
                outcome.unwrap_or_else(|payload| {
                    layer_panicked(first.name(), &self.spec.name, payload.as_ref(), self.ctx)
                })
            }
            None => {
                self.clock.enter();
                let _governing = Governing(self.clock);
                self.inner.run_governed(call).await
            }
        }
    }
}

/// A layer's contained panic: kind `panicked`, the message naming the layer
/// and the tool; the payload (masked) goes to `tracing` only.
fn layer_panicked(
    layer: &str,
    tool: &str,
    payload: &(dyn Any + Send),
    ctx: &ToolContext,
) -> ToolResult {
    use tool_rules::text::{Clip, clip};
    let detail = crate::governance::secrets::panic_detail(payload, ctx.secrets());
    let layer = clip(layer, Clip::chars(64));
    tracing::error!(target: "tool_core", tool, layer = %layer, panic = %detail, "middleware layer panicked; the panic was contained");
    ToolResult::error(
        ErrorKind::Panicked,
        format!(
            "The middleware layer `{layer}` crashed with an internal error while handling the call to `{tool}`, so the call has no result. Do not retry the same call; try another approach."
        ),
    )
}
