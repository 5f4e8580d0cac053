//! The sandbox every process a tool starts can run in (Linux).
//!
//! Work in progress: see issue 22. Modules:
//! - [`proxy`]: the filtering HTTP(S) proxy the sandbox host runs for the
//!   network allowlist.
//!
//! Crates chosen for the network proxy ([`proxy`]): `tokio` (already the
//! workspace's runtime) serves many idle tunnels from one thread with
//! timeouts on every read; `httparse` parses request heads (a small,
//! zero-copy, widely used parser, fuzzed as part of hyper, with a bound on
//! the header count), so no HTTP parsing is hand-written; `url` parses
//! absolute-form request targets with the same rules `NetworkPolicy`
//! matches with; `tempfile` creates the private 0700 per-call directory and
//! removes it; `libc` for the `SIOCSIFFLAGS` ioctl that brings loopback up
//! (neither std nor rustix wraps it, and a netlink crate would be far larger
//! for one flag); `serde` so that the `NetworkReport` goes into metadata
//! as JSON.

pub mod proxy;

pub use proxy::{
    DEFAULT_FORWARDER_PORT, Forwarder, NetworkReport, ProxyEnv, ProxyLimits, ProxyServer,
    bring_up_loopback,
};
