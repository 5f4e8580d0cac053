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
//! machine never lose an update.
//!
//! # How much one deployment keeps
//! Besides the bounds per key ([`RedisStoreLimits`]: entries, field and
//! value sizes), the number of live keys under a prefix is capped
//! ([`RedisStoreLimits::max_keys`], default [`DEFAULT_MAX_KEYS`]): the write
//! script registers each key in the sorted set `<prefix>:keys` (scored by
//! its expiry) and refuses one that would create a key past the cap, so
//! clients sending a fresh trace id per call cannot fill a server that
//! other deployments share. The scripts touch two keys of the prefix, so a
//! Redis Cluster needs the prefix in a hash tag (`{team-a}`), which the
//! prefix rule does not allow: use a single server (or Valkey) per prefix. A read is one script too (it filters
//! expired fields by the server's clock).
//!
//! # When the server is unreachable
//! Every operation fails with [`StateErrorKind::Io`] naming the server
//! (user part masked) and what to do; nothing is kept elsewhere in its
//! place. [`RedisStore::ping`], the start and health check of `tool
//! serve`, writes and reads one value under the prefix with the
//! configured user, so a user the server's ACL keeps off the prefix fails
//! there, not at the first call. Connections are opened lazily with a 5 s connect timeout and
//! 5 s read and write timeouts, and up to 8 idle ones are kept for reuse.
//!
//! # Credentials
//! The URL may carry an ACL user and password (`redis://user:pass@host/`);
//! neither is part of an error message or of the store's `Debug` output
//! ([`RedisStore::display_url`] shows `redis://***@host/`: the whole user
//! part, since a password written without its `:`, `redis://PASSWORD@host`,
//! is parsed as a user name).

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

/// The field, value and last part of the key [`RedisStore::ping`] writes
/// and reads back: `probe`.
const PROBE: &str = "probe";

/// How long the value [`RedisStore::ping`] writes lives: 60 s.
pub const PROBE_LIFETIME: Duration = Duration::from_secs(60);

/// The commands the store runs, for an ACL user's rules (SECURITY.md):
/// `EVALSHA`, `SCRIPT LOAD` (redis-rs loads a script the server does not
/// know yet) and `EVAL`, `TIME`, and inside the scripts `HGET`, `HSET`,
/// `HDEL`, `HLEN`, `HGETALL`, `PEXPIRE`, `PTTL`, `EXISTS`, `ZADD`, `ZCARD`
/// and `ZREMRANGEBYSCORE`.
pub const ACL_COMMANDS: &str = "+eval +evalsha +script|load +time +hget +hset +hdel +hlen \
                                +hgetall +pexpire +pttl +exists +zadd +zcard +zremrangebyscore";

/// The key cap the probe write passes: 2^53, never reached, so a
/// deployment at its cap still passes its health check.
const PROBE_NEVER_FULL: u64 = 1 << 53;

/// `lifetime` for a message: `1 day`, `1h`, ... (whole seconds).
fn humantime_secs(lifetime: Duration) -> String {
    let secs = lifetime.as_secs();
    if secs % 86_400 == 0 && secs > 0 {
        format!("{} day(s)", secs / 86_400)
    } else if secs % 3600 == 0 && secs > 0 {
        format!("{} h", secs / 3600)
    } else {
        format!("{} s", secs.max(1))
    }
}

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
    /// Most live keys under the store's prefix, every trace and kind of
    /// state together (default [`DEFAULT_MAX_KEYS`]; 0: no cap). Each new
    /// trace creates a few keys (its ledger, task list, jobs, loaded
    /// tools), so this bounds what one deployment's clients can make the
    /// server hold, whatever trace ids they send (review 32 F9). A write
    /// that would create one more key is refused with
    /// [`StateErrorKind::Full`]; writes to existing keys go on.
    pub max_keys: u64,
}

/// The default cap on live keys per prefix ([`RedisStoreLimits::max_keys`]): 100 000.
pub const DEFAULT_MAX_KEYS: u64 = 100_000;

impl Default for RedisStoreLimits {
    fn default() -> Self {
        Self {
            max_entries: 65_536,
            max_field_bytes: 4096,
            max_value_bytes: 64 * 1024,
            max_keys: DEFAULT_MAX_KEYS,
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

    /// The same with at most `max_keys` live keys under the prefix (0: no cap).
    #[must_use]
    pub fn with_max_keys(mut self, max_keys: u64) -> Self {
        self.max_keys = max_keys;
        self
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

/// Every write. `KEYS[1]` the hash, `KEYS[2]` the prefix's key registry
/// (a sorted set: each live key, scored by its expiry in ms); `ARGV`:
/// field, mode (`set` or `cas`), lifetime in ms, most entries,
/// has-expected (`0`/`1`), expected, has-new (`0`/`1`), new, most keys
/// under the prefix (`0`: no cap). Returns 1 when written, 0 when the
/// comparison failed, -1 when the hash is full, -2 when the write would
/// create a key past the prefix's cap.
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
local registry, max_keys = KEYS[2], tonumber(ARGV[9])
if max_keys > 0 then
  if redis.call('EXISTS', key) == 0 then
    redis.call('ZREMRANGEBYSCORE', registry, '-inf', now)
    if redis.call('ZCARD', registry) >= max_keys then return -2 end
  end
  redis.call('ZADD', registry, now + lifetime, key)
  if redis.call('PTTL', registry) < lifetime then redis.call('PEXPIRE', registry, lifetime) end
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

    /// The server's URL with its user part (user and password) replaced by `***`.
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

    /// The Redis key of the prefix's key registry: `<prefix>:keys`, a
    /// sorted set of the live keys under the prefix scored by their expiry
    /// (ms), which bounds how many there are ([`RedisStoreLimits::max_keys`]).
    pub fn registry_key(&self) -> String {
        format!("{}:keys", self.prefix)
    }

    /// The Redis key of the start and health check ([`ping`](Self::ping)):
    /// `<prefix>:probe` (no state key has that shape: theirs have four
    /// more `:`-separated parts).
    pub fn probe_key(&self) -> String {
        format!("{}:{PROBE}", self.prefix)
    }

    /// Checks that the server answers and that this client may do what
    /// every call does, with its user on its prefix's keys: one write and
    /// one read of the field `probe` of the hash [`probe_key`](Self::probe_key)
    /// through the scripts every operation runs (the value lives
    /// [`PROBE_LIFETIME`]). A `PING` alone passes for an ACL user that may
    /// not touch the prefix (`~team-a:*` with `--state-prefix team-b`),
    /// whose every call would then fail with `NOPERM` (review 32 F3).
    ///
    /// # Errors
    /// [`StateErrorKind::Io`] when the server cannot be reached or refuses
    /// the credentials or the prefix (the message names the prefix);
    /// [`StateErrorKind::Corrupt`] when the key holds something else.
    pub fn ping(&self) -> Result<(), StateError> {
        let key = self.probe_key();
        let lifetime_ms = u64::try_from(PROBE_LIFETIME.as_millis()).unwrap_or(u64::MAX);
        let written: i64 = self.with_connection(|c| {
            let mut call = self.write.key(&key);
            // Registered like every key, never refused by the cap: a
            // full deployment still serves its existing traces.
            call.key(self.registry_key())
                .arg(PROBE)
                .arg("set")
                .arg(lifetime_ms)
                .arg(1)
                .arg("0")
                .arg("")
                .arg("1")
                .arg(PROBE)
                .arg(PROBE_NEVER_FULL);
            call.invoke(c)
        })?;
        let read: Option<String> =
            self.with_connection(|c| self.get.key(&key).arg(PROBE).invoke(c))?;
        if written == 1 && read.as_deref() == Some(PROBE) {
            return Ok(());
        }
        Err(StateError::new(
            StateErrorKind::Corrupt,
            format!(
                "the state store at {} does not keep what this client writes under `{key}` \
                 (wrote 1 value, read back {}): another program may use the same keys; give \
                 this deployment its own --state-prefix",
                self.display_url,
                if read.is_some() { "another" } else { "nothing" }
            ),
        ))
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
            // A client that did not authenticate and sends a long command
            // (a script) is cut off with a protocol error, not `NOAUTH`.
            || detail.contains("unauthenticated")
        {
            StateError::new(
                StateErrorKind::Io,
                format!(
                    "the state store at {url} refused this client ({detail}): check the ACL \
                     user and password in --state, and that the user may run {ACL_COMMANDS} \
                     on the keys of the prefix `{prefix}` (`~{prefix}:*`; --state-prefix)",
                    prefix = self.prefix
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
        let registry = self.registry_key();
        let outcome: i64 = self.with_connection(|c| {
            let mut call = self.write.key(&redis_key);
            call.key(&registry)
                .arg(field)
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
                .arg(new.unwrap_or_default())
                .arg(self.limits.max_keys);
            call.invoke(c)
        })?;
        match outcome {
            1 => Ok(true),
            0 => Ok(false),
            -2 => Err(StateError::new(
                StateErrorKind::Full,
                format!(
                    "the state store's prefix `{}` holds {} live keys, the most this deployment \
                     may keep (--state-max-keys); nothing was written. Existing traces go on; new \
                     ones get state once old traces' state expires ({} after its last write), \
                     or when the cap is raised",
                    self.prefix,
                    self.limits.max_keys,
                    humantime_secs(self.lifetime)
                ),
            )),
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

    fn now_ms(&self) -> Result<u64, StateError> {
        let (secs, micros): (u64, u64) = self.with_connection(|c| redis::cmd("TIME").query(c))?;
        Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
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

/// `url` with its whole user part (`user:password@`, or a password
/// written as `redis://PASSWORD@host`, without the `:`) replaced by `***`
/// (review 32 F4): what the user part holds is never shown.
pub(crate) fn mask_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if !parsed.username().is_empty() || parsed.password().is_some() {
                // Neither can fail for a URL that has a user part already.
                let _ = parsed.set_password(None);
                let _ = parsed.set_username("***");
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

/// `text` with the client's password and user name (if any) replaced by
/// `***`: a user name may be a password written without its `:`.
fn mask_in(text: &str, client: &redis::Client) -> String {
    let info = &client.get_connection_info().redis;
    [info.password.as_deref(), info.username.as_deref()]
        .into_iter()
        .flatten()
        .filter(|secret| !secret.is_empty())
        .fold(text.to_owned(), |text, secret| text.replace(secret, "***"))
}
