//! Black-box tests of `web_fetch` and `web_search` against real HTTP
//! servers on loopback (each test starts its own, [`server`]); loopback is
//! allowed explicitly in each policy (`NetworkPolicy::allow_private`), as
//! cross-cutting §5 asks. One test runs in a network namespace of its own
//! with a public-looking address on its loopback interface, to show a
//! redirect from a public address to a private one refused.

#![allow(
    clippy::unwrap_used,
    reason = "a test binary: a failed unwrap is a failed test (helpers outside #[test] fns too)"
)]

mod fetch;
mod search;
mod server;
