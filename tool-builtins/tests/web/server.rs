//! A small HTTP/1.1 server on a real TCP socket: one thread per connection,
//! the handler writes the raw answer. It counts connections and the body
//! bytes the handler managed to write (a client that stops reading makes
//! the writes fail).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What the client asked.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The request target (`/path?query`).
    pub(crate) path: String,
    /// The head, as text (request line and headers).
    pub(crate) head: String,
}

/// Counters of one server.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) connections: AtomicUsize,
    pub(crate) requests: AtomicUsize,
    pub(crate) bytes_written: AtomicU64,
}

/// A running server.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) stats: Arc<Stats>,
    pub(crate) heads: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Server {
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://ADDR{path}`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn connections(&self) -> usize {
        self.stats.connections.load(Ordering::SeqCst)
    }

    pub(crate) fn requests(&self) -> usize {
        self.stats.requests.load(Ordering::SeqCst)
    }

    pub(crate) fn bytes_written(&self) -> u64 {
        self.stats.bytes_written.load(Ordering::SeqCst)
    }
}

/// Writes to the client, counting body bytes written.
pub(crate) struct Out<'a> {
    stream: &'a mut TcpStream,
    stats: &'a Stats,
}

impl Out<'_> {
    /// A whole answer: status line, headers, `Content-Length`, body.
    pub(crate) fn respond(&mut self, status: &str, headers: &[(&str, &str)], body: &[u8]) {
        let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", body.len());
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("Connection: close\r\n\r\n");
        if self.stream.write_all(head.as_bytes()).is_ok() {
            self.body(body);
        }
    }

    /// Raw head bytes (no counting).
    pub(crate) fn head(&mut self, head: &str) -> bool {
        self.stream.write_all(head.as_bytes()).is_ok()
    }

    /// Body bytes, counted; `false` once the client is gone.
    pub(crate) fn body(&mut self, bytes: &[u8]) -> bool {
        match self.stream.write_all(bytes) {
            Ok(()) => {
                self.stats
                    .bytes_written
                    .fetch_add(bytes.len() as u64, Ordering::SeqCst);
                true
            }
            Err(_) => false,
        }
    }

    /// Blocks until the client closes the connection.
    pub(crate) fn wait_for_close(&mut self) {
        let mut buf = [0u8; 1024];
        while matches!(self.stream.read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// Starts a server on `ip`:0 answering each request with `handler`.
pub(crate) fn serve_on<F>(ip: &str, handler: F) -> Server
where
    F: Fn(&Request, &mut Out<'_>) + Send + Sync + 'static,
{
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    let stats = Arc::new(Stats::default());
    let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let handler = Arc::new(handler);
    let (s, h) = (stats.clone(), heads.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            s.connections.fetch_add(1, Ordering::SeqCst);
            let (s, h, handler) = (s.clone(), h.clone(), handler.clone());
            std::thread::spawn(move || {
                let Some(request) = read_request(&mut stream) else {
                    return;
                };
                s.requests.fetch_add(1, Ordering::SeqCst);
                h.lock().unwrap().push(request.head.clone());
                let mut out = Out {
                    stream: &mut stream,
                    stats: &s,
                };
                handler(&request, &mut out);
            });
        }
    });
    Server { addr, stats, heads }
}

/// [`serve_on`] 127.0.0.1.
pub(crate) fn serve<F>(handler: F) -> Server
where
    F: Fn(&Request, &mut Out<'_>) + Send + Sync + 'static,
{
    serve_on("127.0.0.1", handler)
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 64 * 1024 || stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head.split_whitespace().nth(1)?.to_owned();
    Some(Request { path, head })
}
