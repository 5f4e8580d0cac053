//! A small local HTTP server that replays recorded answers: one canned
//! response per request, in order; records each request's path, headers and body.

#![allow(
    dead_code,
    unreachable_pub,
    reason = "shared by several test binaries, each using part of it"
)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One canned answer.
#[derive(Clone, Debug)]
pub struct Canned {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Announce this many more body bytes than sent, then close (a broken transport).
    pub short_by: usize,
}

impl Canned {
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
            short_by: 0,
        }
    }

    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            short_by: 0,
        }
    }

    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct Replay {
    pub base_url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

/// Starts a server on 127.0.0.1 answering with `answers` in order (the last one repeats).
pub async fn serve(answers: Vec<Canned>) -> Replay {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut n = 0usize;
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let answer = answers[n.min(answers.len() - 1)].clone();
            n += 1;
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut tmp = [0u8; 8192];
                let header_end = loop {
                    let Ok(k) = sock.read(&mut tmp).await else {
                        return;
                    };
                    if k == 0 {
                        return;
                    }
                    buf.extend_from_slice(&tmp[..k]);
                    if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break p + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
                let mut lines = head.split("\r\n");
                let path = lines
                    .next()
                    .unwrap_or("")
                    .split(' ')
                    .nth(1)
                    .unwrap_or("")
                    .to_owned();
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                    .collect();
                let len: usize = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                while buf.len() < header_end + len {
                    let Ok(k) = sock.read(&mut tmp).await else {
                        return;
                    };
                    if k == 0 {
                        break;
                    }
                    buf.extend_from_slice(&tmp[..k]);
                }
                let body =
                    serde_json::from_slice(&buf[header_end..]).unwrap_or(serde_json::Value::Null);
                log.lock().unwrap().push(Seen {
                    path,
                    headers,
                    body,
                });
                let mut out = format!("HTTP/1.1 {} X\r\nconnection: close\r\n", answer.status);
                for (k, v) in &answer.headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str(&format!(
                    "content-length: {}\r\n\r\n",
                    answer.body.len() + answer.short_by
                ));
                let _ = sock.write_all(out.as_bytes()).await;
                let _ = sock.write_all(&answer.body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Replay {
        base_url: format!("http://{addr}/v1"),
        seen,
    }
}

/// The text of recording `name` (under `tests/recordings/`).
pub fn recording(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/recordings/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}
pub mod conformance;
