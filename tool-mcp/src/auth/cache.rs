//! The OAuth token cache: one JSON file per server URL *and client* in
//! `<state dir>/mcp-oauth/` (`tool_core::state::state_dir`, hidden from the
//! sandbox), folder `0700`, files `0600`, written whole through a temporary
//! file and a rename (never a partial file), never printed.
//!
//! # What a file holds, and what it never holds
//! An entry is found by its [`CacheKey`]: the server URL and the client that
//! obtained the tokens (grant, client id or registration, scopes, RFC 8707
//! resource, and a digest of the credential it authenticates with), so two
//! `.mcp.json` entries for one URL with different clients or credentials (or
//! a broken one) never use each other's tokens. A file keeps the client id,
//! the token response (access token, expiry, and the refresh token of an
//! authorization-code grant), the granted scopes and the issuer. It never
//! keeps a client secret (the configuration gives it again at every run; a
//! secret a dynamic registration returned lives in memory only), a private
//! key, an assertion or an ID token, nor the refresh token of a grant that
//! runs again without a person (client credentials).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::Digest;

use super::OAuth;
use super::grants::TokenSource;

/// Largest cache file read back, in bytes (64 KiB: a token response with a
/// few long JWTs fits many times over); a larger one is treated as absent.
pub const MAX_CACHE_FILE_BYTES: u64 = 64 * 1024;

/// Which cache entry a connection uses: the server URL and the identity of
/// the client that gets tokens for it. Made by [`TokenCache::key`] (or
/// [`CacheKey::new`] for settings already resolved).
///
/// Two keys are equal only when the URL, the RFC 8707 resource, the grant,
/// the client (configured id, client ID metadata document URL, or dynamic
/// registration under a client name), the configured scopes (as a set) and
/// the credential (client secret, signing key file, platform token source,
/// enterprise IdP) are all the same. The credential enters only as a
/// SHA-256 digest, mixed into the file name; [`identity`](Self::identity)
/// names the rest and never a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    url: String,
    identity: String,
    digest: [u8; 32],
}

impl CacheKey {
    /// The key of the client `settings` describe (their `${VAR}`s already
    /// resolved) for the server at `url`.
    pub fn new(url: &str, settings: &OAuth) -> Self {
        let mut scopes: Vec<&str> = settings.scopes.iter().map(String::as_str).collect();
        scopes.sort_unstable();
        scopes.dedup();
        let client = match (&settings.client_id, &settings.client_metadata_url) {
            (Some(id), _) => format!("id:{id}"),
            (None, Some(url)) => format!("metadata-document:{url}"),
            (None, None) => format!(
                "registered:{}",
                settings.client_name.as_deref().unwrap_or("")
            ),
        };
        let identity = format!(
            "resource={url}; grant={}; client={client}; scopes={}",
            settings.grant.as_str(),
            scopes.join(" ")
        );
        // The credential: lengths before values, so that no two different
        // settings give the same bytes.
        let mut hasher = sha2::Sha256::new();
        let mut part = |label: &str, value: &[u8]| {
            hasher.update(label.as_bytes());
            hasher.update((value.len() as u64).to_le_bytes());
            hasher.update(value);
        };
        part("agent-tools mcp-oauth cache v2", b"");
        part("url", url.as_bytes());
        part("identity", identity.as_bytes());
        if let Some(secret) = &settings.client_secret {
            part("client_secret", secret.0.as_bytes());
        }
        if let Some(path) = &settings.private_key_file {
            part("private_key_file", path.as_os_str().as_encoded_bytes());
        }
        if let Some(source) = &settings.platform_token {
            part("platform_token", source_text(source).as_bytes());
        }
        if let Some(idp) = &settings.idp {
            part("idp.token_endpoint", idp.token_endpoint.as_bytes());
            part("idp.client_id", idp.client_id.as_bytes());
            part("idp.id_token", source_text(&idp.id_token).as_bytes());
            if let Some(secret) = &idp.client_secret {
                part("idp.client_secret", secret.0.as_bytes());
            }
        }
        Self {
            url: url.to_owned(),
            identity,
            digest: hasher.finalize().into(),
        }
    }

    /// The server URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The client's identity without its credential, for people:
    /// `resource=URL; grant=GRANT; client=id:ID; scopes=A B`.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    fn file_name(&self) -> String {
        hex(&self.digest) + ".json"
    }
}

/// Where a token source reads from (a path or a variable name; never the token).
fn source_text(source: &TokenSource) -> String {
    match source {
        TokenSource::File(path) => format!("file:{}", path.display()),
        TokenSource::Env(var) => format!("env:{var}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Where OAuth tokens of `url` MCP servers are kept between runs: a folder
/// holding one file per [`CacheKey`] (server URL and client), named by a
/// SHA-256 digest of the key. See the module docs for what a file holds.
///
/// Tokens are bound to a server URL, its resource (RFC 8707) and the
/// client that obtained them: an entry is only ever used for the key it was
/// written under, and the authorization server's issuer recorded with it
/// must still be the server's issuer.
#[derive(Debug, Clone)]
pub struct TokenCache {
    dir: PathBuf,
}

impl TokenCache {
    /// The cache in `dir` (created `0700` on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The per-user cache: `<state dir>/mcp-oauth` (`$XDG_STATE_HOME/agent-tools/mcp-oauth`
    /// or `~/.local/state/agent-tools/mcp-oauth`); `None` when there is no
    /// state folder (neither variable is an absolute path).
    pub fn user() -> Option<Self> {
        tool_core::state::state_dir().map(|d| Self::new(d.join("mcp-oauth")))
    }

    /// The folder of the cache files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of the client `settings` describe for the server at `url`,
    /// their `${VAR}`s resolved from this process's environment as a
    /// connection resolves them.
    ///
    /// # Errors
    /// A message naming the key and the variable when a variable is unset.
    pub fn key(url: &str, settings: &OAuth) -> Result<CacheKey, String> {
        let resolved = settings.resolved(|name| std::env::var(name).ok())?;
        Ok(CacheKey::new(url, &resolved))
    }

    /// The file of `key`'s entry (which may not exist).
    pub fn path_for(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(key.file_name())
    }

    /// The file an older version kept for `url` (named by the SHA-256 of
    /// the URL alone, and possibly holding a client secret in clear).
    fn legacy_path(&self, url: &str) -> PathBuf {
        self.dir
            .join(hex(&sha2::Sha256::digest(url.as_bytes())) + ".json")
    }

    /// Whether `key` has an entry.
    pub fn contains(&self, key: &CacheKey) -> bool {
        self.path_for(key).is_file()
    }

    /// Deletes `key`'s entry (and the file an older version kept for its
    /// URL, if any); `Ok(false)` when there was none.
    ///
    /// # Errors
    /// The I/O error of removing a file.
    pub fn remove(&self, key: &CacheKey) -> std::io::Result<bool> {
        let legacy = remove_file(&self.legacy_path(key.url()))?;
        Ok(remove_file(&self.path_for(key))? || legacy)
    }

    /// The credential store of `key`'s entry, for rmcp's authorization
    /// manager; `keep_refresh`: whether a refresh token is written (not for
    /// grants that run again without a person).
    pub(crate) fn store_for(&self, key: &CacheKey, keep_refresh: bool) -> FileCredentialStore {
        FileCredentialStore {
            file: Some(Arc::new(EntryFile {
                path: self.path_for(key),
                legacy: self.legacy_path(key.url()),
                url: key.url.clone(),
                identity: key.identity.clone(),
                keep_refresh,
            })),
            client_secret: Arc::new(Mutex::new(None)),
            memory: Arc::new(Mutex::new(None)),
        }
    }
}

/// Removes `path`; `Ok(false)` when it did not exist.
fn remove_file(path: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// What one cache file holds (see the module docs).
#[derive(Serialize, Deserialize)]
struct CacheFile {
    /// The server URL the tokens are for (a check against a hash collision
    /// and a name for people reading the folder).
    url: String,
    /// [`CacheKey::identity`]: the client, for the same check and people.
    identity: String,
    credentials: StoredCredentials,
}

/// The file behind a [`FileCredentialStore`].
struct EntryFile {
    path: PathBuf,
    /// An older version's file for the same URL: deleted on first use.
    legacy: PathBuf,
    url: String,
    identity: String,
    keep_refresh: bool,
}

/// rmcp [`CredentialStore`] over one cache file, or over memory only (no
/// cache configured). The client secret of a registration made in this
/// process rides along in memory and is never written.
#[derive(Clone)]
pub(crate) struct FileCredentialStore {
    /// `None`: memory only.
    file: Option<Arc<EntryFile>>,
    client_secret: Arc<Mutex<Option<String>>>,
    memory: Arc<Mutex<Option<StoredCredentials>>>,
}

impl FileCredentialStore {
    /// A store that keeps the credentials in memory only.
    pub(crate) fn memory() -> Self {
        Self {
            file: None,
            client_secret: Arc::new(Mutex::new(None)),
            memory: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether credentials with a token are stored.
    pub(crate) async fn has_credentials(&self) -> bool {
        matches!(self.load().await, Ok(Some(c)) if c.token_response.is_some())
    }

    /// Sets the client secret of the registration in use (memory only).
    pub(crate) fn set_client_secret(&self, secret: Option<String>) {
        if let Ok(mut slot) = self.client_secret.lock() {
            *slot = secret;
        }
    }

    /// The client secret set in this process, if any.
    pub(crate) fn client_secret(&self) -> Option<String> {
        self.client_secret.lock().ok().and_then(|s| s.clone())
    }
}

impl EntryFile {
    fn read(&self) -> Option<CacheFile> {
        // An older version's file may hold a client secret in clear, and
        // names no client: it goes (the person logs in again).
        let _ = std::fs::remove_file(&self.legacy);
        let meta = std::fs::symlink_metadata(&self.path).ok()?;
        if !meta.is_file() || meta.len() > MAX_CACHE_FILE_BYTES {
            return None;
        }
        let text = std::fs::read(&self.path).ok()?;
        let file: CacheFile = serde_json::from_slice(&text).ok()?;
        (file.url == self.url && file.identity == self.identity).then_some(file)
    }

    fn write(&self, mut credentials: StoredCredentials) -> std::io::Result<()> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        if !self.keep_refresh
            && let Some(response) = &mut credentials.token_response
        {
            response.set_refresh_token(None);
        }
        let file = CacheFile {
            url: self.url.clone(),
            identity: self.identity.clone(),
            credentials,
        };
        let path = &self.path;
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce).map_err(|e| std::io::Error::other(e.to_string()))?;
        let tmp = dir.join(format!(
            ".{}.{:016x}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
            u64::from_le_bytes(nonce)
        ));
        let written = (|| {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            out.write_all(&bytes)?;
            out.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("the token cache: {e}"))
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(file) = self.file.clone() else {
            return Ok(self.memory.lock().ok().and_then(|m| m.clone()));
        };
        let read = tokio::task::spawn_blocking(move || file.read())
            .await
            .map_err(store_error)?;
        Ok(read.map(|f| f.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let Some(file) = self.file.clone() else {
            if let Ok(mut memory) = self.memory.lock() {
                *memory = Some(credentials);
            }
            return Ok(());
        };
        tokio::task::spawn_blocking(move || file.write(credentials))
            .await
            .map_err(store_error)?
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        if let Ok(mut memory) = self.memory.lock() {
            *memory = None;
        }
        let Some(file) = &self.file else {
            return Ok(());
        };
        remove_file(&file.path).map(|_| ()).map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Grant;
    use super::*;

    fn credentials(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.to_owned(), None, vec!["a".to_owned()], Some(1))
    }

    fn key(url: &str, settings: &OAuth) -> CacheKey {
        CacheKey::new(url, settings)
    }

    #[tokio::test]
    async fn entries_are_private_whole_and_bound_to_their_key() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = TokenCache::new(dir.path().join("mcp-oauth"));
        let one = key("http://127.0.0.1:1/mcp", &OAuth::new());
        let store = cache.store_for(&one, true);
        store.set_client_secret(Some("s3cret-from-a-registration".to_owned()));
        store.save(credentials("c1")).await.expect("save");
        let path = cache.path_for(&one);
        let mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Nothing but the entry: the temporary file was renamed.
        assert_eq!(std::fs::read_dir(cache.dir()).expect("dir").count(), 1);
        // The registration's secret stays in memory.
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains("s3cret"), "{text}");

        // Read back by a new store (another run): the client, no secret.
        let again = cache.store_for(&one, true);
        let loaded = again.load().await.expect("load").expect("an entry");
        assert_eq!(loaded.client_id, "c1");
        assert_eq!(again.client_secret(), None);

        // Another URL never sees it, even under the same file name.
        let two = key("http://127.0.0.1:2/mcp", &OAuth::new());
        std::fs::copy(&path, cache.path_for(&two)).expect("copy");
        assert!(
            cache
                .store_for(&two, true)
                .load()
                .await
                .expect("load")
                .is_none()
        );

        // A symbolic link is not followed; a huge file is not read.
        let link = key("http://link/mcp", &OAuth::new());
        std::os::unix::fs::symlink(&path, cache.path_for(&link)).expect("symlink");
        assert!(
            cache
                .store_for(&link, true)
                .load()
                .await
                .expect("load")
                .is_none()
        );
        let huge = key("http://huge/mcp", &OAuth::new());
        std::fs::write(
            cache.path_for(&huge),
            vec![b' '; MAX_CACHE_FILE_BYTES as usize + 1],
        )
        .expect("write");
        assert!(
            cache
                .store_for(&huge, true)
                .load()
                .await
                .expect("load")
                .is_none()
        );

        again.clear().await.expect("clear");
        assert!(!path.exists());
        assert!(!cache.remove(&one).expect("remove"));
    }

    #[test]
    fn a_key_names_the_client_and_hides_its_credential() {
        let url = "https://mcp.example/mcp";
        let alpha = OAuth::new()
            .with_client_id("alpha")
            .with_client_secret("alpha-secret-value")
            .with_scopes(["b", "a"]);
        let same = OAuth::new()
            .with_client_id("alpha")
            .with_client_secret("alpha-secret-value")
            .with_scopes(["a", "b", "a"]);
        assert_eq!(key(url, &alpha), key(url, &same), "scopes are a set");
        assert_eq!(
            key(url, &alpha).identity(),
            "resource=https://mcp.example/mcp; grant=authorization_code; client=id:alpha; scopes=a b"
        );
        let others = [
            OAuth::new(),
            OAuth::new().with_client_id("beta"),
            OAuth::new()
                .with_client_id("alpha")
                .with_client_secret("another-secret")
                .with_scopes(["a", "b"]),
            OAuth::new()
                .with_client_id("alpha")
                .with_client_secret("alpha-secret-value")
                .with_scopes(["a"]),
            OAuth::new()
                .with_client_id("alpha")
                .with_client_secret("alpha-secret-value")
                .with_scopes(["a", "b"])
                .with_grant(Grant::ClientCredentials),
        ];
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = TokenCache::new(dir.path());
        for other in &others {
            assert_ne!(key(url, &alpha), key(url, other), "{other:?}");
            assert_ne!(
                cache.path_for(&key(url, &alpha)),
                cache.path_for(&key(url, other))
            );
            assert!(!key(url, other).identity().contains("secret"));
        }
        assert_ne!(
            key(url, &alpha),
            key("https://mcp.example/other", &alpha),
            "the resource"
        );
    }

    #[tokio::test]
    async fn a_grant_without_a_person_keeps_no_refresh_token() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = TokenCache::new(dir.path());
        let machine = key(
            "http://x/mcp",
            &OAuth::new()
                .with_client_id("m")
                .with_client_secret("machine-secret")
                .with_grant(Grant::ClientCredentials),
        );
        let response: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(
            serde_json::json!({"access_token": "acc-123456", "token_type": "Bearer",
                               "refresh_token": "ref-123456", "expires_in": 60}),
        )
        .expect("token response");
        let with_token = StoredCredentials::new("m".to_owned(), Some(response), vec![], Some(1));
        cache
            .store_for(&machine, false)
            .save(with_token.clone())
            .await
            .expect("save");
        let text = std::fs::read_to_string(cache.path_for(&machine)).expect("read");
        assert!(
            text.contains("acc-123456") && !text.contains("ref-123456"),
            "{text}"
        );
        assert!(!text.contains("machine-secret"), "{text}");

        let person = key("http://x/mcp", &OAuth::new());
        cache
            .store_for(&person, true)
            .save(with_token)
            .await
            .expect("save");
        let text = std::fs::read_to_string(cache.path_for(&person)).expect("read");
        assert!(text.contains("ref-123456"), "{text}");
    }

    #[tokio::test]
    async fn an_older_versions_file_is_deleted_unread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = TokenCache::new(dir.path());
        let url = "http://old/mcp";
        let legacy = cache.legacy_path(url);
        let old = serde_json::json!({"url": url, "client_secret": "old-cleartext-secret",
            "credentials": {"client_id": "c", "token_response": null}});
        std::fs::write(&legacy, old.to_string()).expect("write");
        let key = key(url, &OAuth::new());
        assert!(
            cache
                .store_for(&key, true)
                .load()
                .await
                .expect("load")
                .is_none()
        );
        assert!(!legacy.exists());
    }

    #[tokio::test]
    async fn a_memory_store_keeps_nothing_on_disk() {
        let store = FileCredentialStore::memory();
        assert!(!store.has_credentials().await);
        store.save(credentials("c")).await.expect("save");
        assert_eq!(
            store.load().await.expect("load").map(|c| c.client_id),
            Some("c".to_owned())
        );
        store.clear().await.expect("clear");
        assert!(store.load().await.expect("load").is_none());
    }
}
