//! Confirmation through the client: in 2025-11-25 sessions an [`Approver`]
//! that asks the person behind the MCP client with an elicitation request;
//! in the 2026-07-28 era an input-required result (SEP-2322) whose
//! `elicitation/create` form the client answers on its retry.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    BooleanSchema, CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, EnumSchema, InputRequest, InputRequests,
    InputRequiredResult, IntegerSchema, NumberSchema, PrimitiveSchemaDefinition, StringSchema,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tool_core::{ApprovalDecision, ApprovalRequest, Approver, ToolContext};

/// Asks the client (elicitation, form mode) whether a call may run; when the
/// client cannot be asked (the request fails), the context's own approver
/// decides, else the call is denied. An answer that arrived but is not the
/// form (no content, or content without a boolean `approve`) is a refusal.
pub(crate) struct ElicitationApprover {
    peer: Peer<RoleServer>,
    fallback: Option<Arc<dyn Approver>>,
}

impl ElicitationApprover {
    /// An approver for this request when the client declared form
    /// elicitation in an `initialize` session (2026-07-28 forbids
    /// server-to-client requests; there the context's approver decides).
    pub(crate) fn for_request(
        request: &RequestContext<RoleServer>,
        ctx: &ToolContext,
    ) -> Option<Self> {
        if is_stateless_era(request) {
            return None;
        }
        let peer = &request.peer;
        peer.peer_info()?;
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return None;
        }
        Some(Self {
            peer: peer.clone(),
            fallback: ctx.approver().cloned(),
        })
    }
}

impl Approver for ElicitationApprover {
    fn approve(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'static>> {
        let peer = self.peer.clone();
        let fallback = self.fallback.clone();
        Box::pin(async move {
            // The same form as the 2026-07-28 input request: `approve` and one
            // field per editable parameter, so an edit is applied (with its
            // note) in both eras, never dropped.
            let (message, requested_schema) = confirmation_form(&request);
            let asked = peer
                .create_elicitation(ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message,
                    requested_schema,
                })
                .await;
            match asked {
                Ok(answer) => decide_initialized(&answer, &request),
                Err(e) => match fallback {
                    Some(fallback) => fallback.approve(request).await,
                    None => ApprovalDecision::Deny(format!(
                        "this call needs a person's approval and the client could not be asked: {e}"
                    )),
                },
            }
        })
    }
}

/// [`decide`] for an answer to the elicitation of an `initialize` session,
/// naming an accepted answer that is not the form: no content, or an
/// `approve` that is not a boolean. Such an answer is a refusal, never a
/// reason to let the server's own approver decide instead.
fn decide_initialized(answer: &ElicitResult, request: &ApprovalRequest) -> ApprovalDecision {
    if answer.action == ElicitationAction::Accept {
        match &answer.content {
            None => {
                return ApprovalDecision::Deny(
                    "the client accepted the confirmation without its `approve` answer, so the call was not made"
                        .to_owned(),
                );
            }
            Some(Value::Object(content))
                if content.get(APPROVE_FIELD).is_some_and(Value::is_boolean) => {}
            Some(_) => {
                return ApprovalDecision::Deny(
                    "the client's answer to the confirmation is not the form asked for (`approve` must be a boolean), so the call was not made"
                        .to_owned(),
                );
            }
        }
    }
    decide(answer, request)
}

// ---------------------------------------------------------------------------
// 2026-07-28: confirmation through an input-required result (SEP-2322).
// ---------------------------------------------------------------------------

/// Key of the confirmation in `inputRequests` / `inputResponses`.
pub(crate) const CONFIRM_KEY: &str = "confirm";

/// Field of the confirmation form that carries the yes/no answer.
pub(crate) const APPROVE_FIELD: &str = "approve";

/// Prefix of the `requestState` of a confirmation round.
const STATE_PREFIX: &str = "confirm-v1:";

/// `true` when this request is of the 2026-07-28 era (no `initialize`).
pub(crate) fn is_stateless_era(request: &RequestContext<RoleServer>) -> bool {
    request
        .protocol_version()
        .is_some_and(|v| !v.has_initialize())
}

/// `true` when the client of this 2026-07-28 request declared form
/// elicitation in its per-request capabilities, so it can answer an
/// `elicitation/create` input request.
pub(crate) fn client_answers_input_requests(request: &RequestContext<RoleServer>) -> bool {
    request
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The `requestState` of a confirmation round: binds the answer to this tool
/// and these exact arguments (a retry with other arguments is asked again).
/// Not secret and not sealed: the client is the one who approves anyway.
pub(crate) fn request_state(tool: &str, arguments: &Map<String, Value>) -> String {
    use sha2::Digest;
    let canonical = serde_json::to_vec(&(tool, arguments)).unwrap_or_default();
    let digest = sha2::Sha256::digest(&canonical);
    let mut state = String::with_capacity(STATE_PREFIX.len() + 64);
    state.push_str(STATE_PREFIX);
    for byte in digest {
        state.push_str(&format!("{byte:02x}"));
    }
    state
}

/// `true` when `state` has the form of a confirmation round's state.
pub(crate) fn is_confirmation_state(state: &str) -> bool {
    state.starts_with(STATE_PREFIX)
}

/// How an editable parameter appears in the form, with its current value as
/// the field's default.
#[derive(Clone, Copy, PartialEq)]
enum Field<'a> {
    String(&'a str),
    Boolean(bool),
    /// A number that fits the form's `integer` (an `i64`).
    Integer(i64),
    /// Any other number but an integer beyond `i64` (read as `f64`, which is
    /// how `serde_json` holds it).
    Number(f64),
    /// Any other value (object, array, null, an integer beyond `i64`, or
    /// absent): a string holding the value as JSON, so it reaches the person
    /// and comes back exactly.
    Json(Option<&'a Value>),
}

fn field_of(value: Option<&Value>) -> Field<'_> {
    match value {
        Some(Value::String(text)) => Field::String(text),
        Some(Value::Bool(flag)) => Field::Boolean(*flag),
        Some(Value::Number(n)) if n.is_i64() => {
            n.as_i64().map_or(Field::Json(value), Field::Integer)
        }
        Some(Value::Number(n)) if !n.is_u64() => {
            n.as_f64().map_or(Field::Json(value), Field::Number)
        }
        _ => Field::Json(value),
    }
}

/// The form field of the editable parameter `param` whose value is
/// `current`, carrying what `schema` (the parameter's JSON Schema,
/// [`ApprovalRequest::editable_schemas`]) says that a form field can hold:
/// its `description`, `minimum` / `maximum` for a number, `minLength` /
/// `maxLength` and a string `enum` (a single-select field) for a string.
fn field_schema(
    param: &str,
    current: Option<&Value>,
    schema: Option<&Value>,
) -> PrimitiveSchemaDefinition {
    let keyword = |key: &str| schema.and_then(|s| s.get(key));
    let description = keyword("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match field_of(current) {
        Field::String(text) => {
            if let Some(values) = keyword("enum").and_then(Value::as_array) {
                let values: Option<Vec<String>> = values
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect();
                let mut builder = EnumSchema::builder(values.unwrap_or_default());
                if let Some(description) = &description {
                    builder = builder.description(description.clone());
                }
                if let Ok(builder) = builder.with_default(text) {
                    return PrimitiveSchemaDefinition::Enum(builder.build());
                }
            }
            let mut field = StringSchema::new().with_default(text);
            if let Some(description) = description {
                field = field.description(description);
            }
            let length = |key| {
                keyword(key)
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
            };
            if let Some(min) = length("minLength") {
                field = field.min_length(min);
            }
            if let Some(max) = length("maxLength") {
                field = field.max_length(max);
            }
            PrimitiveSchemaDefinition::String(field)
        }
        Field::Boolean(flag) => {
            let mut field = BooleanSchema::new().with_default(flag);
            if let Some(description) = description {
                field = field.description(description);
            }
            PrimitiveSchemaDefinition::Boolean(field)
        }
        Field::Integer(n) => {
            let mut field = IntegerSchema::new().with_default(n);
            if let Some(description) = description {
                field = field.description(description);
            }
            // A bound beyond i64 (u64::MAX) is left to tool-core's check.
            if let Some(min) = keyword("minimum").and_then(Value::as_i64) {
                field = field.minimum(min);
            }
            if let Some(max) = keyword("maximum").and_then(Value::as_i64) {
                field = field.maximum(max);
            }
            PrimitiveSchemaDefinition::Integer(field)
        }
        Field::Number(n) => {
            let mut field = NumberSchema::new().with_default(n);
            if let Some(description) = description {
                field = field.description(description);
            }
            if let Some(min) = keyword("minimum").and_then(Value::as_f64) {
                field = field.minimum(min);
            }
            if let Some(max) = keyword("maximum").and_then(Value::as_f64) {
                field = field.maximum(max);
            }
            PrimitiveSchemaDefinition::Number(field)
        }
        Field::Json(value) => {
            let text = match description {
                Some(description) => format!("{description} (`{param}` as JSON)"),
                None => format!("`{param}` as JSON"),
            };
            let mut field = StringSchema::new().description(text);
            if let Some(value) = value {
                field = field.with_default(value.to_string());
            }
            PrimitiveSchemaDefinition::String(field)
        }
    }
}

/// The value an editable parameter has before any edit: the model's
/// argument, else the application's injected value, else the tool's
/// default (a form shows it as the field's default; kept, it is no edit).
fn current_value<'a>(request: &'a ApprovalRequest, param: &str) -> Option<&'a Value> {
    request
        .arguments
        .get(param)
        .or_else(|| request.injected.get(param))
        .or_else(|| request.defaults.get(param))
}

/// The question of a confirmation: the tool, its kind, the arguments the
/// model sent and, on a line of its own, the values the application
/// supplies (hidden and injected parameters, secret-looking ones not shown),
/// then on another the defaults the tool fills for parameters left out.
fn confirmation_message(request: &ApprovalRequest) -> String {
    let arguments = serde_json::to_string(&request.arguments).unwrap_or_default();
    let mut message = format!(
        "Allow the tool `{}` ({}) to run with these arguments?\n{arguments}",
        request.tool, request.kind
    );
    if let Some(line) = request.injected_line(INJECTED_SHOWN) {
        message.push('\n');
        message.push_str(&line);
    }
    if !request.defaults.is_empty() {
        let json = Value::Object(request.defaults.clone()).to_string();
        message.push_str("\nthe tool's defaults for the rest: ");
        message.push_str(&tool_rules::text::clip(
            &json,
            tool_rules::text::Clip::chars(INJECTED_SHOWN),
        ));
    }
    message
}

/// At most this many characters of injected values in a confirmation's message.
const INJECTED_SHOWN: usize = 2000;

/// The confirmation form of `request` and the message above it: a required
/// `approve` boolean (default `false`) first, then one field per editable
/// parameter in the tool's order, its current value as the default (an
/// editable parameter named `approve` and repeated names get no field).
///
/// The form is rmcp's typed [`ElicitationSchema`], not hand-built JSON: MCP
/// allows a `requestedSchema` only as a flat object of primitive properties
/// (string, number, integer, boolean, enum; specification 2025-11-25,
/// "Elicitation", "Requested Schema"), and that type admits nothing else.
/// Its `property_order` keeps `approve` first on the wire.
pub(crate) fn confirmation_form(request: &ApprovalRequest) -> (String, ElicitationSchema) {
    let mut message = confirmation_message(request);
    let mut properties = BTreeMap::new();
    properties.insert(
        APPROVE_FIELD.to_owned(),
        PrimitiveSchemaDefinition::Boolean(
            BooleanSchema::new()
                .title("Approve")
                .description("Allow this call?")
                .with_default(false),
        ),
    );
    let mut order = vec![APPROVE_FIELD.to_owned()];
    for param in &request.editable_params {
        if properties.contains_key(param) {
            continue;
        }
        // An injected value the person may change shows as the field's default.
        let current = current_value(request, param);
        let schema = request.editable_schemas.get(param);
        properties.insert(param.clone(), field_schema(param, current, schema));
        order.push(param.clone());
    }
    if let [_, editable @ ..] = order.as_slice()
        && !editable.is_empty()
    {
        message.push_str(&format!("\nYou may change: {}.", editable.join(", ")));
    }
    let mut schema =
        ElicitationSchema::new(properties).with_required(vec![APPROVE_FIELD.to_owned()]);
    schema.property_order = Some(order);
    (message, schema)
}

/// The input-required result that asks the client to confirm `request`: one
/// `elicitation/create` form request under [`CONFIRM_KEY`], and `state` as
/// the `requestState` the retry echoes.
fn input_required(request: &ApprovalRequest, state: String) -> InputRequiredResult {
    let (message, requested_schema) = confirmation_form(request);
    let input = InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        },
    ));
    let mut requests = InputRequests::new();
    requests.insert(CONFIRM_KEY.to_owned(), input);
    InputRequiredResult::new(Some(requests), Some(state))
}

/// The decision a client's answer to [`confirmation_form`] stands for. Only
/// editable parameters are taken from the answer; tool-core checks the edits
/// again before the call runs.
pub(crate) fn decide(answer: &ElicitResult, request: &ApprovalRequest) -> ApprovalDecision {
    let content = match (&answer.action, &answer.content) {
        (ElicitationAction::Accept, Some(Value::Object(content))) => content,
        (ElicitationAction::Cancel, _) => {
            return ApprovalDecision::Deny("the user cancelled this call".to_owned());
        }
        _ => return ApprovalDecision::Deny("the user did not approve this call".to_owned()),
    };
    if content.get(APPROVE_FIELD).and_then(Value::as_bool) != Some(true) {
        return ApprovalDecision::Deny("the user did not approve this call".to_owned());
    }
    // A field the form did not offer: an answer changing a value the
    // person could not edit refuses the call rather than being dropped
    // unseen (the same value sent back is no change).
    for (key, value) in content {
        let offered = key == APPROVE_FIELD || request.editable_params.contains(key);
        if !offered && current_value(request, key) != Some(value) {
            let editable: Vec<String> = request
                .editable_params
                .iter()
                .filter(|p| p.as_str() != APPROVE_FIELD)
                .map(|p| format!("`{p}`"))
                .collect();
            let may = if editable.is_empty() {
                "nothing may be changed".to_owned()
            } else {
                format!("only {} may be changed", editable.join(", "))
            };
            return ApprovalDecision::Deny(format!(
                "the answer changes `{}`, which the confirmation does not let the person change ({may}), so the call was not made",
                tool_rules::text::clip(key, tool_rules::text::Clip::chars(60))
            ));
        }
    }
    let mut edited = request.arguments.clone();
    for param in &request.editable_params {
        // The form's own `approve` answer is never a tool's `approve`
        // argument (the form has no field for an editable `approve`).
        if param == APPROVE_FIELD {
            continue;
        }
        let Some(value) = content.get(param) else {
            continue;
        };
        let current = current_value(request, param);
        let value = if matches!(field_of(current), Field::Json(_)) {
            match value {
                Value::String(text) if text.trim().is_empty() && current.is_none() => continue,
                Value::String(text) => match serde_json::from_str(text) {
                    Ok(v) => v,
                    Err(e) => {
                        return ApprovalDecision::Deny(format!(
                            "the edited `{param}` is not valid JSON ({e}), so the call was not made"
                        ));
                    }
                },
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        // The injected value or default kept as it was is no edit.
        if !request.arguments.contains_key(param) && current == Some(&value) {
            continue;
        }
        edited.insert(param.clone(), value);
    }
    if edited == request.arguments {
        ApprovalDecision::Approve
    } else {
        ApprovalDecision::ApproveWithEdits(edited)
    }
}

/// The approver of one `tools/call` round of the 2026-07-28 era: with the
/// client's answer it decides from that answer; without one it hands the
/// request to the round (which returns an input-required result) and never
/// decides, so the call never runs. A second confirmation asked by the same
/// call goes to the base context's approver (or is denied).
struct InputApprover {
    answer: Mutex<Option<ElicitResult>>,
    ask: Mutex<Option<oneshot::Sender<ApprovalRequest>>>,
    fallback: Option<Arc<dyn Approver>>,
}

impl Approver for InputApprover {
    fn approve(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'static>> {
        let answer = self
            .answer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(answer) = answer {
            let decision = decide(&answer, &request);
            return Box::pin(async move { decision });
        }
        let ask = self
            .ask
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(ask) = ask {
            let _ = ask.send(request);
            return Box::pin(std::future::pending());
        }
        match &self.fallback {
            Some(fallback) => fallback.approve(request),
            None => Box::pin(async {
                ApprovalDecision::Deny(
                    "this call asked for a second confirmation, which the client cannot be asked for"
                        .to_owned(),
                )
            }),
        }
    }
}

/// One `tools/call` round of the 2026-07-28 era for a client that answers
/// input requests: the call runs with an [`InputApprover`]; when it needs a
/// confirmation that this round does not answer, the call is dropped before
/// the tool runs and an input-required result asks the client (`confirm`,
/// an `elicitation/create` form), with a `requestState` bound to the tool and
/// arguments. The retry carrying the answer and that state runs the call.
pub(crate) async fn call_with_input_required<F, Fut>(
    name: &str,
    arguments: &Map<String, Value>,
    ctx: ToolContext,
    input_responses: Option<&rmcp::model::InputResponses>,
    echoed_state: Option<&str>,
    run: F,
) -> Result<CallToolResponse, ErrorData>
where
    F: FnOnce(ToolContext) -> Fut,
    Fut: Future<Output = Result<CallToolResult, ErrorData>>,
{
    // An answer counts only with the state of these arguments; otherwise
    // (none, another call's, a tampered one) the client is asked again.
    let answer = match echoed_state {
        Some(echoed) if echoed == request_state(name, arguments) => input_responses
            .and_then(|r| r.get(CONFIRM_KEY))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok()),
        _ => None,
    };
    let (tx, rx) = oneshot::channel();
    let approver = InputApprover {
        answer: Mutex::new(answer),
        ask: Mutex::new(Some(tx)),
        fallback: ctx.approver().cloned(),
    };
    let ctx = ctx.with_approver(approver);
    tokio::select! {
        result = run(ctx) => result.map(CallToolResponse::from),
        Ok(request) = rx => {
            Ok(CallToolResponse::from(input_required(&request, request_state(name, arguments))))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rmcp::model::{ElicitResult, ElicitationAction};
    use serde_json::{Map, Value, json};
    use tool_core::{ApprovalDecision, ApprovalRequest, ToolKind};

    use super::{confirmation_form, confirmation_message, decide, input_required};

    fn request(arguments: Value, editable: &[&str]) -> ApprovalRequest {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object");
        };
        ApprovalRequest {
            tool: "save_note".to_owned(),
            kind: ToolKind::Write,
            display: BTreeMap::new(),
            arguments,
            editable_params: editable.iter().map(|p| (*p).to_owned()).collect(),
            trace_id: None,
            injected: Map::new(),
            editable_schemas: Map::new(),
            defaults: Map::new(),
        }
    }

    #[test]
    fn the_confirmation_shows_what_the_application_supplies() {
        let mut request = request(json!({"isbn": "978-1"}), &["days"]);
        request.tool = "borrow_book".to_owned();
        assert_eq!(
            confirmation_message(&request),
            "Allow the tool `borrow_book` (write) to run with these arguments?\n{\"isbn\":\"978-1\"}"
        );
        request.injected = json!({"days": 21}).as_object().cloned().unwrap_or_default();
        let (message, schema) = confirmation_form(&request);
        assert_eq!(
            message,
            "Allow the tool `borrow_book` (write) to run with these arguments?\n{\"isbn\":\"978-1\"}\n\
             supplied by the application: {\"days\":21}\nYou may change: days."
        );
        // The injected value is the editable field's default; kept, it is no edit.
        let schema = serde_json::to_value(&schema).unwrap();
        assert_eq!(schema["properties"]["days"]["type"], "integer");
        assert_eq!(schema["properties"]["days"]["default"], 21);
        let kept = ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"approve": true, "days": 21}));
        assert_eq!(decide(&kept, &request), ApprovalDecision::Approve);
        let changed = ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"approve": true, "days": 3}));
        assert_eq!(
            decide(&changed, &request),
            ApprovalDecision::ApproveWithEdits(
                json!({"isbn": "978-1", "days": 3})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            )
        );
    }

    /// Every kind of editable value, an absent one, and `approve` itself
    /// (never a second field).
    fn every_kind() -> ApprovalRequest {
        request(
            json!({"path": "a.txt", "text": "draft", "force": true, "count": 3,
                   "ratio": 0.5, "tags": ["x"]}),
            &[
                "text", "force", "count", "ratio", "tags", "missing", "approve",
            ],
        )
    }

    #[test]
    fn the_form_is_a_flat_object_of_primitive_fields_in_order() {
        let (message, schema) = confirmation_form(&every_kind());
        // Byte for byte, so the order of the fields (approve first) and of
        // the keys inside each field is pinned too.
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            concat!(
                r#"{"type":"object","properties":{"#,
                r#""approve":{"type":"boolean","title":"Approve","description":"Allow this call?","default":false},"#,
                r#""text":{"type":"string","default":"draft"},"#,
                r#""force":{"type":"boolean","default":true},"#,
                r#""count":{"type":"integer","default":3},"#,
                r#""ratio":{"type":"number","default":0.5},"#,
                r#""tags":{"type":"string","description":"`tags` as JSON","default":"[\"x\"]"},"#,
                r#""missing":{"type":"string","description":"`missing` as JSON"}"#,
                r#"},"required":["approve"]}"#
            )
        );
        assert_eq!(
            message,
            "Allow the tool `save_note` (write) to run with these arguments?\n\
             {\"path\":\"a.txt\",\"text\":\"draft\",\"force\":true,\"count\":3,\"ratio\":0.5,\"tags\":[\"x\"]}\n\
             You may change: text, force, count, ratio, tags, missing."
        );
    }

    #[test]
    fn a_form_without_editable_fields_asks_yes_or_no() {
        let (message, schema) = confirmation_form(&request(json!({"path": "a.txt"}), &[]));
        assert_eq!(
            serde_json::to_value(&schema).unwrap(),
            json!({"type": "object", "properties": {"approve":
                {"type": "boolean", "title": "Approve", "description": "Allow this call?", "default": false}},
                "required": ["approve"]})
        );
        assert!(!message.contains("You may change"), "{message}");
    }

    #[test]
    fn the_input_request_is_an_elicitation_form() {
        let asked = every_kind();
        let result =
            serde_json::to_value(input_required(&asked, "confirm-v1:ab".to_owned())).unwrap();
        let (message, schema) = confirmation_form(&asked);
        assert_eq!(
            result["inputRequests"]["confirm"],
            json!({"method": "elicitation/create",
                   "params": {"mode": "form", "message": message, "requestedSchema": schema}})
        );
        assert_eq!(result["requestState"], "confirm-v1:ab");
    }

    #[test]
    fn an_accepted_form_with_the_defaults_approves_the_call_as_sent() {
        let asked = every_kind();
        let schema = serde_json::to_value(confirmation_form(&asked).1).unwrap();
        // What a client sends when the person ticks `approve` and changes
        // nothing: every field's default.
        let mut content = serde_json::Map::new();
        for (name, field) in schema["properties"].as_object().unwrap() {
            if let Some(default) = field.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
        content.insert("approve".to_owned(), Value::Bool(true));
        let answer =
            serde_json::from_value(json!({"action": "accept", "content": content})).unwrap();
        assert_eq!(decide(&answer, &asked), ApprovalDecision::Approve);
    }

    /// Review 24, finding 12: the editable fields carry what the
    /// parameter's schema says and a form field can hold.
    #[test]
    fn editable_fields_carry_the_parameters_description_and_bounds() {
        let mut asked = request(
            json!({"mode": "fast", "title": "draft", "ratio": 0.5, "tags": ["x"]}),
            &["mode", "title", "ratio", "tags"],
        );
        asked.editable_schemas = json!({
            "mode": {"type": "string", "enum": ["fast", "thorough"], "description": "How hard"},
            "title": {"type": "string", "minLength": 1, "maxLength": 80},
            "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0},
            "tags": {"type": "array", "description": "Labels"}
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        let schema = serde_json::to_value(confirmation_form(&asked).1).unwrap();
        assert_eq!(
            schema["properties"],
            json!({
                "approve": {"type": "boolean", "title": "Approve", "description": "Allow this call?", "default": false},
                "mode": {"type": "string", "description": "How hard", "enum": ["fast", "thorough"], "default": "fast"},
                "title": {"type": "string", "minLength": 1, "maxLength": 80, "default": "draft"},
                "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0, "default": 0.5},
                "tags": {"type": "string", "description": "Labels (`tags` as JSON)", "default": "[\"x\"]"}
            })
        );
        // A field the form did not offer, changed: refused; sent back as it was: ignored.
        let answer = |content: Value| {
            serde_json::from_value(json!({"action": "accept", "content": content})).unwrap()
        };
        assert_eq!(
            decide(&answer(json!({"approve": true, "path": "b.txt"})), &asked),
            ApprovalDecision::Deny(
                "the answer changes `path`, which the confirmation does not let the person change (only `mode`, `title`, `ratio`, `tags` may be changed), so the call was not made".to_owned()
            )
        );
        assert_eq!(
            decide(&answer(json!({"approve": true, "mode": "fast"})), &asked),
            ApprovalDecision::Approve
        );
    }

    #[test]
    fn an_integer_beyond_i64_travels_as_exact_json_text() {
        // The form's `integer` is an i64; 2^64 - 1 would not fit, and as a
        // float it would come back changed. It is offered as JSON text.
        let asked = request(json!({"seed": u64::MAX}), &["seed"]);
        let schema = serde_json::to_value(confirmation_form(&asked).1).unwrap();
        assert_eq!(
            schema["properties"]["seed"],
            json!({"type": "string", "description": "`seed` as JSON", "default": "18446744073709551615"})
        );
        let answer = |seed: &str| {
            serde_json::from_value(
                json!({"action": "accept", "content": {"approve": true, "seed": seed}}),
            )
            .unwrap()
        };
        assert_eq!(
            decide(&answer("18446744073709551615"), &asked),
            ApprovalDecision::Approve
        );
        let ApprovalDecision::ApproveWithEdits(edited) = decide(&answer("7"), &asked) else {
            panic!("an edited seed is an edit");
        };
        assert_eq!(edited["seed"], json!(7));
    }
}
