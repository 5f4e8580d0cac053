//! `web_search` against local servers answering in the Brave Search API's
//! and SearXNG's documented shapes.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_builtins::web::{BraveSearch, SearchProvider, SearchQuery, SearxngSearch, WebConfig};
use tool_core::{ErrorKind, ToolContext, ToolResult};

use crate::server::serve;

/// A key long enough to be masked.
const KEY: &str = "BSA-test-key-8f2e61c0a9";

async fn call(ctx: &ToolContext, args: Value) -> ToolResult {
    tool_builtins::registry()
        .execute("web_search", args, ctx)
        .await
}

fn with_provider(provider: Arc<dyn SearchProvider>) -> ToolContext {
    ToolContext::new().with_state(WebConfig::default().with_search(provider))
}

/// The query parameters of a request target.
fn params(path: &str) -> Vec<(String, String)> {
    url::Url::parse(&format!("http://x{path}"))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn brave_answer() -> String {
    json!({
        "type": "search",
        "query": {"original": "rust async"},
        "web": {
            "type": "search",
            "results": [
                {"title": "The <strong>Rust</strong> Async Book", "url": "https://rust-lang.github.io/async-book/",
                 "description": "Asynchronous <strong>programming</strong> in Rust &amp; more", "language": "en"},
                {"title": "tokio - Rust", "url": "https://docs.rs/tokio/latest/tokio/",
                 "description": "A runtime for writing reliable network applications"},
                {"title": "Leaky", "url": "https://spam.example/",
                 "description": format!("echoes the key {KEY}")}
            ]
        }
    })
    .to_string()
}

#[tokio::test]
async fn brave_is_asked_in_its_documented_shape_and_its_hits_are_listed() {
    let answer = brave_answer();
    let server = serve(move |_, out| {
        out.respond(
            "200 OK",
            &[("Content-Type", "application/json")],
            answer.as_bytes(),
        );
    });
    let brave = BraveSearch::new(KEY)
        .with_base_url(&server.url("/"))
        .unwrap();
    let ctx = with_provider(Arc::new(brave));
    let r = call(&ctx, json!({"query": "rust async", "max_results": 2})).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.output,
        "1. The Rust Async Book\n   https://rust-lang.github.io/async-book/\n   \
         Asynchronous programming in Rust & more\n\
         2. tokio - Rust\n   https://docs.rs/tokio/latest/tokio/\n   \
         A runtime for writing reliable network applications"
    );
    assert_eq!(r.metadata["provider"], "brave");
    assert_eq!(r.metadata["count"], 2);
    assert_eq!(
        r.metadata["results"][1]["url"],
        "https://docs.rs/tokio/latest/tokio/"
    );
    let heads = server.heads.lock().unwrap().clone();
    let head = &heads[0];
    let path = head.split_whitespace().nth(1).unwrap();
    assert!(path.starts_with("/res/v1/web/search?"), "{head}");
    assert_eq!(
        params(path),
        [
            ("q".to_owned(), "rust async".to_owned()),
            ("count".to_owned(), "2".to_owned())
        ]
    );
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains(&format!(
            "x-subscription-token: {}",
            KEY.to_ascii_lowercase()
        )),
        "{head}"
    );
    assert!(lower.contains("accept: application/json"), "{head}");
}

#[tokio::test]
async fn the_key_is_masked_in_whatever_comes_back() {
    let answer = brave_answer();
    let server = serve(move |_, out| {
        out.respond(
            "200 OK",
            &[("Content-Type", "application/json")],
            answer.as_bytes(),
        );
    });
    let brave = BraveSearch::new(KEY)
        .with_base_url(&server.url("/"))
        .unwrap();
    let ctx = with_provider(Arc::new(brave));
    let r = call(
        &ctx,
        json!({"query": "leak", "allowed_domains": ["spam.example"]}),
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert!(!r.output.contains(KEY), "{}", r.output);
    assert!(
        r.output
            .contains("echoes the key <withheld:BRAVE_SEARCH_API_KEY>"),
        "{}",
        r.output
    );
    assert!(!serde_json::to_string(&r.metadata).unwrap().contains(KEY));
    // Debug output of the provider never shows it either.
    let brave = BraveSearch::new(KEY);
    assert!(!format!("{brave:?}").contains(KEY));
}

#[tokio::test]
async fn domain_filters_keep_and_drop_hits() {
    let answer = brave_answer();
    let server = serve(move |_, out| {
        out.respond(
            "200 OK",
            &[("Content-Type", "application/json")],
            answer.as_bytes(),
        );
    });
    let brave = BraveSearch::new(KEY)
        .with_base_url(&server.url("/"))
        .unwrap();
    let ctx = with_provider(Arc::new(brave));
    let r = call(
        &ctx,
        json!({"query": "rust", "allowed_domains": ["docs.rs"]}),
    )
    .await;
    assert_eq!(r.metadata["count"], 1);
    assert_eq!(r.metadata["filtered_out"], 2);
    assert!(r.output.starts_with("1. tokio - Rust"), "{}", r.output);
    // Filtering asks the provider for the most it gives.
    let heads = server.heads.lock().unwrap().clone();
    assert!(heads[0].contains("count=20"), "{}", heads[0]);
    let r = call(
        &ctx,
        json!({"query": "rust", "blocked_domains": ["github.io", "spam.example"]}),
    )
    .await;
    assert_eq!(r.metadata["count"], 1);
    let r = call(
        &ctx,
        json!({"query": "rust", "allowed_domains": ["nothing.test"]}),
    )
    .await;
    assert!(r.is_ok());
    assert_eq!(
        r.output,
        "No results for \"rust\" (3 found, none in the allowed domains or all blocked)."
    );
}

#[tokio::test]
async fn brave_errors_say_what_to_do() {
    let server = serve(|req, out| {
        if req.path.contains("q=limited") {
            out.respond("429 Too Many Requests", &[], b"");
        } else {
            out.respond("401 Unauthorized", &[], b"");
        }
    });
    let brave = BraveSearch::new(KEY)
        .with_base_url(&server.url("/"))
        .unwrap();
    let ctx = with_provider(Arc::new(brave));
    let r = call(&ctx, json!({"query": "x"})).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Failed);
    assert_eq!(
        e.message,
        "brave: the Brave search API answered 401 Unauthorized; the key in BRAVE_SEARCH_API_KEY was refused"
    );
    let r = call(&ctx, json!({"query": "limited"})).await;
    assert!(r.error.unwrap().message.contains("rate limit"));
}

#[tokio::test]
async fn searxng_is_asked_for_json_and_its_hits_are_listed() {
    let server = serve(|req, out| {
        if req.path.contains("q=off") {
            out.respond("403 Forbidden", &[], b"");
            return;
        }
        let body = json!({
            "query": "tokio",
            "number_of_results": 0,
            "results": [
                {"url": "https://tokio.rs/", "title": "Tokio", "content": "An asynchronous runtime", "engine": "duckduckgo"},
                {"url": "https://github.com/tokio-rs/tokio", "title": "tokio-rs/tokio", "content": ""}
            ],
            "answers": [], "suggestions": [], "unresponsive_engines": []
        });
        out.respond(
            "200 OK",
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        );
    });
    let searx = SearxngSearch::new(&server.url("/searx")).unwrap();
    let ctx = with_provider(Arc::new(searx));
    let r = call(&ctx, json!({"query": "tokio"})).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.output,
        "1. Tokio\n   https://tokio.rs/\n   An asynchronous runtime\n\
         2. tokio-rs/tokio\n   https://github.com/tokio-rs/tokio"
    );
    let heads = server.heads.lock().unwrap().clone();
    let path = heads[0].split_whitespace().nth(1).unwrap().to_owned();
    assert!(path.starts_with("/searx/search?"), "{path}");
    assert_eq!(
        params(&path),
        [
            ("q".to_owned(), "tokio".to_owned()),
            ("format".to_owned(), "json".to_owned())
        ]
    );
    let r = call(&ctx, json!({"query": "off"})).await;
    let message = r.error.unwrap().message;
    assert!(
        message.contains("list `json` under `search.formats`"),
        "{message}"
    );
}

#[tokio::test]
async fn the_provider_trait_can_be_called_directly() {
    let server = serve(|_, out| {
        let body = json!({"results": [{"url": "https://a.test/", "title": "A"}]});
        out.respond("200 OK", &[], body.to_string().as_bytes());
    });
    let searx = SearxngSearch::new(&server.url("/")).unwrap();
    let hits = searx.search(&SearchQuery::new("a", 5)).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].title, "A");
    assert_eq!(hits[0].snippet, "");
    // A body that is not the documented shape is a clear error.
    let bad = serve(|_, out| out.respond("200 OK", &[], b"<html>not json</html>"));
    let searx = SearxngSearch::new(&bad.url("/")).unwrap();
    let e = searx.search(&SearchQuery::new("a", 5)).await.unwrap_err();
    assert!(
        e.to_string().contains("is not the JSON its API documents"),
        "{e}"
    );
}

#[tokio::test]
async fn without_a_provider_the_error_names_the_configuration() {
    let r = call(&ToolContext::new(), json!({"query": "anything"})).await;
    let e = r.error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::Failed);
    assert!(
        e.message
            .contains("AGENT_TOOLS_SEARCH=brave and BRAVE_SEARCH_API_KEY"),
        "{}",
        e.message
    );
    assert_eq!(r.metadata["failure"], "not_configured");
    // Arguments are checked first.
    let r = call(&ToolContext::new(), json!({"query": "  "})).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments);
    let r = call(
        &ToolContext::new(),
        json!({"query": "x", "max_results": 21}),
    )
    .await;
    assert!(r.error.unwrap().message.contains("from 1 to 20"));
    let long = "w ".repeat(300);
    let r = call(&ToolContext::new(), json!({"query": long})).await;
    assert!(r.error.unwrap().message.contains("over the limit of 400"));
}
