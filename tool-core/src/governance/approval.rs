//! Confirmation of tool calls (`requires_confirmation`, `editable_params`).
//!
//! Before a tool that requires confirmation (or one of a kind the context
//! gates, `ToolContext::with_confirmed_kinds`) runs, `execute` sends the
//! context's [`Approver`] an [`ApprovalRequest`] and acts on the
//! [`ApprovalDecision`]. With no approver configured the call is denied:
//! a confirmation gate that opens when nobody is watching is no gate. An
//! approver that does not answer within the context's approval timeout
//! (300 s by default) gets the caller's [`ApprovalDefault`] (deny unless
//! configured).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::tool::future::BoxFuture;
use crate::tool::spec::{DisplayName, ToolKind};

/// What a person (or policy) is asked to approve. Arguments are as the model
/// sent them: secrets appear only as `<secret>key</secret>` placeholders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Tool name.
    pub tool: String,
    /// The tool's kind.
    pub kind: ToolKind,
    /// Localised display names (language tag → names).
    pub display: BTreeMap<String, DisplayName>,
    /// The arguments to approve.
    pub arguments: Map<String, Value>,
    /// Parameters the approver may change (model-facing names).
    pub editable_params: Vec<String>,
    /// The call's trace id, if any.
    pub trace_id: Option<String>,
    /// The values the application supplies to the call, by parameter name
    /// (hidden parameters, and `inject_params` values where they take
    /// effect), as the tool will receive them: show them to the person
    /// beside [`arguments`](Self::arguments), marked as the application's.
    /// A value under a secret-looking name or with a credential in it
    /// ([`secret_env`](crate::governance::secret_env)'s rules) reads
    /// [`NOT_SHOWN`]. For display only: edits go through `arguments`
    /// (an editable parameter set there wins over its injected default).
    /// Empty for tools without such parameters, and from older peers.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub injected: Map<String, Value>,
    /// The JSON Schema of each editable parameter, by model-facing name, as
    /// the tool's parameters schema has it (a `$ref` to its `$defs`
    /// resolved): its `description`, `minimum` / `maximum`, `enum`, length
    /// limits, for a form that explains and checks an edit. Tool-core checks
    /// every edit against the tool again whatever the form did. Empty for
    /// tools without editable parameters, and from older peers.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub editable_schemas: Map<String, Value>,
    /// The model-visible parameters [`arguments`](Self::arguments) leaves
    /// out that the tool fills with a default, and that default (the
    /// parameters schema's `default`, e.g. `#[arg(default = 1)]`): the call
    /// runs with these, so show them beside the arguments. An `Option`
    /// parameter left out (`None`) has no entry. Empty from older peers.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub defaults: Map<String, Value>,
}

/// What [`ApprovalRequest::injected`] shows instead of a secret-looking value.
pub const NOT_SHOWN: &str = "<not shown: looks like a secret>";

impl ApprovalRequest {
    /// The line an approver shows for [`injected`](Self::injected), at most
    /// `max_chars` characters of JSON (cut with `…`): `None` when the
    /// application supplies nothing.
    pub fn injected_line(&self, max_chars: usize) -> Option<String> {
        if self.injected.is_empty() {
            return None;
        }
        let json = Value::Object(self.injected.clone()).to_string();
        Some(format!(
            "supplied by the application: {}",
            tool_rules::text::clip(&json, tool_rules::text::Clip::chars(max_chars))
        ))
    }
}

/// `value` with every secret-looking part replaced by [`NOT_SHOWN`]: a
/// member under a secret-looking name (`api_key`, `GITHUB_TOKEN`), a string
/// holding a credential (`https://user:pass@host`, a token format, a PEM
/// key); `name` is the value's own name.
pub(crate) fn scrub_shown(name: &str, value: Value) -> Value {
    use crate::governance::secret_env::{is_secret_env_name, is_secret_env_value};
    if is_secret_env_name(name) {
        return Value::String(NOT_SHOWN.to_owned());
    }
    match value {
        Value::String(s) if is_secret_env_value(std::ffi::OsStr::new(&s)) => {
            Value::String(NOT_SHOWN.to_owned())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = scrub_shown(&k, v);
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| scrub_shown("", v)).collect())
        }
        other => other,
    }
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ApprovalDecision {
    /// Run the call as sent.
    Approve,
    /// Run the call with these arguments; only editable parameters may differ
    /// from the request, any other change is refused.
    ApproveWithEdits(Map<String, Value>),
    /// Do not run the call; the reason goes back to the model.
    Deny(String),
}

/// How long an approval waits by default ([`ToolContext::with_approval_timeout`](crate::ToolContext::with_approval_timeout)): 300 s.
pub const DEFAULT_APPROVAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// What an approval nobody answered in time decides (cross-cutting §4: the
/// caller chooses; deny unless configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDefault {
    /// The call is not made. The default.
    #[default]
    Deny,
    /// The call runs as sent (for unattended runs whose caller accepts it).
    Approve,
}

impl ApprovalDefault {
    /// `deny` or `approve`, as messages show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deny => "deny",
            Self::Approve => "approve",
        }
    }
}

/// Decides on calls that require confirmation. Implemented for any
/// `Fn(ApprovalRequest) -> impl Future<Output = ApprovalDecision>` closure.
pub trait Approver: Send + Sync + 'static {
    /// Decides on one request.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<ApprovalDecision>;

    /// Told by the approval gate ([`confirm::ask`](super::confirm::ask))
    /// that it stopped waiting for the decision on `request` after the
    /// context's approval timeout (the future `approve` returned was
    /// dropped). Does nothing by default; a
    /// [`RefusalBreaker`](super::breaker::RefusalBreaker) counts it as a refusal.
    fn timed_out(&self, request: &ApprovalRequest) {
        let _ = request;
    }
}

impl<F, Fut> Approver for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalDecision> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<ApprovalDecision> {
        Box::pin(self(request))
    }
}

/// A small policy layer over an [`Approver`]: approve some kinds
/// automatically, deny some outright, ask the inner approver about the rest
/// (or deny when there is none).
///
/// It decides on the calls that reach the approval gate: those of tools
/// marked `requires_confirmation`, and every call of the kinds the context
/// gates with [`ToolContext::with_confirmed_kinds`](crate::ToolContext::with_confirmed_kinds)
/// (side effects gated by kind: `write`, `exec`, `network` for every tool
/// of that kind).
///
/// ```
/// use tool_core::{ApprovalPolicy, ToolKind};
/// // Reads need no confirmation, shell commands are never allowed, the rest is denied.
/// let policy = ApprovalPolicy::new().auto_approve(ToolKind::Read).deny(ToolKind::Exec);
/// # let _ = policy;
/// ```
#[derive(Clone, Default)]
pub struct ApprovalPolicy {
    auto: BTreeSet<ToolKind>,
    deny: BTreeSet<ToolKind>,
    inner: Option<Arc<dyn Approver>>,
}

impl ApprovalPolicy {
    /// A policy that asks nobody: everything is denied until configured.
    pub fn new() -> Self {
        Self::default()
    }

    /// Approves calls of `kind` without asking.
    #[must_use]
    pub fn auto_approve(mut self, kind: ToolKind) -> Self {
        self.auto.insert(kind);
        self
    }

    /// Approves calls of every kind without asking (for trusted, unattended runs).
    #[must_use]
    pub fn auto_approve_all(mut self) -> Self {
        for kind in [
            ToolKind::Read,
            ToolKind::Write,
            ToolKind::Exec,
            ToolKind::Network,
            ToolKind::Ask,
            ToolKind::Other,
        ] {
            self.auto.insert(kind);
        }
        self
    }

    /// Denies calls of `kind` without asking (wins over `auto_approve`).
    #[must_use]
    pub fn deny(mut self, kind: ToolKind) -> Self {
        self.deny.insert(kind);
        self
    }

    /// Asks `approver` about calls the policy does not decide.
    #[must_use]
    pub fn ask(mut self, approver: impl Approver) -> Self {
        self.inner = Some(Arc::new(approver));
        self
    }
}

impl Approver for ApprovalPolicy {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<ApprovalDecision> {
        let key = request.kind;
        if self.deny.contains(&key) {
            let reason = format!("calls of kind `{}` are not allowed by policy", request.kind);
            return Box::pin(async move { ApprovalDecision::Deny(reason) });
        }
        if self.auto.contains(&key) {
            return Box::pin(async { ApprovalDecision::Approve });
        }
        match &self.inner {
            Some(inner) => inner.approve(request),
            None => Box::pin(async {
                ApprovalDecision::Deny(
                    "this call needs a person's confirmation and none is available".to_owned(),
                )
            }),
        }
    }
}

/// Checks that an edited argument object differs from the original only in
/// editable parameters; returns the first offending parameter.
pub(crate) fn check_edits<'a>(
    original: &'a Map<String, Value>,
    edited: &'a Map<String, Value>,
    editable: &[String],
) -> Result<(), &'a str> {
    let is_editable = |k: &str| editable.iter().any(|e| e == k);
    for (k, v) in edited {
        if original.get(k) != Some(v) && !is_editable(k) {
            return Err(k);
        }
    }
    for k in original.keys() {
        if !edited.contains_key(k) && !is_editable(k) {
            return Err(k);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: &Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn only_editable_parameters_may_change() {
        let original = obj(&json!({"a": 1, "b": 2}));
        let editable = vec!["b".to_owned()];
        assert!(check_edits(&original, &obj(&json!({"a": 1, "b": 3})), &editable).is_ok());
        assert_eq!(
            check_edits(&original, &obj(&json!({"a": 5, "b": 2})), &editable),
            Err("a")
        );
        assert_eq!(
            check_edits(&original, &obj(&json!({"b": 2})), &editable),
            Err("a")
        );
        assert_eq!(
            check_edits(&original, &obj(&json!({"a": 1, "b": 2, "c": 0})), &editable),
            Err("c")
        );
    }

    #[tokio::test]
    async fn policy_layers() {
        let req = |kind| ApprovalRequest {
            tool: "t".into(),
            kind,
            display: BTreeMap::new(),
            arguments: Map::new(),
            editable_params: vec![],
            trace_id: None,
            injected: Map::new(),
            editable_schemas: Map::new(),
            defaults: Map::new(),
        };
        let p = ApprovalPolicy::new()
            .auto_approve(ToolKind::Read)
            .deny(ToolKind::Exec);
        assert_eq!(
            p.approve(req(ToolKind::Read)).await,
            ApprovalDecision::Approve
        );
        assert!(matches!(
            p.approve(req(ToolKind::Exec)).await,
            ApprovalDecision::Deny(_)
        ));
        assert!(matches!(
            p.approve(req(ToolKind::Write)).await,
            ApprovalDecision::Deny(_)
        ));
        let p = p.ask(|r: ApprovalRequest| async move {
            ApprovalDecision::Deny(format!("asked about {}", r.tool))
        });
        assert_eq!(
            p.approve(req(ToolKind::Write)).await,
            ApprovalDecision::Deny("asked about t".into())
        );
        let all = ApprovalPolicy::new().auto_approve_all();
        assert_eq!(
            all.approve(req(ToolKind::Exec)).await,
            ApprovalDecision::Approve
        );
    }
}
