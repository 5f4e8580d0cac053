//! Shared test support.

pub(crate) mod oauth_server;
