//! The OAuth token cache: one JSON file per server URL in
//! `<state dir>/mcp-oauth/` (`tool_core::state::state_dir`, hidden from the
//! sandbox), folder `0700`, files `0600`, written whole through a temporary
//! file and a rename (never a partial file), never printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::Digest;

/// Largest cache file read back, in bytes (64 KiB: a token response with a
/// few long JWTs fits many times over); a larger one is treated as absent.
pub const MAX_CACHE_FILE_BYTES: u64 = 64 * 1024;

/// Where OAuth tokens of `url` MCP servers are kept between runs: a folder
/// holding one file per server URL (named by the SHA-256 of the URL), each
/// with the client registration (id, secret), the token response (access and
/// refresh token, expiry), the granted scopes and the issuer.
///
/// Tokens are bound to a server URL and its resource (RFC 8707): an entry is
/// only ever used for the URL it was obtained for, and the authorization
/// server's issuer recorded with it must still be the server's issuer.
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

    /// The file of `url`'s entry (which may not exist).
    pub fn path_for(&self, url: &str) -> PathBuf {
        let digest = sha2::Sha256::digest(url.as_bytes());
        let mut name = String::with_capacity(69);
        for byte in digest {
            name.push_str(&format!("{byte:02x}"));
        }
        name.push_str(".json");
        self.dir.join(name)
    }

    /// Whether `url` has an entry.
    pub fn contains(&self, url: &str) -> bool {
        self.path_for(url).is_file()
    }

    /// Deletes `url`'s entry; `Ok(false)` when there was none.
    ///
    /// # Errors
    /// The I/O error of removing the file.
    pub fn remove(&self, url: &str) -> std::io::Result<bool> {
        match std::fs::remove_file(self.path_for(url)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The credential store of `url`'s entry, for rmcp's authorization manager.
    pub(crate) fn store_for(&self, url: &str) -> FileCredentialStore {
        FileCredentialStore {
            path: Some(self.path_for(url)),
            url: url.to_owned(),
            client_secret: Arc::new(Mutex::new(None)),
            memory: Arc::new(Mutex::new(None)),
        }
    }
}

/// What one cache file holds.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    /// The server URL the tokens are for (a check against a hash collision
    /// and a name for people reading the folder).
    url: String,
    /// A confidential client's secret (dynamic registration may return one);
    /// rmcp's stored credentials keep only the client id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    credentials: StoredCredentials,
}

/// rmcp [`CredentialStore`] over one cache file, or over memory only (no
/// cache configured). The client secret of the registration in use rides
/// along (set before the first save).
#[derive(Clone)]
pub(crate) struct FileCredentialStore {
    /// `None`: memory only.
    path: Option<PathBuf>,
    url: String,
    client_secret: Arc<Mutex<Option<String>>>,
    memory: Arc<Mutex<Option<StoredCredentials>>>,
}

impl FileCredentialStore {
    /// A store that keeps the credentials in memory only.
    pub(crate) fn memory(url: &str) -> Self {
        Self {
            path: None,
            url: url.to_owned(),
            client_secret: Arc::new(Mutex::new(None)),
            memory: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether credentials with a token are stored.
    pub(crate) async fn has_credentials(&self) -> bool {
        matches!(self.load().await, Ok(Some(c)) if c.token_response.is_some())
    }

    /// Sets the client secret saved with the next credentials.
    pub(crate) fn set_client_secret(&self, secret: Option<String>) {
        if let Ok(mut slot) = self.client_secret.lock() {
            *slot = secret;
        }
    }

    /// The client secret read with the credentials (or set).
    pub(crate) fn client_secret(&self) -> Option<String> {
        self.client_secret.lock().ok().and_then(|s| s.clone())
    }

    fn read(&self) -> Option<CacheFile> {
        let path = self.path.as_ref()?;
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.is_file() || meta.len() > MAX_CACHE_FILE_BYTES {
            return None;
        }
        let text = std::fs::read(path).ok()?;
        let file: CacheFile = serde_json::from_slice(&text).ok()?;
        (file.url == self.url).then_some(file)
    }

    fn write(&self, path: &Path, file: &CacheFile) -> std::io::Result<()> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let bytes = serde_json::to_vec(file).map_err(std::io::Error::other)?;
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
        if self.path.is_none() {
            return Ok(self.memory.lock().ok().and_then(|m| m.clone()));
        }
        let this = self.clone();
        let file = tokio::task::spawn_blocking(move || this.read())
            .await
            .map_err(store_error)?;
        Ok(file.map(|f| {
            if f.client_secret.is_some() {
                self.set_client_secret(f.client_secret);
            }
            f.credentials
        }))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let Some(path) = self.path.clone() else {
            if let Ok(mut memory) = self.memory.lock() {
                *memory = Some(credentials);
            }
            return Ok(());
        };
        let this = self.clone();
        let file = CacheFile {
            url: self.url.clone(),
            client_secret: self.client_secret(),
            credentials,
        };
        tokio::task::spawn_blocking(move || this.write(&path, &file))
            .await
            .map_err(store_error)?
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        if let Ok(mut memory) = self.memory.lock() {
            *memory = None;
        }
        let Some(path) = &self.path else {
            return Ok(());
        };
        match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.to_owned(), None, vec!["a".to_owned()], Some(1))
    }

    #[tokio::test]
    async fn entries_are_private_whole_and_bound_to_their_url() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = TokenCache::new(dir.path().join("mcp-oauth"));
        let store = cache.store_for("http://127.0.0.1:1/mcp");
        store.set_client_secret(Some("s3cret".to_owned()));
        store.save(credentials("c1")).await.expect("save");
        let path = cache.path_for("http://127.0.0.1:1/mcp");
        let mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Nothing but the entry: the temporary file was renamed.
        assert_eq!(std::fs::read_dir(cache.dir()).expect("dir").count(), 1);

        // Read back by a new store (another run): the secret too.
        let again = cache.store_for("http://127.0.0.1:1/mcp");
        let loaded = again.load().await.expect("load").expect("an entry");
        assert_eq!(loaded.client_id, "c1");
        assert_eq!(again.client_secret().as_deref(), Some("s3cret"));

        // Another URL never sees it, even under the same file name.
        let other = cache.store_for("http://127.0.0.1:2/mcp");
        std::fs::copy(&path, cache.path_for("http://127.0.0.1:2/mcp")).expect("copy");
        assert!(other.load().await.expect("load").is_none());

        // A symbolic link is not followed; a huge file is not read.
        let link = cache.path_for("http://link/mcp");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        assert!(
            cache
                .store_for("http://link/mcp")
                .load()
                .await
                .expect("load")
                .is_none()
        );
        let huge = cache.path_for("http://huge/mcp");
        std::fs::write(&huge, vec![b' '; MAX_CACHE_FILE_BYTES as usize + 1]).expect("write");
        assert!(
            cache
                .store_for("http://huge/mcp")
                .load()
                .await
                .expect("load")
                .is_none()
        );

        again.clear().await.expect("clear");
        assert!(!path.exists());
        assert!(!cache.remove("http://127.0.0.1:1/mcp").expect("remove"));
    }

    #[tokio::test]
    async fn a_memory_store_keeps_nothing_on_disk() {
        let store = FileCredentialStore::memory("http://x/mcp");
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
