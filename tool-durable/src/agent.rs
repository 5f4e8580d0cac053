//! [`DurableAgent`]: the agent loop as a Restate workflow, one journaled
//! step per model call and per tool call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_agent::{Message, ModelClient, ModelRequest, StreamEvent, ToolChoice, ToolOutcome, Usage};
use tool_core::format::ToolCall;
use tool_core::{
    ApprovalDecision, ErrorKind, RegistryView, ToolContext, ToolKind, ToolResult, ToolSpec,
};

use crate::types::{
    Approval, Effect, OutcomeDecision, Pending, PendingKind, Reply, RunRequest, RunStop,
    RunSummary, Settlement, StepClass, StepEvent, arguments_json,
};

/// The default turn limit of a durable run: 25 model requests.
pub const DEFAULT_MAX_TURNS: u32 = 25;

/// How often a failed model request is tried in all before the run fails
/// (Restate retries the step, 100 ms then doubling, at most 5 s apart): 6.
pub const MODEL_ATTEMPTS: u32 = 6;

/// The state key of the run's pending prompts.
const PENDING: &str = "pending";

type Observer = Arc<dyn Fn(&StepEvent<'_>) + Send + Sync>;

/// An agent run as a Restate workflow (service name `DurableAgent`; the
/// workflow id is the run's key and trace id).
///
/// Handlers (through the ingress, `POST {ingress}/DurableAgent/{run}/{handler}`):
/// - `run` ([`RunRequest`] → [`RunSummary`]): the loop. Each model request
///   is the journaled step `model t{turn}`; each tool call one or more
///   steps by its [`StepClass`]. A worker that dies mid-run is replaced by
///   Restate's retry on any worker serving the deployment: the journal
///   replays, completed steps are not run again.
/// - `pending` (→ a list of [`Pending`]): the prompts the run waits on.
/// - `approve` ([`Approval`]), `answer` ([`Reply`]), `settle`
///   ([`Settlement`]): resolve one; refused (terminal error 404) for a key
///   that is not pending.
///
/// Calls of one answer run one after another, in the model's order.
pub struct DurableAgent {
    client: Arc<dyn ModelClient>,
    tools: RegistryView,
    system: Option<String>,
    max_turns: u32,
    context: ToolContext,
    observer: Option<Observer>,
}

impl std::fmt::Debug for DurableAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableAgent")
            .field("model", &self.client.model())
            .field("tools", &self.tools.names())
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

impl DurableAgent {
    /// An agent of `client` with `tools`; no system prompt,
    /// [`DEFAULT_MAX_TURNS`], a plain [`ToolContext`].
    pub fn new(client: impl ModelClient + 'static, tools: impl Into<RegistryView>) -> Self {
        Self {
            client: Arc::new(client),
            tools: tools.into(),
            system: None,
            max_turns: DEFAULT_MAX_TURNS,
            context: ToolContext::new(),
            observer: None,
        }
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }

    /// Sets the turn limit (model requests per run; at least 1).
    #[must_use]
    pub fn max_turns(mut self, n: u32) -> Self {
        self.max_turns = n.max(1);
        self
    }

    /// The context tool calls run with (workspace state, secrets, values);
    /// the run's key is set as its trace id. Its confirmed kinds
    /// ([`ToolContext::with_confirmed_kinds`]), and tools marked
    /// `requires_confirmation`, make a call wait for an approval promise;
    /// its own approver and asker are not used (a person answers through
    /// the ingress instead).
    #[must_use]
    pub fn context(mut self, ctx: ToolContext) -> Self {
        self.context = ctx;
        self
    }

    /// Calls `f` once a tool call's outcome is known (journaled or
    /// replayed), in call order, on the run's task.
    #[must_use]
    pub fn on_step(mut self, f: impl Fn(&StepEvent<'_>) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(f));
        self
    }

    /// How a call of `spec` (`None`: no such tool) is journaled.
    pub fn classify(spec: Option<&ToolSpec>) -> StepClass {
        match spec {
            None => StepClass::Idempotent,
            Some(s) if s.kind == ToolKind::Ask || s.tags.iter().any(|t| t == "person") => {
                StepClass::Question
            }
            Some(s) if s.kind == ToolKind::Read || s.flags.read_only => StepClass::Idempotent,
            Some(_) => StepClass::Effect,
        }
    }

    fn needs_approval(&self, spec: Option<&ToolSpec>) -> bool {
        spec.is_some_and(|s| s.flags.requires_confirmation || self.context.confirms_kind(s.kind))
    }

    /// One model request, its stream read to the end.
    async fn ask_model(
        &self,
        messages: &[Message],
        tools: &Value,
        turn: u64,
    ) -> Result<ModelTurn, tool_agent::ModelError> {
        let request = ModelRequest::new(messages, tools, &ToolChoice::Auto)
            .with_system(self.system.as_deref())
            .with_turn(turn);
        let mut stream = self.client.send(request).await?;
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut usage = Usage::default();
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(t) => text.push_str(&t),
                StreamEvent::ToolCall(c) => calls.push(c),
                StreamEvent::Usage(u) => usage.add(u),
                _ => {}
            }
        }
        Ok(ModelTurn {
            message: Message::Assistant {
                content: text,
                tool_calls: calls,
            },
            usage,
        })
    }

    /// Runs one call by its class; returns its result and whether it was
    /// read from the journal.
    async fn step(
        &self,
        ctx: &WorkflowContext<'_>,
        key: &str,
        call: &ToolCall,
        base: &ToolContext,
    ) -> Result<(ToolResult, StepClass, bool), HandlerError> {
        let registry = self.tools.registry();
        let spec = registry.get(&call.name).map(|t| t.spec().clone());
        let class = Self::classify(spec.as_ref());
        let pending = |kind| Pending {
            key: key.to_owned(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: arguments_json(&call.arguments),
            kind,
        };
        if class == StepClass::Question {
            let args = arguments_json(&call.arguments);
            let question = args
                .get("question")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let choices = args
                .get("choices")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let answer = self
                .wait(
                    ctx,
                    pending(PendingKind::Question { question, choices }),
                    "answer",
                )
                .await?;
            let answer: String = serde_json::from_value(answer).unwrap_or_default();
            return Ok((ToolResult::ok(answer), class, false));
        }
        let call_ctx = if self.needs_approval(spec.as_ref()) {
            let decision = self
                .wait(ctx, pending(PendingKind::Approval), "approval")
                .await?;
            let decision: ApprovalDecision = serde_json::from_value(decision)
                .unwrap_or_else(|e| ApprovalDecision::Deny(format!("unreadable decision: {e}")));
            base.clone().with_approver(move |_| {
                let d = decision.clone();
                async move { d }
            })
        } else {
            base.clone()
        };
        let ran = AtomicBool::new(false);
        let execute = || async {
            ran.store(true, Ordering::SeqCst);
            Ok(Json(registry.execute_call(call, &call_ctx).await))
        };
        if class == StepClass::Idempotent {
            let Json(result) = ctx.run(execute).name(format!("tool {key}")).await?;
            return Ok((result, class, !ran.load(Ordering::SeqCst)));
        }
        // An effect: the intent is journaled before the tool runs. On a
        // replay that finds the intent but no outcome, the effect step
        // journals `Unknown` instead of running the tool, and a person
        // decides. A rerun goes through the same protocol (attempt 2, …).
        for attempt in 1u32.. {
            let suffix = if attempt == 1 {
                String::new()
            } else {
                format!("#{attempt}")
            };
            let fresh = AtomicBool::new(false);
            ctx.run(|| async {
                fresh.store(true, Ordering::SeqCst);
                Ok(())
            })
            .name(format!("begin {key}{suffix}"))
            .await?;
            let Json(effect) = ctx
                .run(|| async {
                    if !fresh.load(Ordering::SeqCst) {
                        return Ok(Json(Effect::Unknown));
                    }
                    ran.store(true, Ordering::SeqCst);
                    Ok(Json(Effect::Done(Box::new(
                        registry.execute_call(call, &call_ctx).await,
                    ))))
                })
                .name(format!("tool {key}{suffix}"))
                .await?;
            match effect {
                Effect::Done(result) => return Ok((*result, class, !ran.load(Ordering::SeqCst))),
                Effect::Unknown => {
                    tracing::warn!(target: "tool_durable", run = %ctx.key(), key, tool = %call.name, "a non-idempotent call began on an earlier attempt and has no outcome: asking a person");
                }
            }
            let decision = self
                .wait(ctx, pending(PendingKind::UnknownOutcome), "outcome")
                .await?;
            match serde_json::from_value::<OutcomeDecision>(decision) {
                Ok(OutcomeDecision::Rerun) => {}
                Ok(OutcomeDecision::Skip { result, is_error }) => {
                    let result = if is_error {
                        ToolResult::error(ErrorKind::Failed, result)
                    } else {
                        ToolResult::ok(result)
                    };
                    return Ok((result, class, false));
                }
                Err(e) => {
                    return Err(TerminalError::new(format!("unreadable decision: {e}")).into());
                }
            }
        }
        unreachable!("the attempts loop returns")
    }

    /// Lists `item` as pending, waits for the promise `{prefix}:{key}`,
    /// removes it from the list; the resolution's JSON.
    async fn wait(
        &self,
        ctx: &WorkflowContext<'_>,
        item: Pending,
        prefix: &str,
    ) -> Result<Value, HandlerError> {
        let key = item.key.clone();
        let mut list = pending_list(ctx.get::<Json<Vec<Pending>>>(PENDING).await?);
        list.retain(|p| p.key != key);
        list.push(item);
        ctx.set(PENDING, Json(list));
        let name = format!("{prefix}:{key}");
        let Json(value) = ctx.promise::<Json<Value>>(&name).await?;
        let mut list = pending_list(ctx.get::<Json<Vec<Pending>>>(PENDING).await?);
        list.retain(|p| p.key != key);
        ctx.set(PENDING, Json(list));
        Ok(value)
    }

    fn observe(&self, event: &StepEvent<'_>) {
        if let Some(o) = &self.observer {
            o(event);
        }
    }
}

fn pending_list(stored: Option<Json<Vec<Pending>>>) -> Vec<Pending> {
    stored.map(Json::into_inner).unwrap_or_default()
}

/// A journaled model answer.
#[derive(Serialize, Deserialize)]
struct ModelTurn {
    message: Message,
    usage: Usage,
}

/// Resolves `{prefix}:{key}` with `value` when `key` is pending as `kind`.
async fn resolve(
    ctx: &SharedWorkflowContext<'_>,
    key: &str,
    prefix: &str,
    kind: fn(&PendingKind) -> bool,
    value: Value,
) -> Result<(), HandlerError> {
    let list = pending_list(ctx.get::<Json<Vec<Pending>>>(PENDING).await?);
    if !list.iter().any(|p| p.key == key && kind(&p.kind)) {
        return Err(TerminalError::new_with_code(
            404,
            format!("no {prefix} is pending under key {key:?}"),
        )
        .into());
    }
    ctx.resolve_promise(&format!("{prefix}:{key}"), Json(value));
    Ok(())
}

#[restate_sdk::workflow]
impl DurableAgent {
    /// The run: see [`DurableAgent`].
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        request: Json<RunRequest>,
    ) -> Result<Json<RunSummary>, HandlerError> {
        let Json(request) = request;
        let run = ctx.key().to_owned();
        let base = self.context.clone().with_trace_id(run.clone());
        let schemas = self
            .tools
            .registry()
            .schemas_in(self.client.format())
            .map_err(|e| {
                TerminalError::new(format!("the tools cannot be sent to this model: {e}"))
            })?;
        let mut messages = vec![Message::user(request.task)];
        let mut summary = RunSummary {
            text: String::new(),
            turns: 0,
            tool_calls: 0,
            tool_errors: Vec::new(),
            usage: Usage::default(),
            stop: RunStop::MaxTurns,
            messages: Vec::new(),
        };
        let retry = RunRetryPolicy::default()
            .initial_delay(Duration::from_millis(100))
            .exponentiation_factor(2.0)
            .max_delay(Duration::from_secs(5))
            .max_attempts(MODEL_ATTEMPTS);
        for turn in 1..=u64::from(self.max_turns) {
            summary.turns = turn;
            let Json(answer) = ctx
                .run(|| async {
                    Ok(Json(
                        self.ask_model(&messages, schemas.as_value(), turn).await?,
                    ))
                })
                .name(format!("model t{turn}"))
                .retry_policy(retry.clone())
                .await?;
            summary.usage.add(answer.usage);
            let calls = match &answer.message {
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    if !content.is_empty() {
                        summary.text.clone_from(content);
                    }
                    tool_calls.clone()
                }
                _ => Vec::new(),
            };
            messages.push(answer.message);
            if calls.is_empty() {
                summary.stop = RunStop::Answered;
                break;
            }
            let mut results = Vec::with_capacity(calls.len());
            for (n, call) in calls.into_iter().enumerate() {
                let key = format!("t{turn}.{}", n + 1);
                let (result, class, replayed) = self.step(&ctx, &key, &call, &base).await?;
                summary.tool_calls += 1;
                if let Some(e) = &result.error {
                    summary
                        .tool_errors
                        .push(format!("{}: {}", call.name, e.message));
                }
                self.observe(&StepEvent {
                    run: &run,
                    key: &key,
                    index: summary.tool_calls,
                    tool: &call.name,
                    class,
                    replayed,
                });
                results.push(ToolOutcome { call, result });
            }
            messages.push(Message::Tool { turn, results });
        }
        summary.messages = messages;
        Ok(Json(summary))
    }

    /// The prompts the run waits on, oldest first.
    #[handler]
    async fn pending(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> Result<Json<Vec<Pending>>, HandlerError> {
        Ok(Json(pending_list(
            ctx.get::<Json<Vec<Pending>>>(PENDING).await?,
        )))
    }

    /// Decides on a call waiting for approval.
    #[handler]
    async fn approve(
        &self,
        ctx: SharedWorkflowContext<'_>,
        approval: Json<Approval>,
    ) -> Result<(), HandlerError> {
        let Json(a) = approval;
        let value =
            serde_json::to_value(&a.decision).map_err(|e| TerminalError::new(e.to_string()))?;
        resolve(
            &ctx,
            &a.key,
            "approval",
            |k| matches!(k, PendingKind::Approval),
            value,
        )
        .await
    }

    /// Answers a question the model asked.
    #[handler]
    async fn answer(
        &self,
        ctx: SharedWorkflowContext<'_>,
        reply: Json<Reply>,
    ) -> Result<(), HandlerError> {
        let Json(r) = reply;
        resolve(
            &ctx,
            &r.key,
            "answer",
            |k| matches!(k, PendingKind::Question { .. }),
            Value::String(r.answer),
        )
        .await
    }

    /// Decides about a call whose outcome is unknown.
    #[handler]
    async fn settle(
        &self,
        ctx: SharedWorkflowContext<'_>,
        settlement: Json<Settlement>,
    ) -> Result<(), HandlerError> {
        let Json(s) = settlement;
        let value =
            serde_json::to_value(&s.decision).map_err(|e| TerminalError::new(e.to_string()))?;
        resolve(
            &ctx,
            &s.key,
            "outcome",
            |k| matches!(k, PendingKind::UnknownOutcome),
            value,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_core::{ToolKind, ToolSpec};

    use super::DurableAgent;
    use crate::types::StepClass;

    fn spec(kind: ToolKind) -> ToolSpec {
        ToolSpec::new("t", "A tool.", json!({"type": "object"})).with_kind(kind)
    }

    #[test]
    fn calls_are_journaled_by_the_tools_kind() {
        let class = |s: ToolSpec| DurableAgent::classify(Some(&s));
        assert_eq!(class(spec(ToolKind::Read)), StepClass::Idempotent);
        assert_eq!(
            class(spec(ToolKind::Other).read_only()),
            StepClass::Idempotent
        );
        for kind in [
            ToolKind::Write,
            ToolKind::Exec,
            ToolKind::Network,
            ToolKind::Other,
        ] {
            assert_eq!(class(spec(kind)), StepClass::Effect, "{kind}");
        }
        assert_eq!(class(spec(ToolKind::Ask)), StepClass::Question);
        assert_eq!(
            class(spec(ToolKind::Read).with_tags(["person"])),
            StepClass::Question
        );
        assert_eq!(DurableAgent::classify(None), StepClass::Idempotent);
    }
}
