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
    Approval, Effect, OutcomeDecision, Pending, PendingKind, Reply, Resolution, RunRequest,
    RunStop, RunSummary, Settlement, StepClass, StepEvent, arguments_json,
};

/// The default turn limit of a durable run: 25 model requests.
pub const DEFAULT_MAX_TURNS: u32 = 25;

/// How often a failed model request is tried in all before the run fails
/// (Restate retries the step, 100 ms then doubling, at most 5 s apart): 6.
pub const MODEL_ATTEMPTS: u32 = 6;

/// The state key of the run's pending prompts.
const PENDING: &str = "pending";

/// The state key of the prompts a person resolved (one entry per key and
/// kind, the last attempt), so a late second resolution is told "already"
/// rather than "not pending". At most one entry per call of the run.
const RESOLVED: &str = "resolved";

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
///   that is not pending, and (409, "already …") when another request
///   resolved the same prompt first, even at the same moment: exactly one
///   resolution of a prompt is taken and told so.
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
        let pending = |kind, attempt| Pending {
            key: key.to_owned(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: arguments_json(&call.arguments),
            attempt,
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
                    pending(PendingKind::Question { question, choices }, 1),
                    &promise_name("answer", key, 1),
                )
                .await?;
            let answer: String = serde_json::from_value(answer).unwrap_or_default();
            return Ok((ToolResult::ok(answer), class, false));
        }
        let call_ctx = if self.needs_approval(spec.as_ref()) {
            let decision = self
                .wait(
                    ctx,
                    pending(PendingKind::Approval, 1),
                    &promise_name("approval", key, 1),
                )
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
        // decides. A rerun goes through the same protocol (attempt 2, …),
        // and each unknown attempt has its own promise: a decision about
        // attempt 1 never lets attempt 2 run again.
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
                .wait(
                    ctx,
                    pending(PendingKind::UnknownOutcome, attempt),
                    &promise_name("outcome", key, attempt),
                )
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

    /// Lists `item` as pending, waits for the promise `name`, moves the
    /// item to the resolved list; the person's value.
    async fn wait(
        &self,
        ctx: &WorkflowContext<'_>,
        item: Pending,
        name: &str,
    ) -> Result<Value, HandlerError> {
        let key = item.key.clone();
        let mut list = pending_list(ctx.get::<Json<Vec<Pending>>>(PENDING).await?);
        list.retain(|p| p.key != key);
        list.push(item.clone());
        ctx.set(PENDING, Json(list));
        let Json(resolution) = ctx.promise::<Json<Resolution>>(name).await?;
        // Recorded as resolved before it leaves the pending list, so a
        // resolver reading the state in between finds it in one of them.
        let mut done = pending_list(ctx.get::<Json<Vec<Pending>>>(RESOLVED).await?);
        done.retain(|p| !(p.key == key && same_kind(&p.kind, &item.kind)));
        done.push(item);
        ctx.set(RESOLVED, Json(done));
        let mut list = pending_list(ctx.get::<Json<Vec<Pending>>>(PENDING).await?);
        list.retain(|p| p.key != key);
        ctx.set(PENDING, Json(list));
        Ok(resolution.value)
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

/// The name of the durable promise a person resolves: `{prefix}:{key}`
/// for the first attempt (approvals, questions, the model's own call),
/// `{prefix}:{key}#{attempt}` for a rerun's. Derived from the journaled
/// step sequence, so every replay waits on the same promise.
fn promise_name(prefix: &str, key: &str, attempt: u32) -> String {
    if attempt <= 1 {
        format!("{prefix}:{key}")
    } else {
        format!("{prefix}:{key}#{attempt}")
    }
}

fn same_kind(a: &PendingKind, b: &PendingKind) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// Where a prompt a person wants to resolve stands.
enum Lookup {
    /// Waiting: this entry.
    Pending(Pending),
    /// Already resolved; the last attempt resolved.
    Resolved(u32),
}

/// The prompt under `key` of the kind `kind` accepts: pending, or already
/// resolved; a 404 naming `what` when the run never asked it.
async fn lookup(
    ctx: &SharedWorkflowContext<'_>,
    key: &str,
    what: &str,
    kind: fn(&PendingKind) -> bool,
) -> Result<Lookup, HandlerError> {
    if let Some(p) = pending_list(ctx.get::<Json<Vec<Pending>>>(PENDING).await?)
        .into_iter()
        .find(|p| p.key == key && kind(&p.kind))
    {
        return Ok(Lookup::Pending(p));
    }
    if let Some(p) = pending_list(ctx.get::<Json<Vec<Pending>>>(RESOLVED).await?)
        .into_iter()
        .find(|p| p.key == key && kind(&p.kind))
    {
        return Ok(Lookup::Resolved(p.attempt));
    }
    Err(TerminalError::new_with_code(
        404,
        format!("no {what} is pending under key {key:?} (see the run's `pending` list)"),
    )
    .into())
}

/// The 409 a second resolution of one prompt gets.
fn already(message: String) -> HandlerError {
    TerminalError::new_with_code(409, message).into()
}

/// Resolves the promise `name` with `value`, and checks that this request's
/// value is the one taken: a promise resolves once, and the pending list
/// still shows a prompt until the run wakes, so two requests can both find
/// it pending. The value is stored with this invocation's id and read back
/// after resolving; the loser is refused with 409 and `refused` (which
/// says "already …").
async fn resolve(
    ctx: &SharedWorkflowContext<'_>,
    name: &str,
    value: Value,
    refused: &str,
) -> Result<(), HandlerError> {
    let conflict = || already(refused.to_owned());
    if ctx.peek_promise::<Json<Resolution>>(name).await?.is_some() {
        return Err(conflict());
    }
    let by = ctx.invocation_id().to_owned();
    ctx.resolve_promise(
        name,
        Json(Resolution {
            by: by.clone(),
            value,
        }),
    );
    match ctx.peek_promise::<Json<Resolution>>(name).await? {
        Some(Json(taken)) if taken.by == by => Ok(()),
        _ => Err(conflict()),
    }
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
        let refused = format!(
            "the call {:?} was already approved or denied by another request; this decision was not used",
            a.key
        );
        match lookup(&ctx, &a.key, "approval", |k| {
            matches!(k, PendingKind::Approval)
        })
        .await?
        {
            Lookup::Pending(entry) => {
                let name = promise_name("approval", &entry.key, entry.attempt);
                resolve(&ctx, &name, value, &refused).await
            }
            Lookup::Resolved(_) => Err(already(refused)),
        }
    }

    /// Answers a question the model asked.
    #[handler]
    async fn answer(
        &self,
        ctx: SharedWorkflowContext<'_>,
        reply: Json<Reply>,
    ) -> Result<(), HandlerError> {
        let Json(r) = reply;
        let refused = format!(
            "the question {:?} was already answered by another request; this answer was not used",
            r.key
        );
        match lookup(&ctx, &r.key, "question", |k| {
            matches!(k, PendingKind::Question { .. })
        })
        .await?
        {
            Lookup::Pending(entry) => {
                let name = promise_name("answer", &entry.key, entry.attempt);
                resolve(&ctx, &name, Value::String(r.answer), &refused).await
            }
            Lookup::Resolved(_) => Err(already(refused)),
        }
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
        let entry = match lookup(&ctx, &s.key, "unknown outcome", |k| {
            matches!(k, PendingKind::UnknownOutcome)
        })
        .await?
        {
            Lookup::Pending(entry) => entry,
            Lookup::Resolved(last) => {
                return match s.attempt {
                    Some(a) if a > last => Err(TerminalError::new_with_code(
                        404,
                        format!(
                            "attempt {a} of {:?} is not pending: attempt {last} was settled last",
                            s.key
                        ),
                    )
                    .into()),
                    a => Err(already(format!(
                        "attempt {} of {:?} was already settled by another request; this decision was not used",
                        a.unwrap_or(last),
                        s.key
                    ))),
                };
            }
        };
        let attempt = s.attempt.unwrap_or(entry.attempt);
        if attempt < entry.attempt {
            return Err(TerminalError::new_with_code(
                409,
                format!(
                    "attempt {attempt} of {:?} was already settled; attempt {} is pending now \
                     (its outcome is unknown too): check it and settle with \"attempt\": {}",
                    s.key, entry.attempt, entry.attempt
                ),
            )
            .into());
        }
        if attempt > entry.attempt {
            return Err(TerminalError::new_with_code(
                404,
                format!(
                    "attempt {attempt} of {:?} is not pending; attempt {} is",
                    s.key, entry.attempt
                ),
            )
            .into());
        }
        resolve(
            &ctx,
            &promise_name("outcome", &entry.key, attempt),
            value,
            &format!(
                "attempt {attempt} of {:?} was already settled by another request; this decision was not used",
                s.key
            ),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_core::{ToolKind, ToolSpec};

    use super::{DurableAgent, promise_name};
    use crate::types::{OutcomeDecision, Settlement, StepClass};

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

    #[test]
    fn each_attempt_of_a_call_has_its_own_promise() {
        assert_eq!(promise_name("outcome", "t3.1", 1), "outcome:t3.1");
        assert_eq!(promise_name("outcome", "t3.1", 2), "outcome:t3.1#2");
        assert_eq!(promise_name("outcome", "t3.1", 3), "outcome:t3.1#3");
        assert_eq!(promise_name("answer", "t1.1", 1), "answer:t1.1");
    }

    #[test]
    fn a_settlement_names_its_attempt_or_not() {
        let with: Settlement =
            serde_json::from_value(json!({"key": "t3.1", "attempt": 2, "decision": "rerun"}))
                .unwrap();
        assert_eq!(with.attempt, Some(2));
        assert_eq!(with.decision, OutcomeDecision::Rerun);
        let without: Settlement =
            serde_json::from_value(json!({"key": "t3.1", "decision": "skip", "result": "checked"}))
                .unwrap();
        assert_eq!(without.attempt, None);
        assert_eq!(
            without.decision,
            OutcomeDecision::Skip {
                result: "checked".to_owned(),
                is_error: false
            }
        );
    }
}
