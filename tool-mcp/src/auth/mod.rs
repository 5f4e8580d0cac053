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
mod grants;
mod jose;
mod login;
mod mask;
mod transport;

pub use cache::{CacheKey, MAX_CACHE_FILE_BYTES, TokenCache};
pub use grants::{MAX_ASSERTION_BYTES, TokenSource};
pub use jose::MAX_KEY_FILE_BYTES;
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
    /// `oauth-client-credentials` extension): needs a client id and either a
    /// secret (sent with HTTP Basic or in the body as the server's metadata
    /// says) or a signing key ([`OAuth::with_private_key_file`]: a
    /// `private_key_jwt` assertion, RFC 7523 §2.2).
    ClientCredentials,
    /// The JWT-bearer grant of workload identity federation (RFC 7523 §2.1,
    /// the MCP `wif` extension): a token the platform gives the workload
    /// ([`OAuth::with_platform_token`]) is the assertion; an optional client
    /// id. A refused grant is not retried.
    JwtBearer,
    /// Enterprise-managed authorization (the MCP extension, SEP-990): the
    /// person's ID token from the enterprise IdP is exchanged there for an
    /// ID-JAG (RFC 8693), which the authorization server takes in a
    /// JWT-bearer grant ([`OAuth::with_idp`]; the client id and secret
    /// authenticate at the authorization server).
    EnterpriseManaged,
}

impl Grant {
    /// The grant's name in `.mcp.json` (`authorization_code`,
    /// `client_credentials`, `jwt_bearer`, `enterprise_managed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::ClientCredentials => "client_credentials",
            Self::JwtBearer => "jwt_bearer",
            Self::EnterpriseManaged => "enterprise_managed",
        }
    }
}

/// The enterprise identity provider of [`Grant::EnterpriseManaged`]
/// (`.mcp.json`'s `"oauth": {"idp": {...}}`).
#[derive(Clone)]
pub struct Idp {
    pub(crate) token_endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Hidden>,
    pub(crate) id_token: TokenSource,
}

impl std::fmt::Debug for Idp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("id_token", &self.id_token)
            .finish()
    }
}

impl Idp {
    /// The IdP whose RFC 8693 token endpoint is `token_endpoint`, where this
    /// program is the client `client_id` (a public client unless
    /// [`Idp::with_client_secret`]), and the person's ID token comes from
    /// `id_token` (read at each authorization).
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: TokenSource,
    ) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token,
        }
    }

    /// The secret of this program's client at the IdP (HTTP Basic).
    pub fn with_client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(Hidden(secret.into()));
        self
    }
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
    pub(crate) private_key_file: Option<std::path::PathBuf>,
    pub(crate) platform_token: Option<TokenSource>,
    pub(crate) idp: Option<Idp>,
    pub(crate) dpop: Option<bool>,
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
            .field("private_key_file", &self.private_key_file)
            .field("platform_token", &self.platform_token)
            .field("idp", &self.idp)
            .field("dpop", &self.dpop)
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

    /// A `private_key_jwt` signing key for [`Grant::ClientCredentials`]:
    /// the path of a PKCS#8 PEM file (EC P-256 → ES256, RSA → RS256) that
    /// only its owner may read, loaded at each grant (never the key itself
    /// in the configuration or argv).
    pub fn with_private_key_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.private_key_file = Some(path.into());
        self
    }

    /// The platform token of [`Grant::JwtBearer`].
    pub fn with_platform_token(mut self, source: TokenSource) -> Self {
        self.platform_token = Some(source);
        self
    }

    /// The IdP of [`Grant::EnterpriseManaged`].
    pub fn with_idp(mut self, idp: Idp) -> Self {
        self.idp = Some(idp);
        self
    }

    /// DPoP-bound tokens (RFC 9449): `true` always asks for them (a proof
    /// key per connection, in memory only; a proof on every token request
    /// and every request to the server, nonces honoured), `false` never;
    /// by default, when the authorization server advertises ES256 in
    /// `dpop_signing_alg_values_supported`.
    pub fn with_dpop(mut self, on: bool) -> Self {
        self.dpop = Some(on);
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
                "private_key_file" => {
                    oauth.private_key_file = Some(text(key, v)?.into());
                }
                "platform_token_file" | "platform_token_env" => {
                    if oauth.platform_token.is_some() {
                        return Err(
                            "`oauth`: `platform_token_file` or `platform_token_env`, not both"
                                .to_owned(),
                        );
                    }
                    oauth.platform_token = Some(token_source(key, &text(key, v)?)?);
                }
                "idp" => oauth.idp = Some(parse_idp(v)?),
                "dpop" => {
                    oauth.dpop = Some(v.as_bool().ok_or("`oauth.dpop` must be true or false")?);
                }
                "grant" => {
                    oauth.grant = match text(key, v)?.as_str() {
                        "authorization_code" => Grant::AuthorizationCode,
                        "client_credentials" => Grant::ClientCredentials,
                        "jwt_bearer" => Grant::JwtBearer,
                        "enterprise_managed" => Grant::EnterpriseManaged,
                        other => {
                            return Err(format!(
                                "`oauth.grant`: `{}` is not `authorization_code`, \
                                 `client_credentials`, `jwt_bearer` or `enterprise_managed`",
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
                         client_metadata_url, client_name, grant, private_key_file, \
                         platform_token_file, platform_token_env, idp, dpop)",
                        tool_rules::text::clip(other, tool_rules::text::Clip::chars(40))
                    ));
                }
            }
        }
        if oauth.client_secret.is_some() && oauth.client_id.is_none() {
            return Err("`oauth.client_secret` needs `oauth.client_id`".to_owned());
        }
        oauth.check_grant()?;
        Ok(oauth)
    }

    /// Whether the keys fit the grant.
    fn check_grant(&self) -> Result<(), String> {
        let misplaced =
            |key: &str, grant: &str| Err(format!("`oauth.{key}` applies to `grant: {grant}` only"));
        if self.private_key_file.is_some() && self.grant != Grant::ClientCredentials {
            return misplaced("private_key_file", "client_credentials");
        }
        if self.platform_token.is_some() && self.grant != Grant::JwtBearer {
            return misplaced("platform_token_file/_env", "jwt_bearer");
        }
        if self.idp.is_some() && self.grant != Grant::EnterpriseManaged {
            return misplaced("idp", "enterprise_managed");
        }
        match self.grant {
            Grant::ClientCredentials
                if self.client_id.is_none()
                    || self.client_secret.is_some() == self.private_key_file.is_some() =>
            {
                return Err(
                    "`oauth.grant: client_credentials` needs `client_id` and one of \
                            `client_secret` or `private_key_file`"
                        .to_owned(),
                );
            }
            Grant::JwtBearer if self.platform_token.is_none() => {
                return Err("`oauth.grant: jwt_bearer` needs `platform_token_file` or \
                            `platform_token_env`"
                    .to_owned());
            }
            Grant::EnterpriseManaged if self.idp.is_none() || self.client_id.is_none() => {
                return Err(
                    "`oauth.grant: enterprise_managed` needs `idp` and `client_id`".to_owned(),
                );
            }
            _ => {}
        }
        Ok(())
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
        if let Some(path) = &self.private_key_file {
            let path = path.to_string_lossy();
            out.private_key_file = Some(resolve("private_key_file", &path)?.into());
        }
        if let Some(TokenSource::File(path)) = &self.platform_token {
            let path = path.to_string_lossy();
            out.platform_token = Some(TokenSource::File(
                resolve("platform_token_file", &path)?.into(),
            ));
        }
        if let Some(idp) = &mut out.idp {
            if let Some(secret) = &idp.client_secret {
                idp.client_secret = Some(Hidden(resolve("idp.client_secret", &secret.0)?));
            }
            if let TokenSource::File(path) = &idp.id_token {
                let path = path.to_string_lossy();
                idp.id_token = TokenSource::File(resolve("idp.id_token_file", &path)?.into());
            }
        }
        Ok(out)
    }
}

/// A [`TokenSource`] from a `*_file` or `*_env` key.
fn token_source(key: &str, value: &str) -> Result<TokenSource, String> {
    if key.ends_with("_env") {
        let valid = !value.is_empty()
            && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !value.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(format!(
                "`oauth.{key}` must name an environment variable (letters, digits, `_`)"
            ));
        }
        Ok(TokenSource::Env(value.to_owned()))
    } else {
        Ok(TokenSource::File(value.into()))
    }
}

/// `"idp": {"token_endpoint", "client_id", "client_secret"?, "id_token_file"
/// | "id_token_env"}`.
fn parse_idp(value: &serde_json::Value) -> Result<Idp, String> {
    let object = value.as_object().ok_or("`oauth.idp` must be an object")?;
    let text = |key: &str| -> Result<Option<String>, String> {
        let Some(v) = object.get(key) else {
            return Ok(None);
        };
        let s = v
            .as_str()
            .filter(|s| !s.is_empty() && s.len() <= MAX_OAUTH_VALUE_BYTES)
            .filter(|s| !s.chars().any(char::is_control))
            .ok_or_else(|| {
                format!("`oauth.idp.{key}` must be a string of 1 to {MAX_OAUTH_VALUE_BYTES} bytes")
            })?;
        Ok(Some(s.to_owned()))
    };
    for key in object.keys() {
        if ![
            "token_endpoint",
            "client_id",
            "client_secret",
            "id_token_file",
            "id_token_env",
        ]
        .contains(&key.as_str())
        {
            return Err(format!(
                "`oauth.idp`: unknown key `{}` (known: token_endpoint, client_id, client_secret, \
                 id_token_file, id_token_env)",
                tool_rules::text::clip(key, tool_rules::text::Clip::chars(40))
            ));
        }
    }
    let token_endpoint = text("token_endpoint")?.ok_or("`oauth.idp` needs `token_endpoint`")?;
    if !token_endpoint.starts_with("https://") && !token_endpoint.starts_with("http://") {
        return Err("`oauth.idp.token_endpoint` must be an http(s) URL".to_owned());
    }
    let client_id = text("client_id")?.ok_or("`oauth.idp` needs `client_id`")?;
    let id_token = match (text("id_token_file")?, text("id_token_env")?) {
        (Some(path), None) => token_source("idp.id_token_file", &path)?,
        (None, Some(var)) => token_source("idp.id_token_env", &var)?,
        _ => return Err("`oauth.idp` needs one of `id_token_file` or `id_token_env`".to_owned()),
    };
    let mut idp = Idp::new(token_endpoint, client_id, id_token);
    if let Some(secret) = text("client_secret")? {
        idp = idp.with_client_secret(secret);
    }
    Ok(idp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_extension_grants_parse_with_their_keys() {
        let jwt = OAuth::parse(&json!({"grant": "client_credentials", "client_id": "ci",
            "private_key_file": "/etc/tool/ci.pem", "dpop": true}))
        .expect("private_key_jwt");
        assert_eq!(jwt.grant, Grant::ClientCredentials);
        assert_eq!(
            jwt.private_key_file.as_deref(),
            Some(std::path::Path::new("/etc/tool/ci.pem"))
        );
        assert_eq!(jwt.dpop, Some(true));

        let wif = OAuth::parse(&json!({"grant": "jwt_bearer",
            "platform_token_env": "K8S_TOKEN"}))
        .expect("wif");
        assert_eq!(
            wif.platform_token,
            Some(TokenSource::Env("K8S_TOKEN".into()))
        );

        let ema = OAuth::parse(&json!({"grant": "enterprise_managed", "client_id": "mcp",
            "client_secret": "${S}", "idp": {"token_endpoint": "https://idp.example/token",
            "client_id": "idp-client", "id_token_file": "/run/id-token"}}))
        .expect("enterprise");
        let idp = ema.idp.expect("idp");
        assert_eq!(idp.token_endpoint, "https://idp.example/token");
        assert_eq!(idp.id_token, TokenSource::File("/run/id-token".into()));
    }

    #[test]
    fn misfitting_extension_keys_are_refused_by_name() {
        let err = |v: serde_json::Value| OAuth::parse(&v).unwrap_err();
        assert!(
            err(json!({"grant": "client_credentials", "client_id": "c",
            "client_secret": "s", "private_key_file": "/k"}))
            .contains("one of `client_secret` or `private_key_file`")
        );
        assert!(
            err(json!({"private_key_file": "/k"}))
                .contains("applies to `grant: client_credentials` only")
        );
        assert!(err(json!({"grant": "jwt_bearer"})).contains("platform_token_file"));
        assert!(
            err(json!({"grant": "jwt_bearer", "platform_token_env": "A B"}))
                .contains("must name an environment variable")
        );
        assert!(
            err(json!({"grant": "jwt_bearer", "platform_token_env": "A",
            "platform_token_file": "/t"}))
            .contains("not both")
        );
        assert!(
            err(json!({"grant": "enterprise_managed", "client_id": "c"})).contains("needs `idp`")
        );
        assert!(
            err(json!({"grant": "enterprise_managed", "client_id": "c",
            "idp": {"token_endpoint": "https://i/t", "client_id": "x"}}))
            .contains("`id_token_file` or `id_token_env`")
        );
        assert!(err(json!({"dpop": "yes"})).contains("`oauth.dpop` must be true or false"));
        assert!(err(json!({"grant": "saml"})).contains("`enterprise_managed`"));
    }

    #[test]
    fn the_debug_form_shows_no_secret() {
        let oauth = OAuth::parse(&json!({"grant": "enterprise_managed", "client_id": "mcp",
            "client_secret": "TOPSECRET", "idp": {"token_endpoint": "https://idp/t",
            "client_id": "i", "client_secret": "IDPSECRET", "id_token_env": "IDT"}}))
        .expect("parse");
        let shown = format!("{oauth:?}");
        assert!(
            !shown.contains("TOPSECRET") && !shown.contains("IDPSECRET"),
            "{shown}"
        );
    }
}
