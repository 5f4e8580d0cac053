//! The sandbox's network: off by default, and an allowlist served through a
//! filtering HTTP(S) proxy (issue 22; policy type:
//! [`tool_core::NetworkPolicy`], cross-cutting §5).
//!
//! A sandboxed command runs in its own network namespace: no interface but
//! loopback, so not even the host's `127.0.0.1` is reachable. When the
//! policy allows some hosts, two pieces connect it to the outside:
//!
//! ```text
//!  network namespace (sandbox)                 |  host
//!  command --HTTP_PROXY--> 127.0.0.1:3128      |
//!          [Forwarder, blocking, forked child] --unix socket--> ProxyServer --TCP--> allowed host
//!                                              |  (checks NetworkPolicy, records hosts)
//! ```
//!
//! - [`ProxyServer`] runs on the host, on a Unix socket `proxy.sock` (mode
//!   0600) in a private per-call directory (mode 0700). It speaks HTTP/1.1
//!   proxy: `CONNECT host:port` is checked with
//!   [`NetworkPolicy::check_host`](tool_core::NetworkPolicy::check_host) and
//!   then tunnelled byte for byte (TLS is never intercepted, so no CA is
//!   installed and certificates are the real ones); an absolute-form request
//!   (`GET http://host/path`) is checked with
//!   [`check_url`](tool_core::NetworkPolicy::check_url), rewritten to origin
//!   form (`Host` from the URL, `Connection: close`, proxy headers dropped)
//!   and forwarded. The host is resolved once and the connection goes to a
//!   vetted address (no DNS rebinding between check and connect). A refused
//!   request gets `403 Forbidden` with a one-line body naming the host, the
//!   reason, and how a person allows it (`--allow-net PATTERN`); no byte
//!   reaches the refused host. Every contacted and refused `host:port` is
//!   recorded in a [`NetworkReport`] for the call's metadata
//!   (`network.contacted`, `network.refused`). Bounds: [`ProxyLimits`].
//! - [`Forwarder`] runs inside the namespace: it listens on
//!   `127.0.0.1:<port>` and `[::1]:<port>` and relays each connection to the
//!   proxy's socket, which the sandbox bind-mounts at the same path. The
//!   command gets [`ProxyEnv::vars`] (`HTTP_PROXY`, `HTTPS_PROXY`,
//!   `ALL_PROXY`, lower-case forms, empty `NO_PROXY`).
//!
//! ```
//! use std::io::{Read, Write};
//! use std::os::unix::net::UnixStream;
//! use tool_core::NetworkPolicy;
//! use tool_sandbox::{ProxyLimits, ProxyServer};
//!
//! let policy = NetworkPolicy::from_patterns(["*.crates.io"])?;
//! let proxy = ProxyServer::start(policy, ProxyLimits::default(), None)?;
//! let mut client = UnixStream::connect(proxy.socket_path())?;
//! client.write_all(b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n")?;
//! let mut answer = String::new();
//! client.read_to_string(&mut answer)?;
//! assert!(answer.starts_with("HTTP/1.1 403 Forbidden"));
//! assert!(answer.contains("`--allow-net evil.test`"));
//! assert_eq!(proxy.shutdown().refused, ["evil.test:443"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What does not go through: anything that is not HTTP(S) through a proxy.
//! UDP (including DNS: names are resolved by the proxy on the host), raw
//! TCP to other ports, and **git over SSH** (`git@github.com:…`,
//! `ssh://…`, port 22) have no route out of the namespace; a `CONNECT` to
//! port 22 is refused with a note saying to use an `https://` remote. A
//! client that ignores the proxy variables gets "network unreachable".
//!
//! # Wiring (the sandbox's spawn path)
//!
//! For a call whose policy allows some host (`!policy.is_deny_all()`),
//! full tier; `bash_command` does this:
//! 1. **Host, before spawning**: `let proxy = ProxyServer::start(policy,
//!    ProxyLimits::default(), None)?`, then
//!    `Sandbox::prepare_with_proxy(.., Some(ProxyHook::new(proxy.socket_path())))`:
//!    the mount view binds the socket at
//!    [`PROXY_SOCKET_IN_SANDBOX`](crate::PROXY_SOCKET_IN_SANDBOX).
//! 2. **Inside the namespace**: the sandbox's first process brings loopback
//!    up, binds the [`Forwarder`] and forks it (see the crate docs,
//!    "Network hook"); the caller adds `ProxyHook::env().vars()` to the
//!    command's environment.
//! 3. **Host, after the call**: `let report = proxy.shutdown()`; the
//!    result's metadata gets `network.contacted` / `network.refused`, and
//!    the first of `report.refusals` becomes the one-line note.
//!
//! With a deny-all policy none of this runs: the namespace has loopback only
//! and no proxy variables are set.

pub(crate) mod forwarder;
mod report;
mod server;

pub use forwarder::{
    DEFAULT_FORWARDER_PORT, Forwarder, MAX_FORWARDED_CONNECTIONS, ProxyEnv, bring_up_loopback,
};
pub use report::{MAX_REPORTED_HOSTS, NetworkReport};
pub use server::{PROXY_SOCKET_NAME, ProxyLimits, ProxyServer};
