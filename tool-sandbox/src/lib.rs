//! The sandbox every process a tool starts can run in (Linux).
//!
//! Work in progress: see issue 22. Modules:
//! - [`proxy`]: the filtering HTTP(S) proxy the sandbox host runs for the
//!   network allowlist.

pub mod proxy;
