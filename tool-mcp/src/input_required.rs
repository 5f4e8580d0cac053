//! The 2026-07-28 rendering of a tool's input requests ([`crate::input`]):
//! input-required results (SEP-2322) and their sealed `requestState`.
//!
//! A call runs with a [`Round`] in its context. When the tool asks for a key
//! this round has no valid answer for, the round reports every missing
//! request of that ask, the call is dropped (the tool never gets past its
//! question) and the client gets an input-required result: the missing
//! requests under the tool's keys, and a `requestState` that carries the
//! answers the tool already used. The client calls again with the answers
//! (`inputResponses`) and that state; the tool runs again from its start and
//! finds the earlier answers (from the state) and the new ones (from the
//! request). An answer missing or of the wrong shape is asked again; keys
//! nobody asked for are ignored.
//!
//! The state is sealed with rmcp's `RequestStateCodec` (HMAC-SHA256 under a
//! random 32-byte key made once per process, so a state is good only for the
//! process that made it), bound to the tool's name and a digest of its
//! arguments (associated data: a state of another call is refused), valid
//! for [`REQUEST_STATE_TTL`], and at most [`MAX_REQUEST_STATE_BYTES`] long. A
//! state that fails any of these checks gets a `-32602` error that says to
//! call again without it; it is never read.

#![allow(
    deprecated,
    reason = "sampling and roots input requests are deprecated from 2026-07-28 (SEP-2577), still part of it"
)]

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, InputRequiredResult, InputResponses,
    RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tool_core::ToolContext;

use crate::approval;
use crate::catalog::Catalog;
use crate::catalog_wire;
use crate::input::{InputKind, Round, SessionRoute, Stop};

/// Longest `requestState` accepted or made, in bytes (64 KiB): a state
/// carries the answers of earlier rounds, and a call whose answers do not
/// fit ends with an error result instead of a bigger state.
pub const MAX_REQUEST_STATE_BYTES: usize = 64 * 1024;

/// How long a `requestState` stays valid after it was made (1 hour).
pub const REQUEST_STATE_TTL: Duration = Duration::from_secs(3600);

/// Domain of the associated data, so a state of this use is never another's.
const DOMAIN: &[u8] = b"tool-mcp/input-rounds/v1";

/// The process's sealing key, made on first use.
fn codec() -> &'static RequestStateCodec {
    static CODEC: OnceLock<RequestStateCodec> = OnceLock::new();
    CODEC.get_or_init(|| {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No OS randomness: a key no client can know still, from the
            // clock and the address space; states then only last the process.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            let addr = std::ptr::addr_of!(key) as usize as u128;
            key[..16].copy_from_slice(&nanos.to_le_bytes());
            key[16..].copy_from_slice(&addr.to_le_bytes());
        }
        RequestStateCodec::new(key.to_vec())
    })
}

/// What the state carries: the answers used so far, by key.
#[derive(Serialize, Deserialize, Default)]
struct Carried {
    answers: BTreeMap<String, Value>,
}

/// The associated data of a call: the method, the tool and a SHA-256 of its
/// arguments.
fn associated_data(method: &str, name: &str, arguments: &Map<String, Value>) -> Vec<u8> {
    use sha2::Digest;
    let canonical = serde_json::to_vec(arguments).unwrap_or_default();
    let digest = sha2::Sha256::digest(&canonical);
    let mut data = Vec::with_capacity(DOMAIN.len() + method.len() + name.len() + 35);
    data.extend_from_slice(DOMAIN);
    data.push(0);
    data.extend_from_slice(method.as_bytes());
    data.push(0);
    data.extend_from_slice(name.as_bytes());
    data.push(0);
    data.extend_from_slice(&digest);
    data
}

/// The answers an echoed `requestState` carries, after its checks.
///
/// # Errors
/// `-32602` naming the problem (too long; failed integrity, expired, or of
/// another call) and saying to call again without it.
fn open_state(state: &str, data: &[u8]) -> Result<BTreeMap<String, Value>, ErrorData> {
    if state.len() > MAX_REQUEST_STATE_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "requestState is {} bytes, over the limit of {MAX_REQUEST_STATE_BYTES}; call again without requestState and inputResponses",
                state.len()
            ),
            None,
        ));
    }
    let carried: Carried = codec().open_json_with(state, data).map_err(|e| {
        tracing::debug!("requestState refused: {e}");
        ErrorData::invalid_params(
            "requestState failed its integrity check (changed, expired, made by another server process, or for another call or arguments); call again without requestState and inputResponses",
            None,
        )
    })?;
    Ok(carried.answers)
}

/// `-32021` naming the capability `kind` in `data.requiredCapabilities`.
fn missing_capability(kind: InputKind) -> ErrorData {
    let capabilities = match kind {
        InputKind::Elicitation => serde_json::json!({"elicitation": {}}),
        InputKind::Sampling => serde_json::json!({"sampling": {}}),
        InputKind::Roots => serde_json::json!({"roots": {}}),
    };
    let mut error = ErrorData::missing_required_client_capability(
        serde_json::from_value(capabilities).unwrap_or_default(),
    );
    error.message = format!("this request needs the client capability for {kind}, which the request's clientCapabilities does not declare").into();
    error
}

/// How a round ended: the request's own result, or the input it asks for.
pub(crate) enum Outcome<T> {
    /// The request completed (or failed) without asking.
    Done(T),
    /// The input-required result to send.
    Asked(InputRequiredResult),
}

/// One request (`tools/call`, `prompts/get`) of the 2026-07-28 era: `run`
/// runs with a [`Round`] in its context (answers from the echoed sealed
/// state and `inputResponses`); it is handed the merged answers and the
/// confirmation state [`crate::approval`] reads (tools only). When what runs
/// asks for input it does not have, it is dropped and the round ends with an
/// input-required result whose sealed state carries the answers used.
///
/// # Errors
/// `-32602` for a `requestState` that is too long or fails its checks, or
/// when the answers given so far no longer fit a state; whatever `run`
/// returns.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one request, each used once"
)]
pub(crate) async fn round<T, F, Fut>(
    method: &str,
    name: &str,
    arguments: &Map<String, Value>,
    ctx: ToolContext,
    request: &RequestContext<RoleServer>,
    input_responses: Option<&InputResponses>,
    request_state: Option<&str>,
    run: F,
) -> Result<Outcome<T>, ErrorData>
where
    F: FnOnce(ToolContext, Option<InputResponses>, Option<String>) -> Fut,
    Fut: Future<Output = Result<T, ErrorData>>,
{
    let prepared = prepare(
        method,
        name,
        arguments,
        ctx,
        request,
        input_responses,
        request_state,
    )?;
    let Prepared {
        ctx,
        responses,
        confirm_state,
        stop,
        sealer,
    } = prepared;
    tokio::select! {
        result = run(ctx, Some(responses), confirm_state) => result.map(Outcome::Done),
        Ok(stop) = stop => sealer.asked(stop).map(Outcome::Asked),
    }
}

/// A round made ready to run ([`prepare`]).
pub(crate) struct Prepared {
    /// The context to run in, with the round in its state.
    pub(crate) ctx: ToolContext,
    /// Every answer known so far (the state's and the request's).
    pub(crate) responses: InputResponses,
    /// The confirmation's own state, for [`crate::approval`].
    pub(crate) confirm_state: Option<String>,
    /// Told when what runs asks for what the round does not have.
    pub(crate) stop: oneshot::Receiver<Stop>,
    /// Makes the input-required result then.
    pub(crate) sealer: Sealer,
}

/// Seals the state of a round that asked.
pub(crate) struct Sealer {
    round: Arc<Round>,
    data: Vec<u8>,
    confirm: Option<Value>,
    name: String,
}

impl Sealer {
    /// The input-required result of a round that stopped with `stop`.
    ///
    /// # Errors
    /// `-32021` for a missing capability; `-32602` when the answers given
    /// so far no longer fit a state; `-32603` when sealing fails.
    pub(crate) fn asked(self, stop: Stop) -> Result<InputRequiredResult, ErrorData> {
        let name = &self.name;
        let missing = match stop {
            Stop::Capability(kind) => return Err(missing_capability(kind)),
            Stop::Ask(missing) => missing,
        };
        let mut carried = Carried {
            answers: self.round.used(),
        };
        if let Some(confirm) = self.confirm {
            carried
                .answers
                .insert(approval::CONFIRM_KEY.to_owned(), confirm);
        }
        let options = SealOptions::new()
            .associated_data(&self.data)
            .ttl(REQUEST_STATE_TTL);
        let sealed = codec().seal_json_with(&carried, &options).map_err(|e| {
            ErrorData::internal_error(format!("cannot seal requestState: {e}"), None)
        })?;
        if sealed.len() > MAX_REQUEST_STATE_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "the answers given so far make a requestState of {} bytes, over the limit of {MAX_REQUEST_STATE_BYTES}: `{name}` cannot ask for more",
                    sealed.len()
                ),
                None,
            ));
        }
        Ok(InputRequiredResult::new(Some(missing), Some(sealed)))
    }
}

/// Makes one round of a request ready: opens the echoed state, merges the
/// answers, and puts a [`Round`] in `ctx`.
///
/// # Errors
/// `-32602` for a `requestState` that is too long or fails its checks.
pub(crate) fn prepare(
    method: &str,
    name: &str,
    arguments: &Map<String, Value>,
    ctx: ToolContext,
    request: &RequestContext<RoleServer>,
    input_responses: Option<&InputResponses>,
    request_state: Option<&str>,
) -> Result<Prepared, ErrorData> {
    let data = associated_data(method, name, arguments);
    // A confirmation's own state passes to the confirmation untouched; a
    // sealed state is opened, and stands for the confirmation's too (it is
    // bound to the same tool and arguments).
    let (mut answers, confirm_state) = match request_state {
        Some(state) if approval::is_confirmation_state(state) => {
            (BTreeMap::new(), Some(state.to_owned()))
        }
        Some(state) => (
            open_state(state, &data)?,
            Some(approval::request_state(name, arguments)),
        ),
        None => (BTreeMap::new(), None),
    };
    if let Some(responses) = input_responses {
        answers.extend(responses.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let confirm = answers.get(approval::CONFIRM_KEY).cloned();
    let (tx, rx) = oneshot::channel();
    let round = Arc::new(Round::new(
        request.client_capabilities().as_ref(),
        answers.clone(),
        tx,
    ));
    let ctx = ctx.with_state(Arc::clone(&round));
    let responses: InputResponses = answers.into_iter().collect();
    Ok(Prepared {
        ctx,
        responses,
        confirm_state,
        stop: rx,
        sealer: Sealer {
            round,
            data,
            confirm,
            name: name.to_owned(),
        },
    })
}

/// `prompts/get` with `ctx` as the prompt's context: its input requests go
/// to the session's client in 2025-11-25, and make an input-required result
/// in 2026-07-28 ([`round`]).
///
/// # Errors
/// As [`round`] and [`catalog_wire::get_prompt`].
pub(crate) async fn get_prompt(
    catalog: &Catalog,
    request: GetPromptRequestParams,
    ctx: ToolContext,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    if !approval::is_stateless_era(context) {
        let ctx = ctx.with_state(SessionRoute(context.peer.clone()));
        return catalog_wire::get_prompt(catalog, request, ctx)
            .await
            .map(GetPromptResponse::from);
    }
    let name = request.name.clone();
    let arguments = request.arguments.clone().unwrap_or_default();
    let responses = request.input_responses.clone();
    let state = request.request_state.clone();
    let outcome = round(
        "prompts/get",
        &name,
        &arguments,
        ctx,
        context,
        responses.as_ref(),
        state.as_deref(),
        |ctx, _, _| catalog_wire::get_prompt(catalog, request, ctx),
    )
    .await?;
    Ok(match outcome {
        Outcome::Done(result) => GetPromptResponse::from(result),
        Outcome::Asked(asked) => GetPromptResponse::from(asked),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_state_opens_only_for_its_call() {
        let args: Map<String, Value> = serde_json::from_str(r#"{"a": 1}"#).unwrap();
        let data = associated_data("tools/call", "t", &args);
        let carried = Carried {
            answers: BTreeMap::from([("k".to_owned(), Value::from("v"))]),
        };
        let sealed = codec()
            .seal_json_with(&carried, &SealOptions::new().associated_data(&data))
            .unwrap();
        assert_eq!(open_state(&sealed, &data).unwrap()["k"], "v");
        let other: Map<String, Value> = serde_json::from_str(r#"{"a": 2}"#).unwrap();
        let err = open_state(&sealed, &associated_data("tools/call", "t", &other)).unwrap_err();
        assert!(err.message.contains("integrity"), "{}", err.message);
        let err = open_state(&format!("{sealed}x"), &data).unwrap_err();
        assert!(err.message.contains("integrity"), "{}", err.message);
        let long = "a".repeat(MAX_REQUEST_STATE_BYTES + 1);
        let err = open_state(&long, &data).unwrap_err();
        assert!(err.message.contains("over the limit"), "{}", err.message);
    }
}
