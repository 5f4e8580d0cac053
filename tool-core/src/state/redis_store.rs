//! [`RedisStore`]: the [`StateStore`] backend for deployments that share
//! state between processes on more than one machine, on a Redis 7 or
//! Valkey server (feature `redis`).
//!
//! # Dependency
//! The [`redis`](https://docs.rs/redis) crate (redis-rs), 0.32, with only
//! its `script` feature (Lua scripts through `EVALSHA`, sent again with
//! `EVAL` when the server does not know them): the maintained Rust client
//! of the Redis and Valkey projects' protocol, with a synchronous
//! connection that fits the synchronous [`StateStore`] trait without a
//! second runtime. `fred` was the alternative; it is async only, so every
//! call would need a runtime hop. Feature `redis-tls` adds `rediss://`
//! (TLS through rustls, the platform's root certificates).
//!
//! # Layout
//! One Redis hash per [`StateKey`], named
//! `<prefix>:<space>:<owner bytes>:<owner>:<workspace>` (the owner's length
//! first, so no owner and workspace pair can be read as another). The
//! prefix (default [`DEFAULT_PREFIX`], `--state-prefix` in `tool serve`)
//! keeps deployments that share one server apart. Each field of the hash
//! holds `<expiry ms>|<value>`, the expiry in milliseconds since the Unix
//! epoch by the server's clock (`TIME`), so the machines sharing a store
//! need not agree on the time; the hash itself expires one lifetime after
//! its newest write (`PEXPIRE`), so an abandoned trace leaves nothing
//! behind.
//!
//! # Atomicity
//! Every write (`put`, `delete`, `compare_and_set`) is one Lua script: the
//! comparison, the bound check and the write happen inside the server with
//! no other command in between, so concurrent writers in any process or
//! machine never lose an update. A read is one script too (it filters
//! expired fields by the server's clock).
//!
//! # When the server is unreachable
//! Every operation fails with [`StateErrorKind::Io`] naming the server
//! (password masked) and what to do; nothing is kept elsewhere in its
//! place. Connections are opened lazily with a 5 s connect timeout and
//! 5 s read and write timeouts, and up to 8 idle ones are kept for reuse.
//!
//! # Credentials
//! The URL may carry an ACL user and password (`redis://user:pass@host/`);
//! the password is never part of an error message or of the store's
//! `Debug` output ([`RedisStore::display_url`] shows `***`).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::{DEFAULT_LIFETIME, StateError, StateErrorKind, StateKey, StateStore};

/// The key prefix when none is given: `agent-tools`.
pub const DEFAULT_PREFIX: &str = "agent-tools";

/// Longest key prefix, in bytes (64).
pub const MAX_PREFIX_BYTES: usize = 64;

/// How long opening a connection, or one reply, may take: 5 s.
pub const NETWORK_TIMEOUT: Duration = Duration::from_secs(5);

/// Most idle connections kept for reuse (8).
const IDLE_CONNECTIONS: usize = 8;

/// The bounds of a [`RedisStore`], per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisStoreLimits {
    /// Most live fields in one key's hash (default 65 536).
    pub max_entries: usize,
    /// Longest field, in bytes (default 4096: a Linux path).
    pub max_field_bytes: usize,
    /// Longest value, in bytes (default 64 KiB).
    pub max_value_bytes: usize,
}

impl Default for RedisStoreLimits {
    fn default() -> Self {
        Self {
            max_entries: 65_536,
            max_field_bytes: 4096,
            max_value_bytes: 64 * 1024,
        }
    }
}

impl RedisStoreLimits {
    /// The defaults with at most `max_entries` live fields per key.
    pub fn new(max_entries: usize) -> Self {
        Self {
            max_entries,
            ..Self::default()
        }
    }
}

/// Reads one field: `KEYS[1]` the hash, `ARGV[1]` the field. Returns the
/// value, or nil when absent or expired.
const GET_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local sep = string.find(raw, '|', 1, true)
if not sep or tonumber(string.sub(raw, 1, sep - 1)) <= now then return false end
return string.sub(raw, sep + 1)
";

/// Every live field: `KEYS[1]` the hash. Returns field, value, field, ...
const ENTRIES_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local raw = all[i + 1]
  local sep = string.find(raw, '|', 1, true)
  if sep and tonumber(string.sub(raw, 1, sep - 1)) > now then
    out[#out + 1] = all[i]
    out[#out + 1] = string.sub(raw, sep + 1)
  end
end
return out
";

/// Every write. `KEYS[1]` the hash; `ARGV`: field, mode (`set` or `cas`),
/// lifetime in ms, most entries, has-expected (`0`/`1`), expected,
/// has-new (`0`/`1`), new. Returns 1 when written, 0 when the comparison
/// failed, -1 when the hash is full.
const WRITE_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key, field = KEYS[1], ARGV[1]
local lifetime, max_entries = tonumber(ARGV[3]), tonumber(ARGV[4])
local function live(raw)
  if not raw then return nil end
  local sep = string.find(raw, '|', 1, true)
  if not sep or tonumber(string.sub(raw, 1, sep - 1)) <= now then return nil end
  return string.sub(raw, sep + 1)
end
local current = live(redis.call('HGET', key, field))
if ARGV[2] == 'cas' then
  if ARGV[5] == '1' then
    if current ~= ARGV[6] then return 0 end
  elseif current ~= nil then
    return 0
  end
end
if ARGV[7] ~= '1' then
  redis.call('HDEL', key, field)
  return 1
end
if current == nil and redis.call('HLEN', key) >= max_entries then
  local all = redis.call('HGETALL', key)
  for i = 1, #all, 2 do
    if live(all[i + 1]) == nil then redis.call('HDEL', key, all[i]) end
  end
  if redis.call('HLEN', key) >= max_entries then return -1 end
end
redis.call('HSET', key, field, tostring(now + lifetime) .. '|' .. ARGV[8])
redis.call('PEXPIRE', key, lifetime)
return 1
";

/// A [`StateStore`] on a Redis 7 or Valkey server (see the
/// [module docs](self) for the layout, atomicity and failure behaviour).
///
/// ```no_run
/// use tool_core::state::{RedisStore, StateKey, StateStore};
///
/// let store = RedisStore::open("redis://127.0.0.1:6379/0")?.with_prefix("team-a")?;
/// store.ping()?;
/// let key = StateKey::new("ledger", "trace-1", "/work/project")?;
/// store.put(&key, "/work/project/a.txt", "v1")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisStore {
    client: redis::Client,
    display_url: String,
    prefix: String,
    lifetime: Duration,
    limits: RedisStoreLimits,
    idle: Mutex<Vec<redis::Connection>>,
    get: redis::Script,
    entries: redis::Script,
    write: redis::Script,
}

impl std::fmt::Debug for RedisStore {
    /// The masked URL, prefix, lifetime and limits; never the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.display_url)
            .field("prefix", &self.prefix)
            .field("lifetime", &self.lifetime)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// A store on the server at `url`: `redis://[user[:password]@]host[:port][/db]`,
    /// or `rediss://` (TLS; needs feature `redis-tls`). Nothing is
    /// connected yet: the first operation (or [`ping`](Self::ping))
    /// connects. Prefix [`DEFAULT_PREFIX`], lifetime
    /// [`DEFAULT_LIFETIME`], default [`RedisStoreLimits`].
    ///
    /// # Errors
    /// [`StateErrorKind::Invalid`] when the URL is not a Redis URL (the
    /// message shows it with its password masked).
    pub fn open(url: &str) -> Result<Self, StateError> {
        let display_url = mask_password(url);
        let scheme = url.split("://").next().unwrap_or_default();
        if scheme == "rediss" && !cfg!(feature = "redis-tls") {
            return Err(StateError::new(
                StateErrorKind::Invalid,
                format!(
                    "the state store URL {display_url} asks for TLS (rediss://), and this build \
                     has no TLS for Redis: build with feature `redis-tls`, or use redis:// on a \
                     trusted network"
                ),
            ));
        }
        if scheme != "redis" && scheme != "rediss" {
            return Err(StateError::new(
                StateErrorKind::Invalid,
                format!(
                    "the state store URL {display_url} is not a Redis URL: write \
                     redis://[user:password@]host[:port][/db] or rediss://..."
                ),
            ));
        }
        let client = redis::Client::open(url).map_err(|e| {
            StateError::new(
                StateErrorKind::Invalid,
                format!(
                    "the state store URL {display_url} cannot be used ({}): write \
                     redis://[user:password@]host[:port][/db]",
                    e.kind_text()
                ),
            )
        })?;
        Ok(Self {
            client,
            display_url,
            prefix: DEFAULT_PREFIX.to_owned(),
            lifetime: DEFAULT_LIFETIME,
            limits: RedisStoreLimits::default(),
            idle: Mutex::new(Vec::new()),
            get: redis::Script::new(GET_SCRIPT),
            entries: redis::Script::new(ENTRIES_SCRIPT),
            write: redis::Script::new(WRITE_SCRIPT),
        })
    }

    /// Keys start with `prefix` (1 to [`MAX_PREFIX_BYTES`] of ASCII
    /// letters, digits, `-`, `_` and `.`): one per deployment sharing a server.
    ///
    /// # Errors
    /// [`StateErrorKind::Invalid`] when the prefix breaks that rule.
    pub fn with_prefix(mut self, prefix: &str) -> Result<Self, StateError> {
        if prefix.is_empty()
            || prefix.len() > MAX_PREFIX_BYTES
            || !prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        {
            return Err(StateError::new(
                StateErrorKind::Invalid,
                format!(
                    "a state prefix is 1 to {MAX_PREFIX_BYTES} ASCII letters, digits, `-`, `_` \
                     or `.`; this one is {} bytes with other characters or none",
                    prefix.len()
                ),
            ));
        }
        prefix.clone_into(&mut self.prefix);
        Ok(self)
    }

    /// Values live for `lifetime` after their last write (at least 1 ms).
    #[must_use]
    pub fn with_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime.max(Duration::from_millis(1));
        self
    }

    /// Other bounds per key.
    #[must_use]
    pub fn with_limits(mut self, limits: RedisStoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The server's URL with its password replaced by `***`.
    pub fn display_url(&self) -> &str {
        &self.display_url
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The Redis key of `key`'s hash:
    /// `<prefix>:<space>:<owner bytes>:<owner>:<workspace>`.
    pub fn redis_key(&self, key: &StateKey) -> String {
        format!(
            "{}:{}:{}:{}:{}",
            self.prefix,
            key.space(),
            key.owner().len(),
            key.owner(),
            key.workspace().display()
        )
    }

    /// Checks that the server answers (`PING`).
    ///
    /// # Errors
    /// [`StateErrorKind::Io`] when it cannot be reached or refuses the
    /// credentials.
    pub fn ping(&self) -> Result<(), StateError> {
        self.with_connection(|c| redis::cmd("PING").query::<String>(c).map(|_| ()))
    }

    fn with_connection<T>(
        &self,
        op: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StateError> {
        let pooled = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => self.connect()?,
        };
        match op(&mut conn) {
            Ok(v) => {
                let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                if idle.len() < IDLE_CONNECTIONS {
                    idle.push(conn);
                }
                Ok(v)
            }
            Err(e) => Err(self.failure(&e)),
        }
    }

    fn connect(&self) -> Result<redis::Connection, StateError> {
        let conn = self
            .client
            .get_connection_with_timeout(NETWORK_TIMEOUT)
            .map_err(|e| self.failure(&e))?;
        conn.set_read_timeout(Some(NETWORK_TIMEOUT))
            .and_then(|()| conn.set_write_timeout(Some(NETWORK_TIMEOUT)))
            .map_err(|e| self.failure(&e))?;
        Ok(conn)
    }

    fn failure(&self, e: &redis::RedisError) -> StateError {
        let url = &self.display_url;
        let detail = mask_in(&e.to_string(), &self.client);
        if e.is_io_error()
            || e.is_timeout()
            || e.is_connection_refusal()
            || e.is_connection_dropped()
        {
            StateError::new(
                StateErrorKind::Io,
                format!(
                    "the state store at {url} cannot be reached ({detail}); state is not \
                     changed or kept anywhere else until it answers: start the server or fix \
                     --state"
                ),
            )
        } else if matches!(
            e.kind(),
            redis::ErrorKind::AuthenticationFailed | redis::ErrorKind::ClientError
        ) || detail.contains("NOAUTH")
            || detail.contains("WRONGPASS")
            || detail.contains("NOPERM")
        {
            StateError::new(
                StateErrorKind::Io,
                format!(
                    "the state store at {url} refused this client ({detail}): check the ACL \
                     user and password in --state, and that the user may run EVAL/EVALSHA, \
                     HGET, HSET, HDEL, HLEN, HGETALL and PEXPIRE on the prefix's keys"
                ),
            )
        } else {
            StateError::new(
                StateErrorKind::Corrupt,
                format!(
                    "the state store at {url} answered with an error ({detail}): another \
                     program may use the same keys; give this deployment its own \
                     --state-prefix"
                ),
            )
        }
    }

    fn check_field(&self, field: &str, value: Option<&str>) -> Result<(), StateError> {
        if field.is_empty() || field.len() > self.limits.max_field_bytes {
            return Err(StateError::new(
                StateErrorKind::Invalid,
                format!(
                    "a state field is 1 to {} bytes; this one is {} bytes",
                    self.limits.max_field_bytes,
                    field.len()
                ),
            ));
        }
        if let Some(v) = value
            && v.len() > self.limits.max_value_bytes
        {
            return Err(StateError::new(
                StateErrorKind::Invalid,
                format!(
                    "a state value is at most {} bytes; this one is {} bytes",
                    self.limits.max_value_bytes,
                    v.len()
                ),
            ));
        }
        Ok(())
    }

    fn write(
        &self,
        key: &StateKey,
        field: &str,
        expected: Option<Option<&str>>,
        new: Option<&str>,
    ) -> Result<bool, StateError> {
        self.check_field(field, new)?;
        if let Some(Some(e)) = expected {
            self.check_field(field, Some(e))?;
        }
        let lifetime_ms = u64::try_from(self.lifetime.as_millis()).unwrap_or(u64::MAX);
        let redis_key = self.redis_key(key);
        let outcome: i64 = self.with_connection(|c| {
            let mut call = self.write.key(&redis_key);
            call.arg(field)
                .arg(if expected.is_some() { "cas" } else { "set" })
                .arg(lifetime_ms)
                .arg(self.limits.max_entries)
                .arg(if matches!(expected, Some(Some(_))) {
                    "1"
                } else {
                    "0"
                })
                .arg(expected.flatten().unwrap_or_default())
                .arg(if new.is_some() { "1" } else { "0" })
                .arg(new.unwrap_or_default());
            call.invoke(c)
        })?;
        match outcome {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(StateError::new(
                StateErrorKind::Full,
                format!(
                    "the state of {} `{}` holds {} live entries, the most a key may hold; \
                     nothing was forgotten to make room: start a new trace",
                    key.space(),
                    key.owner(),
                    self.limits.max_entries
                ),
            )),
        }
    }
}

impl StateStore for RedisStore {
    fn ping(&self) -> Result<(), StateError> {
        RedisStore::ping(self)
    }

    fn get(&self, key: &StateKey, field: &str) -> Result<Option<String>, StateError> {
        self.check_field(field, None)?;
        let redis_key = self.redis_key(key);
        self.with_connection(|c| self.get.key(&redis_key).arg(field).invoke(c))
    }

    fn put(&self, key: &StateKey, field: &str, value: &str) -> Result<(), StateError> {
        self.write(key, field, None, Some(value)).map(|_| ())
    }

    fn delete(&self, key: &StateKey, field: &str) -> Result<(), StateError> {
        self.write(key, field, None, None).map(|_| ())
    }

    fn compare_and_set(
        &self,
        key: &StateKey,
        field: &str,
        expected: Option<&str>,
        new: Option<&str>,
    ) -> Result<bool, StateError> {
        self.write(key, field, Some(expected), new)
    }

    fn entries(&self, key: &StateKey) -> Result<Vec<(String, String)>, StateError> {
        let redis_key = self.redis_key(key);
        let flat: Vec<String> = self.with_connection(|c| self.entries.key(&redis_key).invoke(c))?;
        let mut out: Vec<(String, String)> = flat
            .chunks_exact(2)
            .map(|pair| (pair[0].clone(), pair[1].clone()))
            .collect();
        out.sort();
        Ok(out)
    }

    fn lifetime(&self) -> Duration {
        self.lifetime
    }
}

trait KindText {
    fn kind_text(&self) -> String;
}

impl KindText for redis::RedisError {
    /// The error's category only: a parse error's detail may quote the URL.
    fn kind_text(&self) -> String {
        format!("{:?}", self.kind())
    }
}

/// `url` with the password of its user part replaced by `***`.
pub(crate) fn mask_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                // Cannot fail for a URL that already has a password.
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        // Not a URL: show its scheme and nothing else, since it may hold a
        // password in a form the parser did not understand.
        Err(_) => format!(
            "{}://(unparsable)",
            url.split("://").next().unwrap_or_default()
        ),
    }
}

/// `text` with the client's password (if any) replaced by `***`.
fn mask_in(text: &str, client: &redis::Client) -> String {
    match client.get_connection_info().redis.password.as_deref() {
        Some(p) if !p.is_empty() => text.replace(p, "***"),
        _ => text.to_owned(),
    }
}
