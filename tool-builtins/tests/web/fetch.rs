//! `web_fetch` against real servers.

use std::io::Cursor;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_builtins::web::{FetchLimits, WebConfig};
use tool_core::{ErrorKind, NetworkPolicy, ToolContext, ToolKind, ToolResult};

use crate::server::{Server, serve, serve_on};

/// 10 GB, the size a response declares in the "huge response" tests.
const TEN_GB: u64 = 10 * 1024 * 1024 * 1024;

/// A policy allowing exactly these loopback ports, private addresses allowed.
fn loopback(servers: &[&Server]) -> NetworkPolicy {
    let patterns: Vec<String> = servers
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port()))
        .collect();
    NetworkPolicy::from_patterns(&patterns)
        .unwrap()
        .allow_private(true)
}

fn quick_limits() -> FetchLimits {
    let mut limits = FetchLimits::default();
    limits.read_timeout = Duration::from_millis(500);
    limits.total_timeout = Duration::from_secs(10);
    limits.retry_backoff = Duration::from_millis(50);
    limits
}

fn context(config: WebConfig, trace: &str) -> ToolContext {
    ToolContext::new().with_state(config).with_trace_id(trace)
}

async fn call(ctx: &ToolContext, args: Value) -> ToolResult {
    tool_builtins::registry()
        .execute("web_fetch", args, ctx)
        .await
}

fn error(r: &ToolResult) -> (ErrorKind, String) {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected an error: {r:?}"));
    (e.kind, e.message.clone())
}

#[test]
fn web_fetch_is_a_registered_network_tool() {
    let registry = tool_builtins::registry();
    let spec = registry.get("web_fetch").unwrap().spec();
    assert_eq!(spec.kind, ToolKind::Network);
    assert!(spec.flags.open_world);
    assert!(spec.flags.read_only);
    let spec = registry.get("web_search").unwrap().spec();
    assert_eq!(spec.kind, ToolKind::Network);
    assert!(spec.flags.open_world);
}

#[tokio::test]
async fn html_comes_back_as_markdown_and_a_refetch_is_served_from_the_cache() {
    let page = "<html><head><title>Doc</title><script>alert(1)</script></head>\
                <body><h1>Release notes</h1><p>See <a href=\"/v2\">version 2</a>.</p></body></html>";
    let server = serve(move |_, out| {
        out.respond(
            "200 OK",
            &[("Content-Type", "text/html; charset=utf-8")],
            page.as_bytes(),
        );
    });
    let config = WebConfig::new(loopback(&[&server])).with_limits(quick_limits());
    let ctx = context(config.clone(), "trace-a");
    let url = server.url("/notes");
    let first = call(&ctx, json!({ "url": url })).await;
    assert!(first.is_ok(), "{first:?}");
    assert!(first.output.contains("# Release notes"), "{}", first.output);
    assert!(
        first
            .output
            .contains(&format!("[version 2]({})", server.url("/v2"))),
        "{}",
        first.output
    );
    assert!(!first.output.contains("alert"), "{}", first.output);
    assert_eq!(first.metadata["status"], 200);
    assert_eq!(first.metadata["content_type"], "text/html");
    assert_eq!(first.metadata["markdown"], true);
    assert_eq!(first.metadata["cached"], false);
    assert_eq!(server.requests(), 1);

    let again = call(&ctx, json!({ "url": url })).await;
    assert_eq!(again.output, first.output);
    assert_eq!(again.metadata["cached"], true);
    assert_eq!(server.requests(), 1, "the second fetch made no request");

    // Another trace does not see trace-a's cache.
    let other = context(config, "trace-b");
    let third = call(&other, json!({ "url": url })).await;
    assert_eq!(third.metadata["cached"], false);
    assert_eq!(server.requests(), 2);

    // The server saw our user agent and no proxy headers.
    let heads = server.heads.lock().unwrap().clone();
    assert!(
        heads[0]
            .to_ascii_lowercase()
            .contains("user-agent: agent-tools-web-fetch/"),
        "{}",
        heads[0]
    );
}

#[tokio::test]
async fn a_ten_gigabyte_text_response_is_cut_at_the_byte_limit() {
    let server = serve(|_, out| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {TEN_GB}\r\n\r\n"
        );
        if !out.head(&head) {
            return;
        }
        let chunk = vec![b'a'; 64 * 1024];
        let mut sent = 0u64;
        while sent < TEN_GB && out.body(&chunk) {
            sent += chunk.len() as u64;
        }
    });
    let mut limits = quick_limits();
    limits.max_body_bytes = 1024 * 1024;
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(limits),
        "t",
    );
    let r = call(
        &ctx,
        json!({ "url": server.url("/huge"), "max_length": 100 }),
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "a".repeat(100));
    assert_eq!(r.metadata["bytes"], 1024 * 1024);
    assert_eq!(r.metadata["truncated"], true);
    let notes = r.notes_text().unwrap();
    assert!(
        notes.contains("only its first 1048576 bytes were read"),
        "{notes}"
    );
    assert!(notes.contains("the page has 1048576 characters"), "{notes}");
    // The connection was dropped: the server could not push more than the
    // limit plus what the sockets' buffers hold.
    std::thread::sleep(Duration::from_millis(200));
    let written = server.bytes_written();
    assert!(
        written < 64 * 1024 * 1024,
        "the server wrote {written} bytes"
    );
}

#[tokio::test]
async fn a_ten_gigabyte_image_is_refused_by_its_length_or_at_the_limit() {
    // Declared length: refused before reading the body.
    let declared = serve(|_, out| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: {TEN_GB}\r\n\r\n"
        );
        if out.head(&head) {
            let chunk = vec![0u8; 64 * 1024];
            while out.body(&chunk) {}
        }
    });
    // No length: read up to the limit, then refused.
    let streamed = serve(|_, out| {
        if out.head("HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nConnection: close\r\n\r\n")
        {
            let chunk = vec![b'%'; 64 * 1024];
            while out.body(&chunk) {}
        }
    });
    let mut limits = quick_limits();
    limits.max_body_bytes = 1024 * 1024;
    let ctx = context(
        WebConfig::new(loopback(&[&declared, &streamed])).with_limits(limits),
        "t",
    );
    for (server, expected) in [
        (&declared, "10737418240 bytes"),
        (&streamed, "over 1048576 bytes"),
    ] {
        let r = call(&ctx, json!({ "url": server.url("/big") })).await;
        let (kind, message) = error(&r);
        assert_eq!(kind, ErrorKind::Failed);
        assert_eq!(r.metadata["failure"], "too_large", "{message}");
        assert!(message.contains(expected), "{message}");
        assert!(message.contains("limit of 1048576 bytes"), "{message}");
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(declared.bytes_written() < 64 * 1024 * 1024);
    assert!(streamed.bytes_written() < 64 * 1024 * 1024);
}

#[tokio::test]
async fn a_redirect_loop_is_reported_with_its_hops() {
    let server = serve(|req, out| {
        let next = if req.path == "/a" { "/b" } else { "/a" };
        out.respond("302 Found", &[("Location", next)], b"");
    });
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(quick_limits()),
        "t",
    );
    let r = call(&ctx, json!({ "url": server.url("/a") })).await;
    let (_, message) = error(&r);
    assert_eq!(r.metadata["failure"], "redirect_loop", "{message}");
    assert!(message.starts_with("redirect loop:"), "{message}");
    assert_eq!(
        r.metadata["redirects"],
        json!([server.url("/b"), server.url("/a")])
    );
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn redirects_past_the_hop_limit_are_refused() {
    let server = serve(|req, out| {
        let n: u32 = req.path.trim_start_matches("/n/").parse().unwrap_or(0);
        out.respond(
            "301 Moved Permanently",
            &[("Location", &format!("/n/{}", n + 1))],
            b"",
        );
    });
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(quick_limits()),
        "t",
    );
    let r = call(&ctx, json!({ "url": server.url("/n/0") })).await;
    let (_, message) = error(&r);
    assert_eq!(r.metadata["failure"], "too_many_redirects", "{message}");
    assert!(message.contains("more than 10 redirects"), "{message}");
    assert_eq!(server.requests(), 11);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let silent = serve(|_, out| out.wait_for_close());
    // Headers, then a body that stops coming.
    let stalled = serve(|_, out| {
        if out.head("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n") {
            out.body(b"partial");
            out.wait_for_close();
        }
    });
    let ctx = context(
        WebConfig::new(loopback(&[&silent, &stalled])).with_limits(quick_limits()),
        "t",
    );
    for server in [&silent, &stalled] {
        let started = Instant::now();
        let r = call(&ctx, json!({ "url": server.url("/") })).await;
        let (kind, message) = error(&r);
        assert_eq!(kind, ErrorKind::Timeout, "{message}");
        assert_eq!(r.metadata["failure"], "timeout");
        assert!(message.contains("did not answer in time"), "{message}");
        // Bounded by the read timeout (0.5 s), far below the call's 10 s.
        assert!(
            started.elapsed() < Duration::from_secs(9),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed_and_nothing_connects() {
    let server = serve(|_, out| out.respond("200 OK", &[], b"inside"));
    let port = server.port();
    for pattern in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let policy = NetworkPolicy::from_patterns([&pattern]).unwrap();
        let ctx = context(WebConfig::new(policy).with_limits(quick_limits()), "t");
        let host = pattern.split(':').next().unwrap();
        let r = call(&ctx, json!({ "url": format!("http://{host}:{port}/") })).await;
        let (kind, message) = error(&r);
        assert_eq!(kind, ErrorKind::Denied, "{message}");
        assert_eq!(r.metadata["failure"], "private_address", "{message}");
        assert!(
            message.contains("a loopback address (127.0.0.0/8"),
            "{message}"
        );
    }
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn without_a_config_nothing_is_allowed_and_the_refusal_says_how_to_allow() {
    let ctx = ToolContext::new();
    let r = call(&ctx, json!({ "url": "https://example.com/page" })).await;
    let (kind, message) = error(&r);
    assert_eq!(kind, ErrorKind::Denied);
    assert_eq!(r.metadata["failure"], "not_allowed");
    // A library host is told what to call, not a CLI flag it does not have.
    assert!(
        message.contains("`ToolContext::with_state(WebConfig::new(policy))`"),
        "{message}"
    );
    assert!(message.contains("example.com:443"), "{message}");
    assert!(!message.contains("--allow-net"), "{message}");
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn compressed_bodies_are_decoded_and_bounded_by_their_decoded_size() {
    // 24 MiB of text in ~25 KB of gzip: decoded, then cut at the 1 MiB
    // limit of these tests (the limit counts decoded bytes).
    let bomb = gzip(&vec![b'A'; 24 * 1024 * 1024]);
    let page = gzip(b"<html><body><h1>Packed</h1><p>zipped words</p></body></html>");
    let deflated = {
        use std::io::Write as _;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b"deflated words").unwrap();
        e.finish().unwrap()
    };
    let server = serve(move |req, out| match req.path.as_str() {
        "/bomb" => out.respond(
            "200 OK",
            &[("Content-Type", "text/plain"), ("Content-Encoding", "gzip")],
            &bomb,
        ),
        "/page" => out.respond(
            "200 OK",
            &[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            &page,
        ),
        "/deflate" => out.respond(
            "200 OK",
            &[
                ("Content-Type", "text/plain"),
                ("Content-Encoding", "deflate"),
            ],
            &deflated,
        ),
        _ => out.respond(
            "200 OK",
            &[("Content-Type", "text/plain"), ("Content-Encoding", "zstd")],
            b"\x28\xb5\x2f\xfd garbage",
        ),
    });
    let mut limits = quick_limits();
    limits.max_body_bytes = 1024 * 1024;
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(limits),
        "gz",
    );
    let r = call(&ctx, json!({ "url": server.url("/page") })).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "# Packed\n\nzipped words");
    let r = call(&ctx, json!({ "url": server.url("/deflate") })).await;
    assert_eq!(r.output, "deflated words", "{r:?}");

    let started = Instant::now();
    let r = call(
        &ctx,
        json!({ "url": server.url("/bomb"), "max_length": 100 }),
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "A".repeat(100));
    assert_eq!(r.metadata["bytes"], 1024 * 1024);
    assert_eq!(r.metadata["chars"], 1024 * 1024);
    assert!(started.elapsed() < Duration::from_secs(10));
    let notes = r.notes_text().unwrap();
    assert!(notes.contains("longer than 1048576 bytes"), "{notes}");

    let r = call(&ctx, json!({ "url": server.url("/zstd") })).await;
    let (kind, message) = error(&r);
    assert_eq!(kind, ErrorKind::Failed);
    assert_eq!(r.metadata["failure"], "encoding");
    assert!(message.contains("`Content-Encoding: zstd`"), "{message}");
    // The client asks for what it can decode.
    let heads = server.heads.lock().unwrap().clone();
    let head = heads[0].to_ascii_lowercase();
    assert!(head.contains("accept-encoding: gzip"), "{head}");
}

#[tokio::test]
async fn a_long_page_is_read_in_parts_with_offset() {
    let text: String = (0..30).map(|i| format!("{i:02}")).collect();
    let server = serve(move |_, out| {
        out.respond("200 OK", &[("Content-Type", "text/plain")], text.as_bytes());
    });
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(quick_limits()),
        "parts",
    );
    let url = server.url("/long");
    let first = call(&ctx, json!({ "url": url, "max_length": 40 })).await;
    assert_eq!(first.output.len(), 40);
    assert_eq!(first.metadata["next_offset"], 40);
    let second = call(&ctx, json!({ "url": url, "max_length": 40, "offset": 40 })).await;
    assert_eq!(second.output, "20212223242526272829");
    assert_eq!(format!("{}{}", first.output, second.output).len(), 60);
    assert_eq!(server.requests(), 1, "the second part came from the cache");
    let big = call(&ctx, json!({ "url": url, "max_length": 60_000 })).await;
    let notes = big.notes_text().unwrap();
    assert!(
        notes.contains("max_length 60000 is over the limit"),
        "{notes}"
    );
}

#[tokio::test]
async fn a_redirect_to_a_host_not_allowed_is_refused_before_connecting() {
    let other = serve(|_, out| out.respond("200 OK", &[], b"other"));
    let target = other.url("/secret");
    let server = serve(move |_, out| out.respond("302 Found", &[("Location", &target)], b""));
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(quick_limits()),
        "t",
    );
    let r = call(&ctx, json!({ "url": server.url("/") })).await;
    let (kind, message) = error(&r);
    assert_eq!(kind, ErrorKind::Denied, "{message}");
    assert_eq!(r.metadata["failure"], "not_allowed");
    assert!(
        message.contains(&format!("127.0.0.1:{}", other.port())),
        "{message}"
    );
    assert_eq!(r.metadata["redirects"], json!([other.url("/secret")]));
    assert_eq!(other.connections(), 0);
}

#[tokio::test]
async fn retry_after_is_honoured_and_a_long_one_is_not_waited_for() {
    let times: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = times.clone();
    let server = serve(move |req, out| {
        seen.lock().unwrap().push(Instant::now());
        match req.path.as_str() {
            "/busy" if seen.lock().unwrap().len() == 1 => {
                out.respond("503 Service Unavailable", &[("Retry-After", "1")], b"");
            }
            "/busy" => out.respond("200 OK", &[("Content-Type", "text/plain")], b"fine now"),
            "/later" => out.respond("429 Too Many Requests", &[("Retry-After", "3600")], b""),
            _ => out.respond(
                "500 Internal Server Error",
                &[("Content-Type", "text/plain")],
                b"database   is\n down",
            ),
        }
    });
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(quick_limits()),
        "t",
    );
    let r = call(&ctx, json!({ "url": server.url("/busy") })).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "fine now");
    let gap = {
        let t = times.lock().unwrap();
        assert_eq!(t.len(), 2);
        t[1] - t[0]
    };
    assert!(
        gap >= Duration::from_millis(950),
        "retried after {gap:?}, asked 1 s"
    );

    let r = call(&ctx, json!({ "url": server.url("/later") })).await;
    let (_, message) = error(&r);
    assert_eq!(r.metadata["failure"], "status");
    assert_eq!(r.metadata["status"], 429);
    assert!(
        message.contains("retry after 3600 s, longer than web_fetch waits (10 s)"),
        "{message}"
    );
    assert_eq!(
        times.lock().unwrap().len(),
        3,
        "no retry for a wait over the limit"
    );

    // Retries are bounded: 1 + 2 attempts, then the status and the body's start.
    let r = call(&ctx, json!({ "url": server.url("/down") })).await;
    let (_, message) = error(&r);
    assert_eq!(r.metadata["status"], 500);
    assert!(
        message.contains("500 Internal Server Error after 2 retries"),
        "{message}"
    );
    assert!(
        message.contains("The body begins: database is down"),
        "{message}"
    );
    assert_eq!(times.lock().unwrap().len(), 6);
}

#[tokio::test]
async fn status_and_content_type_failures_are_named() {
    let server = serve(|req, out| match req.path.as_str() {
        "/missing" => out.respond(
            "404 Not Found",
            &[("Content-Type", "text/html")],
            b"<h1>nope</h1>",
        ),
        _ => out.respond(
            "200 OK",
            &[("Content-Type", "application/zip")],
            b"PK\x03\x04",
        ),
    });
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(quick_limits()),
        "t",
    );
    let r = call(&ctx, json!({ "url": server.url("/missing") })).await;
    let (_, message) = error(&r);
    assert_eq!(r.metadata["status"], 404);
    assert!(
        message.starts_with("the server answered 404 Not Found"),
        "{message}"
    );
    let r = call(&ctx, json!({ "url": server.url("/archive.zip") })).await;
    let (_, message) = error(&r);
    assert_eq!(r.metadata["failure"], "content_type");
    assert!(message.contains("`application/zip`"), "{message}");
    // Nothing listens on this port: unreachable.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let policy = NetworkPolicy::from_patterns([format!("127.0.0.1:{port}")])
        .unwrap()
        .allow_private(true);
    let ctx = context(WebConfig::new(policy).with_limits(quick_limits()), "t");
    let r = call(&ctx, json!({ "url": format!("http://127.0.0.1:{port}/") })).await;
    let (_, message) = error(&r);
    assert_eq!(r.metadata["failure"], "unreachable", "{message}");
    assert!(
        message.starts_with(&format!("could not connect to 127.0.0.1:{port}")),
        "{message}"
    );
}

#[tokio::test]
async fn images_and_pdfs_come_back_as_media() {
    let mut png = Vec::new();
    image::RgbImage::from_pixel(4, 3, image::Rgb([200, 10, 10]))
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let pdf = b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\ntrailer\n%%EOF\n".to_vec();
    let server = serve(move |req, out| match req.path.as_str() {
        "/dot.png" => out.respond("200 OK", &[("Content-Type", "image/png")], &png),
        _ => out.respond("200 OK", &[("Content-Type", "application/pdf")], &pdf),
    });
    let ctx = context(
        WebConfig::new(loopback(&[&server])).with_limits(quick_limits()),
        "t",
    );
    let r = call(&ctx, json!({ "url": server.url("/dot.png") })).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.images.len(), 1);
    assert_eq!(r.images[0].media_type, "image/png");
    assert_eq!(r.metadata["width"], 4);
    assert_eq!(r.metadata["height"], 3);
    let r = call(&ctx, json!({ "url": server.url("/paper.pdf") })).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.attachments.len(), 1);
    assert_eq!(r.attachments[0].name, "paper.pdf");
    assert_eq!(r.attachments[0].media_type, "application/pdf");
    assert_eq!(r.metadata["pages_counted"], 1);
}

#[tokio::test]
async fn bad_arguments_get_clear_errors() {
    let ctx = context(WebConfig::default(), "t");
    let r = call(&ctx, json!({ "url": "file:///etc/passwd" })).await;
    let (kind, message) = error(&r);
    assert_eq!(kind, ErrorKind::InvalidArguments);
    assert!(
        message.contains("http:// and https:// URLs only"),
        "{message}"
    );
    let r = call(&ctx, json!({ "url": "https://x.test/", "max_length": 0 })).await;
    let (kind, message) = error(&r);
    assert_eq!(kind, ErrorKind::InvalidArguments);
    assert!(message.contains("at least 1"), "{message}");
    // The schema says what the check enforces.
    let registry = tool_builtins::registry();
    let spec = registry.get("web_fetch").unwrap().spec();
    let max_length = &spec.parameters["properties"]["max_length"];
    assert_eq!(max_length["minimum"], 1, "{max_length}");
}

/// The environment variable that marks the run inside the namespace.
const IN_NETNS: &str = "AGENT_TOOLS_WEB_TEST_IN_NETNS";
/// The public-looking address put on the namespace's loopback interface
/// (inside a network namespace of its own: no packet leaves it).
const PUBLIC_IP: &str = "1.2.3.4";

/// Runs [`redirect_from_public_to_private_inside_netns`] in a new user and
/// network namespace where `1.2.3.4` is a local address: the first hop is
/// then an ordinary public address the policy allows without
/// `allow_private`, and its redirect to loopback must be refused.
#[test]
fn a_redirect_from_a_public_address_to_a_private_one_is_refused() {
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "ip link set lo up && ip addr add {PUBLIC_IP}/32 dev lo && exec \"$0\" --exact \
         fetch::redirect_from_public_to_private_inside_netns --ignored --nocapture"
    );
    let out = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--net", "sh", "-c", &script])
        .arg(&exe)
        .env(IN_NETNS, "1")
        .output()
        .expect("unshare (util-linux) runs the namespace half of this test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}\n{stderr}");
}

#[tokio::test]
#[ignore = "the namespace half of a_redirect_from_a_public_address_to_a_private_one_is_refused"]
async fn redirect_from_public_to_private_inside_netns() {
    assert_eq!(
        std::env::var(IN_NETNS).as_deref(),
        Ok("1"),
        "run through the outer test"
    );
    let inside = serve(|_, out| out.respond("200 OK", &[], b"metadata secrets"));
    let (to_ip, to_name) = (
        inside.url("/"),
        format!("http://localhost:{}/", inside.port()),
    );
    let public = serve_on(PUBLIC_IP, move |req, out| {
        let target = if req.path == "/ip" { &to_ip } else { &to_name };
        out.respond("302 Found", &[("Location", target)], b"");
    });
    let public_page = serve_on(PUBLIC_IP, |_, out| {
        out.respond("200 OK", &[("Content-Type", "text/plain")], b"public page");
    });
    let policy = NetworkPolicy::from_patterns([
        format!("{PUBLIC_IP}:{}", public.port()),
        format!("{PUBLIC_IP}:{}", public_page.port()),
        format!("127.0.0.1:{}", inside.port()),
        format!("localhost:{}", inside.port()),
    ])
    .unwrap();
    assert!(!policy.private_allowed());
    let ctx = context(WebConfig::new(policy).with_limits(quick_limits()), "t");
    // A public address the policy allows is fetched.
    let r = call(&ctx, json!({ "url": public_page.url("/") })).await;
    assert_eq!(r.output, "public page", "{r:?}");
    // Its redirect to loopback, by address or by a name resolving to it, is not.
    for path in ["/ip", "/name"] {
        let r = call(&ctx, json!({ "url": public.url(path) })).await;
        let (kind, message) = error(&r);
        assert_eq!(kind, ErrorKind::Denied, "{message}");
        assert_eq!(r.metadata["failure"], "private_address", "{message}");
        assert!(
            message.contains("127.0.0.1, a loopback address"),
            "{message}"
        );
    }
    assert_eq!(public.requests(), 2);
    assert_eq!(inside.connections(), 0);
}
