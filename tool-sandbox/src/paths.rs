//! The policy's paths resolved: what is writable, read-only and hidden, the
//! default secret list and the mount plan of the full tier (the after-call
//! `.git` check is [`crate::git_guard`]).

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use tool_core::{SandboxMode, SandboxPolicy};

use crate::plan::{Carried, MAX_CARRIED, MountPlan, c_path, is_within};
use crate::{PROXY_SOCKET_IN_SANDBOX, ProxyHook, SandboxError, Tier};

/// The folders replaced by a fresh, empty `tmpfs` in the full tier.
const TMP_ROOTS: [&str; 2] = ["/tmp", "/dev/shm"];

/// The paths hidden from every sandboxed command by default (whether or not
/// they exist; `~` is `$HOME`, else the passwd entry): `~/.ssh`, `~/.aws`,
/// `~/.gnupg`, `~/.netrc`, `~/.config/gh`, `~/.docker`, `~/.kube`,
/// `~/.git-credentials`, `~/.npmrc`, `~/.pypirc`,
/// `$CARGO_HOME/credentials(.toml)` (`~/.cargo` without `CARGO_HOME`), this
/// project's private state (`$XDG_STATE_HOME/agent-tools`, and
/// `~/.local/state/agent-tools` in any case) and runtime folder
/// (`tool_core::truncate::private_dir_location`, and
/// `<temp dir>/agent-tools-<uid>` in any case), and the host's Unix
/// sockets: `/run`, `/var/run`, `$XDG_RUNTIME_DIR`, `$SSH_AUTH_SOCK`.
pub fn default_hidden() -> Vec<PathBuf> {
    let home = std::env::home_dir().unwrap_or_else(|| PathBuf::from("/root"));
    let mut out: Vec<PathBuf> = [
        ".ssh",
        ".aws",
        ".gnupg",
        ".netrc",
        ".config/gh",
        ".docker",
        ".kube",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
    ]
    .iter()
    .map(|p| home.join(p))
    .collect();
    let cargo = std::env::var_os("CARGO_HOME").map_or_else(|| home.join(".cargo"), PathBuf::from);
    out.push(cargo.join("credentials"));
    out.push(cargo.join("credentials.toml"));
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".local/state"));
    out.push(state.join("agent-tools"));
    out.push(tool_core::truncate::private_dir_location());
    // Other configurations' private trees (breakout review E9): the
    // default state folder when `XDG_STATE_HOME` points elsewhere, and the
    // default runtime folder when `XDG_RUNTIME_DIR` does.
    out.push(home.join(".local/state/agent-tools"));
    out.push(std::env::temp_dir().join(format!(
        "agent-tools-{}",
        rustix::process::getuid().as_raw()
    )));
    out.push(PathBuf::from("/run"));
    out.push(PathBuf::from("/var/run"));
    for var in ["XDG_RUNTIME_DIR", "SSH_AUTH_SOCK"] {
        if let Some(p) = std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
        {
            out.push(p);
        }
    }
    out
}

/// The policy's paths, resolved (symbolic links followed) and existing.
#[derive(Debug, Default, Clone)]
pub(crate) struct Resolved {
    pub(crate) writable: Vec<PathBuf>,
    pub(crate) read_only: Vec<PathBuf>,
    pub(crate) hidden: Vec<PathBuf>,
    /// The workspace's `.git` folder, bound onto itself in the full tier so
    /// that it cannot be renamed aside (`rename(2)`: `EBUSY` for a mount
    /// point) and a fresh one planted in its place.
    pub(crate) git_dir: Option<PathBuf>,
}

fn push_unique(list: &mut Vec<PathBuf>, p: PathBuf) {
    if !list.contains(&p) {
        list.push(p);
    }
}

/// Resolves the policy for `workspace` (already canonical).
///
/// # Errors
/// A `--sandbox-write` path that does not resolve; a configured read-only
/// path that exists but does not resolve (see [`resolve_read_only`]; one
/// that does not exist is skipped); in the no-namespaces tier, a
/// `--sandbox-write` path that holds a hidden or read-only path (see
/// [`check_writable_hides_nothing`]).
pub(crate) fn resolve(
    policy: &SandboxPolicy,
    workspace: &Path,
    tier: Tier,
) -> Result<Resolved, SandboxError> {
    let mut r = Resolved::default();
    if policy.mode == SandboxMode::WorkspaceWrite {
        r.writable.push(workspace.to_path_buf());
    } else if under_tmp(workspace) {
        // Read-only: the tree is read-only anyway, but a workspace under
        // /tmp must be carried into the private /tmp to stay visible.
        r.read_only.push(workspace.to_path_buf());
    }
    for w in &policy.writable {
        let abs = workspace.join(w);
        let p = std::fs::canonicalize(&abs).map_err(|e| {
            SandboxError::policy(format!(
                "the writable path {} (--sandbox-write) cannot be used: {e}; create it first or \
                 drop the setting",
                abs.display()
            ))
        })?;
        push_unique(&mut r.writable, p);
    }
    for p in &policy.read_only {
        if let Some(p) = resolve_read_only(&workspace.join(p))? {
            push_unique(&mut r.read_only, p);
        }
    }
    let git = workspace.join(".git");
    let git_meta = std::fs::symlink_metadata(&git).ok();
    if git_meta.as_ref().is_some_and(std::fs::Metadata::is_dir) {
        r.git_dir = Some(git.clone());
        for sub in ["hooks", "config"] {
            if let Ok(p) = std::fs::canonicalize(git.join(sub)) {
                push_unique(&mut r.read_only, p);
            }
        }
    } else if git_meta.as_ref().is_some_and(std::fs::Metadata::is_file) {
        // A worktree or submodule: the `.git` file itself read-only (a mount
        // point cannot be replaced), and its `gitdir: <path>` folder too.
        push_unique(&mut r.read_only, git.clone());
        if let Ok(text) = std::fs::read_to_string(&git) {
            if let Some(target) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) {
                if let Ok(p) = std::fs::canonicalize(workspace.join(target.trim())) {
                    push_unique(&mut r.read_only, p);
                }
            }
        }
    }
    if tier == Tier::Full {
        // Nested repositories, submodules and what configs point at
        // (breakout review E1, E2): read-only as `.git/config` is.
        for p in crate::git_plants::protected_paths(workspace) {
            push_unique(&mut r.read_only, p);
        }
    }
    for p in default_hidden()
        .into_iter()
        .chain(policy.hidden.iter().map(|h| workspace.join(h)))
    {
        if let Ok(p) = std::fs::canonicalize(&p) {
            push_unique(&mut r.hidden, p);
        }
    }
    if tier == Tier::NoNamespaces {
        check_writable_hides_nothing(&r, workspace)?;
    }
    // Hidden > read-only > writable: a path listed twice keeps the stronger rule.
    r.read_only.retain(|p| !r.hidden.contains(p));
    let (hidden, read_only) = (r.hidden.clone(), r.read_only.clone());
    r.writable
        .retain(|p| !hidden.contains(p) && !read_only.contains(p));
    Ok(r)
}

/// A configured read-only path (`SandboxPolicy::read_only`: the skills
/// folders), resolved: `Ok(None)` when nothing is there (no file, folder or
/// link at the path or on the way to it: there is nothing to protect yet,
/// and a folder the command makes there later is not read-only); the
/// canonical path when it resolves.
///
/// # Errors
/// [`SandboxError`] (policy) naming the path when something is there that
/// cannot be resolved (a symbolic link, at the path or on the way to it,
/// whose target is missing or loops; a folder that cannot be searched):
/// it could not be made read-only, and skipping it left it writable
/// (issue 23 F1, "still open").
fn resolve_read_only(path: &Path) -> Result<Option<PathBuf>, SandboxError> {
    let e = match std::fs::canonicalize(path) {
        Ok(p) => return Ok(Some(p)),
        Err(e) => e,
    };
    let absent = matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    );
    // A link anywhere on the way that does not resolve (a dangling link
    // to a folder a command could make) is something there, not nothing.
    let broken_link = path.ancestors().find(|a| {
        std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::canonicalize(a).is_err()
    });
    match broken_link {
        None if absent => Ok(None),
        None => Err(SandboxError::policy(format!(
            "the read-only path {} (a skills folder or another configured read-only path) \
             cannot be resolved ({e}), so the sandbox cannot make it read-only; make it \
             resolvable or drop the setting",
            path.display()
        ))),
        Some(link) => Err(SandboxError::policy(format!(
            "the read-only path {} (a skills folder or another configured read-only path) \
             cannot be made read-only: {} is a symbolic link that does not resolve ({e}), so a \
             command could make its target; fix or remove the link, or drop the setting",
            path.display(),
            link.display()
        ))),
    }
}

/// Refuses an extra writable path (`--sandbox-write`, not the workspace)
/// that holds a hidden path, in the no-namespaces tier (breakout review E7:
/// `--sandbox-write ~` let a command read `~/.ssh/id_rsa` and write
/// `~/.ssh/authorized_keys`). Precedence is hidden > read-only > writable
/// (`../shared/design/cross-cutting.md` §6), and that tier cannot keep it
/// there: Landlock only adds access, so a rule on the writable folder
/// reaches every file beneath it (`Documentation/userspace-api/landlock.rst`,
/// "Inheritance"), and no mount can cover the hidden one. The full tier
/// mounts over the hidden path and needs no refusal. The workspace itself
/// is not refused here: that it cannot hide what it holds is the tier's
/// documented gap ([`crate::NO_NAMESPACES_NOTE`]). A read-only path (a
/// skills folder) inside such a writable path is refused the same way.
///
/// # Errors
/// [`SandboxError`] (policy) naming the writable path, the hidden path
/// inside it, and what to do.
fn check_writable_hides_nothing(r: &Resolved, workspace: &Path) -> Result<(), SandboxError> {
    for w in r.writable.iter().filter(|w| w.as_path() != workspace) {
        if let Some(h) = r.hidden.iter().find(|h| is_within(w, h)) {
            return Err(SandboxError::policy(format!(
                "the writable path {} (--sandbox-write) lies inside {}, which the sandbox hides; \
                 the no-namespaces tier cannot keep a hidden path hidden when part of it is \
                 writable: drop the setting, or run where the full tier works",
                w.display(),
                h.display()
            )));
        }
        if let Some(h) = r.hidden.iter().find(|h| is_within(h, w)) {
            let narrower = narrower_example(w, h).map_or_else(
                || "a folder inside it that does not hold it".to_owned(),
                |p| format!("e.g. {}", p.display()),
            );
            return Err(SandboxError::policy(format!(
                "the writable path {} (--sandbox-write) holds {}, which the sandbox hides; the \
                 no-namespaces tier cannot hide a path inside a writable one: give a narrower \
                 path that does not hold it ({narrower}), or run where the full tier works",
                w.display(),
                h.display()
            )));
        }
    }
    // The same for a read-only path: Landlock cannot take write access
    // back below a writable rule, so it would be silently writable.
    for w in r.writable.iter().filter(|w| w.as_path() != workspace) {
        if let Some(p) = r.read_only.iter().find(|p| *p != w && is_within(p, w)) {
            return Err(SandboxError::policy(format!(
                "the writable path {} (--sandbox-write) holds {}, which must stay read-only (a \
                 skills folder or another configured read-only path); the no-namespaces tier \
                 cannot keep a path read-only inside a writable one: give a narrower writable \
                 path that does not hold it, or run where the full tier works",
                w.display(),
                p.display()
            )));
        }
    }
    Ok(())
}

/// A narrower writable path to suggest in [`check_writable_hides_nothing`]'s
/// error: a folder of `writable` beside the one on the way to `hidden`
/// (the first by name, so the message is stable), e.g. `~/.cargo/registry`
/// for `~/.cargo` holding `~/.cargo/credentials.toml`; `None` without one.
fn narrower_example(writable: &Path, hidden: &Path) -> Option<PathBuf> {
    let first = hidden.strip_prefix(writable).ok()?.components().next()?;
    std::fs::read_dir(writable)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name())
        .filter(|n| n.as_os_str() != first.as_os_str())
        .min()
        .map(|n| writable.join(n))
}

/// Whether `path` lies under `/tmp` or `/dev/shm` (replaced in the full tier).
pub(crate) fn under_tmp(path: &Path) -> bool {
    TMP_ROOTS.iter().any(|t| is_within(path, Path::new(t)))
}

fn ancestors_below(path: &Path, root: &Path) -> Result<Vec<CString>, SandboxError> {
    let mut out = Vec::new();
    let mut cur = path.parent();
    while let Some(dir) = cur {
        if dir == root || !is_within(dir, root) {
            break;
        }
        out.push(c_path(dir)?);
        cur = dir.parent();
    }
    out.reverse();
    Ok(out)
}

fn tmp_root_of(path: &Path) -> Option<&'static Path> {
    TMP_ROOTS.iter().map(Path::new).find(|t| is_within(path, t))
}

/// The folders bound onto themselves in the full tier, parents first, so
/// that none can be renamed aside (`rename(2)` of a mount point: `EBUSY`)
/// and a fresh folder planted in its place: the workspace's `.git` (W35),
/// and every folder between a writable root and a read-only or hidden path
/// inside it (review F4 of issue 23: with `ws/.agent/skills` read-only,
/// `mv .agent .agent_old; mkdir -p .agent/skills/evil` planted a skill).
pub(crate) fn pinned_folders(r: &Resolved) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(git) = r.git_dir.as_ref().filter(|g| !r.hidden.contains(g)) {
        out.push(git.clone());
    }
    for p in r.read_only.iter().chain(&r.hidden) {
        for w in &r.writable {
            if p == w || !is_within(p, w) {
                continue;
            }
            let mut cur = p.parent();
            while let Some(dir) = cur {
                if dir == w.as_path() || !is_within(dir, w) {
                    break;
                }
                if !r.hidden.iter().any(|h| is_within(dir, h)) && !out.iter().any(|o| o == dir) {
                    out.push(dir.to_path_buf());
                }
                cur = dir.parent();
            }
        }
    }
    // Parents before children: a bind of a parent made after a child's
    // mount would carry it (MS_REC), but keep the order plain anyway.
    out.sort_by_key(|p| p.components().count());
    out
}

/// The mount view of the full tier (see [`crate::child::build_mounts`]).
pub(crate) fn mount_plan(
    r: &Resolved,
    hidden: &[PathBuf],
    proxy: Option<&ProxyHook>,
) -> Result<MountPlan, SandboxError> {
    let mut plan = MountPlan::default();
    let fresh: Vec<&Path> = TMP_ROOTS
        .iter()
        .map(Path::new)
        .filter(|t| t.is_dir())
        .collect();
    for t in &fresh {
        plan.fresh_tmp.push(c_path(t)?);
    }
    let mut carried_paths: Vec<PathBuf> = Vec::new();
    for (path, read_only) in r
        .writable
        .iter()
        .map(|p| (p, false))
        .chain(r.read_only.iter().map(|p| (p, true)))
    {
        let Some(root) = tmp_root_of(path) else {
            continue;
        };
        if path == root || carried_paths.iter().any(|c| is_within(path, c)) {
            continue;
        }
        if plan.carried.len() >= MAX_CARRIED {
            return Err(SandboxError::policy(format!(
                "more than {MAX_CARRIED} sandbox paths under /tmp or /dev/shm; list fewer"
            )));
        }
        plan.carried.push(Carried {
            path: c_path(path)?,
            ancestors: ancestors_below(path, root)?,
            is_dir: path.is_dir(),
            read_only,
        });
        carried_paths.push(path.clone());
    }
    let visible = |p: &Path| !under_tmp(p) || carried_paths.iter().any(|c| is_within(p, c));
    for w in &r.writable {
        if !under_tmp(w) {
            plan.writable.push(c_path(w)?);
        }
    }
    let writable_outside: Vec<&PathBuf> = r.writable.iter().filter(|w| !under_tmp(w)).collect();
    for mp in mount_points() {
        let skip = mp.starts_with("/proc")
            || under_tmp(&mp)
            || writable_outside.iter().any(|w| is_within(&mp, w));
        if !skip {
            let c = c_path(&mp)?;
            if !plan.remount_read_only.contains(&c) {
                plan.remount_read_only.push(c);
            }
        }
    }
    for p in pinned_folders(r) {
        if visible(&p) {
            plan.pinned.push(c_path(&p)?);
        }
    }
    for p in &r.read_only {
        if visible(p) && !carried_paths.contains(p) {
            plan.read_only.push((c_path(p)?, p.is_dir()));
        }
    }
    for p in hidden {
        // A path inside a hidden folder is hidden with it (and cannot be
        // mounted on once the folder is covered: `$SSH_AUTH_SOCK` inside
        // `$XDG_RUNTIME_DIR` failed every spawn with ENOENT).
        let covered = hidden
            .iter()
            .any(|h| h != p && is_within(p, h) && h.is_dir());
        if visible(p) && !covered {
            plan.hidden.push((c_path(p)?, p.is_dir()));
        }
    }
    if let Some(proxy) = proxy {
        let inside = Path::new(PROXY_SOCKET_IN_SANDBOX);
        let dir = inside.parent().unwrap_or(Path::new("/run"));
        plan.proxy_socket = Some((
            c_path(&proxy.host_socket)?,
            c_path(inside)?,
            vec![c_path(dir)?],
        ));
    }
    Ok(plan)
}

/// The mount points of this process's mount namespace, from
/// `/proc/self/mountinfo` (`proc(5)`: the fifth field, octal escapes).
fn mount_points() -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return vec![PathBuf::from("/")];
    };
    let mut out: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|f| PathBuf::from(unescape(f)))
        .collect();
    out.sort_by_key(|p| p.components().count());
    out.dedup();
    out
}

fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A new private temp folder for one call of the no-namespaces tier:
/// `<temp dir>/agent-tools-sbx-<pid>-<n>`, mode `0700`.
pub(crate) fn private_tmpdir() -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    for _ in 0..16 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "agent-tools-sbx-{}-{n}-{nanos}",
            std::process::id()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(SandboxError::setup("temp folder", e)),
        }
    }
    Err(SandboxError::setup("temp folder", "no free name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The private runtime folder lives in `$XDG_RUNTIME_DIR`, and both are
    /// hidden: the inner one must not get a mount of its own (once the
    /// outer tmpfs covers it, remounting it failed with `ENOENT` and no
    /// command ran in the full tier).
    #[test]
    fn a_hidden_path_below_another_is_covered_by_it() {
        let outer = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let inner = outer.path().join("agent-tools");
        std::fs::create_dir(&inner).unwrap();
        let hidden = vec![inner.clone(), outer.path().to_path_buf()];
        let plan = mount_plan(&Resolved::default(), &hidden, None).unwrap();
        let listed: Vec<&CString> = plan.hidden.iter().map(|(p, _)| p).collect();
        assert_eq!(listed, vec![&c_path(outer.path()).unwrap()]);
    }

    fn read_only_policy(paths: &[&Path]) -> SandboxPolicy {
        let mut policy = SandboxPolicy::default();
        for p in paths {
            policy = policy.read_only(*p);
        }
        policy
    }

    /// Issue 23 F1 ("still open"): a configured read-only path that exists
    /// but does not resolve was skipped, so the command could write it (a
    /// dangling `skills` link: make its target, plant a skill). Now it is
    /// an error naming it, in both tiers; a path with nothing there is
    /// still skipped.
    #[test]
    fn a_read_only_path_that_exists_but_does_not_resolve_is_an_error() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let skills = ws.join("skills");
        std::fs::create_dir(&skills).unwrap();
        let dangling = ws.join("dangling");
        std::os::unix::fs::symlink(ws.join("made-later"), &dangling).unwrap();
        let looped = ws.join("loop");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        let missing = ws.join("missing");
        for tier in [Tier::Full, Tier::NoNamespaces] {
            let r = resolve(&read_only_policy(&[&skills, &missing]), &ws, tier).unwrap();
            assert_eq!(r.read_only, vec![skills.clone()], "{tier:?}");
            for (bad, link) in [
                (dangling.clone(), &dangling),
                (dangling.join("skills"), &dangling),
                (looped.clone(), &looped),
            ] {
                let e = resolve(&read_only_policy(&[&skills, &bad]), &ws, tier)
                    .unwrap_err()
                    .to_string();
                assert!(
                    e.contains(&format!("read-only path {}", bad.display())),
                    "{e}"
                );
                assert!(
                    e.contains(&format!("{} is a symbolic link", link.display())),
                    "{e}"
                );
            }
        }
    }

    /// The no-namespaces tier cannot keep a read-only path read-only inside
    /// an extra writable one (Landlock rules only add access), so that is
    /// refused naming both, like a hidden path there; the full tier mounts
    /// it read-only over the writable one.
    #[test]
    fn a_read_only_path_inside_an_extra_writable_one_is_refused_without_namespaces() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        let cache = root.join("cache");
        let skills = cache.join("skills");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&skills).unwrap();
        let policy = read_only_policy(&[&skills]).writable(&cache);
        let e = resolve(&policy, &ws, Tier::NoNamespaces)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "the writable path {} (--sandbox-write) holds {}",
                cache.display(),
                skills.display()
            )),
            "{e}"
        );
        let r = resolve(&policy, &ws, Tier::Full).unwrap();
        assert_eq!(r.read_only, vec![skills.clone()]);
        assert!(r.writable.contains(&cache));
        // Inside the workspace it stays the tier's documented gap.
        let inner = ws.join("skills");
        std::fs::create_dir(&inner).unwrap();
        let r = resolve(&read_only_policy(&[&inner]), &ws, Tier::NoNamespaces).unwrap();
        assert_eq!(r.read_only, vec![inner]);
    }
}
