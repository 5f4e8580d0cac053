//! A tool asks for input in the middle of its call: a form for the person
//! (elicitation), a model's answer (sampling) or the client's roots, through
//! its [`ToolContext`]. The same tool code runs in three places:
//!
//! - under [`McpServer`](crate::McpServer) in a 2025-11-25 session: each
//!   request goes to the client as a server request (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`) and the call waits for the answer;
//! - under `McpServer` in the 2026-07-28 era: the call ends with an
//!   input-required result (SEP-2322) listing what is asked and a sealed
//!   `requestState`; the client calls again with the answers and the tool
//!   runs again from the start, this time getting them (see
//!   `input_required.rs` for the rounds); run as a task, the task waits
//!   in `input_required` instead and `tasks/update` brings the answers
//!   (see `task_input.rs`), so the tool resumes where it asked;
//! - outside MCP (an agent, `tool call`): to the host's hooks in the context:
//!   a form to the asking/approval hooks (one question per field), sampling
//!   to an `Arc<dyn Sampler>` in the context's state, roots to a
//!   [`HostRoots`] in the context's state.
//!
//! Because a 2026-07-28 round runs the tool again from its start, a tool
//! must ask with stable keys and do nothing it cannot repeat before it has
//! every answer it needs.
//!
//! ```no_run
//! use std::collections::BTreeMap;
//! use tool_core::ToolContext;
//! use tool_mcp::input::{self, InputRequest};
//! use tool_mcp::rmcp::model::ElicitationSchema;
//!
//! async fn greet(ctx: &ToolContext) -> Result<String, String> {
//!     let schema = ElicitationSchema::builder()
//!         .required_string_property("name", |s| s)
//!         .build()
//!         .map_err(|e| e.to_string())?;
//!     let asked = input::ask_one(ctx, "user_name", InputRequest::form("What is your name?", schema))
//!         .await
//!         .map_err(|e| e.to_string())?;
//!     let name = asked.form_field("name").and_then(|v| v.as_str().map(str::to_owned));
//!     Ok(format!("Hello, {}!", name.unwrap_or_else(|| "stranger".to_owned())))
//! }
//! ```

#![allow(
    deprecated,
    reason = "sampling and roots are deprecated from 2026-07-28 (SEP-2577), still part of it and of 2025-11-25; a tool may ask for them"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequests, ListRootsRequest, ListRootsResult, Root, SamplingMessage,
};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::oneshot;
use tool_core::ToolContext;

use crate::requests::{self, Sampler};

/// How long a 2025-11-25 client has to answer one request, and a
/// 2026-07-28 task waits for the answers to one [`ask`] through
/// `tasks/update` (300 s, the default wait for a person's answer); then
/// [`InputError::Failed`].
pub const SESSION_INPUT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Most input requests in one [`ask`] (16); more is refused with
/// [`InputError::Invalid`].
pub const MAX_INPUT_REQUESTS: usize = 16;

/// Longest key of an input request, in bytes (64).
pub const MAX_INPUT_KEY_BYTES: usize = 64;

/// The key a confirmation uses in `inputRequests` (`confirm`): a tool may not
/// ask under it.
pub const RESERVED_KEY: &str = crate::approval::CONFIRM_KEY;

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum InputKind {
    /// A form for the person (`elicitation/create`).
    Elicitation,
    /// A model's answer (`sampling/createMessage`).
    Sampling,
    /// The client's roots (`roots/list`).
    Roots,
}

impl std::fmt::Display for InputKind {
    /// The MCP method: `elicitation/create`, `sampling/createMessage`, `roots/list`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Elicitation => "elicitation/create",
            Self::Sampling => "sampling/createMessage",
            Self::Roots => "roots/list",
        })
    }
}

/// One request for input, in MCP's own parameter types (rmcp's).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create` (form or URL mode).
    Elicitation(ElicitRequestParams),
    /// `sampling/createMessage`.
    Sampling(CreateMessageRequestParams),
    /// `roots/list`.
    Roots,
}

impl InputRequest {
    /// A form: `message` above the fields of `schema` (MCP allows a flat
    /// object of primitive fields).
    pub fn form(message: impl Into<String>, schema: ElicitationSchema) -> Self {
        Self::Elicitation(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema: schema,
        })
    }

    /// A sampling request of one user message `text`, at most `max_tokens`
    /// tokens in the answer.
    pub fn sampling_text(text: impl Into<String>, max_tokens: u32) -> Self {
        Self::Sampling(CreateMessageRequestParams::new(
            vec![SamplingMessage::user_text(text)],
            max_tokens,
        ))
    }

    /// The client's roots.
    pub fn roots() -> Self {
        Self::Roots
    }

    /// What it asks for.
    pub fn kind(&self) -> InputKind {
        match self {
            Self::Elicitation(_) => InputKind::Elicitation,
            Self::Sampling(_) => InputKind::Sampling,
            Self::Roots => InputKind::Roots,
        }
    }
}

/// The answer to one [`InputRequest`], of the same kind.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum InputResponse {
    /// The answer to a form: accepted with content, declined or cancelled.
    Elicitation(ElicitResult),
    /// The model's message.
    Sampling(CreateMessageResult),
    /// The client's roots.
    Roots(ListRootsResult),
}

impl InputResponse {
    /// The kind of request it answers.
    pub fn kind(&self) -> InputKind {
        match self {
            Self::Elicitation(_) => InputKind::Elicitation,
            Self::Sampling(_) => InputKind::Sampling,
            Self::Roots(_) => InputKind::Roots,
        }
    }

    /// The value of `field` in an accepted form; `None` for anything else.
    pub fn form_field(&self, field: &str) -> Option<&Value> {
        match self {
            Self::Elicitation(answer) if answer.action == ElicitationAction::Accept => {
                answer.content.as_ref()?.get(field)
            }
            _ => None,
        }
    }

    /// The text of a sampling answer (its first text block); `None` for
    /// anything else.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::Sampling(answer) => answer
                .message
                .content
                .first()
                .and_then(|block| block.as_text())
                .map(|t| t.text.as_str()),
            _ => None,
        }
    }

    /// The URIs of a roots answer; empty for anything else.
    pub fn root_uris(&self) -> Vec<&str> {
        match self {
            Self::Roots(answer) => answer.roots.iter().map(|r| r.uri.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    /// Reads a client's answer (JSON) as the answer to a request of `kind`;
    /// `None` when it is not one (the request is then asked again).
    pub(crate) fn from_wire(kind: InputKind, value: &Value) -> Option<Self> {
        if !value.is_object() {
            return None;
        }
        match kind {
            InputKind::Elicitation => serde_json::from_value(value.clone())
                .ok()
                .map(Self::Elicitation),
            InputKind::Sampling => serde_json::from_value(value.clone())
                .ok()
                .map(Self::Sampling),
            InputKind::Roots => serde_json::from_value(value.clone()).ok().map(Self::Roots),
        }
    }
}

/// Why a tool got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// Nobody here can answer this kind of request: the MCP client did not
    /// declare the capability, or (outside MCP) the host put no hook for it
    /// in the context. Check first with [`can_ask`].
    #[error("cannot ask for {0} here: {1}")]
    Unsupported(InputKind, String),
    /// The requests themselves are wrong (an empty or too long key, the
    /// reserved key `confirm`, too many requests).
    #[error("invalid input request: {0}")]
    Invalid(String),
    /// The client was asked and failed to answer (its error text).
    #[error("the client did not answer the {0} request: {1}")]
    Failed(InputKind, String),
}

// ---------------------------------------------------------------------------
// 2026-07-28: one round of a call (input_required.rs makes and reads it).
// ---------------------------------------------------------------------------

/// Why a round ended before what runs in it did.
pub(crate) enum Stop {
    /// It asked for input the round has no answer to.
    Ask(InputRequests),
    /// It cannot go on without a capability the client did not declare.
    Capability(InputKind),
}

/// One round of a call: the client's capabilities, the answers it has, and
/// where the tool's unanswered requests go.
pub(crate) struct Round {
    elicitation: bool,
    sampling: bool,
    roots: bool,
    answers: BTreeMap<String, Value>,
    /// Answers the tool used in this round (carried to the next).
    used: Mutex<BTreeMap<String, Value>>,
    stop: Mutex<Option<oneshot::Sender<Stop>>>,
}

impl Round {
    pub(crate) fn new(
        capabilities: Option<&ClientCapabilities>,
        answers: BTreeMap<String, Value>,
        stop: oneshot::Sender<Stop>,
    ) -> Self {
        Self {
            elicitation: capabilities
                .and_then(|c| c.elicitation.as_ref())
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            sampling: capabilities.is_some_and(|c| c.sampling.is_some()),
            roots: capabilities.is_some_and(|c| c.roots.is_some()),
            answers,
            used: Mutex::new(BTreeMap::new()),
            stop: Mutex::new(Some(stop)),
        }
    }

    /// The answers the tool used in this round, by key.
    pub(crate) fn used(&self) -> BTreeMap<String, Value> {
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The client declared `kind` in this request's capabilities.
    pub(crate) fn supports(&self, kind: InputKind) -> bool {
        match kind {
            InputKind::Elicitation => self.elicitation,
            InputKind::Sampling => self.sampling,
            InputKind::Roots => self.roots,
        }
    }

    /// The answers to `requests` when the round has them all; else the
    /// missing ones are reported and this never returns.
    pub(crate) async fn ask(
        &self,
        requests: BTreeMap<String, InputRequest>,
    ) -> BTreeMap<String, InputResponse> {
        let mut answered = BTreeMap::new();
        let mut missing = InputRequests::new();
        for (key, request) in requests {
            let answer = self
                .answers
                .get(&key)
                .and_then(|v| InputResponse::from_wire(request.kind(), v).map(|r| (v, r)));
            // An answer that does not fit its form is no answer: the form
            // is asked again, saying why (review 26, F11).
            let refused = match (&request, &answer) {
                (InputRequest::Elicitation(params), Some((_, InputResponse::Elicitation(a)))) => {
                    crate::form_check::check_answer(params, a).err()
                }
                _ => None,
            };
            match (answer, refused) {
                (_, Some(why)) => {
                    let InputRequest::Elicitation(params) = &request else {
                        continue;
                    };
                    let again = crate::form_check::asked_again(params, &why);
                    missing.insert(key, wire_request(InputRequest::Elicitation(again)));
                }
                (Some((raw, response)), None) => {
                    self.used
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(key.clone(), raw.clone());
                    answered.insert(key, response);
                }
                (None, None) => {
                    missing.insert(key, wire_request(request));
                }
            }
        }
        if missing.is_empty() {
            return answered;
        }
        self.stop(Stop::Ask(missing)).await
    }

    /// Ends the round with `why`: the request is dropped, never resumed.
    async fn stop<T>(&self, why: Stop) -> T {
        let sender = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            let _ = sender.send(why);
        }
        std::future::pending().await
    }
}

/// The wire form of a request.
pub(crate) fn wire_request(request: InputRequest) -> rmcp::model::InputRequest {
    match request {
        InputRequest::Elicitation(params) => {
            rmcp::model::InputRequest::Elicitation(ElicitRequest::new(params))
        }
        InputRequest::Sampling(params) => {
            rmcp::model::InputRequest::CreateMessage(CreateMessageRequest::new(params))
        }
        InputRequest::Roots => rmcp::model::InputRequest::ListRoots(ListRootsRequest::default()),
    }
}

/// The 2025-11-25 route: the session's client, asked by server requests.
#[derive(Clone)]
pub(crate) struct SessionRoute(pub(crate) Peer<RoleServer>);

/// Roots offered to tools run outside MCP (an agent, `tool call`): put it in
/// the context with `with_state(HostRoots(...))` and [`ask`] answers
/// `roots/list` with it.
#[derive(Debug, Clone, Default)]
pub struct HostRoots(pub Vec<Root>);

/// A model offered to tools run outside MCP for sampling: put
/// `HostSampler(Arc::new(sampler))` in the context with `with_state`.
#[derive(Clone)]
pub struct HostSampler(pub Arc<dyn Sampler>);

impl std::fmt::Debug for HostSampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostSampler")
    }
}

/// What [`TaskChannel::ask_task`] returns: the answers by key, once all
/// are in.
pub(crate) type TaskAsk<'a> = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<BTreeMap<String, InputResponse>, InputError>>
            + Send
            + 'a,
    >,
>;

/// The input side of a running task as this module sees it (implemented by
/// `task_input::TaskInput`; a trait so that this module does not name that
/// one, which builds on this one's types).
pub(crate) trait TaskChannel: Send + Sync {
    /// Whether the task's client declared `kind`.
    fn supports(&self, kind: InputKind) -> bool;
    /// Whether the task exists (asks park it) rather than gathering its
    /// first input in rounds.
    fn is_live(&self) -> bool;
    /// Leaves the phase before the task.
    fn escalate(&self);
    /// Parks the task until `requests` are answered.
    fn ask_task<'a>(
        &'a self,
        cancel: &'a tokio_util::sync::CancellationToken,
        requests: BTreeMap<String, InputRequest>,
    ) -> TaskAsk<'a>;
}

/// Whether `ctx` can ask for `kind` now: the MCP client declared the
/// capability (per request in 2026-07-28, at `initialize` in 2025-11-25), or
/// outside MCP the host put the hook in the context (an asker or approver
/// for forms, a [`HostSampler`], [`HostRoots`]).
pub fn can_ask(ctx: &ToolContext, kind: InputKind) -> bool {
    if let Some(task) = ctx.state::<Arc<dyn TaskChannel>>() {
        return task.supports(kind);
    }
    if let Some(round) = ctx.state::<Arc<Round>>() {
        return round.supports(kind);
    }
    if let Some(route) = ctx.state::<SessionRoute>() {
        return session_supports(&route.0.0, kind);
    }
    match kind {
        InputKind::Elicitation => ctx.asker().is_some() || ctx.approver().is_some(),
        InputKind::Sampling => ctx.state::<HostSampler>().is_some(),
        InputKind::Roots => ctx.state::<HostRoots>().is_some(),
    }
}

/// Declares that the request cannot be served without `kind`: when the
/// client can answer it, `Ok`. Otherwise, in the 2026-07-28 era, the
/// request ends with the protocol error `-32021` (missing required client
/// capability, `data.requiredCapabilities` naming it; HTTP 400) and this
/// never returns; in a 2025-11-25 session or outside MCP it is
/// [`InputError::Unsupported`], for the tool to report.
///
/// # Errors
/// [`InputError::Unsupported`] as above.
pub async fn require(ctx: &ToolContext, kind: InputKind) -> Result<(), InputError> {
    if can_ask(ctx, kind) {
        return Ok(());
    }
    let task_live = ctx
        .state::<Arc<dyn TaskChannel>>()
        .is_some_and(|t| t.is_live());
    if let Some(round) = ctx.state::<Arc<Round>>().filter(|_| !task_live) {
        return round.stop(Stop::Capability(kind)).await;
    }
    Err(InputError::Unsupported(kind, unsupported_reason(ctx)))
}

/// Asks one request: [`ask`] with one entry.
///
/// # Errors
/// As [`ask`].
pub async fn ask_one(
    ctx: &ToolContext,
    key: &str,
    request: InputRequest,
) -> Result<InputResponse, InputError> {
    let mut asked = ask(ctx, BTreeMap::from([(key.to_owned(), request)])).await?;
    asked
        .remove(key)
        .ok_or_else(|| InputError::Invalid(format!("no answer under `{key}`")))
}

/// Asks every request in `requests` (keyed by names the tool chooses,
/// stable across runs) and returns the answers under the same keys.
///
/// In a 2026-07-28 call whose answers are not all in yet, this never
/// returns: the server ends the call with an input-required result and the
/// tool runs again when the client brings the answers.
///
/// # Errors
/// [`InputError::Invalid`] for an empty key, one over
/// [`MAX_INPUT_KEY_BYTES`], the [`RESERVED_KEY`], or more than
/// [`MAX_INPUT_REQUESTS`] requests; [`InputError::Unsupported`] when a
/// request's kind cannot be asked here (see [`can_ask`]); nothing is asked
/// then. [`InputError::Failed`] when a 2025-11-25 client answered with an
/// error, did not answer within [`SESSION_INPUT_TIMEOUT`], or the call was
/// cancelled while waiting; or when the host's sampler failed.
pub async fn ask(
    ctx: &ToolContext,
    requests: BTreeMap<String, InputRequest>,
) -> Result<BTreeMap<String, InputResponse>, InputError> {
    check(&requests)?;
    for request in requests.values() {
        let kind = request.kind();
        if !can_ask(ctx, kind) {
            return Err(InputError::Unsupported(kind, unsupported_reason(ctx)));
        }
    }
    if let Some(task) = ctx.state::<Arc<dyn TaskChannel>>() {
        let task: Arc<dyn TaskChannel> = Arc::clone(&task);
        // Before the task exists (a tool that gathers its first input in
        // input-required rounds): the round answers, then the task starts.
        if !task.is_live()
            && let Some(round) = ctx.state::<Arc<Round>>()
        {
            let answered = round.ask(requests).await;
            task.escalate();
            return Ok(answered);
        }
        return task.ask_task(ctx.cancellation_token(), requests).await;
    }
    if let Some(round) = ctx.state::<Arc<Round>>() {
        return Ok(round.ask(requests).await);
    }
    if let Some(route) = ctx.state::<SessionRoute>() {
        return ask_session(ctx, &route.0.0, requests).await;
    }
    ask_host(ctx, requests).await
}

fn check(requests: &BTreeMap<String, InputRequest>) -> Result<(), InputError> {
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(InputError::Invalid(format!(
            "{} requests at once; at most {MAX_INPUT_REQUESTS}",
            requests.len()
        )));
    }
    for key in requests.keys() {
        if key.is_empty() || key.len() > MAX_INPUT_KEY_BYTES {
            return Err(InputError::Invalid(format!(
                "a key must be 1 to {MAX_INPUT_KEY_BYTES} bytes; `{}` is {}",
                tool_rules::text::clip(key, tool_rules::text::Clip::chars(80)),
                key.len()
            )));
        }
        if key == RESERVED_KEY {
            return Err(InputError::Invalid(format!(
                "the key `{RESERVED_KEY}` is the confirmation's; choose another"
            )));
        }
    }
    Ok(())
}

fn unsupported_reason(ctx: &ToolContext) -> String {
    if ctx.state::<Arc<Round>>().is_some()
        || ctx.state::<SessionRoute>().is_some()
        || ctx.state::<Arc<dyn TaskChannel>>().is_some()
    {
        "the MCP client did not declare this capability".to_owned()
    } else {
        "the host gave no hook for it (an asker, a HostSampler or HostRoots in the context)"
            .to_owned()
    }
}

fn session_supports(peer: &Peer<RoleServer>, kind: InputKind) -> bool {
    let Some(info) = peer.peer_info() else {
        return false;
    };
    match kind {
        InputKind::Elicitation => peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form),
        InputKind::Sampling => info.capabilities.sampling.is_some(),
        InputKind::Roots => info.capabilities.roots.is_some(),
    }
}

/// 2025-11-25: one server request after another, in key order, each given
/// at most [`SESSION_INPUT_TIMEOUT`] and given up when the call is cancelled.
async fn ask_session(
    ctx: &ToolContext,
    peer: &Peer<RoleServer>,
    requests: BTreeMap<String, InputRequest>,
) -> Result<BTreeMap<String, InputResponse>, InputError> {
    let mut out = BTreeMap::new();
    for (key, request) in requests {
        let kind = request.kind();
        let failed = |e: rmcp::service::ServiceError| InputError::Failed(kind, e.to_string());
        let asked = async {
            Ok(match request {
                InputRequest::Elicitation(params) => {
                    InputResponse::Elicitation(elicit_checked(peer, params).await?)
                }
                InputRequest::Sampling(params) => {
                    InputResponse::Sampling(peer.create_message(params).await.map_err(failed)?)
                }
                InputRequest::Roots => {
                    InputResponse::Roots(peer.list_roots().await.map_err(failed)?)
                }
            })
        };
        let answer = tokio::select! {
            answer = tokio::time::timeout(SESSION_INPUT_TIMEOUT, asked) => answer.unwrap_or_else(|_| {
                Err(InputError::Failed(
                    kind,
                    format!("no answer within {} s", SESSION_INPUT_TIMEOUT.as_secs()),
                ))
            })?,
            () = ctx.cancellation_token().cancelled() => {
                return Err(InputError::Failed(kind, "the call was cancelled".to_owned()));
            }
        };
        out.insert(key, answer);
    }
    Ok(out)
}

/// 2025-11-25: one form asked of the session's client; an answer that does
/// not fit the form is refused and the form asked again, starting with
/// why, at most [`MAX_FORM_ATTEMPTS`](crate::form_check::MAX_FORM_ATTEMPTS)
/// times (review 26, F11).
async fn elicit_checked(
    peer: &Peer<RoleServer>,
    params: ElicitRequestParams,
) -> Result<ElicitResult, InputError> {
    let failed =
        |e: rmcp::service::ServiceError| InputError::Failed(InputKind::Elicitation, e.to_string());
    let mut asked = params.clone();
    let mut why = String::new();
    for _attempt in 0..crate::form_check::MAX_FORM_ATTEMPTS {
        let answer = peer.create_elicitation(asked).await.map_err(failed)?;
        match crate::form_check::check_answer(&params, &answer) {
            Ok(()) => return Ok(answer),
            Err(refused) => {
                asked = crate::form_check::asked_again(&params, &refused);
                why = refused;
            }
        }
    }
    Err(InputError::Failed(
        InputKind::Elicitation,
        format!(
            "the answer did not fit the form {} times: {why}",
            crate::form_check::MAX_FORM_ATTEMPTS
        ),
    ))
}

/// Outside MCP: the host's hooks. A form goes through the asking/approval
/// hooks (one question per field; no answer is a declined form), sampling
/// to the [`HostSampler`], roots from [`HostRoots`].
async fn ask_host(
    ctx: &ToolContext,
    requests: BTreeMap<String, InputRequest>,
) -> Result<BTreeMap<String, InputResponse>, InputError> {
    let mut out = BTreeMap::new();
    for (key, request) in requests {
        let kind = request.kind();
        let answer = match request {
            InputRequest::Elicitation(params) => {
                let params = serde_json::to_value(&params).unwrap_or(Value::Null);
                let answer = requests::elicit(ctx, "this tool", &params, None).await;
                serde_json::from_value(answer)
                    .map(InputResponse::Elicitation)
                    .unwrap_or_else(|_| {
                        InputResponse::Elicitation(ElicitResult::new(ElicitationAction::Decline))
                    })
            }
            InputRequest::Sampling(params) => {
                let sampler = ctx.state::<HostSampler>().map(|s| Arc::clone(&s.0.0));
                let params = serde_json::to_value(&params).unwrap_or(Value::Null);
                let answer = requests::sample(sampler.as_ref(), "this tool", &params)
                    .await
                    .map_err(|e| InputError::Failed(kind, e))?;
                serde_json::from_value(answer)
                    .map(InputResponse::Sampling)
                    .map_err(|e| InputError::Failed(kind, e.to_string()))?
            }
            InputRequest::Roots => {
                let roots = ctx
                    .state::<HostRoots>()
                    .map(|r| r.0.0.clone())
                    .unwrap_or_default();
                InputResponse::Roots(ListRootsResult::new(roots))
            }
        };
        out.insert(key, answer);
    }
    Ok(out)
}
