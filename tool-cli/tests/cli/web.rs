//! `web_fetch` and `web_search` through the `tool` program: `--allow-net`,
//! `--allow-net-private`, the per-trace cache inside one `batch` run, and
//! the search provider configured by the environment. Real HTTP servers on
//! loopback, started here.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::{feed, json_lines, one_json_line, tool};

/// Serves `body` (with `content_type`) to every request; returns the port
/// and the request count.
fn serve(content_type: &'static str, body: String) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            seen.fetch_add(1, Ordering::SeqCst);
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    (port, count)
}

#[test]
fn web_fetch_follows_allow_net_and_caches_within_a_batch() {
    let (port, requests) = serve("text/html", "<h1>Local docs</h1><p>hello</p>".to_owned());
    let url = format!("http://127.0.0.1:{port}/");
    let call = format!("{{\"name\":\"web_fetch\",\"arguments\":{{\"url\":\"{url}\"}}}}\n");
    let pattern = format!("127.0.0.1:{port}");

    // Allowed host, but a loopback address: refused, naming the flag.
    let mut cmd = tool();
    cmd.args(["--allow-net", &pattern, "batch"]);
    let results = json_lines(&feed(&mut cmd, &call));
    assert_eq!(results[0]["metadata"]["failure"], "private_address");
    let message = results[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`--allow-net-private`"), "{message}");
    assert_eq!(requests.load(Ordering::SeqCst), 0);

    // With --allow-net-private: fetched once, the second call from the cache.
    let mut cmd = tool();
    cmd.args(["--allow-net", &pattern, "--allow-net-private", "batch"]);
    let results = json_lines(&feed(&mut cmd, &format!("{call}{call}")));
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["output"], "# Local docs\n\nhello");
    assert_eq!(results[0]["metadata"]["cached"], false);
    assert_eq!(results[1]["output"], "# Local docs\n\nhello");
    assert_eq!(results[1]["metadata"]["cached"], true);
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

#[test]
fn web_search_uses_the_provider_the_environment_names_and_masks_its_key() {
    let key = "BSA-cli-test-key-51d0e7";
    let brave = serde_json::json!({"web": {"results": [
        {"title": "Tokio", "url": "https://tokio.rs/", "description": format!("key {key}")}
    ]}});
    let (brave_port, _) = serve("application/json", brave.to_string());
    let searx = serde_json::json!({"results": [
        {"title": "SearXNG hit", "url": "https://docs.rs/", "content": "from searx"}
    ]});
    let (searx_port, _) = serve("application/json", searx.to_string());

    let out = tool()
        .env("AGENT_TOOLS_SEARCH", "brave")
        .env("BRAVE_SEARCH_API_KEY", key)
        .env("BRAVE_SEARCH_URL", format!("http://127.0.0.1:{brave_port}"))
        .args(["call", "web_search", r#"{"query": "tokio"}"#])
        .output()
        .expect("the tool binary runs");
    let result = one_json_line(&out);
    assert_eq!(
        result["output"],
        "1. Tokio\n   https://tokio.rs/\n   key <withheld:BRAVE_SEARCH_API_KEY>"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(key));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(key));

    let out = tool()
        .env_remove("AGENT_TOOLS_SEARCH")
        .env_remove("BRAVE_SEARCH_API_KEY")
        .env("SEARXNG_URL", format!("http://127.0.0.1:{searx_port}"))
        .args(["call", "web_search", r#"{"query": "docs"}"#])
        .output()
        .expect("the tool binary runs");
    let result = one_json_line(&out);
    assert_eq!(result["metadata"]["provider"], "searxng");
    assert_eq!(
        result["output"],
        "1. SearXNG hit\n   https://docs.rs/\n   from searx"
    );
}
