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

use super::cache::FileCredentialStore;
use super::{Grant, MAX_AUTHORIZATIONS, MAX_STEP_UPS, OAuth};

type HttpError = StreamableHttpError<reqwest::Error>;

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
        let store = match &settings.cache {
            Some(cache) => cache.store_for(url),
            None => FileCredentialStore::memory(url),
        };
        Ok(Self {
            inner,
            session: Arc::new(Session {
                url: url.to_owned(),
                settings,
                store,
                state: tokio::sync::Mutex::new(State::default()),
            }),
        })
    }

    /// Runs `call` with the current token, reacting to challenges.
    async fn with_auth<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let (mut token, mut generation) = self.session.token().await.map_err(HttpError::Auth)?;
        let mut unauthorized_retried = false;
        loop {
            match call(token.clone()).await {
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
}

/// One server's OAuth state, shared by the transport's requests.
struct Session {
    url: String,
    settings: OAuth,
    store: FileCredentialStore,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    manager: Option<AuthorizationManager>,
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
    /// The token to send now (`None`: none yet) and its generation.
    async fn token(&self) -> Result<(Option<String>, u64), AuthError> {
        let mut state = self.state.lock().await;
        if state.manager.is_none() && !state.loaded {
            state.loaded = true;
            if self.store.has_credentials().await {
                let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
                manager.set_credential_store(self.store.clone());
                if manager.initialize_from_store().await? {
                    if let Some(secret) = self.store.client_secret() {
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
        let Some(manager) = &state.manager else {
            return Ok((None, generation));
        };
        match manager.get_access_token().await {
            Ok(token) => Ok((Some(token), generation)),
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
    ) -> Result<(Option<String>, u64), AuthError> {
        let mut state = self.state.lock().await;
        if state.generation != seen
            && let Some(manager) = &state.manager
        {
            return Ok((Some(manager.get_access_token().await?), state.generation));
        }
        if sent_token
            && !step_up
            && let Some(manager) = &state.manager
        {
            match manager.refresh_token().await {
                Ok(response) => {
                    state.generation += 1;
                    let token = oauth2::TokenResponse::access_token(&response)
                        .secret()
                        .to_owned();
                    return Ok((Some(token), state.generation));
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
        let (manager, requested) = self.authorize(challenge, scopes).await?;
        let token = manager.get_access_token().await?;
        state.manager = Some(manager);
        state.requested = requested;
        state.generation += 1;
        Ok((Some(token), state.generation))
    }

    /// Discovery from `challenge`, then a grant; returns the manager holding
    /// the new token and the scopes asked for.
    async fn authorize(
        &self,
        challenge: &str,
        scopes: Vec<String>,
    ) -> Result<(AuthorizationManager, Vec<String>), AuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.store.clone());
        let metadata = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await?
            .metadata;
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
            return Ok((manager, scopes));
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
        Ok((session.auth_manager, scopes))
    }
}

/// The `scope` parameter of a `WWW-Authenticate: Bearer` challenge.
fn challenge_scope(challenge: &str) -> Option<String> {
    let at = challenge.find("scope=\"")? + "scope=\"".len();
    let rest = &challenge[at..];
    let end = rest.find('"')?;
    Some(rest[..end].to_owned())
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
        self.with_auth(|token| {
            let (uri, session_id, headers) =
                (uri.clone(), session_id.clone(), custom_headers.clone());
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
        self.with_auth(|token| {
            let (uri, session_id, last, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
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
        self.with_auth(|token| {
            let (uri, session_id, last, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
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
        self.with_auth(|token| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
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
        self.with_auth(|token| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
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
        self.with_auth(|token| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
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
