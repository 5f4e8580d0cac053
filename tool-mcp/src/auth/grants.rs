//! Token requests this crate makes itself (rmcp makes the authorization-code
//! and client-secret ones): `private_key_jwt` client credentials (RFC 7523
//! §2.2), the JWT-bearer grant of workload identity federation (RFC 7523
//! §2.1), the two steps of enterprise-managed authorization (an RFC 8693
//! token exchange of an ID token for an ID-JAG at the IdP, then a JWT-bearer
//! grant at the authorization server); and DPoP (RFC 9449): the proof key of
//! a connection, its nonces, and the HTTP client that adds proofs to rmcp's
//! token requests.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRequest};

use super::jose::SigningKey;

/// Largest token-endpoint answer read, in bytes (1 MiB, as rmcp's).
const MAX_TOKEN_ANSWER_BYTES: usize = 1024 * 1024;

/// Longest platform or ID token read from a file or variable (16 KiB).
pub const MAX_ASSERTION_BYTES: usize = 16 * 1024;

/// `grant_type` of RFC 7523's JWT-bearer grant.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `client_assertion_type` of RFC 7523 client authentication.
const JWT_CLIENT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// `grant_type` of RFC 8693 token exchange.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The ID-JAG token type (identity assertion authorization grant).
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The OpenID Connect ID token type of RFC 8693.
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// Where a token this client presents as an assertion comes from: read
/// afresh at each grant (platforms rotate them), trimmed, at most
/// [`MAX_ASSERTION_BYTES`]; never printed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenSource {
    /// A file, e.g. a Kubernetes projected service-account token.
    File(std::path::PathBuf),
    /// An environment variable of this process.
    Env(String),
}

impl TokenSource {
    /// The token now.
    ///
    /// # Errors
    /// A message naming the file or variable: unreadable, unset, empty or
    /// too long.
    pub(crate) fn read(&self) -> Result<String, String> {
        let (text, name) = match self {
            Self::File(path) => (
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?,
                path.display().to_string(),
            ),
            Self::Env(var) => (
                std::env::var(var).map_err(|_| format!("${var} is not set"))?,
                format!("${var}"),
            ),
        };
        let token = text.trim();
        if token.is_empty() || token.len() > MAX_ASSERTION_BYTES {
            return Err(format!(
                "{name}: the token must be 1 to {MAX_ASSERTION_BYTES} bytes"
            ));
        }
        Ok(token.to_owned())
    }
}

/// A token endpoint's successful answer.
pub(crate) struct TokenAnswer {
    pub(crate) access_token: String,
    /// `Bearer`, `DPoP`, `N_A` (an exchanged assertion), as sent.
    pub(crate) token_type: String,
    pub(crate) expires_in: Option<u64>,
    pub(crate) issued_token_type: Option<String>,
}

/// The DPoP state of one connection: a P-256 proof key made for it (kept in
/// memory only) and the latest nonce each server gave (RFC 9449 §8, §9).
pub(crate) struct Dpop {
    key: SigningKey,
    nonces: Mutex<HashMap<String, String>>,
}

impl Dpop {
    /// A fresh proof key.
    pub(crate) fn new() -> Result<Self, String> {
        Ok(Self {
            key: SigningKey::generate_es256()?,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// A proof for `method` on `url`, bound to `access_token` when given,
    /// with the nonce last given by `url`'s origin.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let nonce = self
            .nonces
            .lock()
            .ok()
            .and_then(|n| n.get(&origin(url)).cloned());
        self.key
            .dpop_proof(method, url, access_token, nonce.as_deref())
            .map_err(AuthError::InternalError)
    }

    /// Keeps `nonce` for `url`'s origin; returns whether it is new.
    pub(crate) fn set_nonce(&self, url: &str, nonce: &str) -> bool {
        let Ok(mut nonces) = self.nonces.lock() else {
            return false;
        };
        nonces.insert(origin(url), nonce.to_owned()).as_deref() != Some(nonce)
    }
}

/// `scheme://host:port` of a URL (the nonce scope), the URL itself when it
/// does not parse.
fn origin(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.origin().ascii_serialization())
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(byte as char);
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn form_body(form: &[(&str, &str)]) -> String {
    form.iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `Authorization: Basic` of RFC 6749 §2.3.1 (id and secret form-encoded first).
fn basic(client_id: &str, secret: &str) -> String {
    use base64::Engine;
    let pair = format!("{}:{}", form_encode(client_id), form_encode(secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// The `error` (and clipped `error_description`) of a token endpoint's
/// error answer, for messages; never any token.
fn oauth_error(status: u16, body: &[u8]) -> (Option<String>, String) {
    let parsed: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let error = parsed["error"]
        .as_str()
        .map(|e| tool_rules::text::clip(e, tool_rules::text::Clip::chars(60)).into_owned());
    let description = parsed["error_description"]
        .as_str()
        .map(|d| {
            format!(
                ": {}",
                tool_rules::text::clip(d, tool_rules::text::Clip::chars(200))
            )
        })
        .unwrap_or_default();
    let shown = match &error {
        Some(e) => format!("HTTP {status}, `{e}`{description}"),
        None => format!("HTTP {status}"),
    };
    (error, shown)
}

async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > MAX_TOKEN_ANSWER_BYTES {
            return Err(format!("answer larger than {MAX_TOKEN_ANSWER_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The HTTP client of this module's token requests: no redirects (a token
/// request is never sent elsewhere), 30 s timeout.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

/// Sends `request` (a POST to a token endpoint), with a DPoP proof when
/// `dpop` is set; on a `use_dpop_nonce` answer with a new `DPoP-Nonce`,
/// once more with that nonce. Returns the final status, headers and body.
async fn send_with_dpop(
    http: &reqwest::Client,
    endpoint: &str,
    build: impl Fn() -> reqwest::RequestBuilder,
    dpop: Option<&Dpop>,
) -> Result<(u16, Vec<u8>), AuthError> {
    let mut nonce_retried = false;
    loop {
        let mut request = build();
        if let Some(dpop) = dpop {
            request = request.header("DPoP", dpop.proof("POST", endpoint, None)?);
        }
        let request = request
            .build()
            .map_err(|e| AuthError::InternalError(e.to_string()))?;
        let response = http.execute(request).await.map_err(|e| {
            AuthError::AuthorizationFailed(format!("token request to {endpoint}: {e}"))
        })?;
        let status = response.status().as_u16();
        let nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = read_body(response).await.map_err(|e| {
            AuthError::AuthorizationFailed(format!("token request to {endpoint}: {e}"))
        })?;
        if let (Some(dpop), Some(nonce)) = (dpop, &nonce) {
            let fresh = dpop.set_nonce(endpoint, nonce);
            if status == 400
                && !nonce_retried
                && fresh
                && oauth_error(status, &body).0.as_deref() == Some("use_dpop_nonce")
            {
                nonce_retried = true;
                continue;
            }
        }
        return Ok((status, body));
    }
}

/// A form POST to a token endpoint (client authentication by `basic` when
/// given, else whatever `form` carries), DPoP-proofed when `dpop` is set.
///
/// # Errors
/// [`AuthError::AuthorizationFailed`] naming the endpoint and the server's
/// `error` / `error_description` (clipped); no retry beyond one DPoP nonce.
pub(crate) async fn token_request(
    http: &reqwest::Client,
    endpoint: &str,
    form: &[(&str, &str)],
    basic_auth: Option<(&str, &str)>,
    dpop: Option<&Dpop>,
) -> Result<TokenAnswer, AuthError> {
    let body = form_body(form);
    let build = || {
        let mut request = http
            .post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body.clone());
        if let Some((id, secret)) = basic_auth {
            request = request.header("authorization", basic(id, secret));
        }
        request
    };
    let (status, body) = send_with_dpop(http, endpoint, build, dpop).await?;
    if !(200..300).contains(&status) {
        let (_, shown) = oauth_error(status, &body);
        return Err(AuthError::AuthorizationFailed(format!(
            "the token endpoint {endpoint} refused the request ({shown})"
        )));
    }
    let answer: serde_json::Value = serde_json::from_slice(&body).map_err(|_| {
        AuthError::AuthorizationFailed(format!("the token endpoint {endpoint} answered no JSON"))
    })?;
    let access_token = answer["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            AuthError::AuthorizationFailed(format!(
                "the token endpoint {endpoint} answered no access_token"
            ))
        })?;
    Ok(TokenAnswer {
        access_token: access_token.to_owned(),
        token_type: answer["token_type"].as_str().unwrap_or("Bearer").to_owned(),
        expires_in: answer["expires_in"].as_u64(),
        issued_token_type: answer["issued_token_type"].as_str().map(str::to_owned),
    })
}

/// The common parameters of a grant at the MCP server's authorization server.
pub(crate) struct GrantTarget<'a> {
    /// The authorization server's token endpoint.
    pub(crate) token_endpoint: &'a str,
    /// Its issuer (the audience of client assertions and of an ID-JAG).
    pub(crate) issuer: &'a str,
    /// The MCP server (RFC 8707 `resource`).
    pub(crate) resource: &'a str,
    /// Space-separated scopes (none when empty).
    pub(crate) scope: &'a str,
}

impl GrantTarget<'_> {
    fn with_common<'a>(&'a self, mut form: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
        form.push(("resource", self.resource));
        if !self.scope.is_empty() {
            form.push(("scope", self.scope));
        }
        form
    }
}

/// The client-credentials grant with a `private_key_jwt` assertion signed
/// by `key` (`aud` the issuer).
pub(crate) async fn client_credentials_jwt(
    http: &reqwest::Client,
    target: &GrantTarget<'_>,
    client_id: &str,
    key: &SigningKey,
    dpop: Option<&Dpop>,
) -> Result<TokenAnswer, AuthError> {
    let assertion = key
        .client_assertion(client_id, target.issuer)
        .map_err(AuthError::InternalError)?;
    let form = target.with_common(vec![
        ("grant_type", "client_credentials"),
        ("client_id", client_id),
        ("client_assertion_type", JWT_CLIENT_ASSERTION),
        ("client_assertion", &assertion),
    ]);
    token_request(http, target.token_endpoint, &form, None, dpop).await
}

/// The JWT-bearer grant: `assertion` (a platform token, an ID-JAG) for an
/// access token; the client authenticates with `client` (id and secret,
/// HTTP Basic) or names its id in the body.
pub(crate) async fn jwt_bearer(
    http: &reqwest::Client,
    target: &GrantTarget<'_>,
    assertion: &str,
    client_id: Option<&str>,
    client_secret: Option<&str>,
    dpop: Option<&Dpop>,
) -> Result<TokenAnswer, AuthError> {
    let mut form = vec![("grant_type", JWT_BEARER), ("assertion", assertion)];
    let basic_auth = match (client_id, client_secret) {
        (Some(id), Some(secret)) => Some((id, secret)),
        (Some(id), None) => {
            form.push(("client_id", id));
            None
        }
        _ => None,
    };
    let form = target.with_common(form);
    token_request(http, target.token_endpoint, &form, basic_auth, dpop).await
}

/// An enterprise IdP's part of enterprise-managed authorization.
pub(crate) struct IdpTarget<'a> {
    pub(crate) token_endpoint: &'a str,
    pub(crate) client_id: &'a str,
    pub(crate) client_secret: Option<&'a str>,
}

/// RFC 8693 token exchange at the IdP: the person's ID token for an ID-JAG
/// naming the authorization server (`audience`) and the MCP server
/// (`resource`).
pub(crate) async fn id_jag(
    http: &reqwest::Client,
    idp: &IdpTarget<'_>,
    target: &GrantTarget<'_>,
    id_token: &str,
) -> Result<String, AuthError> {
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("subject_token", id_token),
        ("subject_token_type", ID_TOKEN),
        ("audience", target.issuer),
    ];
    let basic_auth = match idp.client_secret {
        Some(secret) => Some((idp.client_id, secret)),
        None => {
            form.push(("client_id", idp.client_id));
            None
        }
    };
    let form = target.with_common(form);
    let answer = token_request(http, idp.token_endpoint, &form, basic_auth, None).await?;
    match answer.issued_token_type.as_deref() {
        Some(ID_JAG) => Ok(answer.access_token),
        other => Err(AuthError::AuthorizationFailed(format!(
            "the IdP's token exchange issued `{}`, not an ID-JAG",
            tool_rules::text::clip(
                other.unwrap_or("nothing"),
                tool_rules::text::Clip::chars(80)
            )
        ))),
    }
}

/// The OAuth HTTP client of rmcp's [`AuthorizationManager`] when DPoP is
/// on: POSTs to the token endpoint (code exchange, refresh) are sent here
/// with a DPoP proof (and the nonce retry); everything else goes to
/// `inner`. Only the hosts of the already-discovered metadata are reached.
///
/// [`AuthorizationManager`]: rmcp::transport::auth::AuthorizationManager
pub(crate) struct DpopOAuthHttp {
    pub(crate) inner: Box<dyn OAuthHttpClient>,
    pub(crate) http: reqwest::Client,
    pub(crate) dpop: Arc<Dpop>,
    pub(crate) token_endpoint: String,
    pub(crate) hosts: HashSet<String>,
}

impl OAuthHttpClient for DpopOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let url = request.request.uri().to_string();
            let host = request.request.uri().host().unwrap_or_default().to_owned();
            if !self.hosts.contains(&host) {
                return Err(format!(
                    "OAuth request to `{}` refused: not a host of the discovered metadata",
                    tool_rules::text::clip(&host, tool_rules::text::Clip::chars(80))
                )
                .into());
            }
            let is_token = request.request.method() == http::Method::POST
                && url.split('?').next() == Some(self.token_endpoint.as_str());
            if !is_token {
                return self.inner.execute(request).await;
            }
            let (parts, body) = request.request.into_parts();
            let build = || {
                let mut builder = self.http.post(&url).body(body.clone());
                for (name, value) in &parts.headers {
                    builder = builder.header(name, value);
                }
                builder
            };
            let (status, body) =
                send_with_dpop(&self.http, &self.token_endpoint, build, Some(&self.dpop))
                    .await
                    .map_err(|e| Box::new(e) as rmcp::transport::auth::OAuthHttpClientError)?;
            http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(body)
                .map_err(|e| Box::new(e) as rmcp::transport::auth::OAuthHttpClientError)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_and_basic_credentials_are_encoded() {
        assert_eq!(
            form_body(&[("a b", "x/y:z"), ("k", "é")]),
            "a+b=x%2Fy%3Az&k=%C3%A9"
        );
        // RFC 6749 §2.3.1: id and secret form-encoded, then base64.
        assert_eq!(basic("id:1", "s p"), "Basic aWQlM0ExOnMrcA==");
    }

    #[test]
    fn nonces_are_kept_per_origin() {
        let dpop = Dpop::new().expect("key");
        assert!(dpop.set_nonce("https://as.example/token", "n1"));
        assert!(
            !dpop.set_nonce("https://as.example/other", "n1"),
            "same origin, same nonce"
        );
        let proof = dpop
            .proof("POST", "https://as.example/token", None)
            .expect("proof");
        let (_, claims) = super::super::jose::tests::verified(&proof, &dpop.key);
        assert_eq!(claims["nonce"], "n1");
        let other = dpop
            .proof("POST", "https://rs.example/mcp", Some("t"))
            .expect("proof");
        let (_, claims) = super::super::jose::tests::verified(&other, &dpop.key);
        assert!(claims.get("nonce").is_none());
    }

    /// A token endpoint that wants a DPoP nonce: without `nonce-1` in the
    /// proof it answers `use_dpop_nonce`; records every proof's claims.
    async fn nonce_endpoint(
        seen: Arc<Mutex<Vec<serde_json::Value>>>,
        key_check: Arc<Dpop>,
    ) -> String {
        use axum::http::{HeaderMap, StatusCode};
        let handler = move |headers: HeaderMap| {
            let (seen, key) = (Arc::clone(&seen), Arc::clone(&key_check));
            async move {
                let proof = headers
                    .get("dpop")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let (_, claims) = super::super::jose::tests::verified(&proof, &key.key);
                let ok = claims["nonce"] == "nonce-1";
                seen.lock().unwrap().push(claims);
                if ok {
                    (
                        StatusCode::OK,
                        [("dpop-nonce", "nonce-1")],
                        r#"{"access_token":"at","token_type":"DPoP","expires_in":60}"#,
                    )
                } else {
                    (
                        StatusCode::BAD_REQUEST,
                        [("dpop-nonce", "nonce-1")],
                        r#"{"error":"use_dpop_nonce"}"#,
                    )
                }
            }
        };
        let app = axum::Router::new().route("/token", axum::routing::post(handler));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/token")
    }

    #[tokio::test]
    async fn a_use_dpop_nonce_answer_is_retried_once_with_the_nonce() {
        let dpop = Arc::new(Dpop::new().expect("key"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let endpoint = nonce_endpoint(Arc::clone(&seen), Arc::clone(&dpop)).await;
        let http = http_client().expect("client");
        let answer = token_request(
            &http,
            &endpoint,
            &[("grant_type", "client_credentials")],
            None,
            Some(&dpop),
        )
        .await
        .expect("token after the nonce retry");
        assert_eq!(answer.access_token, "at");
        assert_eq!(answer.token_type, "DPoP");
        assert_eq!(answer.expires_in, Some(60));
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 2, "one refusal, one retry");
        assert!(seen[0].get("nonce").is_none());
        assert_eq!(seen[1]["nonce"], "nonce-1");
        assert_ne!(seen[0]["jti"], seen[1]["jti"], "a fresh proof each time");
        for claims in &seen {
            assert_eq!(claims["htm"], "POST");
            assert_eq!(claims["htu"], endpoint.as_str());
        }
    }

    #[tokio::test]
    async fn a_kept_nonce_is_sent_and_a_changed_one_is_followed() {
        let dpop = Arc::new(Dpop::new().expect("key"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let endpoint = nonce_endpoint(Arc::clone(&seen), Arc::clone(&dpop)).await;
        dpop.set_nonce(&endpoint, "stale");
        let http = http_client().expect("client");
        // With `stale` kept, the first proof fails, `nonce-1` arrives, the
        // retry succeeds: two requests.
        token_request(&http, &endpoint, &[], None, Some(&dpop))
            .await
            .expect("token");
        assert_eq!(seen.lock().unwrap().len(), 2);
        // Now `nonce-1` is kept and the endpoint takes it at once.
        token_request(&http, &endpoint, &[], None, Some(&dpop))
            .await
            .expect("token");
        assert_eq!(seen.lock().unwrap().len(), 3);
    }

    #[test]
    fn an_error_answer_is_shown_without_tokens() {
        let (error, shown) = oauth_error(
            400,
            br#"{"error":"invalid_grant","error_description":"expired","access_token":"SECRET"}"#,
        );
        assert_eq!(error.as_deref(), Some("invalid_grant"));
        assert_eq!(shown, "HTTP 400, `invalid_grant`: expired");
    }
}
