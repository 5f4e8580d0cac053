//! Hidden parameters: context, State<T>, context values, inject rules, defaults; model cannot override.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use serde_json::json;
use tool_core::{ErrorKind, State, ToolContext, ToolRegistry, tool};

/// Application state.
pub(crate) struct Db {
    pub name: &'static str,
}

/// Report where hidden values came from.
#[tool(
    hidden_params = ["uid", "trace_id", "tenant", "retries"],
    inject_params(tenant(mode = "default", key = "org.tenant")),
)]
async fn hidden_report(
    query: String,
    ctx: &ToolContext,
    db: State<Db>,
    uid: String,
    trace_id: Option<String>,
    tenant: Option<String>,
    #[arg(default = 3)] retries: u32,
) -> String {
    format!(
        "{query}|{}|{}|{uid}|{trace_id:?}|{tenant:?}|{retries}",
        ctx.step_id().unwrap_or("-"),
        db.name
    )
}

/// Takes the context by value and optionally.
#[tool]
fn hidden_ctx_forms(a: u8, owned: ToolContext, maybe: Option<&ToolContext>) -> String {
    format!("{a} {:?} {:?}", owned.uid(), maybe.and_then(|c| c.uid()))
}

fn base() -> ToolContext {
    ToolContext::new()
        .with_uid("u1")
        .with_step_id("s9")
        .with_state(Db { name: "main" })
}

#[test]
fn hidden_params_are_not_in_the_schema() {
    let spec = ToolRegistry::global().get("hidden_report").unwrap().spec();
    assert_eq!(spec.parameter_names(), ["query"]);
    assert_eq!(spec.parameters["required"], json!(["query"]));
    let mut hidden = spec.hidden_params.clone();
    hidden.sort();
    assert_eq!(
        hidden,
        ["ctx", "db", "retries", "tenant", "trace_id", "uid"]
    );
    let forms = ToolRegistry::global()
        .get("hidden_ctx_forms")
        .unwrap()
        .spec();
    assert_eq!(forms.parameter_names(), ["a"]);
}

#[tokio::test]
async fn sources_in_order() {
    let r = ToolRegistry::global()
        .execute("hidden_report", json!({"query": "q"}), &base())
        .await;
    assert_eq!(r.output, "q|s9|main|u1|None|None|3");

    let ctx = base()
        .with_trace_id("t-5")
        .with_config("org", &json!({"tenant": "acme"}))
        .with_value("retries", 9);
    let r = ToolRegistry::global()
        .execute("hidden_report", json!({"query": "q"}), &ctx)
        .await;
    assert_eq!(r.output, "q|s9|main|u1|Some(\"t-5\")|Some(\"acme\")|9");

    // A context value of the same name wins over the inject rule.
    let ctx = ctx.with_value("tenant", "direct");
    let r = ToolRegistry::global()
        .execute("hidden_report", json!({"query": "q"}), &ctx)
        .await;
    assert!(r.output.contains("Some(\"direct\")"), "{}", r.output);
}

#[tokio::test]
async fn model_cannot_override_hidden_values() {
    let r = ToolRegistry::global()
        .execute(
            "hidden_report",
            json!({"query": "q", "uid": "attacker", "ctx": 1}),
            &base(),
        )
        .await;
    assert!(r.is_ok(), "{:?}", r.error);
    assert!(r.output.contains("|u1|"), "{}", r.output);
    let mut ignored: Vec<String> =
        serde_json::from_value(r.metadata["ignored_hidden_params"].clone()).unwrap();
    ignored.sort();
    assert_eq!(ignored, ["ctx", "uid"]);
}

#[tokio::test]
async fn missing_hidden_required_value_is_an_error_result() {
    let ctx = ToolContext::new().with_state(Db { name: "x" });
    let r = ToolRegistry::global()
        .execute("hidden_report", json!({"query": "q"}), &ctx)
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::MissingContext);
    assert!(e.message.contains("`uid`"), "{}", e.message);
}

#[tokio::test]
async fn missing_state_names_the_type() {
    let ctx = ToolContext::new().with_uid("u");
    let r = ToolRegistry::global()
        .execute("hidden_report", json!({"query": "q"}), &ctx)
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::MissingContext);
    assert!(e.message.contains("Db"), "{}", e.message);
    assert!(e.message.contains("with_state"), "{}", e.message);
}

#[tokio::test]
async fn context_by_value_and_option() {
    let r = ToolRegistry::global()
        .execute(
            "hidden_ctx_forms",
            json!({"a": 1}),
            &ToolContext::new().with_uid("me"),
        )
        .await;
    assert_eq!(r.output, "1 Some(\"me\") Some(\"me\")");
}
