//! Framework-filled parameters: by last segment, by `#[context]` on an alias,
//! a user's own `FromToolContext`, and `CancellationToken`, in sync and async fns.
#![deny(warnings)]
#![allow(deprecated, reason = "parameters left undocumented on purpose: #[tool] warns of each")]

use tool_core::{
    CancellationToken, ErrorKind, FromToolContext, State, ToolContext, ToolError, ToolRegistry,
    tool,
};

type Ctx = ToolContext;

struct Db(&'static str);

/// The caller's user id.
struct UserId(String);

impl<'a> FromToolContext<'a> for UserId {
    fn from_tool_context(ctx: &'a ToolContext) -> Result<Self, ToolError> {
        ctx.uid()
            .map(|u| UserId(u.to_owned()))
            .ok_or_else(|| ToolError::new(ErrorKind::MissingContext, "the context has no uid"))
    }
}

/// Everything at once, sync.
#[tool]
fn everything(
    query: String,
    #[context] ctx: &Ctx,
    #[context] user: UserId,
    db: State<Db>,
    token: CancellationToken,
    maybe: Option<&ToolContext>,
) -> String {
    format!(
        "{query} {} {} {} {} {}",
        ctx.uid().unwrap_or_default(),
        user.0,
        db.0.0,
        token.is_cancelled(),
        maybe.is_some()
    )
}

/// Owned context, async.
#[tool]
async fn owned(#[context] ctx: Ctx, user: tool_core::ToolContext) -> String {
    format!("{} {}", ctx.uid().unwrap_or_default(), user.uid().unwrap_or_default())
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let registry = ToolRegistry::global();
    let spec = registry.get("everything").unwrap().spec();
    assert_eq!(spec.parameter_names(), ["query"]);
    let ctx = ToolContext::new().with_uid("ann").with_state(Db("notes"));
    let out = rt.block_on(registry.execute("everything", r#"{"query": "q"}"#, &ctx));
    assert_eq!(out.output, "q ann ann notes false true", "{out:?}");
    let out = rt.block_on(registry.execute("owned", "{}", &ctx));
    assert_eq!(out.output, "ann ann");
    let bare = rt.block_on(registry.execute("everything", r#"{"query": "q"}"#, &ToolContext::new()));
    let error = bare.error.unwrap();
    assert_eq!(error.kind, ErrorKind::MissingContext);
    assert_eq!(
        error.message,
        "Tool `everything` cannot fill its parameter `user`: the context has no uid"
    );
}
