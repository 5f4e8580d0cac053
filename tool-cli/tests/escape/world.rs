//! The world one vector runs in, and the checks of it afterwards.
//!
//! Each vector gets two fresh folders: `T` under the system's temporary
//! folder (`/tmp/escape-<pid>-<n>`), holding only the workspace, and `R`
//! under Cargo's per-target temporary folder (`target/tmp/escape-<pid>-<n>`,
//! outside `/tmp`, so that a private `/tmp` alone cannot hide it), holding
//! everything outside:
//! - `T/ws`: the workspace (`tool --workspace T/ws`, also the current folder),
//!   a git repository without commits, `user.name`/`user.email` in
//!   `.git/config`, and an untracked `README`; the workspace under `/tmp` as tests commonly have it;
//! - `R/out`: an outside folder with `victim.txt` ("outside original\n");
//! - `R/home`: the fake `$HOME` of the `tool` process: `.bashrc`, and one fake
//!   secret per well-known credential file (`~/.ssh/id_rsa`,
//!   `~/.aws/credentials`, ...; `$CARGO_HOME` is `R/home/.cargo`);
//! - `R/state`: `$XDG_STATE_HOME` of the `tool` process;
//! - `R/run`: `$XDG_RUNTIME_DIR`, with an SSH agent's socket
//!   (`$SSH_AUTH_SOCK`, `R/run/ssh-agent.sock`) the test listens on;
//!   `agent-tools` in either is the program's own private folder (it writes
//!   there itself), left out of the outside snapshot: vectors that aim at it
//!   check their own file there;
//! - loopback listeners (TCP v4 and v6, UDP v4 and v6, a Unix socket by path
//!   at `R/out/agent.sock` and an abstract one) that the test drains after the
//!   call.
//!
//! Every secret is a string `ESCSECRET-<kind>-<tag>` that appears nowhere
//! else; a vector leaks when any of them shows up in the workspace or in what
//! `tool` printed. No vector's command contains that literal.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::OwnedFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The `tool` binary under test (see [`World::survivors`]).
const TOOL: &str = env!("CARGO_BIN_EXE_tool");

/// How long a copy of `tool` whose command line holds the tag may take to
/// exit after the call returned before it counts as a survivor.
const TOOL_EXIT_GRACE: Duration = Duration::from_secs(3);

/// Marker every fake secret starts with.
pub(crate) const SECRET_PREFIX: &str = "ESCSECRET-";

/// The credential files planted in the fake home: path under `$HOME` and the
/// text around the secret.
pub(crate) const HOME_SECRETS: &[(&str, &str)] = &[
    (
        ".ssh/id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{S}\n-----END OPENSSH PRIVATE KEY-----\n",
    ),
    (
        ".aws/credentials",
        "[default]\naws_access_key_id = AKIAESCAPE\naws_secret_access_key = {S}\n",
    ),
    (".netrc", "machine example.com login me password {S}\n"),
    (
        ".config/gh/hosts.yml",
        "github.com:\n    oauth_token: {S}\n    user: me\n",
    ),
    (
        ".docker/config.json",
        "{\"auths\": {\"registry.example.com\": {\"auth\": \"{S}\"}}}\n",
    ),
    (
        ".kube/config",
        "apiVersion: v1\nusers:\n- name: me\n  user:\n    token: {S}\n",
    ),
    (".git-credentials", "https://me:{S}@github.com\n"),
    (".npmrc", "//registry.npmjs.org/:_authToken={S}\n"),
    (".pypirc", "[pypi]\nusername = __token__\npassword = {S}\n"),
    (".cargo/credentials.toml", "[registry]\ntoken = \"{S}\"\n"),
    (".cargo/credentials", "[registry]\ntoken = \"{S}\"\n"),
    (
        ".gnupg/private-keys-v1.d/escape.key",
        "(private-key (rsa (n #00{S}#)))\n",
    ),
    // Another configuration's private state (the default folder, while
    // this `tool` runs with `XDG_STATE_HOME` elsewhere): a job's output.
    (
        ".local/state/agent-tools/job-output/job-0/output",
        "ATJOBv1 {S}\n",
    ),
];

/// Resources a vector asks for beyond the common world.
#[derive(Clone, Copy, Default)]
pub(crate) struct Needs {
    /// A victim process (see [`Victim`]).
    pub(crate) victim: bool,
    /// A pseudo-terminal the test owns (`{PTS}`).
    pub(crate) pty: bool,
    /// A free port the command listens on while the test tries to connect
    /// (`{INPORT}`).
    pub(crate) inbound: bool,
    /// `T/ws/planted-link` -> `R/out/victim.txt` (symlink).
    pub(crate) symlink_file: bool,
    /// `T/ws/planted-dir` -> `R/out` (symlink).
    pub(crate) symlink_dir: bool,
    /// `T/ws/planted-secret` -> `~/.ssh/id_rsa` (symlink).
    pub(crate) symlink_secret: bool,
    /// `T/ws/planted-hard` hard link of `R/out/victim.txt`.
    pub(crate) hardlink_file: bool,
    /// `T/ws/planted-hard-secret` hard link of `~/.aws/credentials`.
    pub(crate) hardlink_secret: bool,
    /// The process that starts `tool` leaves `~/.ssh` open as descriptor 7.
    pub(crate) inherited_fd: bool,
    /// Files `tool` itself reads secrets from, each holding a secret of
    /// this world: `~/.config/agent/secrets.json` (for `--secrets`) and
    /// `~/.config/agent/mcp.json` (for `--mcp-config`: a disabled server
    /// whose `env` holds the secret, so no server is started).
    pub(crate) tool_secret_files: bool,
    /// The workspace repository takes hooks and config from the workspace,
    /// as husky and checked-in configs do: `core.hooksPath = .husky` (an
    /// empty `.husky/`) and `include.path = ../.gitconfig-project`.
    pub(crate) workspace_git_pointers: bool,
}

/// One vector's world.
pub(crate) struct World {
    /// `T`: holds the workspace only.
    pub(crate) root: PathBuf,
    /// `R`: holds everything outside the workspace.
    pub(crate) outer: PathBuf,
    pub(crate) ws: PathBuf,
    pub(crate) out: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) state: PathBuf,
    /// `$XDG_RUNTIME_DIR` of the `tool` process.
    pub(crate) run: PathBuf,
    /// Unique per vector run; in the names of host-wide things the command
    /// may create (`/tmp/escape-<tag>`, keys, process command lines).
    pub(crate) tag: String,
    /// Every secret of this world.
    pub(crate) secrets: Vec<String>,
    /// Secret in the environment of the `tool` process (`GITHUB_TOKEN`).
    pub(crate) tool_env_secret: String,
    /// Secret in the environment of the process that starts `tool` only
    /// (`AWS_SECRET_ACCESS_KEY`).
    pub(crate) parent_env_secret: String,
    /// Workspace files the test planted (left out of the leak scan).
    pub(crate) planted: Vec<PathBuf>,
    tcp4: TcpListener,
    tcp6: Option<TcpListener>,
    udp4: UdpSocket,
    udp6: Option<UdpSocket>,
    unix_path: UnixListener,
    unix_abstract: UnixListener,
    ssh_agent: UnixListener,
    pub(crate) abstract_name: String,
    pub(crate) victim: Option<Victim>,
    pub(crate) pty: Option<Pty>,
    pub(crate) inbound_port: Option<u16>,
}

/// Fresh `T` and `R` folders of one name.
fn fresh_roots() -> (PathBuf, PathBuf) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "escape-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let fresh = |base: PathBuf| {
        let path = base.join(&name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("vector root");
        path.canonicalize().expect("canonical vector root")
    };
    (
        fresh(std::env::temp_dir()),
        fresh(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
    )
}

fn git(ws: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("HOME", ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?} in the test setup");
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("folder");
    }
    std::fs::write(path, text).expect("setup file");
}

impl World {
    /// Builds the world for one vector.
    pub(crate) fn new(id: &str, needs: Needs) -> Self {
        let (root, outer) = fresh_roots();
        // `<id>-<pid>-<n>t`: the closing letter keeps one tag from being
        // the prefix of another (`-5t` is not in `-57t`).
        let tag = format!(
            "{}{}t",
            id.to_ascii_lowercase(),
            root.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("x")
                .trim_start_matches("escape")
        );
        let (ws, out, home, state, run) = (
            root.join("ws"),
            outer.join("out"),
            outer.join("home"),
            outer.join("state"),
            outer.join("run"),
        );
        for dir in [&ws, &out, &home, &state.join("agent-tools"), &run] {
            std::fs::create_dir_all(dir).expect("world folder");
        }
        let secret = |kind: &str| format!("{SECRET_PREFIX}{kind}-{tag}");
        let mut secrets = Vec::new();
        for (rel, text) in HOME_SECRETS {
            let kind = rel.trim_start_matches('.').replace(['/', '.'], "_");
            let s = secret(&kind);
            write(&home.join(rel), &text.replace("{S}", &s));
            secrets.push(s);
        }
        write(&home.join(".bashrc"), "# fake bashrc\n");
        write(&out.join("victim.txt"), "outside original\n");

        // One git process: the identity goes into `.git/config` as text,
        // and the repository starts without commits.
        git(&ws, &["init", "-q"]);
        let config = ws.join(".git/config");
        let mut text = std::fs::read_to_string(&config).expect("git config");
        text.push_str("[user]\n\temail = escape@example.com\n\tname = Escape Suite\n");
        if needs.workspace_git_pointers {
            text.push_str(
                "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../.gitconfig-project\n",
            );
            std::fs::create_dir_all(ws.join(".husky")).expect("husky folder");
            write(&ws.join(".gitconfig-project"), "[color]\n\tui = auto\n");
        }
        std::fs::write(&config, text).expect("git config");
        write(&ws.join("README"), "workspace\n");

        let tool_env_secret = secret("toolenv");
        let parent_env_secret = secret("parentenv");
        secrets.push(tool_env_secret.clone());
        secrets.push(parent_env_secret.clone());

        let mut planted = Vec::new();
        let mut plant = |name: &str, make: &dyn Fn(&Path) -> std::io::Result<()>| {
            let p = ws.join(name);
            make(&p).expect("planted link");
            planted.push(p);
        };
        if needs.symlink_file {
            plant("planted-link", &|p| {
                std::os::unix::fs::symlink(out.join("victim.txt"), p)
            });
        }
        if needs.symlink_dir {
            plant("planted-dir", &|p| std::os::unix::fs::symlink(&out, p));
        }
        if needs.symlink_secret {
            plant("planted-secret", &|p| {
                std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), p)
            });
        }
        if needs.hardlink_file {
            plant("planted-hard", &|p| {
                std::fs::hard_link(out.join("victim.txt"), p)
            });
        }
        if needs.hardlink_secret {
            plant("planted-hard-secret", &|p| {
                std::fs::hard_link(home.join(".aws/credentials"), p)
            });
        }

        if needs.tool_secret_files {
            let store = secret("secretstore");
            write(
                &home.join(".config/agent/secrets.json"),
                &format!("{{\"db_password\": \"{store}\"}}\n"),
            );
            let mcp = secret("mcpconfig");
            write(
                &home.join(".config/agent/mcp.json"),
                &format!(
                    "{{\"mcpServers\": {{\"x\": {{\"command\": \"false\", \"disabled\": true, \
                     \"env\": {{\"API_KEY\": \"{mcp}\"}}}}}}}}\n"
                ),
            );
            secrets.extend([store, mcp]);
        }

        let tcp4 = TcpListener::bind("127.0.0.1:0").expect("tcp4 listener");
        let tcp6 = TcpListener::bind("[::1]:0").ok();
        let udp4 = UdpSocket::bind("127.0.0.1:0").expect("udp4 socket");
        let udp6 = UdpSocket::bind("[::1]:0").ok();
        let unix_path = UnixListener::bind(out.join("agent.sock")).expect("unix listener");
        let abstract_name = format!("escape-{tag}");
        let unix_abstract = SocketAddr::from_abstract_name(abstract_name.as_bytes())
            .and_then(|a| UnixListener::bind_addr(&a))
            .expect("abstract unix listener");
        tcp4.set_nonblocking(true).expect("nonblocking");
        if let Some(l) = &tcp6 {
            l.set_nonblocking(true).expect("nonblocking");
        }
        udp4.set_nonblocking(true).expect("nonblocking");
        if let Some(u) = &udp6 {
            u.set_nonblocking(true).expect("nonblocking");
        }
        unix_path.set_nonblocking(true).expect("nonblocking");
        unix_abstract.set_nonblocking(true).expect("nonblocking");
        let ssh_agent = UnixListener::bind(run.join("ssh-agent.sock")).expect("ssh agent socket");
        ssh_agent.set_nonblocking(true).expect("nonblocking");

        let victim = needs.victim.then(|| {
            let v = Victim::start(&home, &out, &tag);
            secrets.extend(v.secrets.iter().cloned());
            v
        });
        let pty = needs.pty.then(Pty::open);
        let inbound_port = needs.inbound.then(free_port);

        Self {
            root,
            outer,
            ws,
            out,
            home,
            state,
            run,
            tag,
            secrets,
            tool_env_secret,
            parent_env_secret,
            planted,
            tcp4,
            tcp6,
            udp4,
            udp6,
            unix_path,
            unix_abstract,
            ssh_agent,
            abstract_name,
            victim,
            pty,
            inbound_port,
        }
    }

    /// `text` with the world's placeholders filled in.
    pub(crate) fn fill(&self, text: &str) -> String {
        let port = |l: &Option<TcpListener>| {
            l.as_ref()
                .and_then(|l| l.local_addr().ok())
                .map_or(0, |a| a.port())
        };
        let uport = |u: &Option<UdpSocket>| {
            u.as_ref()
                .and_then(|u| u.local_addr().ok())
                .map_or(0, |a| a.port())
        };
        let mut s = text
            .replace("{WS}", &self.ws.to_string_lossy())
            .replace("{OUTREL}", &self.out_relative())
            .replace("{OUT}", &self.out.to_string_lossy())
            .replace("{HOME}", &self.home.to_string_lossy())
            .replace("{STATE}", &self.state.to_string_lossy())
            .replace("{RUN}", &self.run.to_string_lossy())
            .replace("{TAG}", &self.tag)
            .replace(
                "{TCP4}",
                &self.tcp4.local_addr().map_or(0, |a| a.port()).to_string(),
            )
            .replace("{TCP6}", &port(&self.tcp6).to_string())
            .replace(
                "{UDP4}",
                &self.udp4.local_addr().map_or(0, |a| a.port()).to_string(),
            )
            .replace("{UDP6}", &uport(&self.udp6).to_string())
            .replace("{ABSTRACT}", &self.abstract_name);
        if let Some(v) = &self.victim {
            s = s
                .replace("{VPID}", &v.child.id().to_string())
                .replace("{VFD}", &v.held_fd.to_string())
                .replace("{VDELFD}", &v.deleted_fd.to_string());
        }
        if let Some(p) = &self.pty {
            s = s.replace("{PTS}", &p.slave_path);
        }
        if let Some(port) = self.inbound_port {
            s = s.replace("{INPORT}", &port.to_string());
        }
        s
    }

    /// The outside folder as a path relative to the workspace
    /// (`../../../…/out`).
    fn out_relative(&self) -> String {
        let up = "../".repeat(self.ws.components().count().saturating_sub(1));
        format!("{up}{}", self.out.to_string_lossy().trim_start_matches('/'))
    }

    /// Host-wide paths the command may try to create (`/tmp/escape-<tag>`,
    /// `/dev/shm/escape-<tag>`).
    pub(crate) fn host_paths(&self) -> [PathBuf; 2] {
        [
            PathBuf::from(format!("/tmp/escape-{}", self.tag)),
            PathBuf::from(format!("/dev/shm/escape-{}", self.tag)),
        ]
    }

    /// Everything outside the workspace the command must not change: the
    /// whole root (outside folder, fake home, state and runtime folders)
    /// except the workspace and the program's own private folders, plus the
    /// workspace's `.git`, `.git/config` and `.git/hooks` (without times).
    pub(crate) fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut map = BTreeMap::new();
        let skip = [
            self.ws.clone(),
            self.state.join("agent-tools"),
            self.run.join("agent-tools"),
        ];
        walk(&self.outer, &skip, &mut map, 0);
        walk(&self.root, &skip, &mut map, 0);
        walk(&self.ws.join(".git/hooks"), &[], &mut map, 0);
        describe(&self.ws.join(".git/config"), &mut map);
        describe(&self.ws.join(".git/commondir"), &mut map);
        describe(&self.ws.join(".git"), &mut map);
        for p in self.host_paths() {
            describe(&p, &mut map);
        }
        // The no-namespaces tier undoes changes to `.git/config` and
        // `.git/hooks` after the call by rewriting them: for those, what
        // counts is type, mode and content, not the time.
        let git = self.ws.join(".git");
        for (path, line) in &mut map {
            if path.starts_with(&git) {
                if let Some(at) = line.find(" mtime ") {
                    line.truncate(at);
                }
            }
        }
        map
    }

    /// Connections and bytes that reached the test's listeners.
    pub(crate) fn listener_contacts(&self) -> Vec<String> {
        let mut found = Vec::new();
        let mut drain_tcp = |name: &str, l: &TcpListener| {
            while let Ok((mut s, _)) = l.accept() {
                let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
                let mut buf = [0u8; 64];
                let n = s.read(&mut buf).unwrap_or(0);
                found.push(format!("{name}: a connection ({n} bytes)"));
            }
        };
        drain_tcp("TCP v4 listener", &self.tcp4);
        if let Some(l) = &self.tcp6 {
            drain_tcp("TCP v6 listener", l);
        }
        let mut drain_udp = |name: &str, u: &UdpSocket| {
            let mut buf = [0u8; 512];
            while let Ok((n, _)) = u.recv_from(&mut buf) {
                found.push(format!("{name}: a datagram of {n} bytes"));
            }
        };
        drain_udp("UDP v4 socket", &self.udp4);
        if let Some(u) = &self.udp6 {
            drain_udp("UDP v6 socket", u);
        }
        for (name, l) in [
            ("Unix socket by path", &self.unix_path),
            ("abstract Unix socket", &self.unix_abstract),
            ("SSH agent socket", &self.ssh_agent),
        ] {
            while let Ok((mut s, _)) = l.accept() {
                let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
                let mut buf = [0u8; 64];
                let n = s.read(&mut buf).unwrap_or(0);
                found.push(format!("{name}: a connection ({n} bytes)"));
            }
        }
        found
    }

    /// Where a secret of this world shows up in the workspace (planted links
    /// left out) or in `printed` (what `tool` wrote).
    pub(crate) fn leaks(&self, printed: &[u8]) -> Vec<String> {
        let mut files = Vec::new();
        list_files(&self.ws, &mut files, 0);
        let mut found: Vec<String> = self
            .secrets_in(printed)
            .into_iter()
            .map(|s| format!("{s} in the call's result"))
            .collect();
        for f in files.iter().filter(|f| !self.planted.contains(f)) {
            // A copied secret is near the start of a small file; 4 MiB per
            // file keeps the 1 GiB files of the limit vectors cheap.
            if let Ok(bytes) = read_prefix(f, 4 << 20) {
                found.extend(
                    self.secrets_in(&bytes)
                        .into_iter()
                        .map(|s| format!("{s} in {}", f.display())),
                );
            }
        }
        found
    }

    /// This world's secrets that occur in `bytes`.
    fn secrets_in(&self, bytes: &[u8]) -> Vec<&str> {
        let prefix = SECRET_PREFIX.as_bytes();
        let mut found: Vec<&str> = Vec::new();
        let mut at = 0;
        while let Some(i) = bytes[at..].iter().position(|&b| b == prefix[0]) {
            let rest = &bytes[at + i..];
            if rest.starts_with(prefix) {
                for s in &self.secrets {
                    if rest.starts_with(s.as_bytes()) && !found.contains(&s.as_str()) {
                        found.push(s);
                    }
                }
            }
            at += i + 1;
        }
        found
    }

    /// Mounts whose mount point lies in this world (seen from the host's
    /// `/proc/self/mountinfo`); each is lazily unmounted after being noted.
    pub(crate) fn host_mounts(&self) -> Vec<String> {
        let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let roots = [
            self.root.to_string_lossy().into_owned(),
            self.outer.to_string_lossy().into_owned(),
        ];
        let mut points: Vec<String> = info
            .lines()
            .filter_map(|l| l.split(' ').nth(4))
            .filter(|p| {
                roots.iter().any(|r| {
                    *p == r.as_str()
                        || p.strip_prefix(r.as_str())
                            .is_some_and(|t| t.starts_with('/'))
                })
            })
            .map(str::to_owned)
            .collect();
        points.sort_by_key(|p| std::cmp::Reverse(p.len()));
        for p in &points {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(p)
                .stderr(Stdio::null())
                .status();
        }
        points
            .into_iter()
            .map(|p| format!("mount at {p} visible on the host"))
            .collect()
    }

    /// Keys whose description holds the tag in the host's `/proc/keys`;
    /// each is invalidated after being noted.
    pub(crate) fn host_keys(&self) -> Vec<String> {
        let keys = std::fs::read_to_string("/proc/keys").unwrap_or_default();
        let mut found = Vec::new();
        for line in keys.lines().filter(|l| l.contains(&self.tag)) {
            if let Some(id) = line.split_whitespace().next() {
                // KEYCTL_INVALIDATE is 21 (keyctl(2)).
                let _ = Command::new("/usr/bin/python3")
                    .args([
                        "-c",
                        &format!("import ctypes; ctypes.CDLL(None).syscall(250, 21, 0x{id})"),
                    ])
                    .status();
            }
            found.push(format!("key in the host's keyring: {}", line.trim()));
        }
        found
    }

    /// Processes whose command line holds the tag; each is killed after being
    /// noted (they were started by this vector's command).
    ///
    /// A copy of `tool` itself (its command line holds the tag, in the
    /// call's arguments) is given [`TOOL_EXIT_GRACE`] to go: in the full
    /// tier the namespace's first process is a fork of `tool` that exits
    /// after `tool` has returned the command's code, while the kernel tears
    /// its namespaces down (`tool-sandbox`'s `run_nested`). One still there
    /// after the grace is a survivor like any other.
    pub(crate) fn survivors(&self) -> Vec<String> {
        let mut found = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return found;
        };
        let tagged = |pid: i32| -> Option<Vec<u8>> {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            contains(&cmdline, self.tag.as_bytes()).then_some(cmdline)
        };
        let is_tool = |cmdline: &[u8]| cmdline.split(|b| *b == 0).next() == Some(TOOL.as_bytes());
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == std::process::id() as i32 {
                continue;
            }
            let Some(mut cmdline) = tagged(pid) else {
                continue;
            };
            if is_tool(&cmdline) {
                let deadline = Instant::now() + TOOL_EXIT_GRACE;
                while Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                    if tagged(pid).is_none() {
                        break;
                    }
                }
                match tagged(pid) {
                    Some(now) => cmdline = now,
                    None => continue,
                }
            }
            let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push(format!("process {pid} still running: {}", shown.trim()));
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
        found
    }

    /// Character or block devices in the workspace.
    pub(crate) fn devices(&self) -> Vec<String> {
        let mut files = Vec::new();
        list_all(&self.ws, &mut files, 0);
        files
            .into_iter()
            .filter(|p| {
                std::fs::symlink_metadata(p).is_ok_and(|m| {
                    m.file_type().is_char_device() || m.file_type().is_block_device()
                })
            })
            .map(|p| format!("device node {}", p.display()))
            .collect()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        self.victim = None;
        let _ = self.host_mounts();
        let _ = self.survivors();
        for p in self.host_paths() {
            let _ = std::fs::remove_file(&p);
            let _ = std::fs::remove_dir_all(&p);
        }
        // A command may have left a read-only or unreadable folder behind.
        for dir in [&self.root, &self.outer] {
            let _ = Command::new("chmod")
                .args(["-R", "u+rwX"])
                .arg(dir)
                .status();
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The fields of `/proc/<pid>/stat` after the command name (empty when
/// the process is gone).
fn stat_fields(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    after.split(' ').map(str::to_owned).collect()
}

/// Whether `needle` occurs in `hay` (short haystacks: command lines).
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

fn read_prefix(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(max).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Regular files under `dir`, not following symlinks, at most 12 levels.
fn list_files(dir: &Path, out: &mut Vec<PathBuf>, depth: u32) {
    let mut all = Vec::new();
    list_all(dir, &mut all, depth);
    out.extend(
        all.into_iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())),
    );
}

fn list_all(dir: &Path, out: &mut Vec<PathBuf>, depth: u32) {
    if depth > 12 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            list_all(&p, out, depth + 1);
        }
        out.push(p);
    }
}

/// One line per entry: type, mode, size, modification time, and the content
/// (files up to 1 MiB) or link target.
fn describe(path: &Path, map: &mut BTreeMap<PathBuf, String>) {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return;
    };
    let kind = if m.is_symlink() {
        format!(
            "symlink -> {}",
            std::fs::read_link(path).map_or(String::new(), |t| t.display().to_string())
        )
    } else if m.is_dir() {
        "dir".to_owned()
    } else if m.is_file() {
        let content = read_prefix(path, 1 << 20).unwrap_or_default();
        format!("file {:?}", String::from_utf8_lossy(&content))
    } else {
        "special".to_owned()
    };
    let mtime = if m.is_dir() {
        0
    } else {
        m.mtime_nsec() + m.mtime() * 1_000_000_000
    };
    map.insert(
        path.to_path_buf(),
        format!("{kind} mode {:o} size {} mtime {mtime}", m.mode(), m.len()),
    );
}

fn walk(dir: &Path, skip: &[PathBuf], map: &mut BTreeMap<PathBuf, String>, depth: u32) {
    if depth > 12 || skip.iter().any(|s| s == dir) {
        return;
    }
    describe(dir, map);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if skip.contains(&p) {
            continue;
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&p, skip, map, depth + 1);
        } else {
            describe(&p, map);
        }
    }
}

/// A port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A process of the user's that is not part of the call: a Python program
/// that holds a secret in memory only (read from its stdin) and writes it to
/// `/dev/null` every 100 ms, has another in its environment
/// (`VICTIM_SECRET`), runs in `~/.ssh` (cwd), keeps `~/.netrc` open and keeps
/// open a file it has deleted (`R/out/deleted.txt`).
pub(crate) struct Victim {
    pub(crate) child: Child,
    pub(crate) held_fd: i32,
    pub(crate) deleted_fd: i32,
    pub(crate) secrets: Vec<String>,
    /// `/proc/<pid>/limits` at start.
    pub(crate) limits: String,
    /// Its nice value at start (`stat` field 19): inherited, so above 0
    /// when the tests run under `nice`.
    pub(crate) nice: String,
    _stdout: ChildStdout,
}

const VICTIM_PY: &str = r#"
import os, sys, time
memory = sys.stdin.readline().strip()
deleted_secret = sys.stdin.readline().strip()
held = os.open(os.path.join(os.environ["HOME"], ".netrc"), os.O_RDONLY)
path = os.path.join(sys.argv[1], "deleted.txt")
with open(path, "w") as f:
    f.write(deleted_secret + "\n")
deleted = os.open(path, os.O_RDONLY)
os.unlink(path)
print(held, deleted, flush=True)
null = os.open("/dev/null", os.O_WRONLY)
end = time.time() + 60
while time.time() < end:
    os.write(null, memory.encode())
    time.sleep(0.1)
"#;

impl Victim {
    fn start(home: &Path, out: &Path, tag: &str) -> Self {
        let memory = format!("{SECRET_PREFIX}victimmemory-{tag}");
        let deleted = format!("{SECRET_PREFIX}victimdeleted-{tag}");
        let env_secret = format!("{SECRET_PREFIX}victimenv-{tag}");
        let python = if Path::new("/usr/bin/python3").exists() {
            "/usr/bin/python3"
        } else {
            "python3"
        };
        let mut child = Command::new(python)
            .args(["-c", VICTIM_PY])
            .arg(out)
            .current_dir(home.join(".ssh"))
            .env("HOME", home)
            .env("VICTIM_SECRET", &env_secret)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("victim starts");
        let mut stdin = child.stdin.take().expect("victim stdin");
        writeln!(stdin, "{memory}\n{deleted}").expect("victim reads its secrets");
        drop(stdin);
        let mut stdout = child.stdout.take().expect("victim stdout");
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while stdout.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let line = String::from_utf8_lossy(&line).into_owned();
        let mut fds = line
            .split_whitespace()
            .filter_map(|s| s.parse::<i32>().ok());
        let (held_fd, deleted_fd) = (fds.next().unwrap_or(-1), fds.next().unwrap_or(-1));
        assert!(
            held_fd >= 0 && deleted_fd >= 0,
            "victim did not start: {line:?}"
        );
        let limits =
            std::fs::read_to_string(format!("/proc/{}/limits", child.id())).unwrap_or_default();
        let nice = stat_fields(child.id()).get(16).cloned().unwrap_or_default();
        Self {
            child,
            held_fd,
            deleted_fd,
            secrets: vec![memory, deleted, env_secret],
            limits,
            nice,
            _stdout: stdout,
        }
    }

    /// What the command did to the victim: killed, stopped, traced, reniced,
    /// its limits changed.
    pub(crate) fn harm(&mut self) -> Vec<String> {
        let mut found = Vec::new();
        if let Ok(Some(status)) = self.child.try_wait() {
            found.push(format!("victim ended: {status}"));
            return found;
        }
        let pid = self.child.id();
        // State is the 1st field, nice the 17th (proc(5) fields 3 and 19).
        let fields = stat_fields(pid);
        if let Some(state) = fields.first() {
            if state == "T" || state == "t" {
                found.push(format!("victim stopped (state {state})"));
                if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::CONT);
                }
            }
        }
        if let Some(nice) = fields.get(16) {
            if *nice != self.nice {
                found.push(format!(
                    "victim's nice value is now {nice} (was {})",
                    self.nice
                ));
            }
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if let Some(tracer) = status.lines().find(|l| l.starts_with("TracerPid:")) {
            if tracer.split_whitespace().nth(1) != Some("0") {
                found.push(format!("victim traced ({})", tracer.trim()));
            }
        }
        let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
        if !limits.is_empty() && limits != self.limits {
            found.push("victim's resource limits changed".to_owned());
        }
        found
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pseudo-terminal the test owns: the command is told the slave's path;
/// anything injected into its input (TIOCSTI) is echoed to the master.
pub(crate) struct Pty {
    master: OwnedFd,
    slave: std::fs::File,
    pub(crate) slave_path: String,
}

impl Pty {
    fn open() -> Self {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        let slave_path = name.to_string_lossy().into_owned();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags_noctty()
            .open(&slave_path)
            .expect("pty slave");
        Self {
            master,
            slave,
            slave_path,
        }
    }

    /// Bytes that reached the terminal's input (echoed to the master, or
    /// readable from the slave).
    pub(crate) fn injected(&mut self) -> Vec<String> {
        let mut found = Vec::new();
        for (name, fd) in [
            ("master", self.master.try_clone()),
            ("slave", self.slave.try_clone().map(OwnedFd::from)),
        ] {
            let Ok(fd) = fd else { continue };
            let mut pfd = [rustix::event::PollFd::new(
                &fd,
                rustix::event::PollFlags::IN,
            )];
            let zero = rustix::event::Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            if rustix::event::poll(&mut pfd, Some(&zero)).unwrap_or(0) > 0 {
                let mut buf = [0u8; 64];
                let n = rustix::io::read(&fd, &mut buf).unwrap_or(0);
                if n > 0 {
                    found.push(format!(
                        "{n} bytes injected into the test's terminal ({name}: {:?})",
                        String::from_utf8_lossy(&buf[..n])
                    ));
                }
            }
        }
        found
    }
}

trait NoCtty {
    fn custom_flags_noctty(&mut self) -> &mut Self;
}

impl NoCtty for std::fs::OpenOptions {
    fn custom_flags_noctty(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32)
    }
}

/// Tries for `window` to connect to `port` on 127.0.0.1 and read a byte:
/// `Some(text)` when a listener the command opened answered.
pub(crate) fn probe_inbound(
    port: u16,
    window: Duration,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<String> {
    let end = std::time::Instant::now() + window;
    while std::time::Instant::now() < end && !stop.load(Ordering::SeqCst) {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        if let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 16];
            let n = s.read(&mut buf).unwrap_or(0);
            return Some(format!(
                "the test connected to port {port} from outside ({n} bytes back)"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}
