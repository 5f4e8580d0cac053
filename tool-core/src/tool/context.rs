//! [`ToolContext`]: what the framework knows about the call that the model does not send.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::governance::approval::{ApprovalDefault, Approver, DEFAULT_APPROVAL_TIMEOUT};
use crate::governance::ask::Asker;
use crate::governance::secrets::SecretStore;
use crate::tool::spec::ToolKind;

/// Per-call (or per-session) information the runner supplies to tools:
/// identifiers, the page URL, named JSON values, named config objects, typed
/// state and a cancellation token.
///
/// Cheap to clone: the data sits behind one `Arc`; the `with_*` builders copy
/// it only when it is shared. Well-known identifiers (`trace_id`, `step_id`,
/// `uid`, `goal_id`, `page_url`) are stored as named values too, so a hidden
/// parameter called `uid` is filled from [`with_uid`](Self::with_uid).
///
/// ```
/// use tool_core::ToolContext;
/// use serde_json::json;
///
/// #[derive(serde::Serialize)]
/// struct KnowledgeConfig { owner: String, default_tags: Vec<String> }
///
/// let ctx = ToolContext::new()
///     .with_trace_id("t-1")
///     .with_uid("u-42")
///     .with_config("knowledge_config", &KnowledgeConfig { owner: "ana".into(), default_tags: vec!["work".into()] })
///     .with_state(String::from("typed state"));
/// assert_eq!(ctx.uid(), Some("u-42"));
/// assert_eq!(ctx.lookup("knowledge_config.owner"), Some(&json!("ana")));
/// assert_eq!(ctx.lookup("knowledge_config.default_tags.0"), Some(&json!("work")));
/// assert_eq!(ctx.state::<String>().as_deref().map(String::as_str), Some("typed state"));
/// ```
#[derive(Clone, Default)]
pub struct ToolContext {
    inner: Arc<Inner>,
    cancel: CancellationToken,
    /// When the running call's timeout ends (set by the executor).
    deadline: Option<tokio::time::Instant>,
}

#[derive(Clone, Default)]
struct Inner {
    values: BTreeMap<String, Value>,
    configs: BTreeMap<String, Value>,
    extensions: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    timeout: Option<Duration>,
    approver: Option<Arc<dyn Approver>>,
    /// How long an approval waits, and its default (`None`: 300 s, deny).
    approval_wait: Option<(Duration, ApprovalDefault)>,
    /// Kinds whose every call goes through the approval gate.
    confirm_kinds: BTreeSet<ToolKind>,
    asker: Option<Arc<dyn Asker>>,
    secrets: Option<Arc<SecretStore>>,
    progress: Option<Arc<dyn ProgressSink>>,
    capture_content: bool,
}

/// The host's words for giving a page URL (see [`ToolContext::with_page_url_hint`]).
struct PageUrlHint(String);

/// One progress report of a running call (see [`ToolContext::report_progress`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Work done so far; should grow with every report, even when `total` is unknown.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// What is being done now, for a person to read.
    pub message: Option<String>,
}

/// Receives the progress reports of calls made with a context that carries it
/// ([`ToolContext::with_progress_sink`]); an MCP server forwards them as
/// `notifications/progress`. Implemented for any `Fn(Progress)` closure.
///
/// `report` is called on the tool's task and must not block: hand the report
/// to a channel or spawn the send.
pub trait ProgressSink: Send + Sync + 'static {
    /// Takes one report.
    fn report(&self, progress: Progress);
}

impl<F> ProgressSink for F
where
    F: Fn(Progress) + Send + Sync + 'static,
{
    fn report(&self, progress: Progress) {
        self(progress);
    }
}

impl ToolContext {
    /// An empty context: no identifiers, values, configs or state; a fresh cancellation token.
    pub fn new() -> Self {
        Self::default()
    }

    fn inner_mut(&mut self) -> &mut Inner {
        Arc::make_mut(&mut self.inner)
    }

    /// Sets the named JSON value `name` (readable by hidden parameters of that name).
    #[must_use]
    pub fn with_value(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.inner_mut().values.insert(name.into(), value.into());
        self
    }

    /// Sets the trace id (value `trace_id`): correlates every call of one agent run.
    #[must_use]
    pub fn with_trace_id(self, id: impl Into<String>) -> Self {
        self.with_value("trace_id", id.into())
    }

    /// Sets the step id (value `step_id`): the agent step this call belongs to.
    #[must_use]
    pub fn with_step_id(self, id: impl Into<String>) -> Self {
        self.with_value("step_id", id.into())
    }

    /// Sets the user id (value `uid`).
    #[must_use]
    pub fn with_uid(self, uid: impl Into<String>) -> Self {
        self.with_value("uid", uid.into())
    }

    /// Sets the goal id (value `goal_id`).
    #[must_use]
    pub fn with_goal_id(self, id: impl Into<String>) -> Self {
        self.with_value("goal_id", id.into())
    }

    /// Sets the URL of the page the agent is on (value `page_url`); URL-scoped tools use it.
    #[must_use]
    pub fn with_page_url(self, url: impl Into<String>) -> Self {
        self.with_value("page_url", url.into())
    }

    /// Sets how this host gives a page URL, for the refusal of a URL-scoped
    /// tool called without one: a program serving over MCP says
    /// "start the server with `shop serve --page-url URL`". Without it the
    /// refusal names [`with_page_url`](Self::with_page_url) (an embedding
    /// application's fix). Plain text, shown as is inside parentheses.
    #[must_use]
    pub fn with_page_url_hint(self, hint: impl Into<String>) -> Self {
        self.with_state(PageUrlHint(hint.into()))
    }

    /// The host's hint for giving a page URL ([`with_page_url_hint`](Self::with_page_url_hint)).
    pub(crate) fn page_url_hint(&self) -> Option<String> {
        self.state::<PageUrlHint>().map(|h| h.0.0.clone())
    }

    /// Stores a config object under `name`, serialised to JSON once, here.
    /// `inject_params` key paths start with this name (`"knowledge_config.owner"`).
    ///
    /// A value that fails to serialise (e.g. a map with non-string keys) is
    /// stored as `null`, which key paths treat as absent.
    #[must_use]
    pub fn with_config<C: Serialize + ?Sized>(
        mut self,
        name: impl Into<String>,
        config: &C,
    ) -> Self {
        let value = serde_json::to_value(config).unwrap_or(Value::Null);
        self.inner_mut().configs.insert(name.into(), value);
        self
    }

    /// Stores a typed value, read back by `State<T>` parameters and [`state`](Self::state).
    /// One value per type; a second call for the same type replaces the first.
    #[must_use]
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.inner_mut()
            .extensions
            .insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Sets the timeout applied to calls that do not set their own (`timeout = "..."`).
    /// Without one, the registry default (120 s) applies.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.inner_mut().timeout = Some(timeout);
        self
    }

    /// Sets who decides on calls of tools that require confirmation (see
    /// [`Approver`], [`ApprovalPolicy`](crate::ApprovalPolicy)). Without one,
    /// such calls are denied.
    #[must_use]
    pub fn with_approver(mut self, approver: impl Approver) -> Self {
        self.inner_mut().approver = Some(Arc::new(approver));
        self
    }

    /// Sets how long an approval waits for the approver, and what decides
    /// when it did not answer by then (cross-cutting §4). Without this, 300 s
    /// ([`DEFAULT_APPROVAL_TIMEOUT`]) and [`ApprovalDefault::Deny`]: a host
    /// with nobody watching never hangs, and never runs a call nobody approved
    /// unless it says so here. The result of a call decided by the default
    /// carries `metadata["approval_timed_out"]` and says so to the model.
    #[must_use]
    pub fn with_approval_timeout(mut self, timeout: Duration, default: ApprovalDefault) -> Self {
        self.inner_mut().approval_wait = Some((timeout, default));
        self
    }

    /// How long an approval waits and its default (see
    /// [`with_approval_timeout`](Self::with_approval_timeout)).
    pub fn approval_timeout(&self) -> (Duration, ApprovalDefault) {
        self.inner
            .approval_wait
            .unwrap_or((DEFAULT_APPROVAL_TIMEOUT, ApprovalDefault::Deny))
    }

    /// Sends every call of a tool of one of `kinds` through the approval
    /// gate, not only those of tools marked `requires_confirmation` (the
    /// side effects gated by kind: `write`, `exec`, `network`). Combine with
    /// an [`ApprovalPolicy`](crate::ApprovalPolicy) approver to decide per
    /// kind. Adds to the kinds set before.
    ///
    /// ```
    /// use tool_core::{ApprovalPolicy, ToolContext, ToolKind};
    /// let ctx = ToolContext::new()
    ///     .with_confirmed_kinds([ToolKind::Write, ToolKind::Exec, ToolKind::Network])
    ///     .with_approver(ApprovalPolicy::new().deny(ToolKind::Exec).auto_approve(ToolKind::Write));
    /// assert!(ctx.confirms_kind(ToolKind::Exec));
    /// assert!(!ctx.confirms_kind(ToolKind::Read));
    /// ```
    #[must_use]
    pub fn with_confirmed_kinds(mut self, kinds: impl IntoIterator<Item = ToolKind>) -> Self {
        self.inner_mut().confirm_kinds.extend(kinds);
        self
    }

    /// Whether every call of a tool of `kind` goes through the approval gate
    /// ([`with_confirmed_kinds`](Self::with_confirmed_kinds)).
    pub fn confirms_kind(&self, kind: ToolKind) -> bool {
        self.inner.confirm_kinds.contains(&kind)
    }

    /// Sets an approver shared with other contexts.
    #[must_use]
    pub fn with_shared_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.inner_mut().approver = Some(approver);
        self
    }

    /// Sets who answers questions for a person ([`Asker`], cross-cutting
    /// §4: `ask_user`, elicitation). Without one, questions end with "no
    /// person is present".
    #[must_use]
    pub fn with_asker(mut self, asker: impl Asker) -> Self {
        self.inner_mut().asker = Some(Arc::new(asker));
        self
    }

    /// Sets an asker shared with other contexts.
    #[must_use]
    pub fn with_shared_asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.inner_mut().asker = Some(asker);
        self
    }

    /// The asker, if any.
    pub fn asker(&self) -> Option<&Arc<dyn Asker>> {
        self.inner.asker.as_ref()
    }

    /// Sets the secrets that `<secret>key</secret>` placeholders resolve to.
    #[must_use]
    pub fn with_secrets(mut self, secrets: SecretStore) -> Self {
        self.inner_mut().secrets = Some(Arc::new(secrets));
        self
    }

    /// Sets where [`report_progress`](Self::report_progress) sends reports
    /// (replacing any earlier sink). Without one, reports are dropped.
    #[must_use]
    pub fn with_progress_sink(mut self, sink: impl ProgressSink) -> Self {
        self.inner_mut().progress = Some(Arc::new(sink));
        self
    }

    /// Reports how far a long call has got: `progress` out of `total` (when
    /// known), with an optional message. A no-op when the context has no
    /// progress sink, so tools can report unconditionally.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tool_core::{Progress, ToolContext};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let ctx = ToolContext::new().with_progress_sink(move |p: Progress| sink.lock().unwrap().push(p));
    /// ctx.report_progress(1.0, Some(4.0), Some("indexing"));
    /// ToolContext::new().report_progress(1.0, None, None); // no sink: nothing happens
    /// assert_eq!(seen.lock().unwrap()[0].message.as_deref(), Some("indexing"));
    /// ```
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.inner.progress {
            sink.report(Progress {
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Whether progress reports go anywhere (a sink is set).
    pub fn reports_progress(&self) -> bool {
        self.inner.progress.is_some()
    }

    /// The approver, if any.
    pub fn approver(&self) -> Option<&Arc<dyn Approver>> {
        self.inner.approver.as_ref()
    }

    /// The secret store, if any.
    pub fn secrets(&self) -> Option<&SecretStore> {
        self.inner.secrets.as_deref()
    }

    /// Whether telemetry records content: tool arguments and results (the
    /// `tool_call` span's `gen_ai.tool.call.arguments` / `.result`), and in
    /// tool-agent the messages of model calls. Off by default; when on, every
    /// value is masked by the context's [`SecretStore`] and cut to
    /// [`CONTENT_LIMIT`](crate::telemetry::CONTENT_LIMIT) bytes
    /// ([`telemetry`](crate::telemetry)).
    #[must_use]
    pub fn with_content_capture(mut self, on: bool) -> Self {
        self.inner_mut().capture_content = on;
        self
    }

    /// Whether content capture is on ([`with_content_capture`](Self::with_content_capture); default off).
    pub fn captures_content(&self) -> bool {
        self.inner.capture_content
    }

    /// Uses `token` for cancellation (e.g. a child of the agent run's token).
    #[must_use]
    pub fn with_cancellation_token(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// The named value `name`, if set.
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.inner.values.get(name)
    }

    /// The named value `name` when it is a string.
    pub fn value_str(&self, name: &str) -> Option<&str> {
        self.value(name).and_then(Value::as_str)
    }

    /// The trace id, if set.
    pub fn trace_id(&self) -> Option<&str> {
        self.value_str("trace_id")
    }

    /// The step id, if set.
    pub fn step_id(&self) -> Option<&str> {
        self.value_str("step_id")
    }

    /// The user id, if set.
    pub fn uid(&self) -> Option<&str> {
        self.value_str("uid")
    }

    /// The goal id, if set.
    pub fn goal_id(&self) -> Option<&str> {
        self.value_str("goal_id")
    }

    /// The page URL, if set.
    pub fn page_url(&self) -> Option<&str> {
        self.value_str("page_url")
    }

    /// The config object stored under `name`.
    pub fn config(&self, name: &str) -> Option<&Value> {
        self.inner.configs.get(name)
    }

    /// Walks a dotted key path: the first segment names a config object (or,
    /// failing that, a named value); each further segment is an object key or,
    /// on arrays, a decimal index. `None` when any step is missing or the
    /// value found is `null`.
    pub fn lookup(&self, path: &str) -> Option<&Value> {
        let mut segments = path.split('.');
        let first = segments.next()?;
        let mut current = self.config(first).or_else(|| self.value(first))?;
        for segment in segments {
            current = match current {
                Value::Object(map) => map.get(segment)?,
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        (!current.is_null()).then_some(current)
    }

    /// The typed value stored with [`with_state`](Self::with_state), if any.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        let any = self.inner.extensions.get(&TypeId::of::<T>())?.clone();
        any.downcast::<T>().ok().map(State)
    }

    /// The context's own timeout, if set.
    pub fn timeout(&self) -> Option<Duration> {
        self.inner.timeout
    }

    /// When the running call is stopped for its timeout: set by the
    /// executor on the context a tool's handler gets (the tool's own
    /// timeout, else the context's, else the registry's default, counted
    /// from the call's start; the earlier one when the context had a
    /// deadline already, as in a call made from inside another). `None`
    /// outside a call, or for a context not made by the executor. A tool
    /// that must tidy up before it is stopped (tell a remote peer to
    /// cancel, say) finishes a little before this instant; at it, the
    /// executor drops the handler's future.
    pub fn deadline(&self) -> Option<tokio::time::Instant> {
        self.deadline
    }

    /// The same context with [`deadline`](Self::deadline) at `at`, or at
    /// the deadline it has when that is earlier.
    #[must_use]
    pub fn with_deadline(mut self, at: tokio::time::Instant) -> Self {
        self.deadline = Some(self.deadline.map_or(at, |d| d.min(at)));
        self
    }

    /// The cancellation token; tools doing long work should watch it.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// `true` once the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("values", &self.inner.values)
            .field("configs", &self.inner.configs.keys().collect::<Vec<_>>())
            .field("state_types", &self.inner.extensions.len())
            .field("timeout", &self.inner.timeout)
            .field("deadline", &self.deadline)
            .field("approver", &self.inner.approver.is_some())
            .field("asker", &self.inner.asker.is_some())
            .field("secrets", &self.inner.secrets)
            .field("progress_sink", &self.inner.progress.is_some())
            .field("capture_content", &self.inner.capture_content)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish()
    }
}

/// A typed value taken from the context (see [`ToolContext::with_state`]).
///
/// As a `#[tool]` parameter, `State<T>` is hidden from the model and filled by
/// the framework; when the context holds no `T`, the call returns an error
/// result of kind `missing_context` naming the type. Derefs to `T`; cloning
/// clones the `Arc`.
///
/// Reach `T`'s fields and methods through `Deref` (`orders.lock()` for a
/// `State<Mutex<…>>`). `.0` is the `Arc<T>`, not `T`'s own `.0`: for a
/// newtype state `struct Orders(Mutex<Vec<String>>)` write `orders.0.0.lock()`
/// or `(*orders).0.lock()`; `orders.0.lock()` does not compile.
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clones_share_until_written() {
        let a = ToolContext::new().with_uid("u1");
        let b = a.clone().with_uid("u2");
        assert_eq!(a.uid(), Some("u1"));
        assert_eq!(b.uid(), Some("u2"));
    }

    #[test]
    fn lookup_walks_configs_values_and_arrays() {
        let ctx = ToolContext::new()
            .with_config("cfg", &json!({"a": {"b": [10, null]}}))
            .with_value("plain", json!({"k": "v"}));
        assert_eq!(ctx.lookup("cfg.a.b.0"), Some(&json!(10)));
        assert_eq!(ctx.lookup("cfg.a.b.1"), None);
        assert_eq!(ctx.lookup("cfg.a.x"), None);
        assert_eq!(ctx.lookup("plain.k"), Some(&json!("v")));
        assert_eq!(ctx.lookup("missing"), None);
    }

    #[test]
    fn progress_goes_to_the_sink_of_this_context_only() {
        use std::sync::Mutex;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let base = ToolContext::new();
        let ctx = base
            .clone()
            .with_progress_sink(move |p: Progress| sink.lock().unwrap().push(p));
        assert!(ctx.reports_progress() && !base.reports_progress());
        base.report_progress(0.5, None, None);
        ctx.report_progress(2.0, Some(3.0), None);
        let seen = seen.lock().unwrap();
        assert_eq!(
            *seen,
            vec![Progress {
                progress: 2.0,
                total: Some(3.0),
                message: None
            }]
        );
    }

    #[test]
    fn state_is_typed() {
        let ctx = ToolContext::new().with_state(5u32);
        assert_eq!(ctx.state::<u32>().map(|s| *s), Some(5));
        assert!(ctx.state::<u64>().is_none());
    }
}
