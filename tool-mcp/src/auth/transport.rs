//! The Streamable HTTP client of an OAuth-protected `url` server: every
//! request carries the current access token; a `401` challenge refreshes or
//! re-authorizes and the request is sent again; a `403` `insufficient_scope`
//! steps up (bounded by [`MAX_STEP_UPS`]).

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    ClientCredentialsConfig, OAuthClientConfig,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::cache::{CacheKey, FileCredentialStore};
use super::grants::{self, Dpop, DpopOAuthHttp, GrantTarget, IdpTarget, TokenAnswer};
use super::jose::SigningKey;
use super::mask;
use super::{Grant, MAX_AUTHORIZATIONS, MAX_STEP_UPS, OAuth};

type HttpError = StreamableHttpError<reqwest::Error>;

/// Extra headers of one request (a DPoP `Authorization` and proof).
type Extra = Vec<(HeaderName, HeaderValue)>;

/// The token a request carries: as a bearer token, or DPoP-bound (sent
/// with the `DPoP` scheme and a fresh proof made with `dpop`'s key).
#[derive(Clone)]
struct Credential {
    token: String,
    dpop: Option<Arc<Dpop>>,
}

impl Credential {
    /// The transport's bearer token and the extra headers for a request
    /// `method` to `uri`.
    fn headers(
        cred: Option<&Self>,
        method: &str,
        uri: &str,
    ) -> Result<(Option<String>, Extra), HttpError> {
        let Some(cred) = cred else {
            return Ok((None, Vec::new()));
        };
        let Some(dpop) = &cred.dpop else {
            return Ok((Some(cred.token.clone()), Vec::new()));
        };
        let proof = dpop
            .proof(method, uri, Some(&cred.token))
            .map_err(HttpError::Auth)?;
        let value = |v: String| {
            HeaderValue::try_from(v).map_err(|_| {
                HttpError::Auth(AuthError::InternalError(
                    "the token is not a valid header value".to_owned(),
                ))
            })
        };
        Ok((
            None,
            vec![
                (
                    http::header::AUTHORIZATION,
                    value(format!("DPoP {}", cred.token))?,
                ),
                (HeaderName::from_static("dpop"), value(proof)?),
            ],
        ))
    }
}

/// A token from a grant this crate runs itself (not kept in the cache:
/// the grant runs again without a person).
struct Direct {
    cred: Credential,
    expires_at: Option<std::time::Instant>,
}

impl Direct {
    fn from_answer(answer: TokenAnswer, dpop: Option<&Arc<Dpop>>) -> Self {
        let bound = answer.token_type.eq_ignore_ascii_case("dpop");
        Self {
            cred: Credential {
                token: answer.access_token,
                dpop: dpop.filter(|_| bound).cloned(),
            },
            // A minute early, so that a request does not race the expiry.
            expires_at: answer.expires_in.map(|secs| {
                std::time::Instant::now() + std::time::Duration::from_secs(secs.saturating_sub(60))
            }),
        }
    }

    fn current(&self) -> Option<Credential> {
        match self.expires_at {
            Some(at) if std::time::Instant::now() >= at => None,
            _ => Some(self.cred.clone()),
        }
    }
}

/// What an authorization produced.
enum Authorized {
    /// rmcp's manager holds the token (and refreshes it).
    Manager(Box<AuthorizationManager>, Option<Arc<Dpop>>),
    Direct(Direct),
}

/// The transport's HTTP client with OAuth (see the module docs).
#[derive(Clone)]
pub(crate) struct OAuthHttpClient {
    inner: reqwest::Client,
    session: Arc<Session>,
}

impl OAuthHttpClient {
    /// A client for the server at `url` with these (resolved) settings.
    ///
    /// # Errors
    /// The reqwest client cannot be built (TLS setup).
    pub(crate) fn new(url: &str, settings: OAuth) -> Result<Self, String> {
        // No redirects: a token never follows a redirect to another origin.
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        // The entry of this URL *and this client* (F3 of the issue 26
        // review): another entry's client never gets these tokens. A grant
        // that runs again without a person keeps no refresh token on disk.
        let store = match &settings.cache {
            Some(cache) => cache.store_for(
                &CacheKey::new(url, &settings),
                settings.grant == Grant::AuthorizationCode,
            ),
            None => FileCredentialStore::memory(),
        };
        Ok(Self {
            inner,
            session: Arc::new(Session {
                url: url.to_owned(),
                settings,
                store,
                state: tokio::sync::Mutex::new(State::default()),
                seen: std::sync::Mutex::new(Vec::new()),
            }),
        })
    }

    /// Runs `call` (given the bearer token and extra headers) with the
    /// current token, reacting to challenges; `method` and `uri` are the
    /// request's, for DPoP proofs. An auth error comes back with every
    /// secret the connection knows, and every credential-looking field,
    /// masked ([`super::mask`]).
    async fn with_auth<T, F, Fut>(&self, method: &str, uri: &str, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, Extra) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        self.with_auth_unmasked(method, uri, call)
            .await
            .map_err(|e| match e {
                HttpError::Auth(e) => HttpError::Auth(mask::mask_error(e, &self.session.known())),
                other => other,
            })
    }

    async fn with_auth_unmasked<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, Extra) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let (mut token, mut generation) = self.session.token().await.map_err(HttpError::Auth)?;
        let mut unauthorized_retried = false;
        let mut nonce_retried = false;
        loop {
            let (bearer, extra) = Credential::headers(token.as_ref(), method, uri)?;
            match call(bearer, extra).await {
                Err(StreamableHttpError::AuthRequired(challenge))
                    if !nonce_retried
                        && challenge.www_authenticate_header.contains("use_dpop_nonce")
                        && token.as_ref().is_some_and(|t| t.dpop.is_some()) =>
                {
                    // RFC 9449 §9: the server wants a nonce. rmcp's error
                    // keeps only the challenge, so the nonce is read from
                    // the answer to a `ping` sent with the same token.
                    nonce_retried = true;
                    if let Some(cred) = &token {
                        self.probe_nonce(uri, cred).await;
                    }
                }
                Err(StreamableHttpError::AuthRequired(challenge)) if !unauthorized_retried => {
                    unauthorized_retried = true;
                    (token, generation) = self
                        .session
                        .reauthorize(
                            generation,
                            token.is_some(),
                            &challenge.www_authenticate_header,
                            false,
                        )
                        .await
                        .map_err(HttpError::Auth)?;
                }
                Err(StreamableHttpError::InsufficientScope(challenge)) => {
                    (token, generation) = self
                        .session
                        .reauthorize(generation, true, &challenge.www_authenticate_header, true)
                        .await
                        .map_err(HttpError::Auth)?;
                }
                other => return other,
            }
        }
    }

    /// Sends a JSON-RPC `ping` to `uri` with `cred` and keeps the
    /// `DPoP-Nonce` of the answer, if any.
    async fn probe_nonce(&self, uri: &str, cred: &Credential) {
        let Some(dpop) = &cred.dpop else { return };
        let Ok(proof) = dpop.proof("POST", uri, Some(&cred.token)) else {
            return;
        };
        let answer = self
            .inner
            .post(uri)
            .header("authorization", format!("DPoP {}", cred.token))
            .header("dpop", proof)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":"dpop-nonce","method":"ping"}"#)
            .send()
            .await;
        if let Ok(answer) = answer
            && let Some(nonce) = answer
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
        {
            dpop.set_nonce(uri, nonce);
        }
    }
}

/// One server's OAuth state, shared by the transport's requests.
struct Session {
    url: String,
    settings: OAuth,
    store: FileCredentialStore,
    state: tokio::sync::Mutex<State>,
    /// Secrets met while authorizing (tokens, assertions; at most
    /// [`MAX_SEEN_SECRETS`], the newest kept), masked in errors.
    seen: std::sync::Mutex<Vec<String>>,
}

/// Most secrets one connection remembers for masking (64).
const MAX_SEEN_SECRETS: usize = 64;

#[derive(Default)]
struct State {
    manager: Option<AuthorizationManager>,
    /// The proof key when the manager's token is DPoP-bound.
    manager_dpop: Option<Arc<Dpop>>,
    /// The token of a grant run here (instead of the manager's).
    direct: Option<Direct>,
    /// Why a grant run here was refused: not run again (a refused
    /// JWT-bearer grant is not retried).
    refused: Option<String>,
    /// Bumped at each new token, so that requests that failed with an older
    /// one retry with the new token instead of authorizing again.
    generation: u64,
    /// Whether the cache was looked at.
    loaded: bool,
    authorizations: u32,
    step_ups: u32,
    /// The scopes asked for at the last authorization (step-ups ask for
    /// their union with the challenged ones, SEP-2350).
    requested: Vec<String>,
}

/// A redirect URI for a client loaded from the cache: the authorization
/// server never sees it (refresh requests carry none).
const CACHED_REDIRECT_URI: &str = "http://127.0.0.1/callback";

impl Session {
    /// Remembers `value` as a secret to mask in errors.
    fn remember(&self, value: &str) {
        if value.is_empty() {
            return;
        }
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !seen.iter().any(|s| s == value) {
            if seen.len() >= MAX_SEEN_SECRETS {
                seen.remove(0);
            }
            seen.push(value.to_owned());
        }
    }

    /// Remembers the access and refresh tokens of `response`.
    fn remember_response(&self, response: &rmcp::transport::auth::OAuthTokenResponse) {
        use oauth2::TokenResponse as _;
        self.remember(response.access_token().secret());
        if let Some(refresh) = response.refresh_token() {
            self.remember(refresh.secret());
        }
    }

    /// Every secret this connection knows: the configured ones, a
    /// registration's secret, and those met while authorizing.
    fn known(&self) -> Vec<String> {
        let settings = &self.settings;
        let mut known: Vec<String> = [
            settings.client_secret.as_ref(),
            settings.idp.as_ref().and_then(|i| i.client_secret.as_ref()),
        ]
        .into_iter()
        .flatten()
        .map(|s| s.0.clone())
        .collect();
        known.extend(self.store.client_secret());
        known.extend(
            self.seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .cloned(),
        );
        known
    }

    /// The token to send now (`None`: none yet) and its generation.
    async fn token(&self) -> Result<(Option<Credential>, u64), AuthError> {
        let mut state = self.state.lock().await;
        if state.manager.is_none() && !state.loaded {
            state.loaded = true;
            if self.store.has_credentials().await {
                let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
                manager.set_credential_store(self.store.clone());
                // A DPoP-bound token is useless without the proof key of
                // the run that got it (kept in memory only).
                let loaded = manager.initialize_from_store().await?;
                let response = manager.get_credentials().await.ok().and_then(|(_, r)| r);
                if let Some(response) = &response {
                    self.remember_response(response);
                }
                if loaded && !dpop_bound(response) {
                    // The secret comes from the configuration (or a
                    // registration of this process), never from the file.
                    let secret = self
                        .store
                        .client_secret()
                        .or_else(|| self.settings.client_secret.as_ref().map(|s| s.0.clone()));
                    if let Some(secret) = secret {
                        let (client_id, _) = manager.get_credentials().await?;
                        manager.configure_client(
                            OAuthClientConfig::new(client_id, CACHED_REDIRECT_URI)
                                .with_client_secret(secret),
                        )?;
                    }
                    state.manager = Some(manager);
                }
            }
        }
        let generation = state.generation;
        if let Some(direct) = &state.direct {
            return Ok((direct.current(), generation));
        }
        let Some(manager) = &state.manager else {
            return Ok((None, generation));
        };
        let dpop = state.manager_dpop.clone();
        match manager.get_access_token().await {
            Ok(token) => Ok((Some(Credential { token, dpop }), generation)),
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {
                Ok((None, generation))
            }
            Err(e) => Err(e),
        }
    }

    /// A new token after a challenge: the one another request already got
    /// (when `seen` is stale), a refreshed one (a `401` on a sent token), or
    /// one from a new authorization.
    async fn reauthorize(
        &self,
        seen: u64,
        sent_token: bool,
        challenge: &str,
        step_up: bool,
    ) -> Result<(Option<Credential>, u64), AuthError> {
        let mut state = self.state.lock().await;
        if state.generation != seen {
            if let Some(direct) = &state.direct
                && let Some(cred) = direct.current()
            {
                return Ok((Some(cred), state.generation));
            }
            if let Some(manager) = &state.manager {
                let token = manager.get_access_token().await?;
                let dpop = state.manager_dpop.clone();
                return Ok((Some(Credential { token, dpop }), state.generation));
            }
        }
        if let Some(why) = &state.refused {
            return Err(AuthError::AuthorizationFailed(why.clone()));
        }
        if sent_token
            && !step_up
            && let Some(manager) = &state.manager
        {
            match manager.refresh_token().await {
                Ok(response) => {
                    self.remember_response(&response);
                    state.generation += 1;
                    let token = oauth2::TokenResponse::access_token(&response)
                        .secret()
                        .to_owned();
                    let dpop = state.manager_dpop.clone();
                    return Ok((Some(Credential { token, dpop }), state.generation));
                }
                Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {}
                Err(e) => return Err(e),
            }
        }
        if step_up {
            if state.step_ups >= MAX_STEP_UPS {
                return Err(AuthError::InvalidScope(format!(
                    "the server still wants more scope after {MAX_STEP_UPS} step-up \
                     authorizations; giving up"
                )));
            }
            state.step_ups += 1;
        }
        if state.authorizations >= MAX_AUTHORIZATIONS {
            return Err(AuthError::AuthorizationFailed(format!(
                "the server refused the tokens of {MAX_AUTHORIZATIONS} authorizations; giving up"
            )));
        }
        state.authorizations += 1;
        let mut scopes = if step_up {
            state.requested.clone()
        } else {
            self.settings.scopes.clone()
        };
        if step_up && let Some(challenged) = challenge_scope(challenge) {
            for scope in challenged.split_whitespace() {
                if !scopes.iter().any(|s| s == scope) {
                    scopes.push(scope.to_owned());
                }
            }
        }
        let (authorized, requested) = match self.authorize(challenge, scopes).await {
            Ok(done) => done,
            Err(e) => {
                if self.settings.grant == Grant::JwtBearer {
                    state.refused = Some(e.to_string());
                }
                return Err(e);
            }
        };
        state.requested = requested;
        state.generation += 1;
        let cred = match authorized {
            Authorized::Manager(manager, dpop) => {
                let (_, response) = manager.get_credentials().await?;
                if let Some(response) = &response {
                    self.remember_response(response);
                }
                let bound = dpop_bound(response);
                let token = manager.get_access_token().await?;
                state.manager_dpop = dpop.filter(|_| bound);
                state.manager = Some(*manager);
                state.direct = None;
                Credential {
                    token,
                    dpop: state.manager_dpop.clone(),
                }
            }
            Authorized::Direct(direct) => {
                let cred = direct.cred.clone();
                self.remember(&cred.token);
                state.direct = Some(direct);
                cred
            }
        };
        Ok((Some(cred), state.generation))
    }

    /// Discovery from `challenge`, then a grant; returns the manager holding
    /// the new token and the scopes asked for.
    async fn authorize(
        &self,
        challenge: &str,
        scopes: Vec<String>,
    ) -> Result<(Authorized, Vec<String>), AuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.store.clone());
        let mut metadata = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await?
            .metadata;
        let advertised = metadata
            .additional_fields
            .get("dpop_signing_alg_values_supported")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"));
        let dpop = if self.settings.dpop.unwrap_or(advertised) {
            Some(Arc::new(Dpop::new().map_err(AuthError::InternalError)?))
        } else {
            None
        };
        if let Some(direct) = self.direct_grant(&metadata, &scopes, dpop.as_ref()).await? {
            return Ok((Authorized::Direct(direct), scopes));
        }
        if let Some(dpop) = &dpop {
            // rmcp's manager sends the code exchange and refresh requests:
            // a manager whose HTTP client adds proofs to them, limited to
            // the hosts the address-checked discovery above found.
            let host = |url: &str| {
                reqwest::Url::parse(url)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
            };
            let mut hosts: std::collections::HashSet<String> = [
                Some(self.url.as_str()),
                metadata.issuer.as_deref(),
                Some(metadata.token_endpoint.as_str()),
                Some(metadata.authorization_endpoint.as_str()),
                metadata.registration_endpoint.as_deref(),
            ]
            .into_iter()
            .flatten()
            .filter_map(host)
            .collect();
            if let Some(prm) = challenge_param(challenge, "resource_metadata") {
                hosts.extend(host(&prm));
            }
            let client = DpopOAuthHttp {
                inner: Box::new(rmcp::transport::auth::default_oauth_http_client()?),
                http: grants::http_client().map_err(AuthError::InternalError)?,
                dpop: Arc::clone(dpop),
                token_endpoint: metadata.token_endpoint.clone(),
                hosts,
            };
            manager = AuthorizationManager::new_with_oauth_http_client(
                self.url.as_str(),
                Arc::new(client),
            )
            .await?;
            manager.set_credential_store(self.store.clone());
            metadata = manager
                .resolve_metadata_from_challenge(Some(challenge))
                .await?
                .metadata;
        }
        let cimd_supported = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        manager.set_metadata(metadata);
        let scopes = if scopes.is_empty() {
            manager.select_initial_scopes(&[]).await
        } else {
            scopes
        };
        let settings = &self.settings;
        if settings.grant == Grant::ClientCredentials {
            let (Some(client_id), Some(secret)) = (&settings.client_id, &settings.client_secret)
            else {
                return Err(AuthError::ClientCredentialsError(
                    "the client-credentials grant needs a client id and secret".to_owned(),
                ));
            };
            let config = ClientCredentialsConfig::ClientSecret {
                client_id: client_id.clone(),
                client_secret: secret.0.clone(),
                scopes: scopes.clone(),
                resource: Some(self.url.clone()),
            };
            manager.validate_client_credentials_metadata(&config)?;
            manager.configure_client_credentials(&config)?;
            self.store.set_client_secret(Some(secret.0.clone()));
            manager.exchange_client_credentials(&config).await?;
            return Ok((Authorized::Manager(Box::new(manager), dpop), scopes));
        }
        let Some(login) = &settings.login else {
            return Err(AuthError::AuthorizationRequired);
        };
        let pending = login.bind().await?;
        let redirect_uri = pending.redirect_uri();
        let name = settings
            .client_name
            .clone()
            .or_else(crate::server::program_name)
            .unwrap_or_else(|| "tool-mcp".to_owned());
        let mut request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name(&name);
        request = if scopes.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(scopes.iter().cloned())
        };
        if let Some(client_id) = &settings.client_id {
            request = request.with_preregistered_client(client_id);
            if let Some(secret) = &settings.client_secret {
                request = request.with_client_secret(secret.0.clone());
            }
            self.store
                .set_client_secret(settings.client_secret.as_ref().map(|s| s.0.clone()));
        } else if let Some(url) = settings
            .client_metadata_url
            .as_ref()
            .filter(|_| cimd_supported)
        {
            request = request.with_client_metadata_url(url);
            self.store.set_client_secret(None);
        } else {
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered = manager.register_client(&name, &redirect_uri, &refs).await?;
            request = request.with_preregistered_client(registered.client_id);
            if let Some(secret) = registered.client_secret.clone() {
                request = request.with_client_secret(secret);
            }
            self.store.set_client_secret(registered.client_secret);
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| e)?;
        let callback = pending.wait(session.get_authorization_url()).await?;
        session.handle_callback_url(&callback).await?;
        Ok((
            Authorized::Manager(Box::new(session.auth_manager), dpop),
            scopes,
        ))
    }

    /// The grants run here rather than by rmcp: client credentials with a
    /// signing key, JWT bearer (workload identity), enterprise-managed
    /// (ID-JAG). `None` for the others.
    async fn direct_grant(
        &self,
        metadata: &rmcp::transport::auth::AuthorizationMetadata,
        scopes: &[String],
        dpop: Option<&Arc<Dpop>>,
    ) -> Result<Option<Direct>, AuthError> {
        let settings = &self.settings;
        let scope = scopes.join(" ");
        let target = GrantTarget {
            token_endpoint: &metadata.token_endpoint,
            issuer: metadata
                .issuer
                .as_deref()
                .unwrap_or(&metadata.token_endpoint),
            resource: &self.url,
            scope: &scope,
        };
        let http = grants::http_client().map_err(AuthError::InternalError)?;
        let client_id = settings.client_id.as_deref();
        let secret = settings.client_secret.as_ref().map(|s| s.0.as_str());
        let proof = dpop.map(|d| &**d);
        let answer = match settings.grant {
            Grant::ClientCredentials => {
                let (Some(path), Some(client_id)) = (&settings.private_key_file, client_id) else {
                    return Ok(None);
                };
                let key = SigningKey::from_file(path).map_err(AuthError::ClientCredentialsError)?;
                grants::client_credentials_jwt(&http, &target, client_id, &key, proof).await?
            }
            Grant::JwtBearer => {
                let source = settings.platform_token.as_ref().ok_or_else(|| {
                    AuthError::AuthorizationFailed("no platform token configured".to_owned())
                })?;
                let assertion = source.read().map_err(|e| {
                    AuthError::AuthorizationFailed(format!("the platform token: {e}"))
                })?;
                self.remember(&assertion);
                grants::jwt_bearer(&http, &target, &assertion, client_id, secret, proof).await?
            }
            Grant::EnterpriseManaged => {
                let idp = settings.idp.as_ref().ok_or_else(|| {
                    AuthError::AuthorizationFailed("no IdP configured".to_owned())
                })?;
                let id_token = idp.id_token.read().map_err(|e| {
                    AuthError::AuthorizationFailed(format!("the IdP ID token: {e}"))
                })?;
                self.remember(&id_token);
                let idp_target = IdpTarget {
                    token_endpoint: &idp.token_endpoint,
                    client_id: &idp.client_id,
                    client_secret: idp.client_secret.as_ref().map(|s| s.0.as_str()),
                };
                let jag = grants::id_jag(&http, &idp_target, &target, &id_token).await?;
                self.remember(&jag);
                grants::jwt_bearer(&http, &target, &jag, client_id, secret, proof).await?
            }
            _ => return Ok(None),
        };
        Ok(Some(Direct::from_answer(answer, dpop)))
    }
}

/// Whether a token response is of a DPoP-bound token (`token_type: DPoP`).
fn dpop_bound(response: Option<rmcp::transport::auth::OAuthTokenResponse>) -> bool {
    response.is_some_and(|r| {
        oauth2::TokenResponse::token_type(&r)
            .as_ref()
            .eq_ignore_ascii_case("dpop")
    })
}

/// A quoted parameter of a `WWW-Authenticate` challenge.
fn challenge_param(challenge: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let at = challenge.find(&key)? + key.len();
    let rest = &challenge[at..];
    Some(rest[..rest.find('"')?].to_owned())
}

/// The `scope` parameter of a `WWW-Authenticate: Bearer` challenge.
fn challenge_scope(challenge: &str) -> Option<String> {
    challenge_param(challenge, "scope")
}

/// A request's headers plus the DPoP ones.
fn with_extra(
    headers: &HashMap<HeaderName, HeaderValue>,
    extra: Extra,
) -> HashMap<HeaderName, HeaderValue> {
    let mut headers = headers.clone();
    headers.extend(extra);
    headers
}

impl StreamableHttpClient for OAuthHttpClient {
    type Error = reqwest::Error;

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let target = uri.clone();
        self.with_auth("DELETE", &target, |token, extra| {
            let (uri, session_id, headers) = (
                uri.clone(),
                session_id.clone(),
                with_extra(&custom_headers, extra),
            );
            async move {
                self.inner
                    .delete_session(uri, session_id, token, headers)
                    .await
            }
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>, HttpError> {
        let target = uri.clone();
        self.with_auth("GET", &target, |token, extra| {
            let (uri, session_id, last, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                with_extra(&custom_headers, extra),
            );
            async move {
                self.inner
                    .get_stream(uri, session_id, last, token, headers)
                    .await
            }
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>, HttpError> {
        let target = uri.clone();
        self.with_auth("GET", &target, |token, extra| {
            let (uri, session_id, last, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                with_extra(&custom_headers, extra),
            );
            async move {
                self.inner
                    .get_stream_with_max_sse_event_size(
                        uri,
                        session_id,
                        last,
                        token,
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let target = uri.clone();
        self.with_auth("POST", &target, |token, extra| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                with_extra(&custom_headers, extra),
            );
            async move {
                self.inner
                    .post_message(uri, message, session_id, token, headers)
                    .await
            }
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let target = uri.clone();
        self.with_auth("POST", &target, |token, extra| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                with_extra(&custom_headers, extra),
            );
            async move {
                self.inner
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        token,
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let target = uri.clone();
        self.with_auth("POST", &target, |token, extra| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                with_extra(&custom_headers, extra),
            );
            async move {
                self.inner
                    .post_message_with_response_limits(
                        uri, message, session_id, token, headers, limits,
                    )
                    .await
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_of_a_challenge_is_read() {
        let header = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            challenge_scope(header).as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(challenge_scope("Bearer realm=\"x\""), None);
    }
}
