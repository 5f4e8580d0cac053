//! The confirmation comes after the context stage (issue 24, second review,
//! finding 2): a call whose hidden parameter the application did not supply
//! fails with `missing_context` before anyone is asked, and the approver
//! sees the values the application supplies (hidden and injected), with
//! secret-looking ones not shown.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::governance::approval::NOT_SHOWN;
use tool_core::{ApprovalDecision, ApprovalRequest, ErrorKind, ToolContext, ToolRegistry, tool};

/// Borrow a book for a member.
///
/// # Arguments
/// * `isbn` - The book.
/// * `days` - Loan length in days.
#[tool(
    kind = "write",
    requires_confirmation,
    hidden_params = ["member", "api_token", "branch"],
    editable_params = ["days"],
    inject_params(days(mode = "default", key = "library_config.loan_days")),
)]
fn cc_borrow(
    isbn: String,
    days: Option<u32>,
    member: String,
    api_token: Option<String>,
    #[arg(default = 1)] branch: u32,
) -> String {
    format!(
        "{member} borrowed {isbn} for {} days at branch {branch} ({})",
        days.unwrap_or(0),
        api_token.map_or("no token", |_| "token")
    )
}

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory().expect("the test tools register")
}

/// A context whose approver records each request and answers `decision`.
fn asking(
    ctx: ToolContext,
    decision: ApprovalDecision,
) -> (ToolContext, Arc<Mutex<Vec<ApprovalRequest>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let ctx = ctx.with_approver(move |request: ApprovalRequest| {
        record.lock().expect("not poisoned").push(request);
        let decision = decision.clone();
        async move { decision }
    });
    (ctx, seen)
}

fn library() -> ToolContext {
    ToolContext::new().with_config("library_config", &json!({"loan_days": 21}))
}

#[tokio::test]
async fn a_missing_hidden_value_fails_before_anyone_is_asked() {
    let (ctx, seen) = asking(library(), ApprovalDecision::Approve);
    let result = registry()
        .execute("cc_borrow", json!({"isbn": "978-1"}), &ctx)
        .await;
    let error = result.error.expect("refused");
    assert_eq!(error.kind, ErrorKind::MissingContext);
    assert_eq!(
        error.message,
        "Tool `cc_borrow` needs the hidden parameter `member`, which the application did not supply (no context value `member`)."
    );
    assert!(
        seen.lock().expect("not poisoned").is_empty(),
        "the approver was asked"
    );
}

#[tokio::test]
async fn the_approver_sees_what_the_application_supplies() {
    let ctx = library()
        .with_value("member", "member-7")
        .with_value("api_token", "s3cr3t-value");
    let (ctx, seen) = asking(ctx, ApprovalDecision::Approve);
    let result = registry()
        .execute("cc_borrow", json!({"isbn": "978-1"}), &ctx)
        .await;
    assert_eq!(
        result.output,
        "member-7 borrowed 978-1 for 21 days at branch 1 (token)"
    );
    let requests = seen.lock().expect("not poisoned");
    let [request] = requests.as_slice() else {
        panic!("asked {} times", requests.len());
    };
    assert_eq!(
        Value::Object(request.arguments.clone()),
        json!({"isbn": "978-1"})
    );
    assert_eq!(
        Value::Object(request.injected.clone()),
        json!({"days": 21, "member": "member-7", "api_token": NOT_SHOWN, "branch": 1})
    );
    let line = request.injected_line(400).expect("a line");
    assert!(line.starts_with("supplied by the application: {"), "{line}");
    assert!(!line.contains("s3cr3t"), "{line}");
}

#[tokio::test]
async fn a_value_the_model_sent_is_not_shown_as_injected_and_edits_win() {
    let ctx = library().with_value("member", "m1");
    let (ctx, seen) = asking(
        ctx,
        ApprovalDecision::ApproveWithEdits(
            json!({"isbn": "978-1", "days": 3})
                .as_object()
                .expect("an object")
                .clone(),
        ),
    );
    let result = registry()
        .execute("cc_borrow", json!({"isbn": "978-1", "days": 7}), &ctx)
        .await;
    assert_eq!(
        result.output,
        "m1 borrowed 978-1 for 3 days at branch 1 (no token)"
    );
    let requests = seen.lock().expect("not poisoned");
    assert_eq!(
        Value::Object(requests[0].injected.clone()),
        json!({"member": "m1", "branch": 1})
    );
}

/// How many times `cc_ship` ran.
static SHIPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Ship a parcel.
///
/// # Arguments
/// * `parcel` - The parcel id.
/// * `count` - How many copies.
#[tool(kind = "write", requires_confirmation)]
fn cc_ship(parcel: String, count: u8) -> String {
    SHIPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("shipped {count} x {parcel}")
}

#[tokio::test]
async fn invalid_arguments_fail_before_anyone_is_asked() {
    let cases = [
        (
            json!({"parcel": "P-1", "count": -1}),
            "Invalid value for parameter `count` of `cc_ship`: expected an integer from 0 to 255, but received an integer -1.",
        ),
        (json!({"count": 2}), "Missing required parameter `parcel`"),
        (
            json!({"parcel": "P-1", "count": 2, "colour": "red"}),
            "`colour`",
        ),
    ];
    for (arguments, expected) in cases {
        let (ctx, seen) = asking(ToolContext::new(), ApprovalDecision::Approve);
        let result = registry().execute("cc_ship", arguments.clone(), &ctx).await;
        let error = result.error.expect("refused");
        assert_eq!(error.kind, ErrorKind::InvalidArguments, "{arguments}");
        assert!(
            error.message.contains(expected),
            "{arguments}: {}",
            error.message
        );
        assert!(
            seen.lock().expect("not poisoned").is_empty(),
            "the approver was asked about {arguments}"
        );
    }
}

#[tokio::test]
async fn valid_arguments_are_asked_about_and_run_once() {
    let before = SHIPPED.load(std::sync::atomic::Ordering::SeqCst);
    let (ctx, seen) = asking(ToolContext::new(), ApprovalDecision::Approve);
    // A repaired argument ("3" for an integer) is still a call that can run.
    let result = registry()
        .execute("cc_ship", json!({"parcel": "P-2", "count": "3"}), &ctx)
        .await;
    assert_eq!(result.error, None);
    assert_eq!(result.output, "shipped 3 x P-2");
    assert_eq!(seen.lock().expect("not poisoned").len(), 1);
    assert_eq!(
        SHIPPED.load(std::sync::atomic::Ordering::SeqCst),
        before + 1
    );
}

#[tokio::test]
async fn a_hidden_value_the_model_sent_is_dropped_with_a_note() {
    let ctx = library().with_value("member", "member-7");
    let (ctx, _) = asking(ctx, ApprovalDecision::Approve);
    let result = registry()
        .execute(
            "cc_borrow",
            json!({"isbn": "978-1", "member": "evil"}),
            &ctx,
        )
        .await;
    assert!(
        result.output.starts_with("member-7 borrowed 978-1"),
        "{result:?}"
    );
    assert_eq!(
        result.notes,
        ["`member` is set by the application; the value you sent was ignored"]
    );
    assert_eq!(result.metadata["ignored_hidden_params"], json!(["member"]));
}

/// Open the cart (shop pages only).
#[tool(url_patterns = ["https://shop.example/**"])]
fn cc_cart() -> String {
    "cart".to_owned()
}

#[tokio::test]
async fn the_url_scope_refusal_uses_the_hosts_hint() {
    let plain = registry()
        .execute("cc_cart", json!({}), &ToolContext::new())
        .await;
    assert!(
        plain
            .error
            .expect("refused")
            .message
            .contains("(the application gives it with `ToolContext::with_page_url`)")
    );
    let ctx =
        ToolContext::new().with_page_url_hint("start the server with `shop serve --page-url URL`");
    let hinted = registry().execute("cc_cart", json!({}), &ctx).await;
    assert_eq!(
        hinted.error.expect("refused").message,
        "The tool `cc_cart` runs only on the pages its URL patterns match, and this call has no page URL (start the server with `shop serve --page-url URL`); use one of the tools offered here."
    );
}
