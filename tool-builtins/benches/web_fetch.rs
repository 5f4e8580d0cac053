//! `web_fetch`: what answering from the per-trace cache costs (issue 27:
//! "`web_fetch` of a cached page ≤ 1 ms").
//!
//! A real HTTP server on loopback serves a 60 KB HTML page once (the policy
//! allows that port, private addresses explicitly allowed); every measured
//! call is `web_fetch` through the registry's pipeline (argument decoding,
//! the cache lookup, clipping to the default 20 000 characters, metadata),
//! answered from the cache. A second case measures a cached page of about
//! 300 KB asked with `max_length` at its maximum (50 000 characters), the
//! largest text one call returns.
//!
//! Run: `cargo bench -p tool-builtins --bench web_fetch`.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tool_builtins::web::WebConfig;
use tool_core::{NetworkPolicy, ToolContext};

/// A page of `paragraphs` paragraphs of about 120 bytes each.
fn page(paragraphs: usize) -> String {
    let mut html = String::from("<html><head><title>Bench</title></head><body><h1>Bench</h1>");
    for i in 0..paragraphs {
        html.push_str(&format!(
            "<p>Paragraph {i}: the quick brown fox jumps over the <b>lazy</b> dog; \
             <a href=\"/p/{i}\">more</a>.</p>"
        ));
    }
    html.push_str("</body></html>");
    html
}

/// Serves `small` at `/small` and `large` at `/large`, one connection at a time.
fn serve(small: String, large: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let body = if String::from_utf8_lossy(&head).contains("/large") {
                &large
            } else {
                &small
            };
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    port
}

fn bench(c: &mut Criterion) {
    let port = serve(page(500), page(2500));
    let policy = NetworkPolicy::from_patterns([format!("127.0.0.1:{port}")])
        .expect("pattern")
        .allow_private(true);
    let ctx = ToolContext::new()
        .with_state(WebConfig::new(policy))
        .with_trace_id("bench");
    let registry = tool_builtins::registry();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let small = json!({ "url": format!("http://127.0.0.1:{port}/small") });
    let large = json!({ "url": format!("http://127.0.0.1:{port}/large"), "max_length": 50_000 });
    for args in [&small, &large] {
        let first = runtime.block_on(registry.execute("web_fetch", args.clone(), &ctx));
        assert!(first.is_ok(), "{first:?}");
        let again = runtime.block_on(registry.execute("web_fetch", args.clone(), &ctx));
        assert_eq!(again.metadata["cached"], true);
    }
    let mut group = c.benchmark_group("web_fetch");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("cached_page_60kb", |b| {
        b.iter(|| black_box(runtime.block_on(registry.execute("web_fetch", small.clone(), &ctx))));
    });
    group.bench_function("cached_page_max_length_50k", |b| {
        b.iter(|| black_box(runtime.block_on(registry.execute("web_fetch", large.clone(), &ctx))));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
