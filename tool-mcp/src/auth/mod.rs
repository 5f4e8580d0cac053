//! OAuth 2.1 for `url` MCP servers, as the MCP authorization specification
//! describes: on a `401` the client reads the `WWW-Authenticate` challenge,
//! discovers the protected resource metadata (RFC 9728: the challenge's
//! `resource_metadata`, else the path-based and root well-known URLs) and the
//! authorization server's metadata (RFC 8414 and `OpenID` Connect discovery,
//! with their path variants; the issuer must match), registers (a client id
//! and secret from the configuration, a client ID metadata document URL when
//! the server accepts one, else dynamic client registration, RFC 7591), runs
//! the authorization-code flow with PKCE (S256) and the RFC 8707 `resource`
//! parameter through a [`LoopbackLogin`], checks the RFC 9207 `iss` of the
//! answer, and retries the request with the token. Expired tokens are
//! refreshed (a rotated refresh token replaces the old one); a `403` with
//! `insufficient_scope` re-authorizes with the union of the scopes asked so
//! far and the challenged ones, at most [`MAX_STEP_UPS`] times per
//! connection. A client-credentials grant ([`Grant::ClientCredentials`])
//! serves machine clients without a person.
//!
//! Built on rmcp's `auth` feature (`AuthorizationManager`, over the `oauth2`
//! crate): discovery, registration, PKCE, the token and refresh requests and
//! the issuer checks are rmcp's; this module adds the transport client that
//! reacts to challenges mid-connection, the token cache ([`TokenCache`]) and
//! the browser-free login.

mod cache;
mod login;
mod transport;

pub use cache::{MAX_CACHE_FILE_BYTES, TokenCache};
pub use login::{DEFAULT_LOGIN_TIMEOUT, LoopbackLogin};
pub(crate) use transport::OAuthHttpClient;

use crate::headers::Hidden;

/// Most step-up re-authorizations (a `403` with `insufficient_scope`) one
/// connection makes before the request fails (2: with the first
/// authorization, at most three authorization requests).
pub const MAX_STEP_UPS: u32 = 2;

/// Most authorizations of any kind one connection runs (8), so that a
/// server that refuses every token cannot keep a client authorizing forever.
pub const MAX_AUTHORIZATIONS: u32 = 8;

/// Longest value of a configured OAuth string (client id, secret, scope,
/// URL), in bytes (2 KiB).
pub const MAX_OAUTH_VALUE_BYTES: usize = 2048;

/// Most scopes one configuration may name (64).
pub const MAX_SCOPES: usize = 64;

/// How a client obtains tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization-code flow with PKCE, a person approving in a
    /// browser ([`LoopbackLogin`]) once; then refresh tokens (default).
    #[default]
    AuthorizationCode,
    /// The client-credentials grant (machine-to-machine, the MCP
    /// `oauth-client-credentials` extension): needs a client id and secret,
    /// sent with HTTP Basic or in the body as the server's metadata says.
    ClientCredentials,
}

/// OAuth settings of one `url` server (`.mcp.json`'s `"oauth"` object, see
/// [`OAuth::parse`]).
///
/// All fields are optional: with none, the client registers itself
/// dynamically and asks for the scopes the server's challenge or metadata
/// names (none when neither names any).
#[derive(Clone, Default)]
pub struct OAuth {
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<Hidden>,
    pub(crate) scopes: Vec<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: Option<String>,
    pub(crate) grant: Grant,
    pub(crate) cache: Option<TokenCache>,
    pub(crate) login: Option<LoopbackLogin>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("scopes", &self.scopes)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .field("cache", &self.cache)
            .field("login", &self.login)
            .finish()
    }
}

impl OAuth {
    /// Settings with nothing configured: dynamic registration, scopes from
    /// the server, no cache, no login.
    pub fn new() -> Self {
        Self::default()
    }

    /// A pre-registered client (skips dynamic registration).
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The pre-registered client's secret (a confidential client).
    pub fn with_client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(Hidden(secret.into()));
        self
    }

    /// The scopes to ask for at the first authorization, instead of the
    /// ones the server's challenge or metadata names.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The HTTPS URL of this client's metadata document (a client ID
    /// metadata document, SEP-991), used as the client id when the
    /// authorization server advertises `client_id_metadata_document_supported`.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The `client_name` of a dynamic registration (default: the program's name).
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = Some(name.into());
        self
    }

    /// The grant ([`Grant::AuthorizationCode`] by default).
    pub fn with_grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// Where tokens are kept between runs (none by default: tokens live as
    /// long as the connection).
    pub fn with_cache(mut self, cache: TokenCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The interactive step for a new authorization (none by default: a
    /// connection without a usable cached token then fails, naming `tool
    /// mcp login`).
    pub fn with_login(mut self, login: LoopbackLogin) -> Self {
        self.login = Some(login);
        self
    }

    /// The token cache, if set.
    pub fn cache(&self) -> Option<&TokenCache> {
        self.cache.as_ref()
    }

    /// How long a login may wait for a person (zero without a login).
    pub(crate) fn login_timeout(&self) -> std::time::Duration {
        self.login
            .as_ref()
            .map_or(std::time::Duration::ZERO, LoopbackLogin::timeout)
    }

    /// Settings from `.mcp.json`'s `"oauth"` value: `true` (all defaults),
    /// or an object with `client_id`, `client_secret` (either may be
    /// `${VAR}`, resolved from this process's environment when connecting),
    /// `scopes` (array of strings), `client_metadata_url`, `client_name` and
    /// `grant` (`"authorization_code"`, default, or `"client_credentials"`).
    ///
    /// # Errors
    /// A message naming the key (never a secret's value) for an unknown key,
    /// a value of the wrong type, a string over [`MAX_OAUTH_VALUE_BYTES`],
    /// more than [`MAX_SCOPES`] scopes, a scope with a space or control
    /// character, `client_secret` without `client_id`, or
    /// `client_credentials` without both.
    pub fn parse(value: &serde_json::Value) -> Result<Self, String> {
        use serde_json::Value;
        let object = match value {
            Value::Bool(true) => return Ok(Self::new()),
            Value::Object(object) => object,
            _ => return Err("`oauth` must be `true` or an object".to_owned()),
        };
        let mut oauth = Self::new();
        let text = |key: &str, v: &Value| -> Result<String, String> {
            let s = v
                .as_str()
                .ok_or_else(|| format!("`oauth.{key}` must be a string"))?;
            if s.len() > MAX_OAUTH_VALUE_BYTES || s.is_empty() {
                return Err(format!(
                    "`oauth.{key}` must be 1 to {MAX_OAUTH_VALUE_BYTES} bytes"
                ));
            }
            if s.chars().any(char::is_control) {
                return Err(format!("`oauth.{key}` has a control character"));
            }
            Ok(s.to_owned())
        };
        for (key, v) in object {
            match key.as_str() {
                "client_id" => oauth.client_id = Some(text(key, v)?),
                "client_secret" => oauth.client_secret = Some(Hidden(text(key, v)?)),
                "client_metadata_url" => {
                    let url = text(key, v)?;
                    if !url.starts_with("https://") {
                        return Err("`oauth.client_metadata_url` must be an https URL".to_owned());
                    }
                    oauth.client_metadata_url = Some(url);
                }
                "client_name" => oauth.client_name = Some(text(key, v)?),
                "grant" => {
                    oauth.grant = match text(key, v)?.as_str() {
                        "authorization_code" => Grant::AuthorizationCode,
                        "client_credentials" => Grant::ClientCredentials,
                        other => {
                            return Err(format!(
                                "`oauth.grant`: `{}` is neither `authorization_code` nor \
                                 `client_credentials`",
                                tool_rules::text::clip(other, tool_rules::text::Clip::chars(40))
                            ));
                        }
                    }
                }
                "scopes" => {
                    let list = v
                        .as_array()
                        .ok_or("`oauth.scopes` must be an array of strings")?;
                    if list.len() > MAX_SCOPES {
                        return Err(format!("`oauth.scopes`: at most {MAX_SCOPES}"));
                    }
                    for scope in list {
                        let scope = text("scopes[]", scope)?;
                        if scope.contains(' ') || scope.contains('"') || scope.contains('\\') {
                            return Err("`oauth.scopes`: a scope has a space, quote or backslash"
                                .to_owned());
                        }
                        oauth.scopes.push(scope);
                    }
                }
                other => {
                    return Err(format!(
                        "`oauth`: unknown key `{}` (known: client_id, client_secret, scopes, \
                         client_metadata_url, client_name, grant)",
                        tool_rules::text::clip(other, tool_rules::text::Clip::chars(40))
                    ));
                }
            }
        }
        if oauth.client_secret.is_some() && oauth.client_id.is_none() {
            return Err("`oauth.client_secret` needs `oauth.client_id`".to_owned());
        }
        if oauth.grant == Grant::ClientCredentials
            && (oauth.client_id.is_none() || oauth.client_secret.is_none())
        {
            return Err(
                "`oauth.grant: client_credentials` needs `client_id` and `client_secret`"
                    .to_owned(),
            );
        }
        Ok(oauth)
    }

    /// These settings with `${VAR}` in the client id and secret resolved
    /// through `lookup`.
    ///
    /// # Errors
    /// A message naming the key and the variable when it is unset.
    pub(crate) fn resolved(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let resolve = |key: &str, value: &str| -> Result<String, String> {
            crate::headers::resolve(value, &lookup).map_err(|why| format!("`oauth.{key}`: {why}"))
        };
        let mut out = self.clone();
        if let Some(id) = &self.client_id {
            out.client_id = Some(resolve("client_id", id)?);
        }
        if let Some(secret) = &self.client_secret {
            out.client_secret = Some(Hidden(resolve("client_secret", &secret.0)?));
        }
        Ok(out)
    }
}
