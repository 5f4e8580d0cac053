//! The HTTP client of `web_fetch`: connects only to addresses the policy
//! vetted (module docs of [`crate::web`], step 3).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::FetchLimits;

/// Most host names pinned at once: 1 024. Past it the table is emptied
/// before the next pin; a fetch whose pin was dropped that way fails with
/// "not vetted" (it never connects unvetted).
const MAX_PINS: usize = 1024;

/// The user agent sent: the project's name and version, so a site owner can
/// tell agent traffic apart.
const USER_AGENT: &str = concat!("agent-tools-web-fetch/", env!("CARGO_PKG_VERSION"));

/// Host name to the vetted addresses to connect to.
#[derive(Debug, Default)]
struct Pins(Mutex<HashMap<String, Vec<SocketAddr>>>);

/// The client's only resolver: answers from the pinned table, refuses any
/// other name.
#[derive(Debug, Clone, Default)]
struct PinnedResolver(Arc<Pins>);

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let found = self
            .0
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name.as_str())
            .cloned();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            match found {
                Some(addrs) => Ok(Box::new(addrs.into_iter()) as Addrs),
                None => Err(format!("{name} was not vetted by the network policy").into()),
            }
        })
    }
}

/// A reqwest client without redirects, proxies or a resolver of its own,
/// and the table its resolver answers from.
#[derive(Debug)]
pub(crate) struct FetchClient {
    pub(crate) http: reqwest::Client,
    pins: Arc<Pins>,
}

impl FetchClient {
    /// Builds the client with `limits`' connect and read timeouts.
    ///
    /// # Errors
    /// reqwest's message when the TLS setup fails.
    pub(crate) fn new(limits: &FetchLimits) -> Result<Self, String> {
        let resolver = PinnedResolver::default();
        let pins = resolver.0.clone();
        let http = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(limits.connect_timeout)
            .read_timeout(limits.read_timeout)
            .dns_resolver(resolver)
            .build()
            .map_err(|e| format!("the HTTP client could not be set up: {e}"))?;
        Ok(Self { http, pins })
    }

    /// Makes `host` resolve to `addrs` (already vetted) for the next
    /// connections.
    pub(crate) fn pin(&self, host: &str, addrs: Vec<SocketAddr>) {
        let mut pins = self.pins.0.lock().unwrap_or_else(PoisonError::into_inner);
        if pins.len() >= MAX_PINS && !pins.contains_key(host) {
            pins.clear();
        }
        pins.insert(host.to_owned(), addrs);
    }
}
