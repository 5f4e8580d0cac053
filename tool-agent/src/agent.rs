//! The agent loop: ask the model, run its calls, answer with the results,
//! until it answers without calls or a limit is hit.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;
use tool_core::format::{RenderError, ToolCall};
use tool_core::{RegistryView, Rendering, ToolContext, ToolHistory, ToolResult};
use tool_rules::text::{Clip, clip};
use tracing::Instrument;

use crate::client::ModelClient;
use crate::error::{ModelError, ModelErrorKind};
use crate::limits::AgentLimits;
use crate::message::{Message, ModelRequest, StreamEvent, ToolChoice, ToolOutcome, Usage};
use crate::review::{RecentContext, Reviewer};
use crate::telemetry;

/// Bytes of a tool result or model text written to a trace event (cut at a
/// character boundary, unmarked).
const TRACE_TEXT: usize = 2000;

/// How a trace event clips a tool result or model text.
const TRACE_CLIP: Clip = Clip::bytes(TRACE_TEXT).unmarked();

/// One step of a run, as it happens (see [`Agent::on_event`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentEvent<'a> {
    /// A request for `turn` was sent.
    RequestSent {
        /// The run's trace id.
        trace_id: &'a str,
        /// The turn (1-based).
        turn: u64,
        /// Messages in the request.
        messages: usize,
        /// The tool choice of this turn.
        tool_choice: &'a ToolChoice,
    },
    /// A piece of the model's text.
    TextDelta {
        /// The turn.
        turn: u64,
        /// The text.
        text: &'a str,
    },
    /// A tool call was complete in the stream.
    CallAssembled {
        /// The turn.
        turn: u64,
        /// The call.
        call: &'a ToolCall,
    },
    /// A call was executed.
    CallResult {
        /// The turn.
        turn: u64,
        /// The call.
        call: &'a ToolCall,
        /// Its result.
        result: &'a ToolResult,
    },
    /// A turn ended (after its calls ran, or with the final answer).
    TurnDone {
        /// The turn.
        turn: u64,
        /// Calls made on it.
        calls: usize,
        /// Tokens the provider reported for it.
        usage: Usage,
    },
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without tool calls.
    Answered,
    /// [`Agent::max_turns`] requests were made and the last one still called tools.
    MaxTurns,
    /// The reported tokens reached [`Agent::max_total_tokens`].
    TokenLimit,
    /// [`Agent::time_limit`] passed.
    TimeLimit,
    /// The run's cancellation token was cancelled.
    Cancelled,
}

/// What a run produced.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOutput {
    /// The run's trace id.
    pub trace_id: String,
    /// The last text the model wrote (its answer when [`stop`](Self::stop) is `Answered`).
    pub text: String,
    /// The whole conversation, the task first.
    pub messages: Vec<Message>,
    /// Requests made.
    pub turns: u64,
    /// Tool calls executed.
    pub tool_calls: usize,
    /// The error message of each failed call, `name: message`.
    pub tool_errors: Vec<String>,
    /// Tokens reported by the provider over the run.
    pub usage: Usage,
    /// Why it ended.
    pub stop: StopReason,
    /// Every result with the turn of the request whose answer made the call
    /// (the two-layer memory): `history.render(n)` gives the texts as
    /// request `n + 1` carried them, in full for the calls of turn `n`.
    pub history: ToolHistory,
}

/// A run that failed: the model request of `turn` failed, or the tools do
/// not render for the client's format.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The request (or its stream) failed; `messages` is the conversation up to that turn.
    #[error("turn {turn}: {source}")]
    Model {
        /// The turn that failed.
        turn: u64,
        /// Why.
        source: ModelError,
        /// The conversation before the failed request.
        messages: Vec<Message>,
    },
    /// A tool cannot be rendered for the client's provider format.
    #[error("the tools cannot be sent to this model: {0}")]
    Schemas(#[from] RenderError),
    /// The run was given no messages.
    #[error("a run needs a task: the conversation is empty")]
    NoTask,
}

type Observer = Arc<dyn Fn(&AgentEvent<'_>) + Send + Sync>;

/// An agent: a model client, a set of tools and the limits of a run.
///
/// ```
/// use serde_json::json;
/// use tool_agent::{Agent, ScriptedClient, ScriptedTurn, StopReason};
/// use tool_core::format::ToolCall;
/// use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut tools = ToolRegistry::new();
/// let spec = ToolSpec::new("add", "Add two integers.", json!({
///     "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]
/// })).read_only();
/// tools.register(Tool::new(spec, |args: serde_json::Map<String, serde_json::Value>, _| async move {
///     ToolResult::ok((args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)).to_string())
/// })?)?;
///
/// let model = ScriptedClient::new([
///     ScriptedTurn::calls([ToolCall::new("c1", "add", r#"{"a": 2, "b": 40}"#)]),
///     ScriptedTurn::text("2 + 40 = 42"),
/// ]);
/// let out = Agent::new(model, tools).system("You add numbers.").max_turns(4).run("What is 2 + 40?").await?;
/// assert_eq!(out.stop, StopReason::Answered);
/// assert_eq!((out.turns, out.tool_calls, out.text.as_str()), (2, 1, "2 + 40 = 42"));
/// assert_eq!(out.history.render(2)[0].1, "42");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Agent {
    client: Arc<dyn ModelClient>,
    tools: RegistryView,
    system: Option<String>,
    limits: AgentLimits,
    max_total_tokens: Option<u64>,
    cancel: CancellationToken,
    context: ToolContext,
    tool_choice: ToolChoice,
    trace_id: Option<String>,
    observer: Option<Observer>,
    name: Option<String>,
    review_feeds: Vec<RecentContext>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.client.model())
            .field("tools", &self.tools.names())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

static RUNS: AtomicU64 = AtomicU64::new(0);

impl Agent {
    /// An agent of `client` with `tools`: a [`RegistryView`] (filtered,
    /// following a live registry, possibly with deferred tools that
    /// `tool_search` loads per run), or a [`ToolRegistry`](tool_core::ToolRegistry); no system
    /// prompt, [`DEFAULT_MAX_TURNS`](crate::DEFAULT_MAX_TURNS) turns, no token or time limit.
    pub fn new(client: impl ModelClient + 'static, tools: impl Into<RegistryView>) -> Self {
        Self::with_shared_client(Arc::new(client), tools)
    }

    /// [`new`](Self::new) with a shared client.
    pub fn with_shared_client(
        client: Arc<dyn ModelClient>,
        tools: impl Into<RegistryView>,
    ) -> Self {
        Self {
            client,
            tools: tools.into(),
            system: None,
            limits: AgentLimits::default(),
            max_total_tokens: None,

            cancel: CancellationToken::new(),
            context: ToolContext::new(),
            tool_choice: ToolChoice::Auto,
            trace_id: None,
            observer: None,
            name: None,
            review_feeds: Vec::new(),
        }
    }

    crate::limits::limit_setters!();

    /// The agent's name, for telemetry: the run's span is then
    /// `invoke_agent {name}` with `gen_ai.agent.name` ([`telemetry`](crate::telemetry));
    /// without one it is `invoke_agent`. Cut to 128 bytes.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.name = Some(clip(&name, Clip::bytes(128).unmarked()).into_owned());
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }

    /// Stops once the provider-reported tokens (input + output, summed over
    /// turns) reach `n`, after the turn that crossed it.
    pub fn max_total_tokens(mut self, n: u64) -> Self {
        self.max_total_tokens = Some(n);
        self
    }

    /// Cancels runs (and their tool calls) when `token` is cancelled.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// The context tool calls run with (workspace state, approver, secrets,
    /// values); the run's trace id and cancellation are added to it.
    pub fn context(mut self, ctx: ToolContext) -> Self {
        self.context = ctx;
        self
    }

    /// The tool choice of every turn (default [`ToolChoice::Auto`]).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// The run's trace id (default: the context's `trace_id`, else
    /// `agent-<unix milliseconds>-<process id>-<n>`, distinct across runs and
    /// processes, so runs never share a spill folder or a read ledger).
    pub fn trace_id(mut self, id: impl Into<String>) -> Self {
        self.trace_id = Some(id.into());
        self
    }

    /// Feeds `reviewer` each run's recent conversation: before every batch
    /// of calls the run's messages (the task, the model's text and calls,
    /// the results as the model read them; the newest, bounded as
    /// [`RecentContext::set_run`] says) are set in the reviewer's
    /// [`RecentContext`] under the run's trace id, which the reviewer reads
    /// for the calls of that run (cut to its
    /// [`context_chars`](Reviewer::context_chars), secrets masked) and which
    /// is forgotten when the run ends. This does not install the reviewer:
    /// make it (or a [`RefusalBreaker`](tool_core::governance::breaker::RefusalBreaker)
    /// around it) the [`context`](Self::context)'s approver, or a
    /// [`SafetyCheck`](crate::review::SafetyCheck) layer, as before. Can be
    /// given several reviewers; clones of a reviewer share its context.
    pub fn reviewer(mut self, reviewer: &Reviewer) -> Self {
        self.review_feeds.push(reviewer.context().clone());
        self
    }

    /// Calls `f` for every [`AgentEvent`], in order, on the run's task.
    pub fn on_event(mut self, f: impl Fn(&AgentEvent<'_>) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(f));
        self
    }

    /// The tools given to this agent. A run offers (and runs) those of
    /// them available on its context's page URL ([`offered`](Self::offered)).
    pub fn tools(&self) -> &RegistryView {
        &self.tools
    }

    /// The tools a run on `page_url` offers the model and runs: every tool
    /// of [`tools`](Self::tools) whose `url_patterns` match it, or that has
    /// none ([`RegistryView::on_page`], the rule `execute` applies; MCP's
    /// `tools/list` shows the same). Without a page URL
    /// ([`ToolContext::with_page_url`] in [`context`](Self::context)) a
    /// URL-scoped tool is neither offered nor run. When every tool is
    /// available this is `tools()` itself (its loaded deferred tools
    /// shared); otherwise a view of its own per run.
    pub fn offered(&self, page_url: Option<&str>) -> RegistryView {
        let registry = self.tools.registry();
        let all = registry
            .names()
            .iter()
            .all(|n| registry.get(n).is_some_and(|t| t.available_on(page_url)));
        if all {
            self.tools.clone()
        } else {
            self.tools.clone().on_page(page_url)
        }
    }

    /// Runs `task` as the first user message.
    ///
    /// # Errors
    /// [`AgentError`] when a model request fails or the tools do not render.
    pub async fn run(&self, task: impl Into<String>) -> Result<RunOutput, AgentError> {
        self.run_conversation(vec![Message::user(task)]).await
    }

    /// Continues `messages` (e.g. a stored trace with a new user message):
    /// the next request carries them all. Tool results in them keep their
    /// turns; new turns are numbered after the highest one. A tool call in
    /// them that has no result (an interrupted run) gets a "not run" result
    /// first ([`repair_dangling_calls`](crate::repair_dangling_calls)), since
    /// providers refuse a request with an unanswered call.
    ///
    /// # Errors
    /// As [`run`](Self::run); [`AgentError::NoTask`] for no messages.
    pub async fn run_conversation(&self, messages: Vec<Message>) -> Result<RunOutput, AgentError> {
        if messages.is_empty() {
            return Err(AgentError::NoTask);
        }
        let trace_id = self
            .trace_id
            .clone()
            .or_else(|| self.context.trace_id().map(str::to_owned))
            .unwrap_or_else(|| {
                let millis = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis());
                format!(
                    "agent-{millis}-{}-{}",
                    std::process::id(),
                    RUNS.fetch_add(1, Ordering::Relaxed) + 1
                )
            });
        let span = telemetry::agent_span(&*self.client, self.name.as_deref(), &trace_id);
        let result = self
            .run_inner(trace_id.clone(), messages)
            .instrument(span.clone())
            .await;
        for feed in &self.review_feeds {
            feed.end_run(&trace_id);
        }
        match &result {
            Ok(out) => telemetry::record_usage(&span, out.usage),
            Err(AgentError::Model { source, .. }) => {
                telemetry::record_error(&span, &telemetry::model_error_type(source));
            }
            Err(AgentError::Schemas(_)) => telemetry::record_error(&span, "schemas"),
            Err(_) => telemetry::record_error(&span, "_OTHER"),
        }
        result
    }

    fn emit(&self, event: &AgentEvent<'_>) {
        if let Some(o) = &self.observer {
            o(event);
        }
    }

    async fn run_inner(
        &self,
        trace_id: String,
        mut messages: Vec<Message>,
    ) -> Result<RunOutput, AgentError> {
        let format = self.client.format();
        let ctx = self
            .context
            .clone()
            .with_trace_id(trace_id.clone())
            .with_cancellation_token(self.cancel.clone());
        let tools = self.offered(ctx.page_url());
        let started = Instant::now();
        let deadline = self
            .limits
            .time_limit
            .map(|l| tokio::time::Instant::now() + l);
        let mut history = ToolHistory::new();
        let dangling = crate::message::repair_dangling_calls(&mut messages);
        if dangling > 0 {
            tracing::warn!(target: "tool_agent", trace_id = %trace_id, calls = dangling, "tool calls without a result were answered as not run");
        }
        let base_turn = messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool { turn, .. } => Some(*turn),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let mut usage = Usage::default();
        let mut out = RunOutput {
            trace_id: trace_id.clone(),
            text: String::new(),
            messages: Vec::new(),
            turns: 0,
            tool_calls: 0,
            tool_errors: Vec::new(),
            usage,
            stop: StopReason::MaxTurns,
            history: ToolHistory::new(),
        };
        let mut stop = StopReason::MaxTurns;
        for n in 1..=u64::from(self.limits.max_turns) {
            if self.cancel.is_cancelled() {
                stop = StopReason::Cancelled;
                break;
            }
            if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                stop = StopReason::TimeLimit;
                break;
            }
            let turn = base_turn + n;
            // Per turn: tools loaded by `tool_search` on the last turn join the
            // list. Without deferred tools the view's registry holds exactly the
            // view's tools, and its cached rendering is the same list.
            let registry = tools.registry();
            let schemas = if tools.deferred().is_empty() {
                registry.schemas_in(format)?
            } else {
                tools.schemas_for(format, Some(&trace_id))?
            };
            let choice = match (&self.limits.first_tool_choice, n) {
                (Some(first), 1) => first,
                _ => &self.tool_choice,
            };
            let request = ModelRequest::new(&messages, schemas.as_value(), choice)
                .with_system(self.system.as_deref())
                .with_turn(turn)
                .with_max_output_tokens(self.limits.max_output_tokens);
            self.emit(&AgentEvent::RequestSent {
                trace_id: &trace_id,
                turn,
                messages: messages.len(),
                tool_choice: choice,
            });
            out.turns = n;
            let answer = match self.answer(request, turn, deadline, &ctx).await {
                Ok(a) => a,
                Err(Halt::Stop(s)) => {
                    stop = s;
                    break;
                }
                Err(Halt::Error(source)) => {
                    return Err(AgentError::Model {
                        turn,
                        source,
                        messages,
                    });
                }
            };
            usage.add(answer.usage);
            if !answer.text.is_empty() {
                tracing::info!(target: "tool_agent", trace_id = %trace_id, turn, text = %clip(&answer.text, TRACE_CLIP), "model text");
                out.text.clone_from(&answer.text);
            }
            let calls = answer.calls;
            messages.push(Message::Assistant {
                content: answer.text,
                tool_calls: calls.clone(),
            });
            if calls.is_empty() {
                self.emit(&AgentEvent::TurnDone {
                    turn,
                    calls: 0,
                    usage: answer.usage,
                });
                stop = StopReason::Answered;
                break;
            }
            if !self.review_feeds.is_empty() {
                let entries = crate::review::conversation_entries(&messages);
                for feed in &self.review_feeds {
                    feed.set_run(&trace_id, entries.clone());
                }
            }
            // The pipeline parses, repairs and normalises the arguments
            // (`execute_call`'s handling), in batch order.
            let results = registry.execute_calls(&calls, &ctx).await;
            let mut outcomes = Vec::with_capacity(calls.len());
            for (call, result) in calls.into_iter().zip(results) {
                out.tool_calls += 1;
                if let Some(e) = &result.error {
                    out.tool_errors
                        .push(format!("{}: {}", call.name, e.message));
                }
                tracing::info!(
                    target: "tool_agent",
                    trace_id = %trace_id,
                    turn,
                    tool = %call.name,
                    call_id = %call.id,
                    is_error = result.is_error(),
                    output = %clip(&result.render(Rendering::First), TRACE_CLIP),
                    "tool result"
                );
                self.emit(&AgentEvent::CallResult {
                    turn,
                    call: &call,
                    result: &result,
                });
                history.push(turn, call.id.clone(), result.clone());
                outcomes.push(ToolOutcome { call, result });
            }
            let count = outcomes.len();
            messages.push(Message::Tool {
                turn,
                results: outcomes,
            });
            self.emit(&AgentEvent::TurnDone {
                turn,
                calls: count,
                usage: answer.usage,
            });
            if self.max_total_tokens.is_some_and(|m| usage.total() >= m) {
                stop = StopReason::TokenLimit;
                break;
            }
        }
        tracing::debug!(target: "tool_agent", trace_id = %trace_id, ?stop, elapsed_ms = started.elapsed().as_millis() as u64, "run ended");
        out.messages = messages;
        out.usage = usage;
        out.stop = stop;
        out.history = history;
        Ok(out)
    }

    /// Sends one request and reads its stream to the end, in the request's
    /// `chat` span ([`telemetry`](crate::telemetry)).
    async fn answer(
        &self,
        request: ModelRequest<'_>,
        turn: u64,
        deadline: Option<tokio::time::Instant>,
        ctx: &ToolContext,
    ) -> Result<Answer, Halt> {
        let span = telemetry::chat_span(&*self.client, &request, ctx);
        let mut reasons = Vec::new();
        let result = self
            .read_answer(request, turn, deadline, &mut reasons)
            .instrument(span.clone())
            .await;
        match &result {
            Ok(a) => telemetry::record_answer(&span, ctx, &a.text, &a.calls, a.usage, &reasons),
            Err(Halt::Error(e)) => telemetry::record_error(&span, &telemetry::model_error_type(e)),
            Err(Halt::Stop(_)) => {}
        }
        result
    }

    /// [`answer`](Self::answer)'s request and stream; the provider's stop
    /// reasons are added to `reasons`.
    async fn read_answer(
        &self,
        request: ModelRequest<'_>,
        turn: u64,
        deadline: Option<tokio::time::Instant>,
        reasons: &mut Vec<String>,
    ) -> Result<Answer, Halt> {
        let mut stream = self.guard(self.client.send(request), deadline).await??;
        let mut answer = Answer::default();
        loop {
            let Some(event) = self.guard(stream.next(), deadline).await? else {
                break;
            };
            match event.map_err(Halt::Error)? {
                StreamEvent::TextDelta(t) => {
                    self.emit(&AgentEvent::TextDelta { turn, text: &t });
                    answer.text.push_str(&t);
                }
                StreamEvent::ToolCall(c) => {
                    self.emit(&AgentEvent::CallAssembled { turn, call: &c });
                    answer.calls.push(c);
                }
                StreamEvent::Usage(u) => answer.usage.add(u),
                StreamEvent::ResponseInfo { id, model } => {
                    // Inside `answer`'s instrument: the current span is this request's `chat`.
                    telemetry::record_response(
                        &tracing::Span::current(),
                        id.as_deref(),
                        model.as_deref(),
                    );
                }
                StreamEvent::Finished { stop_reason } => {
                    if reasons.len() < telemetry::MAX_REASONS {
                        reasons.extend(stop_reason);
                    }
                }
            }
        }
        Ok(answer)
    }

    /// `fut`, unless the run is cancelled or its time is up first.
    async fn guard<F: std::future::Future>(
        &self,
        fut: F,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<F::Output, Halt> {
        let timer = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(Halt::Stop(StopReason::Cancelled)),
            () = timer => Err(Halt::Stop(StopReason::TimeLimit)),
            v = fut => Ok(v),
        }
    }
}

#[derive(Default)]
struct Answer {
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
}

enum Halt {
    Stop(StopReason),
    Error(ModelError),
}

impl From<ModelError> for Halt {
    fn from(e: ModelError) -> Self {
        match e.kind() {
            ModelErrorKind::Cancelled => Halt::Stop(StopReason::Cancelled),
            _ => Halt::Error(e),
        }
    }
}
