//! A running task that waits for input (SEP-2663 with SEP-2322): in the
//! 2026-07-28 era a task's tool asks through its context as any tool does
//! ([`crate::input::ask`], a [`Question`] through its asker, a confirmation
//! through its approver: cross-cutting §4, one way to ask a person), and
//! the questions become the task's input requests.
//!
//! - **Parked**: while a request is unanswered the task's status is
//!   `input_required` and `tasks/get` lists every pending request under
//!   `inputRequests` (keys: the tool's own for [`crate::input::ask`];
//!   `question-<n>` for a question, an `answer` form as in 2025-11-25;
//!   `confirm` for a confirmation, the same form as a `tools/call` round).
//! - **Answered** by `tasks/update {taskId, inputResponses}`: each response
//!   under a pending key is checked (the shape of an answer to that kind of
//!   request, at most [`MAX_TASK_INPUT_RESPONSE_BYTES`]); when one fails,
//!   the update is refused with `-32602` naming the keys and nothing is
//!   applied. Keys nobody waits for are ignored (SEP-2322), so a partial
//!   update leaves the task `input_required` with the keys still missing.
//! - **Ended** by the call's cancellation (`tasks/cancel`, the task's time
//!   to live, the server stopping), by the question's or approval's timeout
//!   (tool-core applies them), or for [`crate::input::ask`] by
//!   [`SESSION_INPUT_TIMEOUT`]: the request is withdrawn from
//!   `inputRequests` and the tool gets no answer.
//! - **Bounded**: at most [`MAX_INPUT_REQUESTS`] requests pending per task
//!   (an ask that would go over is refused with [`InputError::Invalid`]).
//!
//! A task of a tool listed with
//! [`McpServer::with_input_before_task`](crate::McpServer::with_input_before_task)
//! gathers its first input before it becomes a task: its run starts inside
//! the `tools/call` as an input-required round, and the task is created
//! once its first ask has every answer (or it asks a person, or it ends).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, ElicitRequestParams, InputRequests, InputResponses};
use tokio::sync::oneshot;
use tool_core::{Answer, ApprovalDecision, ApprovalRequest, Approver, Asker, Question};

use crate::input::{
    InputError, InputKind, InputRequest, InputResponse, MAX_INPUT_REQUESTS, SESSION_INPUT_TIMEOUT,
    TaskChannel,
};

/// Largest answer one `tasks/update` may carry under one key, serialised:
/// 64 KiB (a bigger one is refused with `-32602`).
pub const MAX_TASK_INPUT_RESPONSE_BYTES: usize = 64 * 1024;

/// One unanswered request of a task.
struct Pending {
    kind: InputKind,
    wire: rmcp::model::InputRequest,
    answer: oneshot::Sender<InputResponse>,
}

/// The input side of one running task: its pending requests and what the
/// client of the creating request can answer.
pub(crate) struct TaskInput {
    elicitation: bool,
    sampling: bool,
    roots: bool,
    pending: Mutex<BTreeMap<String, Pending>>,
    /// `false` while the run gathers its first input as input-required
    /// rounds (before the task exists); asks then go to the round.
    live: AtomicBool,
    /// Told when the run leaves that phase: the task is to be created.
    escalate: Mutex<Option<oneshot::Sender<()>>>,
    /// Numbers the keys of questions (`question-<n>`).
    questions: AtomicU64,
}

/// The tasks of this process that may wait for input, by task id.
fn waiting() -> &'static Mutex<HashMap<String, Arc<TaskInput>>> {
    static WAITING: OnceLock<Mutex<HashMap<String, Arc<TaskInput>>>> = OnceLock::new();
    WAITING.get_or_init(|| Mutex::new(HashMap::new()))
}

impl TaskInput {
    /// The input side of a task created by a request with `capabilities`;
    /// `live` unless the run first gathers input before the task exists
    /// (then `escalate` is told when it has).
    pub(crate) fn new(
        capabilities: Option<&ClientCapabilities>,
        escalate: Option<oneshot::Sender<()>>,
    ) -> Self {
        Self {
            elicitation: capabilities
                .and_then(|c| c.elicitation.as_ref())
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            sampling: capabilities.is_some_and(|c| c.sampling.is_some()),
            roots: capabilities.is_some_and(|c| c.roots.is_some()),
            pending: Mutex::new(BTreeMap::new()),
            live: AtomicBool::new(escalate.is_none()),
            escalate: Mutex::new(escalate),
            questions: AtomicU64::new(0),
        }
    }

    /// Makes it answerable through `tasks/get` / `tasks/update` as task `id`.
    pub(crate) fn register(self: &Arc<Self>, id: &str) {
        waiting()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), Arc::clone(self));
    }

    /// Forgets task `id` (its run ended).
    pub(crate) fn unregister(id: &str) {
        waiting()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// The input side of task `id`, while it runs.
    fn of(id: &str) -> Option<Arc<Self>> {
        waiting()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Whether asks go to the task (not to a round before it exists).
    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::SeqCst)
    }

    /// Leaves the phase before the task: from now on asks park the task,
    /// and the server is told to create it.
    pub(crate) fn escalate(&self) {
        self.live.store(true, Ordering::SeqCst);
        let sender = self
            .escalate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            let _ = sender.send(());
        }
    }

    /// The client of the creating request declared `kind`.
    pub(crate) fn supports(&self, kind: InputKind) -> bool {
        match kind {
            InputKind::Elicitation => self.elicitation,
            InputKind::Sampling => self.sampling,
            InputKind::Roots => self.roots,
        }
    }

    /// The pending requests (what `tasks/get` shows); `None` when none.
    fn requests(&self) -> Option<InputRequests> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        (!pending.is_empty()).then(|| {
            pending
                .iter()
                .map(|(k, p)| (k.clone(), p.wire.clone()))
                .collect()
        })
    }

    /// Parks the task with `requests` until every one is answered through
    /// `tasks/update`, `cancel` is cancelled, or [`SESSION_INPUT_TIMEOUT`]
    /// passes; the requests are withdrawn when the wait ends early or is
    /// dropped (a question's timeout).
    ///
    /// # Errors
    /// [`InputError::Unsupported`] for a kind the client did not declare;
    /// [`InputError::Invalid`] for a key already pending or more than
    /// [`MAX_INPUT_REQUESTS`] pending at once; [`InputError::Failed`] when
    /// the wait ended without the answers.
    pub(crate) async fn ask(
        self: &Arc<Self>,
        cancel: &tokio_util::sync::CancellationToken,
        requests: BTreeMap<String, InputRequest>,
    ) -> Result<BTreeMap<String, InputResponse>, InputError> {
        self.escalate();
        let mut waits = Vec::with_capacity(requests.len());
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, request) in &requests {
                if !self.supports(request.kind()) {
                    return Err(InputError::Unsupported(
                        request.kind(),
                        "the MCP client did not declare this capability".to_owned(),
                    ));
                }
                if pending.contains_key(key) {
                    return Err(InputError::Invalid(format!(
                        "`{key}` is already asked and not answered yet"
                    )));
                }
            }
            if pending.len() + requests.len() > MAX_INPUT_REQUESTS {
                return Err(InputError::Invalid(format!(
                    "{} requests would wait at once; at most {MAX_INPUT_REQUESTS} per task",
                    pending.len() + requests.len()
                )));
            }
            for (key, request) in requests {
                let (tx, rx) = oneshot::channel();
                let kind = request.kind();
                pending.insert(
                    key.clone(),
                    Pending {
                        kind,
                        wire: crate::input::wire_request(request),
                        answer: tx,
                    },
                );
                waits.push((key, kind, rx));
            }
        }
        let guard = Withdraw {
            input: Arc::clone(self),
            keys: waits.iter().map(|(k, _, _)| k.clone()).collect(),
        };
        let first_kind = waits
            .first()
            .map_or(InputKind::Elicitation, |(_, kind, _)| *kind);
        let all = async {
            let mut out = BTreeMap::new();
            for (key, kind, rx) in waits {
                let answer = rx
                    .await
                    .map_err(|_| InputError::Failed(kind, "the task stopped waiting".to_owned()))?;
                out.insert(key, answer);
            }
            Ok(out)
        };
        let answered = tokio::select! {
            answered = tokio::time::timeout(SESSION_INPUT_TIMEOUT, all) => answered.unwrap_or_else(|_| {
                Err(InputError::Failed(
                    first_kind,
                    format!("no answer within {} s", SESSION_INPUT_TIMEOUT.as_secs()),
                ))
            }),
            () = cancel.cancelled() => Err(InputError::Failed(
                first_kind,
                "the task was cancelled".to_owned(),
            )),
        };
        drop(guard);
        answered
    }

    /// Applies `responses` of a `tasks/update`: every response under a
    /// pending key must be an answer of that request's kind within the
    /// size limit, or nothing is applied.
    fn answer(&self, responses: &InputResponses) -> Result<(), ErrorData> {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let mut good = Vec::new();
        let mut bad = Vec::new();
        for (key, value) in responses {
            let Some(waiting) = pending.get(key) else {
                continue;
            };
            let size = serde_json::to_vec(value).map_or(usize::MAX, |b| b.len());
            let form = match &waiting.wire {
                rmcp::model::InputRequest::Elicitation(request) => Some(&request.params),
                _ => None,
            };
            let misfit = |answer: &InputResponse| match (form, answer) {
                (Some(params), InputResponse::Elicitation(a)) => {
                    crate::form_check::check_answer(params, a).err()
                }
                _ => None,
            };
            match InputResponse::from_wire(waiting.kind, value) {
                Some(_) if size > MAX_TASK_INPUT_RESPONSE_BYTES => bad.push(format!(
                    "`{key}` is {size} bytes, over the limit of {MAX_TASK_INPUT_RESPONSE_BYTES}"
                )),
                // An answer that does not fit its form (review 26, F11):
                // refused, the request stays pending for another answer.
                Some(answer) if misfit(&answer).is_some() => bad.push(format!(
                    "`{key}` does not fit its form: {}",
                    misfit(&answer).unwrap_or_default()
                )),
                Some(answer) => good.push((key.clone(), answer)),
                None => bad.push(format!(
                    "`{key}` is not an answer to a {} request",
                    waiting.kind
                )),
            }
        }
        if !bad.is_empty() {
            return Err(ErrorData::invalid_params(
                format!(
                    "tasks/update refused, nothing was applied: {}. Send each answer in the shape \
                     of its request's result (tasks/get lists the pending inputRequests).",
                    bad.join("; ")
                ),
                None,
            ));
        }
        for (key, answer) in good {
            if let Some(waiting) = pending.remove(&key) {
                let _ = waiting.answer.send(answer);
            }
        }
        Ok(())
    }
}

/// Withdraws a wait's requests that are still pending when it ends.
struct Withdraw {
    input: Arc<TaskInput>,
    keys: Vec<String>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let mut pending = self
            .input
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for key in &self.keys {
            pending.remove(key);
        }
    }
}

/// The pending input requests of running task `id`, if it waits for any.
pub(crate) fn pending_requests(id: &str) -> Option<InputRequests> {
    TaskInput::of(id)?.requests()
}

/// Hands `responses` to running task `id`; a task that waits for nothing
/// (or has ended) ignores them.
///
/// # Errors
/// `-32602` as [`TaskInput::answer`] says.
pub(crate) fn update(id: &str, responses: &InputResponses) -> Result<(), ErrorData> {
    match TaskInput::of(id) {
        Some(input) => input.answer(responses),
        None => Ok(()),
    }
}

impl TaskChannel for Arc<TaskInput> {
    fn supports(&self, kind: InputKind) -> bool {
        TaskInput::supports(self, kind)
    }
    fn is_live(&self) -> bool {
        TaskInput::is_live(self)
    }
    fn escalate(&self) {
        TaskInput::escalate(self);
    }
    fn ask_task<'a>(
        &'a self,
        cancel: &'a tokio_util::sync::CancellationToken,
        requests: BTreeMap<String, InputRequest>,
    ) -> crate::input::TaskAsk<'a> {
        Box::pin(TaskInput::ask(self, cancel, requests))
    }
}

/// A task's asker: the question as a form with one `answer` field, under
/// `question-<n>`.
pub(crate) struct TaskAsker {
    input: Arc<TaskInput>,
    cancel: tokio_util::sync::CancellationToken,
}

impl TaskAsker {
    pub(crate) fn new(input: Arc<TaskInput>, cancel: tokio_util::sync::CancellationToken) -> Self {
        Self { input, cancel }
    }
}

impl Asker for TaskAsker {
    fn ask(&self, question: Question) -> Pin<Box<dyn Future<Output = Answer> + Send + 'static>> {
        let input = Arc::clone(&self.input);
        let cancel = self.cancel.clone();
        Box::pin(async move {
            let n = input.questions.fetch_add(1, Ordering::SeqCst) + 1;
            let key = format!("question-{n}");
            let request = InputRequest::Elicitation(ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: question.question.clone(),
                requested_schema: crate::asking::question_form(&question),
            });
            match input
                .ask(&cancel, BTreeMap::from([(key.clone(), request)]))
                .await
            {
                Ok(mut answers) => match answers.remove(&key) {
                    Some(InputResponse::Elicitation(answer)) => {
                        crate::asking::answer_of(&answer, &question)
                    }
                    _ => Answer::Declined("the MCP client sent no answer".to_owned()),
                },
                Err(e) => Answer::NoPerson(e.to_string()),
            }
        })
    }
}

/// A task's approver: the confirmation form under `confirm`.
pub(crate) struct TaskApprover {
    input: Arc<TaskInput>,
    cancel: tokio_util::sync::CancellationToken,
}

impl TaskApprover {
    pub(crate) fn new(input: Arc<TaskInput>, cancel: tokio_util::sync::CancellationToken) -> Self {
        Self { input, cancel }
    }
}

impl Approver for TaskApprover {
    fn approve(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'static>> {
        let input = Arc::clone(&self.input);
        let cancel = self.cancel.clone();
        Box::pin(async move {
            let (message, requested_schema) = crate::approval::confirmation_form(&request);
            let form = InputRequest::Elicitation(ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema,
            });
            let key = crate::approval::CONFIRM_KEY.to_owned();
            match input
                .ask(&cancel, BTreeMap::from([(key.clone(), form)]))
                .await
            {
                Ok(mut answers) => match answers.remove(&key) {
                    Some(InputResponse::Elicitation(answer)) => {
                        crate::approval::decide(&answer, &request)
                    }
                    _ => ApprovalDecision::Deny("the user did not approve this call".to_owned()),
                },
                Err(e) => ApprovalDecision::Deny(format!(
                    "this call needs a person's approval and got none: {e}"
                )),
            }
        })
    }
}
