//! The after-call scan for git control files beyond the workspace's own
//! `.git/config` and `.git/hooks` (breakout review E1, E2): files the
//! host's git reads and that can make it run a program, which a command
//! made or changed during the call. Runs after every call in both tiers and
//! at a background job's end (from the `.git` guard's restore step).
//!
//! Where git reads them (`git-config(1)`, `githooks(5)`,
//! `gitrepository-layout(5)`, `gitsubmodules(7)`):
//! - every repository below the workspace: a folder named `.git`, or a
//!   `.git` file whose `gitdir:` names a folder inside the workspace (a
//!   plain `git status` of the outer repository runs `git status` in each
//!   populated submodule, which reads that repository's config);
//! - the workspace repository's `.git/modules/**` (submodules' folders);
//! - in each: `config`, `config.worktree`, `commondir`, and `hooks/*`;
//! - files named by `include.path` / `includeIf.<cond>.path` and folders
//!   named by `core.hooksPath` in any of those configs (the workspace's own
//!   `.git/config` included), when they lie inside the workspace (husky's
//!   `.husky`, a checked-in `.gitconfig`).
//!
//! "Made or changed during the call": the file's status-change time
//! (`ctime`, which no unprivileged process can set back, `inode(7)`) or its
//! repository folder's is at or after the call's start (less
//! [`CTIME_SLACK`] for the coarse clock file times use).
//!
//! What is done, never deleting: a config file that sets a key of
//! [`runs_program`] is moved aside to `<name>.agent-tools-quarantine-<secs>`
//! next to it and written again without those keys (the rest kept, so the
//! repository still works); a hook (any entry of a hooks folder but
//! `*.sample`), a `commondir`, or a config that is a symbolic link is moved
//! aside under the same kind of name (git runs hooks by exact name only).
//! Each gets a one-line note naming the file, the quarantine copy and the
//! `mv` that restores it.
//!
//! Bounded: the walk is the hard-link scan's (cached by folder, at most
//! [`SCAN_BUDGET`]), at most [`MAX_REPOS`] repositories, [`MAX_HOOKS`]
//! hooks per folder, config files of at most [`GUARD_MAX_FILE`]
//! bytes (a larger one made in the call is moved aside whole), includes
//! followed [`MAX_INCLUDE_DEPTH`] deep. Works on paths without following a
//! link, after every process of the call is gone, so nothing changes them
//! between the check and the move.

use std::collections::HashSet;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Largest config file read: 1 MiB (as the `.git` guard's copies).
pub(crate) const GUARD_MAX_FILE: u64 = 1 << 20;

/// Time budget of the walk for repositories: 300 ms.
pub(crate) const SCAN_BUDGET: Duration = Duration::from_millis(300);
/// Most repositories checked after one call: 200.
pub(crate) const MAX_REPOS: usize = 200;
/// Most entries of one hooks folder checked: 256.
pub(crate) const MAX_HOOKS: usize = 256;
/// Deepest chain of `include.path` followed: 4.
pub(crate) const MAX_INCLUDE_DEPTH: usize = 4;
/// How far before the call's start a `ctime` still counts as during the
/// call: file times come from a coarse clock that lags the one the start
/// is read from by up to a tick (`clock_gettime(2)`, `CLOCK_REALTIME_COARSE`).
pub(crate) const CTIME_SLACK: Duration = Duration::from_millis(50);

/// Whether the config key (`section`, subsection present or not, `key`,
/// all lower case but the value) names a program or a path git would run
/// or read more config from (`git-config(1)`, each key's entry).
pub(crate) fn runs_program(section: &str, has_sub: bool, key: &str, value: &str) -> bool {
    match (section, has_sub, key) {
        (
            "core",
            false,
            "fsmonitor"
            | "hookspath"
            | "sshcommand"
            | "editor"
            | "pager"
            | "askpass"
            | "gitproxy"
            | "alternaterefscommand",
        )
        | ("sequence", false, "editor")
        | ("diff", false, "external")
        | ("diff", true, "textconv" | "command")
        | ("filter", true, "clean" | "smudge" | "process")
        | ("merge", true, "driver")
        | ("credential", _, "helper")
        | ("gpg", _, "program")
        | ("include", false, "path")
        | ("includeif", true, "path")
        | ("pager", _, _)
        | ("remote", true, "uploadpack" | "receivepack")
        | ("uploadpack", false, "packobjectshook")
        | ("difftool" | "mergetool" | "man" | "browser", true, "cmd" | "path")
        | ("sendemail", _, "sendmailcmd" | "smtpserver") => true,
        ("alias", _, _) => value.trim_start().trim_start_matches('"').starts_with('!'),
        _ => false,
    }
}

/// One key line of a git config file.
struct KeyLine {
    section: String,
    has_sub: bool,
    key: String,
    value: String,
}

/// Parses a header's text after `[`: the lower-case section name, whether a
/// subsection follows (`[a "b"]` or the old `[a.b]`), and the text after `]`.
fn parse_header(rest: &str) -> Option<(String, bool, &str)> {
    let close = rest.rfind(']')?;
    let inner = rest[..close].trim();
    let name: String = inner
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let has_sub = inner.len() > name.len();
    Some((name.to_ascii_lowercase(), has_sub, &rest[close + 1..]))
}

fn parse_key(section: &str, has_sub: bool, t: &str) -> KeyLine {
    let key: String = t
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let value = t[key.len()..]
        .trim_start()
        .strip_prefix('=')
        .unwrap_or_default()
        .trim()
        .to_owned();
    KeyLine {
        section: section.to_owned(),
        has_sub,
        key: key.to_ascii_lowercase(),
        value,
    }
}

/// Whether a config line (without its line end) continues on the next
/// one: it ends with an odd number of backslashes (`git-config(1)`,
/// "Syntax"). Shared with [`crate::git_guard`]'s config filter.
pub(crate) fn ends_continued(body: &str) -> bool {
    body.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// A config file's text without the keys [`runs_program`] refuses, the
/// refused keys (`section.key`, each once, at most 20) and the values of
/// `include.path` / `includeIf.*.path` and `core.hooksPath` it set (kept or
/// not), in order. A header with a key on its own line keeps the header
/// alone when the key goes; continuation lines follow their key.
pub(crate) fn strip_program_keys(text: &[u8]) -> (Vec<u8>, Vec<String>, Pointers) {
    let text = String::from_utf8_lossy(text);
    let mut out = String::new();
    let mut dropped: Vec<String> = Vec::new();
    let mut pointers = Pointers::default();
    let (mut section, mut has_sub) = (String::new(), false);
    let mut continued = false;
    let mut keep_continued = true;
    let judge = |line: KeyLine, dropped: &mut Vec<String>, pointers: &mut Pointers| -> bool {
        let value = line.value.trim_matches('"').to_owned();
        match (line.section.as_str(), line.key.as_str()) {
            ("include" | "includeif", "path") => pointers.includes.push(value),
            ("core", "hookspath") => pointers.hooks_paths.push(value),
            _ => {}
        }
        let bad = runs_program(&line.section, line.has_sub, &line.key, &line.value);
        if bad {
            let name = format!("{}.{}", line.section, line.key);
            if !dropped.contains(&name) && dropped.len() < 20 {
                dropped.push(name);
            }
        }
        !bad
    };
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if continued {
            continued = ends_continued(body);
            if keep_continued {
                out.push_str(line);
            }
            continue;
        }
        let t = body.trim_start();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            out.push_str(line);
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            let Some((name, sub, after)) = parse_header(rest) else {
                out.push_str(line);
                continue;
            };
            (section, has_sub) = (name, sub);
            let after = after.trim();
            if after.is_empty() || after.starts_with('#') || after.starts_with(';') {
                out.push_str(line);
                continue;
            }
            let keep = judge(
                parse_key(&section, has_sub, after),
                &mut dropped,
                &mut pointers,
            );
            continued = ends_continued(body);
            keep_continued = keep;
            if keep {
                out.push_str(line);
            } else {
                let close = body.rfind(']').map_or(body.len(), |i| i + 1);
                out.push_str(&body[..close]);
                out.push('\n');
            }
            continue;
        }
        let keep = judge(parse_key(&section, has_sub, t), &mut dropped, &mut pointers);
        continued = ends_continued(body);
        keep_continued = keep;
        if keep {
            out.push_str(line);
        }
    }
    (out.into_bytes(), dropped, pointers)
}

/// The paths a config file points git at.
#[derive(Debug, Default)]
pub(crate) struct Pointers {
    /// `include.path` and `includeIf.<cond>.path` values.
    pub(crate) includes: Vec<String>,
    /// `core.hooksPath` values.
    pub(crate) hooks_paths: Vec<String>,
}

/// One scan after a call.
struct Scan<'a> {
    root: &'a Path,
    since: SystemTime,
    stamp: u64,
    notes: Vec<String>,
    seen_configs: HashSet<PathBuf>,
    seen_hooks: HashSet<PathBuf>,
}

/// The git repositories below the workspace `root` (canonical), found by
/// the shared bounded walk within `budget`: each as (its git folder, its
/// work tree, whether it is the workspace's own `.git`), with the
/// `.git/modules/**` repositories of submodules (`gitsubmodules(7)`) and
/// the folders `gitdir:` files inside the workspace point at; sorted, each
/// once. The flag is `false` when the walk stopped at its budget.
fn repositories(root: &Path, budget: Duration) -> (Vec<(PathBuf, PathBuf, bool)>, bool) {
    let (gits, complete) = crate::links::git_entries(root, budget);
    let top = root.join(".git");
    let mut repos: Vec<(PathBuf, PathBuf, bool)> = Vec::new();
    for git in gits {
        let Ok(meta) = std::fs::symlink_metadata(&git) else {
            continue;
        };
        let worktree = git.parent().unwrap_or(root).to_path_buf();
        if meta.is_dir() {
            repos.push((git.clone(), worktree.clone(), git == top));
            repos.extend(
                module_dirs(&git.join("modules"))
                    .into_iter()
                    .map(|m| (m, worktree.clone(), false)),
            );
        } else if meta.is_file() && git != top {
            if let Some(dir) = gitdir_of(&git).filter(|d| d.starts_with(root) && d.is_dir()) {
                repos.push((dir, worktree, false));
            }
        }
    }
    repos.sort();
    repos.dedup();
    (repos, complete)
}

/// Checks the workspace `root` (canonical) for git control files made or
/// changed since `started` (see the module docs); returns one note per file
/// moved aside, and one when the walk stopped at its budget.
pub(crate) fn scan(root: &Path, started: SystemTime) -> Vec<String> {
    let since = started.checked_sub(CTIME_SLACK).unwrap_or(started);
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut s = Scan {
        root,
        since,
        stamp,
        notes: Vec::new(),
        seen_configs: HashSet::new(),
        seen_hooks: HashSet::new(),
    };
    let (repos, complete) = repositories(root, SCAN_BUDGET);
    for (git, worktree, is_top) in repos.into_iter().take(MAX_REPOS) {
        s.check_repo(&git, &worktree, is_top);
    }
    if !complete {
        s.notes.push(format!(
            "The sandbox's check for git hooks and settings planted below {} stopped at its \
             budget; repositories beyond were not checked: review new .git folders before running \
             git there.",
            root.display()
        ));
    }
    s.notes
}

/// Most git control paths the full tier makes read-only before a call
/// beyond the workspace's own `.git/config` and `.git/hooks`: 32.
pub(crate) const MAX_PROTECTED: usize = 32;

/// Time budget of the walk for nested repositories before a call: 100 ms
/// (the hard-link scan walks the same folders right after, from the cache).
pub(crate) const PROTECT_BUDGET: Duration = Duration::from_millis(100);

/// The git control paths that exist at the call's start below the
/// workspace `root` (canonical) and that the full tier binds read-only, as
/// it does `.git/config` and `.git/hooks` (see the module docs for where
/// git reads them): each nested repository's and each `.git/modules/**`
/// repository's `config` and `hooks`, and the `include.path` files and
/// `core.hooksPath` folders inside the workspace that those configs and
/// the workspace's own `.git/config` name. At most [`MAX_PROTECTED`],
/// existing paths only, canonical; what the call creates is left to
/// [`scan`] after it.
pub(crate) fn protected_paths(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let (repos, _) = repositories(root, PROTECT_BUDGET);
    let add = |p: PathBuf, out: &mut Vec<PathBuf>| {
        if out.len() < MAX_PROTECTED && p.starts_with(root) && !out.contains(&p) {
            out.push(p);
        }
    };
    for (git, worktree, is_top) in repos.into_iter().take(MAX_REPOS) {
        let mut configs = vec![git.join("config")];
        let mut i = 0;
        while i < configs.len() && i < 4 * (MAX_INCLUDE_DEPTH + 1) {
            let config = configs[i].clone();
            i += 1;
            let Ok(meta) = std::fs::symlink_metadata(&config) else {
                continue;
            };
            if !meta.is_file() || meta.len() > GUARD_MAX_FILE {
                continue;
            }
            if !(is_top && config == git.join("config")) {
                add(config.clone(), &mut out);
            }
            let Ok(bytes) = std::fs::read(&config) else {
                continue;
            };
            let (_, _, pointers) = strip_program_keys(&bytes);
            let base = config.parent().unwrap_or(&git).to_path_buf();
            for inc in pointers.includes {
                if let Some(p) = existing_inside(root, &base, &inc) {
                    if !configs.contains(&p) {
                        configs.push(p);
                    }
                }
            }
            for hp in pointers.hooks_paths {
                if let Some(p) = existing_inside(root, &worktree, &hp).filter(|p| p.is_dir()) {
                    add(p, &mut out);
                }
            }
        }
        let hooks = git.join("hooks");
        if !is_top && hooks.is_dir() {
            add(hooks, &mut out);
        }
    }
    out
}

/// `value` resolved against `base` when it names an existing path inside
/// `root` (`~/` paths are the user's, outside).
fn existing_inside(root: &Path, base: &Path, value: &str) -> Option<PathBuf> {
    if value.is_empty() || value.starts_with('~') || value.starts_with("%(prefix)") {
        return None;
    }
    std::fs::canonicalize(base.join(value))
        .ok()
        .filter(|p| p.starts_with(root))
}

/// The folders below `modules` (at most 4 levels; nested submodules sit
/// in `modules/a/modules/b`) that hold a `HEAD`: submodules' repositories.
fn module_dirs(modules: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(modules.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        if depth > 4 || out.len() >= MAX_REPOS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten().take(1000) {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let p = e.path();
            if p.join("HEAD").is_file() {
                out.push(p.clone());
                stack.push((p.join("modules"), depth + 1));
            } else {
                stack.push((p, depth + 1));
            }
        }
    }
    out
}

/// The folder a `.git` file's `gitdir: <path>` names (relative to the
/// file's folder), resolved; `None` for anything else.
fn gitdir_of(file: &Path) -> Option<PathBuf> {
    if std::fs::symlink_metadata(file).ok()?.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    std::fs::canonicalize(file.parent()?.join(target)).ok()
}

impl Scan<'_> {
    /// Whether the entry at `path` (not followed) changed since the start.
    fn changed(&self, meta: &std::fs::Metadata) -> bool {
        let ctime = SystemTime::UNIX_EPOCH
            + Duration::new(
                u64::try_from(meta.ctime()).unwrap_or(0),
                u32::try_from(meta.ctime_nsec()).unwrap_or(0),
            );
        ctime >= self.since
    }

    fn quarantine_path(&self, path: &Path) -> PathBuf {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut q = path.with_file_name(format!("{name}.agent-tools-quarantine-{}", self.stamp));
        let mut n = 2;
        while std::fs::symlink_metadata(&q).is_ok() && n < 100 {
            q = path.with_file_name(format!("{name}.agent-tools-quarantine-{}-{n}", self.stamp));
            n += 1;
        }
        q
    }

    /// `path` relative to the workspace, for notes (the 300-character
    /// note limit leaves no room for long absolute paths).
    fn rel(&self, path: &Path) -> String {
        path.strip_prefix(self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Moves `path` aside; the note says what and how to restore it.
    fn move_aside(&mut self, path: &Path, what: &str) {
        let q = self.quarantine_path(path);
        let (rel, qrel) = (self.rel(path), self.rel(&q));
        let note = match std::fs::rename(path, &q) {
            Ok(()) => format!(
                "Quarantined by the sandbox: {what} '{rel}' the command made or changed (the \
                 user's own git would run it) was moved to '{qrel}'; to restore it after review, \
                 in the workspace: mv '{qrel}' '{rel}'"
            ),
            Err(e) => format!(
                "Refused by the sandbox: {what} '{rel}' the command made or changed (the user's \
                 own git would run it) could NOT be moved aside ({e}): review it before running \
                 git there."
            ),
        };
        self.notes.push(note);
    }

    fn check_repo(&mut self, git: &Path, worktree: &Path, is_top: bool) {
        let repo_new = std::fs::symlink_metadata(git).is_ok_and(|m| self.changed(&m));
        // The workspace's own `config` and `hooks` are put back by the
        // guard; what they point at is still checked.
        for name in ["config", "config.worktree"] {
            let only_pointers = is_top && name == "config";
            self.check_config(&git.join(name), git, worktree, repo_new, only_pointers, 0);
        }
        if !is_top {
            let commondir = git.join("commondir");
            if let Ok(m) = std::fs::symlink_metadata(&commondir) {
                if repo_new || self.changed(&m) {
                    self.move_aside(&commondir, "the common-folder pointer");
                }
            }
            self.check_hooks(&git.join("hooks"), repo_new);
        }
    }

    /// Checks one config file; follows its includes and hooks paths inside
    /// the workspace. `only_pointers`: a file the guard restores itself.
    fn check_config(
        &mut self,
        path: &Path,
        git: &Path,
        worktree: &Path,
        repo_new: bool,
        only_pointers: bool,
        depth: usize,
    ) {
        if depth > MAX_INCLUDE_DEPTH || !self.seen_configs.insert(path.to_path_buf()) {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let changed = !only_pointers && (repo_new || self.changed(&meta));
        if meta.file_type().is_symlink() {
            if changed {
                self.move_aside(path, "the git config link");
            }
            return;
        }
        if !meta.is_file() {
            return;
        }
        if meta.len() > GUARD_MAX_FILE {
            if changed {
                self.move_aside(path, "the oversized git config");
            }
            return;
        }
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        let (kept, dropped, pointers) = strip_program_keys(&bytes);
        if changed && !dropped.is_empty() {
            self.rewrite(path, &kept, meta.permissions().mode(), &dropped);
        }
        // Pointers are followed whether or not this file changed: a
        // checked-in `.husky` or included file is the command's to edit.
        let base = path.parent().unwrap_or(git).to_path_buf();
        for inc in pointers.includes {
            if let Some(p) = self.inside(&base, &inc) {
                self.check_config(&p, git, worktree, false, false, depth + 1);
            }
        }
        for hp in pointers.hooks_paths {
            if let Some(p) = self.inside(worktree, &hp) {
                self.check_hooks(&p, false);
            }
        }
    }

    /// `value` resolved against `base` (`~/` paths are the user's, outside),
    /// when it lies inside the workspace.
    fn inside(&self, base: &Path, value: &str) -> Option<PathBuf> {
        if value.is_empty() || value.starts_with('~') || value.starts_with("%(prefix)") {
            return None;
        }
        let p = base.join(value);
        // Resolve the folder; the last part may not exist yet.
        let resolved = match std::fs::canonicalize(&p) {
            Ok(r) => r,
            Err(_) => std::fs::canonicalize(p.parent()?)
                .ok()?
                .join(p.file_name()?),
        };
        resolved.starts_with(self.root).then_some(resolved)
    }

    fn rewrite(&mut self, path: &Path, kept: &[u8], mode: u32, dropped: &[String]) {
        let q = self.quarantine_path(path);
        let (rel, qrel, keys) = (self.rel(path), self.rel(&q), dropped.join(", "));
        if let Err(e) = std::fs::rename(path, &q) {
            self.notes.push(format!(
                "Refused by the sandbox: the git config '{rel}' the command made or changed sets \
                 {keys} (the user's own git would run it) and could NOT be moved aside ({e}): \
                 review it before running git there."
            ));
            return;
        }
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode & 0o777)
            .open(path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, kept));
        let rest = if written.is_ok() {
            "; the file holds the rest"
        } else {
            ""
        };
        self.notes.push(format!(
            "Quarantined by the sandbox: the git config '{rel}' the command made or changed set \
             {keys} (the user's own git would run it); the original is now '{qrel}'{rest}; to \
             restore it after review, in the workspace: mv '{qrel}' '{rel}'"
        ));
    }

    /// Moves aside every hook in `dir` (not `*.sample`) made or changed in
    /// the call (all of them in a repository made in the call).
    fn check_hooks(&mut self, dir: &Path, repo_new: bool) {
        if !self.seen_hooks.insert(dir.to_path_buf()) {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if meta.file_type().is_symlink() {
            if repo_new || self.changed(&meta) {
                self.move_aside(dir, "the hooks folder link");
            }
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut planted = Vec::new();
        for e in entries.flatten().take(MAX_HOOKS) {
            let name = e.file_name();
            if name.to_string_lossy().ends_with(".sample")
                || name.to_string_lossy().contains(".agent-tools-quarantine-")
            {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if m.is_dir() {
                continue;
            }
            if repo_new || self.changed(&m) {
                planted.push(e.path());
            }
        }
        planted.sort();
        for p in planted {
            self.move_aside(&p, "the git hook");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_keys_go_and_the_rest_stays() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = echo hi; false\n\
                    [alias]\n\tst = status\n\tpwn = \"!sh -c x\"\n\
                    [filter \"lfs\"]\n\tclean = evil \\\n\t  --more\n\trequired = true\n\
                    [include]\n\tpath = ../.gitconfig-project\n\
                    [core] hooksPath = .husky\n\
                    [remote \"origin\"]\n\turl = https://example.com/r.git\n";
        let (kept, dropped, pointers) = strip_program_keys(text.as_bytes());
        let kept = String::from_utf8(kept).unwrap();
        assert_eq!(
            kept,
            "[core]\n\trepositoryformatversion = 0\n[alias]\n\tst = status\n\
             [filter \"lfs\"]\n\trequired = true\n[include]\n[core]\n\
             [remote \"origin\"]\n\turl = https://example.com/r.git\n"
        );
        assert_eq!(
            dropped,
            [
                "core.fsmonitor",
                "alias.pwn",
                "filter.clean",
                "include.path",
                "core.hookspath"
            ]
        );
        assert_eq!(pointers.includes, ["../.gitconfig-project"]);
        assert_eq!(pointers.hooks_paths, [".husky"]);
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    /// A nested repository made after the start with `core.fsmonitor` and
    /// a hook: the config is moved aside and written without the key, the
    /// hook moved aside; an older nested repository's own hook stays.
    #[test]
    fn a_nested_repository_made_in_the_call_loses_its_program_keys_and_hooks() {
        let ws = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(ws.path()).unwrap();
        git(&root, &["init", "-q", "old"]);
        std::fs::write(root.join("old/.git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::thread::sleep(CTIME_SLACK * 3);
        let started = SystemTime::now();
        git(&root, &["init", "-q", "sub"]);
        git(
            &root.join("sub"),
            &["config", "core.fsmonitor", "echo pwned"],
        );
        let hook = root.join("sub/.git/hooks/post-checkout");
        std::fs::write(&hook, "#!/bin/sh\necho pwned\n").unwrap();
        let notes = scan(&root, started);
        assert_eq!(notes.len(), 2, "{notes:?}");
        let config = std::fs::read_to_string(root.join("sub/.git/config")).unwrap();
        assert!(!config.contains("fsmonitor") && config.contains("repositoryformatversion"));
        let aside: Vec<_> = std::fs::read_dir(root.join("sub/.git"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("config.agent-tools-quarantine-"))
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        let original = std::fs::read_to_string(root.join("sub/.git").join(&aside[0])).unwrap();
        assert!(original.contains("fsmonitor = echo pwned"));
        assert!(!hook.exists());
        assert!(
            notes
                .iter()
                .any(|n| n.contains("post-checkout") && n.contains("mv '"))
        );
        assert!(root.join("old/.git/hooks/pre-commit").exists());
    }

    /// What exists at the start is listed for the full tier's read-only
    /// mounts: a nested repository's config and hooks, a submodule's
    /// folder under `.git/modules`, and the workspace config's hooks path
    /// and include file; never the workspace's own config or hooks (bound
    /// already), nor anything outside the workspace.
    #[test]
    fn existing_control_files_are_listed_for_the_read_only_mounts() {
        let ws = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(ws.path()).unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["init", "-q", "sub"]);
        std::fs::create_dir_all(root.join(".git/modules/m/hooks")).unwrap();
        std::fs::write(
            root.join(".git/modules/m/HEAD"),
            "ref: refs/heads/main
",
        )
        .unwrap();
        std::fs::write(
            root.join(".git/modules/m/config"),
            "[core]
",
        )
        .unwrap();
        std::fs::create_dir(root.join(".husky")).unwrap();
        std::fs::write(
            root.join(".gitconfig-project"),
            "[user]
",
        )
        .unwrap();
        git(&root, &["config", "core.hooksPath", ".husky"]);
        git(&root, &["config", "include.path", "../.gitconfig-project"]);
        git(
            &root,
            &["config", "--add", "include.path", "/etc/gitconfig-outside"],
        );
        let mut got = protected_paths(&root);
        got.sort();
        let mut want = vec![
            root.join(".git/modules/m/config"),
            root.join(".git/modules/m/hooks"),
            root.join(".gitconfig-project"),
            root.join(".husky"),
            root.join("sub/.git/config"),
            root.join("sub/.git/hooks"),
        ];
        want.sort();
        assert_eq!(got, want);
    }

    /// `core.hooksPath` and `include.path` of the workspace's own config
    /// that point inside the workspace: a hook written there in the call is
    /// moved aside, an included file that gained `core.fsmonitor` is
    /// rewritten without it.
    #[test]
    fn hooks_paths_and_includes_inside_the_workspace_are_checked() {
        let ws = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(ws.path()).unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["config", "core.hooksPath", ".husky"]);
        git(&root, &["config", "include.path", "../.gitconfig-project"]);
        std::fs::create_dir(root.join(".husky")).unwrap();
        std::fs::write(root.join(".gitconfig-project"), "[user]\n\tname = me\n").unwrap();
        std::thread::sleep(CTIME_SLACK * 3);
        let started = SystemTime::now();
        std::fs::write(root.join(".husky/pre-commit"), "#!/bin/sh\necho pwned\n").unwrap();
        std::fs::write(
            root.join(".gitconfig-project"),
            "[user]\n\tname = me\n[core]\n\tfsmonitor = echo pwned\n",
        )
        .unwrap();
        let notes = scan(&root, started);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(!root.join(".husky/pre-commit").exists());
        assert_eq!(
            std::fs::read_to_string(root.join(".gitconfig-project")).unwrap(),
            "[user]\n\tname = me\n[core]\n"
        );
        // Nothing changed since: a second scan finds nothing.
        std::thread::sleep(CTIME_SLACK * 3);
        assert_eq!(scan(&root, SystemTime::now()), Vec::<String>::new());
    }
}
