//! One behaviour suite for every `StateStore` backend: the embedded
//! `FileStore` always, and `RedisStore` (feature `redis`) against a real
//! `redis-server` (or `valkey-server`) this test starts on a free loopback
//! port with a temporary folder. The server is found through the
//! `REDIS_SERVER` environment variable, else `redis-server` or
//! `valkey-server` on `PATH`; without one the Redis half is skipped with a
//! loud message (CI installs the Debian package `redis-server`).

#![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use std::sync::Arc;
use std::time::Duration;

use tool_core::state::{FileStore, FileStoreLimits, StateErrorKind, StateKey, StateStore};

/// Which backend a suite run uses, with what it needs kept alive.
struct Backend {
    store: Arc<dyn StateStore>,
    _dir: tempfile::TempDir,
    #[cfg(feature = "redis")]
    _server: Option<Arc<redis_server::Server>>,
}

/// Options a suite test asks of its store.
#[derive(Clone, Copy)]
struct Opts {
    lifetime: Duration,
    max_entries: usize,
}

impl Default for Opts {
    fn default() -> Self {
        Self {
            lifetime: tool_core::state::DEFAULT_LIFETIME,
            max_entries: 65_536,
        }
    }
}

fn file_backend(opts: Opts) -> Backend {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = FileStore::new(dir.path().join("state"))
        .with_lifetime(opts.lifetime)
        .with_limits(FileStoreLimits::new(opts.max_entries, 32 * 1024 * 1024));
    Backend {
        store: Arc::new(store),
        _dir: dir,
        #[cfg(feature = "redis")]
        _server: None,
    }
}

fn key(owner: &str) -> StateKey {
    StateKey::new("ledger", owner, "/work/project").expect("valid key")
}

// ---- the shared suite: each fn takes a store factory ----

fn roundtrip(make: &dyn Fn(Opts) -> Option<Backend>) {
    let Some(b) = make(Opts::default()) else {
        return;
    };
    let s = &b.store;
    let k = key("trace-roundtrip");
    assert_eq!(s.get(&k, "a").unwrap(), None);
    s.put(&k, "b", "2").unwrap();
    s.put(&k, "a", "1").unwrap();
    s.put(&k, "a", "one").unwrap();
    assert_eq!(s.get(&k, "a").unwrap().as_deref(), Some("one"));
    assert_eq!(
        s.entries(&k).unwrap(),
        vec![("a".into(), "one".into()), ("b".into(), "2".into())]
    );
    // Values with the encoding's separator and non-ASCII text survive.
    s.put(&k, "c|d", "x|y|ü").unwrap();
    assert_eq!(s.get(&k, "c|d").unwrap().as_deref(), Some("x|y|ü"));
    s.delete(&k, "b").unwrap();
    s.delete(&k, "never-there").unwrap();
    assert_eq!(s.get(&k, "b").unwrap(), None);
    assert_eq!(s.entries(&k).unwrap().len(), 2);
}

fn compare_and_set(make: &dyn Fn(Opts) -> Option<Backend>) {
    let Some(b) = make(Opts::default()) else {
        return;
    };
    let s = &b.store;
    let k = key("trace-cas");
    assert!(s.compare_and_set(&k, "f", None, Some("v1")).unwrap());
    assert!(!s.compare_and_set(&k, "f", None, Some("v2")).unwrap());
    assert!(!s.compare_and_set(&k, "f", Some("v0"), Some("v2")).unwrap());
    assert_eq!(s.get(&k, "f").unwrap().as_deref(), Some("v1"));
    assert!(s.compare_and_set(&k, "f", Some("v1"), Some("v2")).unwrap());
    assert_eq!(s.get(&k, "f").unwrap().as_deref(), Some("v2"));
    // An empty value is a value, not absence.
    assert!(s.compare_and_set(&k, "f", Some("v2"), Some("")).unwrap());
    assert!(!s.compare_and_set(&k, "f", None, Some("x")).unwrap());
    assert!(s.compare_and_set(&k, "f", Some(""), None).unwrap());
    assert_eq!(s.get(&k, "f").unwrap(), None);
}

fn owners_and_workspaces_are_apart(make: &dyn Fn(Opts) -> Option<Backend>) {
    let Some(b) = make(Opts::default()) else {
        return;
    };
    let s = &b.store;
    let a = key("trace-a");
    s.put(&a, "/work/project/x", "a's").unwrap();
    assert_eq!(s.get(&key("trace-b"), "/work/project/x").unwrap(), None);
    let elsewhere = StateKey::new("ledger", "trace-a", "/work/other").unwrap();
    assert_eq!(s.get(&elsewhere, "/work/project/x").unwrap(), None);
    let tasks = StateKey::new("tasks", "trace-a", "/work/project").unwrap();
    assert!(s.entries(&tasks).unwrap().is_empty());
    // An owner that looks like "owner:workspace" cannot reach another key.
    let tricky = StateKey::new("ledger", "trace-a:/work", "/project").unwrap();
    assert!(s.entries(&tricky).unwrap().is_empty());
    assert_eq!(
        s.get(&a, "/work/project/x").unwrap().as_deref(),
        Some("a's")
    );
}

fn concurrent_increments_lose_nothing(make: &dyn Fn(Opts) -> Option<Backend>) {
    let Some(b) = make(Opts::default()) else {
        return;
    };
    const THREADS: usize = 8;
    const EACH: usize = 40;
    let k = key("trace-counter");
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let s = b.store.clone();
            let k = k.clone();
            std::thread::spawn(move || {
                let mut retries = 0u64;
                for i in 0..EACH {
                    // Every thread also writes its own field, so the map grows.
                    s.put(&k, &format!("t{t}-{i}"), "x").unwrap();
                    loop {
                        let seen = s.get(&k, "counter").unwrap();
                        let next = seen.as_deref().map_or(0, |v| v.parse::<u64>().unwrap()) + 1;
                        if s.compare_and_set(
                            &k,
                            "counter",
                            seen.as_deref(),
                            Some(&next.to_string()),
                        )
                        .unwrap()
                        {
                            break;
                        }
                        retries += 1;
                    }
                }
                retries
            })
        })
        .collect();
    let retries: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let total = (THREADS * EACH) as u64;
    assert_eq!(
        b.store.get(&k, "counter").unwrap().as_deref(),
        Some(total.to_string().as_str()),
        "lost updates ({retries} refused stale writes retried)"
    );
    assert_eq!(b.store.entries(&k).unwrap().len(), THREADS * EACH + 1);
}

fn values_expire(make: &dyn Fn(Opts) -> Option<Backend>) {
    let Some(b) = make(Opts {
        lifetime: Duration::from_secs(2),
        ..Opts::default()
    }) else {
        return;
    };
    let s = &b.store;
    let k = key("trace-ttl");
    s.put(&k, "short", "lived").unwrap();
    assert_eq!(s.lifetime(), Duration::from_secs(2));
    assert_eq!(s.get(&k, "short").unwrap().as_deref(), Some("lived"));
    std::thread::sleep(Duration::from_millis(3500));
    assert_eq!(s.get(&k, "short").unwrap(), None);
    assert!(s.entries(&k).unwrap().is_empty());
    // An expired value counts as absent for compare-and-set.
    assert!(s.compare_and_set(&k, "short", None, Some("again")).unwrap());
}

fn full_refuses_and_forgets_nothing(make: &dyn Fn(Opts) -> Option<Backend>) {
    let Some(b) = make(Opts {
        max_entries: 3,
        ..Opts::default()
    }) else {
        return;
    };
    let s = &b.store;
    let k = key("trace-full");
    for f in ["a", "b", "c"] {
        s.put(&k, f, "v").unwrap();
    }
    let err = s.put(&k, "d", "v").unwrap_err();
    assert_eq!(err.kind(), StateErrorKind::Full, "{err}");
    // Overwriting a live field still works; the three are all kept.
    s.put(&k, "a", "v2").unwrap();
    assert_eq!(s.entries(&k).unwrap().len(), 3);
    assert_eq!(s.get(&k, "d").unwrap(), None);
    // After a delete there is room again.
    s.delete(&k, "b").unwrap();
    s.put(&k, "d", "v").unwrap();
    assert_eq!(s.get(&k, "d").unwrap().as_deref(), Some("v"));
}

fn bad_fields_are_refused(make: &dyn Fn(Opts) -> Option<Backend>) {
    let Some(b) = make(Opts::default()) else {
        return;
    };
    let s = &b.store;
    let k = key("trace-bad");
    assert_eq!(
        s.put(&k, "", "v").unwrap_err().kind(),
        StateErrorKind::Invalid
    );
    let huge = "x".repeat(64 * 1024 + 1);
    assert_eq!(
        s.put(&k, "f", &huge).unwrap_err().kind(),
        StateErrorKind::Invalid
    );
    assert!(s.entries(&k).unwrap().is_empty());
}

/// Deferred tools loaded through one view are listed by another view (its
/// own registry, as in another process) sharing the store, in one load
/// order; two views loading for one trace at once lose nothing (issue 32).
fn views_share_loaded_tools(make: &dyn Fn(Opts) -> Option<Backend>) {
    use serde_json::{Map, Value, json};
    use tool_core::{LiveRegistry, RegistryView, Tool, ToolRegistry, ToolResult, ToolSpec};

    let Some(b) = make(Opts::default()) else {
        return;
    };
    assert!(b.store.ping().is_ok());
    let names: Vec<String> = (0..30).map(|i| format!("tool_{i:02}")).collect();
    let view = || {
        let mut r = ToolRegistry::new();
        for n in &names {
            let spec = ToolSpec::new(n, "A tool.", json!({"type": "object"}));
            let tool = Tool::new(spec, |_: Map<String, Value>, _| async {
                ToolResult::ok("")
            });
            r.register(tool.unwrap()).unwrap();
        }
        RegistryView::new(LiveRegistry::new(r))
            .defer(["*"])
            .with_state_store(b.store.clone(), "/work/project")
            .unwrap()
    };
    let (one, two) = (view(), view());
    std::thread::scope(|s| {
        for (view, parity) in [(&one, 0), (&two, 1)] {
            let names = &names;
            s.spawn(move || {
                for n in names.iter().skip(parity).step_by(2) {
                    assert_eq!(
                        view.try_load(Some("t"), &[n.as_str()]).unwrap(),
                        std::slice::from_ref(n)
                    );
                }
            });
        }
    });
    let loaded = one.try_loaded(Some("t")).unwrap();
    assert_eq!(loaded.len(), 30, "{loaded:?}");
    assert_eq!(two.try_loaded(Some("t")).unwrap(), loaded);
    let evens: Vec<&String> = loaded
        .iter()
        .filter(|n| n.ends_with(['0', '2', '4', '6', '8']))
        .collect();
    assert_eq!(
        evens,
        names.iter().step_by(2).collect::<Vec<_>>(),
        "load order kept"
    );
    assert!(two.try_loaded(Some("other")).unwrap().is_empty());
}

/// Runs one suite fn against the file store and, with feature `redis`,
/// against a real Redis server.
macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod file_store {
            $(#[test] fn $name() { super::$name(&|o| Some(super::file_backend(o))); })*
        }
        #[cfg(feature = "redis")]
        mod redis_store {
            $(#[test] fn $name() { super::$name(&super::redis_server::backend); })*
        }
    };
}

suite!(
    roundtrip,
    compare_and_set,
    owners_and_workspaces_are_apart,
    concurrent_increments_lose_nothing,
    values_expire,
    full_refuses_and_forgets_nothing,
    bad_fields_are_refused,
    views_share_loaded_tools,
);

#[cfg(feature = "redis")]
mod redis_server {
    use std::net::TcpListener;
    use std::path::PathBuf;
    use std::process::{Child, Command, Stdio};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use tool_core::state::{RedisStore, RedisStoreLimits, StateErrorKind, StateStore};

    use super::{Backend, Opts, key};

    /// The password of the ACL user the test servers are started with.
    const PASSWORD: &str = "s3cret-Pa55-never-printed";

    /// A redis-server child on a loopback port, killed on drop.
    pub(super) struct Server {
        child: Mutex<Child>,
        port: u16,
        _dir: tempfile::TempDir,
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let mut child = self
                .child
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    impl Server {
        /// The URL of the test's ACL user.
        fn url(&self) -> String {
            format!("redis://agent:{PASSWORD}@127.0.0.1:{}/0", self.port)
        }

        /// Kills the server now (the store then finds nothing listening).
        fn kill(&self) {
            let mut child = self.child.lock().unwrap();
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    fn binary() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("REDIS_SERVER") {
            return Some(PathBuf::from(p));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find_map(|dir| {
            ["redis-server", "valkey-server"]
                .iter()
                .map(|n| dir.join(n))
                .find(|p| p.is_file())
        })
    }

    fn free_port() -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }

    /// Starts a server, or `None` (with a loud message) when there is no
    /// server binary.
    fn start() -> Option<Server> {
        start_with(&[])
    }

    /// [`start`] with `users` (more `--user NAME on >PASSWORD ...` rules)
    /// besides the test's `agent`.
    fn start_with(users: &[&str]) -> Option<Server> {
        let Some(bin) = binary() else {
            eprintln!(
                "\n!!! SKIPPED: no redis-server or valkey-server on PATH and REDIS_SERVER unset; \
                 the RedisStore tests did not run (apt-get install redis-server) !!!\n"
            );
            return None;
        };
        for _attempt in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let child = Command::new(&bin)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .arg("--dir")
                .arg(dir.path())
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .args(["--user", "default", "off", "--user", "agent", "on"])
                .arg(format!(">{PASSWORD}"))
                .args(["~*", "+@all"])
                .args(users)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start redis-server");
            let server = Server {
                child: Mutex::new(child),
                port,
                _dir: dir,
            };
            let store = RedisStore::open(&server.url()).unwrap();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if store.ping().is_ok() {
                    return Some(server);
                }
                if let Ok(Some(_)) = server.child.lock().unwrap().try_wait() {
                    break; // port taken meanwhile: try another
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("redis-server did not answer on any of 5 loopback ports");
    }

    /// One server per test binary, shared by the suite (each test uses its
    /// own prefix, so tests never see each other's keys).
    fn shared() -> Option<Arc<Server>> {
        static SERVER: std::sync::OnceLock<Option<Arc<Server>>> = std::sync::OnceLock::new();
        SERVER.get_or_init(|| start().map(Arc::new)).clone()
    }

    pub(super) fn backend(opts: Opts) -> Option<Backend> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let server = shared()?;
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let store = RedisStore::open(&server.url())
            .unwrap()
            .with_prefix(&format!("suite-{n}"))
            .unwrap()
            .with_lifetime(opts.lifetime)
            .with_limits(RedisStoreLimits::new(opts.max_entries));
        Some(Backend {
            store: Arc::new(store),
            _dir: tempfile::tempdir().unwrap(),
            _server: Some(server),
        })
    }

    #[test]
    fn two_stores_with_one_prefix_share_state_and_other_prefixes_do_not() {
        let Some(server) = shared() else { return };
        let open = |prefix: &str| {
            RedisStore::open(&server.url())
                .unwrap()
                .with_prefix(prefix)
                .unwrap()
        };
        let (machine_a, machine_b, other) = (open("deploy-1"), open("deploy-1"), open("deploy-2"));
        let k = key("trace-shared");
        machine_a.put(&k, "/work/project/a.rs", "read").unwrap();
        assert_eq!(
            machine_b.get(&k, "/work/project/a.rs").unwrap().as_deref(),
            Some("read")
        );
        assert_eq!(other.get(&k, "/work/project/a.rs").unwrap(), None);
        assert_eq!(
            machine_a.redis_key(&k),
            "deploy-1:ledger:12:trace-shared:/work/project"
        );
        // The key really carries the time to live of one lifetime.
        let client = redis::Client::open(server.url()).unwrap();
        let mut conn = client.get_connection().unwrap();
        let ttl: i64 = redis::cmd("PTTL")
            .arg(machine_a.redis_key(&k))
            .query(&mut conn)
            .unwrap();
        let day = i64::try_from(tool_core::state::DEFAULT_LIFETIME.as_millis()).unwrap();
        assert!(ttl > day - 60_000 && ttl <= day, "PTTL {ttl}");
    }

    #[test]
    fn bad_prefixes_and_urls_are_refused_without_the_password() {
        assert!(
            RedisStore::open("redis://127.0.0.1:1/0")
                .unwrap()
                .with_prefix("has space")
                .is_err()
        );
        let err = RedisStore::open(&format!("http://u:{PASSWORD}@127.0.0.1/"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a Redis URL"), "{err}");
        assert!(!err.contains(PASSWORD), "{err}");
        let store = RedisStore::open(&format!("redis://agent:{PASSWORD}@127.0.0.1:1/0")).unwrap();
        let shown = format!("{store:?} {}", store.display_url());
        assert!(!shown.contains(PASSWORD), "{shown}");
        assert!(shown.contains("redis://***@127.0.0.1"), "{shown}");
        assert!(
            !shown.contains("agent:"),
            "the whole user part is masked: {shown}"
        );
    }

    #[test]
    fn an_unreachable_server_refuses_every_call_without_printing_the_password() {
        let Some(server) = start() else { return };
        let store = RedisStore::open(&server.url())
            .unwrap()
            .with_prefix("gone")
            .unwrap();
        let k = key("trace-gone");
        store.put(&k, "kept", "before").unwrap();
        server.kill();
        let errors = [
            store.put(&k, "f", "v").unwrap_err(),
            store.compare_and_set(&k, "f", None, Some("v")).unwrap_err(),
            store.delete(&k, "kept").unwrap_err(),
            store.get(&k, "kept").unwrap_err(),
            store.entries(&k).unwrap_err(),
            // The trait's ping (what `tool serve`'s GET /health asks).
            StateStore::ping(&store).unwrap_err(),
        ];
        for err in &errors {
            let text = err.to_string();
            assert_eq!(err.kind(), StateErrorKind::Io, "{text}");
            assert!(text.contains("cannot be reached"), "{text}");
            assert!(text.contains("redis://***@127.0.0.1"), "{text}");
            assert!(!text.contains(PASSWORD), "{text}");
        }
    }

    #[test]
    fn a_wrong_password_is_refused_without_printing_either_password() {
        let Some(server) = shared() else { return };
        let wrong = "Wr0ng-pa55word-xyz";
        let store = RedisStore::open(&format!(
            "redis://agent:{wrong}@127.0.0.1:{}/0",
            server.port
        ))
        .unwrap();
        let err = store.put(&key("trace-auth"), "f", "v").unwrap_err();
        let text = format!("{err} {err:?}");
        assert_eq!(err.kind(), StateErrorKind::Io, "{text}");
        assert!(
            text.contains("ACL user and password") || text.contains("cannot be reached"),
            "{text}"
        );
        assert!(!text.contains(wrong) && !text.contains(PASSWORD), "{text}");
    }

    /// Review 32 F4: a password written as `redis://PASSWORD@host` (no `:`,
    /// so the URL parser reads it as a user name) was printed in the
    /// start-up error. The whole user part is masked in every message.
    #[test]
    fn a_password_written_without_its_colon_is_never_shown() {
        let Some(server) = shared() else { return };
        let secret = "s3cretPW-no-colon-4f1a";
        for url in [
            format!("redis://{secret}@127.0.0.1:{}/0", server.port),
            format!("redis://{secret}:@127.0.0.1:{}/0", server.port),
            format!("redis://{secret}@127.0.0.1:1/0"),
        ] {
            let store = RedisStore::open(&url).unwrap();
            let errors = [
                StateStore::ping(&store).unwrap_err(),
                store.put(&key("trace-f4"), "f", "v").unwrap_err(),
            ];
            for err in errors {
                let text = format!("{err} {err:?} {store:?} {}", store.display_url());
                assert_eq!(err.kind(), StateErrorKind::Io, "{text}");
                assert!(!text.contains(secret), "{text}");
                assert!(text.contains("redis://***@127.0.0.1:"), "{text}");
            }
        }
        let err = RedisStore::open(&format!("redis://{secret}@[::1/0"))
            .err()
            .map(|e| e.to_string());
        assert!(
            err.as_deref().is_none_or(|e| !e.contains(secret)),
            "{err:?}"
        );
    }

    /// Review 32 F3: the start and health check (`ping`) was a `PING`,
    /// which an ACL user kept off the deployment's prefix passes, while
    /// every call then fails with `NOPERM`. It now writes and reads a value
    /// under the prefix with the configured user.
    #[test]
    fn ping_refuses_a_prefix_the_acl_user_may_not_touch() {
        const TEAM_PASSWORD: &str = "t3am-a-Pa55";
        // SECURITY.md's least-privilege user, limited to `team-a:*`.
        let Some(server) = start_with(&[
            "--user",
            "teama",
            "on",
            &format!(">{TEAM_PASSWORD}"),
            "~team-a:*",
            "+ping",
            "+eval",
            "+evalsha",
            "+hget",
            "+hset",
            "+hdel",
            "+hlen",
            "+hgetall",
            "+pexpire",
            "+time",
            "+script|load",
            "+pttl",
            "+exists",
            "+zadd",
            "+zcard",
            "+zremrangebyscore",
        ]) else {
            return;
        };
        let url = format!("redis://teama:{TEAM_PASSWORD}@127.0.0.1:{}/0", server.port);
        let open = |prefix: &str| RedisStore::open(&url).unwrap().with_prefix(prefix).unwrap();
        // A plain PING passes for the wrong prefix: what the old check asked.
        let client = redis::Client::open(url.as_str()).unwrap();
        let mut conn = client.get_connection().unwrap();
        let pong: String = redis::cmd("PING").query(&mut conn).unwrap();
        assert_eq!(pong, "PONG");
        let wrong = open("team-b");
        let err = StateStore::ping(&wrong).unwrap_err();
        let text = err.to_string();
        assert_eq!(err.kind(), StateErrorKind::Io, "{text}");
        assert!(text.contains("NOPERM"), "{text}");
        assert!(text.contains("`team-b`"), "the prefix is named: {text}");
        assert!(!text.contains(TEAM_PASSWORD), "{text}");
        // And so every call of that deployment would fail.
        assert!(wrong.put(&key("trace-f3"), "f", "v").is_err());
        // The prefix the user may use passes, and leaves one short-lived value.
        let right = open("team-a");
        StateStore::ping(&right).unwrap();
        StateStore::ping(&right).unwrap();
        right.put(&key("trace-f3"), "f", "v").unwrap();
        let admin = redis::Client::open(server.url()).unwrap();
        let ttl: i64 = redis::cmd("PTTL")
            .arg(right.probe_key())
            .query(&mut admin.get_connection().unwrap())
            .unwrap();
        let most =
            i64::try_from(tool_core::state::redis_store::PROBE_LIFETIME.as_millis()).unwrap();
        assert!(ttl > 0 && ttl <= most, "PTTL {ttl}");
        assert_eq!(right.probe_key(), "team-a:probe");
    }

    /// Review 32 F9: nothing bounded how many keys one deployment's clients
    /// could create (a fresh trace id per call makes new keys). The prefix
    /// now holds at most `max_keys` live keys; a write that would create
    /// one more is refused, writes to existing keys go on, the health
    /// check passes, and expired keys free their places.
    #[test]
    fn a_prefix_holds_at_most_its_key_cap() {
        let Some(server) = shared() else { return };
        let store = RedisStore::open(&server.url())
            .unwrap()
            .with_prefix("capped")
            .unwrap()
            .with_lifetime(Duration::from_millis(1500))
            .with_limits(RedisStoreLimits::default().with_max_keys(3));
        for n in 0..3 {
            store.put(&key(&format!("trace-{n}")), "f", "v").unwrap();
        }
        let err = store.put(&key("trace-3"), "f", "v").unwrap_err();
        let text = err.to_string();
        assert_eq!(err.kind(), StateErrorKind::Full, "{text}");
        assert!(text.contains("prefix `capped` holds 3 live keys"), "{text}");
        assert!(text.contains("--state-max-keys"), "{text}");
        assert_eq!(
            store.get(&key("trace-3"), "f").unwrap(),
            None,
            "nothing written"
        );
        // Existing keys take more writes; the health check passes.
        store.put(&key("trace-0"), "g", "w").unwrap();
        StateStore::ping(&store).unwrap();
        let admin = redis::Client::open(server.url()).unwrap();
        let mut conn = admin.get_connection().unwrap();
        let count: u64 = redis::cmd("ZCARD")
            .arg(store.registry_key())
            .query(&mut conn)
            .unwrap();
        assert_eq!(count, 4, "3 state keys and the probe's");
        // Another prefix has its own cap.
        let other = RedisStore::open(&server.url())
            .unwrap()
            .with_prefix("capped-other")
            .unwrap()
            .with_limits(RedisStoreLimits::default().with_max_keys(3));
        other.put(&key("trace-3"), "f", "v").unwrap();
        // Once the keys expired, new traces get state again.
        std::thread::sleep(Duration::from_millis(1700));
        store.put(&key("trace-3"), "f", "v").unwrap();
        let pttl: i64 = redis::cmd("PTTL")
            .arg(store.registry_key())
            .query(&mut conn)
            .unwrap();
        assert!(pttl > 0, "the registry expires too: PTTL {pttl}");
    }
}
