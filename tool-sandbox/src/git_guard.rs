//! The after-call check of the workspace's `.git` (both tiers): what a
//! command may not leave behind there, because the user's next `git`
//! command runs it outside the sandbox.
//!
//! Rules, and where they come from:
//! - `.git/hooks` (`githooks(5)`: every executable file there runs on the
//!   matching git command) and `.git/config` (`git-config(1)`: `core.hooksPath`,
//!   `core.fsmonitor`, `core.sshCommand`, filter and diff drivers, aliases …
//!   all name programs) go back to what they held before the call. The full
//!   tier makes them read-only mounts, so there this only ever finds what the
//!   mounts already stopped; the no-namespaces tier cannot (Landlock rules
//!   only add), so there this is the mechanism.
//! - `.git/commondir` (`gitrepository-layout(5)`: when it exists, git takes
//!   the common folder, `config` and `hooks` included, from the path it
//!   names) is removed when the call created it, and restored when it
//!   changed.
//! - A `.git` folder the call created where none was (`git init` by the
//!   command) keeps only the sample hooks (`*.sample`, which git never runs)
//!   and, in its `config`, only the keys [`NEW_CONFIG_KEYS`] lists; the rest
//!   is removed, with a note naming it.
//! - A `.git` file (`gitdir: …`, a linked worktree or submodule) goes back to
//!   its text.
//!
//! Never following links: every step works relative to the workspace folder
//! opened before the call (`openat(2)` with `O_NOFOLLOW`, `fstatat(2)` with
//! `AT_SYMLINK_NOFOLLOW`); a symbolic link where a file or folder was is
//! removed itself, never written through, and the folder or file is made
//! again. Bounded: files of at most [`GUARD_MAX_FILE`] bytes are kept,
//! [`GUARD_MAX_HOOKS`] hooks, and removing what the command planted stops
//! after [`GUARD_MAX_REMOVED`] entries or [`GUARD_MAX_DEPTH`] levels (the
//! note then says the change could not be undone).

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

/// Largest `.git/config`, hook or `.git` file the guard keeps a copy of: 1 MiB.
pub(crate) const GUARD_MAX_FILE: u64 = 1 << 20;
/// Most hook files the guard keeps a copy of: 256.
pub(crate) const GUARD_MAX_HOOKS: usize = 256;
/// Most entries the guard removes after one call: 10 000.
pub(crate) const GUARD_MAX_REMOVED: usize = 10_000;
/// Deepest folder the guard removes entries from: 16 levels.
pub(crate) const GUARD_MAX_DEPTH: usize = 16;

/// The keys a `.git/config` created by the command keeps (section, key;
/// lower case as git compares them; `*` any subsection): what `git init`,
/// `git clone`, `git remote add` and `git branch -u` write, none of which
/// names a program or a path git would run or read config from.
pub(crate) const NEW_CONFIG_KEYS: &[(&str, &str)] = &[
    ("core", "repositoryformatversion"),
    ("core", "filemode"),
    ("core", "bare"),
    ("core", "logallrefupdates"),
    ("core", "ignorecase"),
    ("core", "precomposeunicode"),
    ("core", "symlinks"),
    ("extensions", "objectformat"),
    ("extensions", "refstorage"),
    ("remote", "url"),
    ("remote", "fetch"),
    ("branch", "remote"),
    ("branch", "merge"),
    ("init", "defaultbranch"),
    ("user", "name"),
    ("user", "email"),
];

/// A file's bytes and permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    bytes: Vec<u8>,
    mode: u32,
}

/// One entry of `.git/hooks` as it was before the call.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// A regular file of at most [`GUARD_MAX_FILE`] bytes.
    File(Kept),
    /// A symbolic link and its target (hook managers link their scripts).
    Link(Vec<u8>),
    /// Anything else (a folder, a larger file): kept as it is, by identity.
    Other { dev: u64, ino: u64 },
}

/// The hooks folder before the call.
#[derive(Debug)]
struct Hooks {
    entries: Vec<(OsString, Entry)>,
    /// Whether `entries` lists every entry (at most [`GUARD_MAX_HOOKS`]):
    /// only then are entries the guard does not know removed.
    complete: bool,
}

/// What `.git` was before the call.
#[derive(Debug)]
enum Before {
    /// No `.git` at all.
    Absent,
    /// A `.git` folder.
    Dir {
        config: Option<Kept>,
        /// `None`: no `hooks` folder.
        hooks: Option<Hooks>,
        commondir: Option<Kept>,
    },
    /// A `.git` file (`gitdir: …`).
    File(Kept),
    /// Something the guard does not keep (too large, a link, unreadable).
    Other,
}

/// A copy of what `.git` held before a call, checked and restored after it
/// (see the module docs).
#[derive(Debug)]
pub(crate) struct GitGuard {
    workspace: OwnedFd,
    root: PathBuf,
    before: Before,
    /// When the snapshot was taken: what changed after it was made by the
    /// call ([`crate::git_plants`]).
    started: std::time::SystemTime,
}

fn nofollow_dir(dir: BorrowedFd<'_>, name: &CStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn kind_at(dir: BorrowedFd<'_>, name: &CStr) -> Option<(FileType, u32, u64)> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| {
            (
                FileType::from_raw_mode(st.st_mode),
                st.st_mode & 0o7777,
                u64::try_from(st.st_size).unwrap_or(u64::MAX),
            )
        })
}

/// Reads the regular file `name` in `dir` (no link followed), if it is one
/// of at most [`GUARD_MAX_FILE`] bytes.
fn read_at(dir: BorrowedFd<'_>, name: &CStr) -> Option<Kept> {
    let (kind, mode, size) = kind_at(dir, name)?;
    if kind != FileType::RegularFile || size > GUARD_MAX_FILE {
        return None;
    }
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .ok()?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(GUARD_MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= GUARD_MAX_FILE).then_some(Kept { bytes, mode })
}

fn c_name(name: &OsStr) -> Option<CString> {
    CString::new(name.as_bytes()).ok()
}

/// The entries of the folder `dir` (names only, `.` and `..` left out), at
/// most `limit`.
fn entries(dir: BorrowedFd<'_>, limit: usize) -> Vec<OsString> {
    let Ok(list) = Dir::read_from(dir) else {
        return Vec::new();
    };
    list.filter_map(Result::ok)
        .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
        .filter(|n| n != "." && n != "..")
        .take(limit)
        .collect()
}

/// Removes `name` in `dir` whatever it is, without following links: a link
/// or file is unlinked, a folder emptied first (bounded by `budget` entries
/// and [`GUARD_MAX_DEPTH`] levels). `false` when something stayed.
fn remove_at(dir: BorrowedFd<'_>, name: &CStr, budget: &mut usize, depth: usize) -> bool {
    let Some((kind, _, _)) = kind_at(dir, name) else {
        return true;
    };
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    if kind != FileType::Directory {
        return rustix::fs::unlinkat(dir, name, AtFlags::empty()).is_ok();
    }
    if depth >= GUARD_MAX_DEPTH {
        return false;
    }
    let Ok(sub) = nofollow_dir(dir, name) else {
        return false;
    };
    let mut all = true;
    for entry in entries(sub.as_fd(), GUARD_MAX_REMOVED + 1) {
        match c_name(&entry) {
            Some(c) => all &= remove_at(sub.as_fd(), &c, budget, depth + 1),
            None => all = false,
        }
    }
    all && rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).is_ok()
}

/// Writes `kept` as `name` in `dir`: a new file beside it (`O_EXCL`, no
/// link followed), then `renameat(2)` over whatever `name` is, a folder
/// being removed first.
fn write_at(dir: BorrowedFd<'_>, name: &CStr, kept: &Kept) -> bool {
    if kind_at(dir, name).is_some_and(|(k, _, _)| k == FileType::Directory) {
        let mut budget = GUARD_MAX_REMOVED;
        if !remove_at(dir, name, &mut budget, 0) {
            return false;
        }
    }
    let mut tmp = name.to_bytes().to_vec();
    tmp.extend_from_slice(b".agent-tools-restore");
    let Ok(tmp) = CString::new(tmp) else {
        return false;
    };
    let mut budget = 1;
    if !remove_at(dir, &tmp, &mut budget, GUARD_MAX_DEPTH) {
        return false;
    }
    let Ok(fd) = rustix::fs::openat(
        dir,
        &tmp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(kept.mode),
    ) else {
        return false;
    };
    let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(kept.mode));
    let mut file = std::fs::File::from(fd);
    if file.write_all(&kept.bytes).is_err() {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
        return false;
    }
    rustix::fs::renameat(dir, &tmp, dir, name).is_ok()
}

/// What `name` in `dir` is, as [`Entry`] (no link followed).
fn entry_at(dir: BorrowedFd<'_>, name: &CStr) -> Option<Entry> {
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => rustix::fs::readlinkat(dir, name, Vec::new())
            .ok()
            .map(|t| Entry::Link(t.into_bytes())),
        FileType::RegularFile => Some(read_at(dir, name).map_or(
            Entry::Other {
                dev: st.st_dev,
                ino: st.st_ino,
            },
            Entry::File,
        )),
        _ => Some(Entry::Other {
            dev: st.st_dev,
            ino: st.st_ino,
        }),
    }
}

/// Whether `name` in `dir` holds `kept` (a regular file, same bytes and mode).
fn same_at(dir: BorrowedFd<'_>, name: &CStr, kept: &Kept) -> bool {
    read_at(dir, name).as_ref() == Some(kept)
}

impl GitGuard {
    /// Copies what the workspace's `.git` holds now. `None` when the
    /// workspace cannot be opened.
    pub(crate) fn snapshot(workspace: &Path) -> Option<Self> {
        let ws = rustix::fs::open(
            workspace,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let before = match kind_at(ws.as_fd(), c".git") {
            None => Before::Absent,
            Some((FileType::RegularFile, _, _)) => {
                read_at(ws.as_fd(), c".git").map_or(Before::Other, Before::File)
            }
            Some((FileType::Directory, _, _)) => match nofollow_dir(ws.as_fd(), c".git") {
                Ok(git) => Self::snapshot_dir(git.as_fd()),
                Err(_) => Before::Other,
            },
            Some(_) => Before::Other,
        };
        Some(Self {
            workspace: ws,
            root: workspace.to_path_buf(),
            before,
            started: std::time::SystemTime::now(),
        })
    }

    /// The workspace folder's descriptor this guard works through.
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.workspace)
    }

    fn snapshot_dir(git: BorrowedFd<'_>) -> Before {
        let hooks = nofollow_dir(git, c"hooks").ok().map(|h| {
            let mut names = entries(h.as_fd(), GUARD_MAX_HOOKS + 1);
            let complete = names.len() <= GUARD_MAX_HOOKS;
            names.truncate(GUARD_MAX_HOOKS);
            let entries = names
                .into_iter()
                .filter_map(|n| {
                    let entry = entry_at(h.as_fd(), &c_name(&n)?)?;
                    Some((n, entry))
                })
                .collect();
            Hooks { entries, complete }
        });
        Before::Dir {
            config: read_at(git, c"config"),
            hooks,
            commondir: read_at(git, c"commondir"),
        }
    }

    /// Undoes what the command left in `.git` (see the module docs); one
    /// note per path changed, saying whether the change was undone.
    pub(crate) fn restore(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let ws = self.workspace.as_fd();
        let git_path = self.root.join(".git");
        let now = kind_at(ws, c".git").map(|(k, _, _)| k);
        let remove_git = |notes: &mut Vec<String>| {
            let mut budget = GUARD_MAX_REMOVED;
            let ok = remove_at(ws, c".git", &mut budget, 0);
            notes.push(restored_note(&git_path, ok));
        };
        match (&self.before, now) {
            // Moved away or removed: nothing is planted at `.git`.
            (Before::Dir { .. } | Before::Absent | Before::Other, None) => {}
            (
                Before::Dir {
                    config,
                    hooks,
                    commondir,
                },
                Some(FileType::Directory),
            ) => {
                if let Ok(git) = nofollow_dir(ws, c".git") {
                    self.restore_dir(git.as_fd(), config, hooks.as_ref(), commondir, &mut notes);
                }
            }
            (Before::Absent | Before::File(_), Some(FileType::Directory)) => {
                self.check_new_repo(&mut notes);
            }
            // A link or a `gitdir:` file where a folder (or nothing) was:
            // git would follow it to a repository the command chose.
            (Before::Dir { .. } | Before::Absent, Some(_)) => remove_git(&mut notes),
            (Before::File(kept), _) => {
                if !same_at(ws, c".git", kept) {
                    notes.push(restored_note(&git_path, write_at(ws, c".git", kept)));
                }
            }
            // What the user had there (a link, a huge file) is theirs.
            (Before::Other, Some(_)) => {}
        }
        // Nested repositories, submodules, and what configs point at.
        notes.extend(crate::git_plants::scan(&self.root, self.started));
        notes
    }

    fn restore_dir(
        &self,
        git: BorrowedFd<'_>,
        config: &Option<Kept>,
        hooks: Option<&Hooks>,
        commondir: &Option<Kept>,
        notes: &mut Vec<String>,
    ) {
        let git_path = self.root.join(".git");
        for (name, kept) in [(c"config", config), (c"commondir", commondir)] {
            let path = git_path.join(OsStr::from_bytes(name.to_bytes()));
            match kept {
                Some(kept) if !same_at(git, name, kept) => {
                    notes.push(restored_note(&path, write_at(git, name, kept)));
                }
                None if kind_at(git, name).is_some() && name == c"commondir" => {
                    let mut budget = GUARD_MAX_REMOVED;
                    notes.push(restored_note(&path, remove_at(git, name, &mut budget, 0)));
                }
                _ => {}
            }
        }
        let hooks_path = git_path.join("hooks");
        let Some(hooks) = hooks else {
            // There was no hooks folder: whatever is there now goes.
            if kind_at(git, c"hooks").is_some() {
                let mut budget = GUARD_MAX_REMOVED;
                notes.push(restored_note(
                    &hooks_path,
                    remove_at(git, c"hooks", &mut budget, 0),
                ));
            }
            return;
        };
        if kind_at(git, c"hooks").is_some_and(|(k, _, _)| k != FileType::Directory) {
            let mut budget = GUARD_MAX_REMOVED;
            let ok = remove_at(git, c"hooks", &mut budget, 0);
            notes.push(restored_note(&hooks_path, ok));
        }
        if kind_at(git, c"hooks").is_none()
            && rustix::fs::mkdirat(git, c"hooks", Mode::from_raw_mode(0o755)).is_err()
        {
            notes.push(restored_note(&hooks_path, false));
            return;
        }
        let Ok(dir) = nofollow_dir(git, c"hooks") else {
            notes.push(restored_note(&hooks_path, false));
            return;
        };
        let mut budget = GUARD_MAX_REMOVED;
        if hooks.complete {
            for name in entries(dir.as_fd(), GUARD_MAX_REMOVED) {
                if hooks.entries.iter().any(|(n, _)| n == &name) {
                    continue;
                }
                let ok = c_name(&name).is_some_and(|c| remove_at(dir.as_fd(), &c, &mut budget, 0));
                notes.push(restored_note(&hooks_path.join(&name), ok));
            }
        }
        for (name, was) in &hooks.entries {
            let Some(c) = c_name(name) else { continue };
            if entry_at(dir.as_fd(), &c).as_ref() == Some(was) {
                continue;
            }
            let ok = match was {
                Entry::File(kept) => write_at(dir.as_fd(), &c, kept),
                Entry::Link(target) => {
                    remove_at(dir.as_fd(), &c, &mut budget, 0)
                        && rustix::fs::symlinkat(target.as_slice(), dir.as_fd(), &c).is_ok()
                }
                // A folder or large file the guard kept no copy of.
                Entry::Other { .. } => false,
            };
            notes.push(restored_note(&hooks_path.join(name), ok));
        }
    }

    /// A `.git` folder that was not there before the call: only sample
    /// hooks and the keys of [`NEW_CONFIG_KEYS`] stay; `commondir` goes.
    fn check_new_repo(&self, notes: &mut Vec<String>) {
        let git_path = self.root.join(".git");
        let Ok(git) = nofollow_dir(self.workspace.as_fd(), c".git") else {
            return;
        };
        let git = git.as_fd();
        let mut budget = GUARD_MAX_REMOVED;
        if kind_at(git, c"commondir").is_some() {
            let ok = remove_at(git, c"commondir", &mut budget, 0);
            notes.push(planted_note(&git_path.join("commondir"), ok));
        }
        let hooks_path = git_path.join("hooks");
        match kind_at(git, c"hooks").map(|(k, _, _)| k) {
            None => {}
            Some(FileType::Directory) => {
                if let Ok(dir) = nofollow_dir(git, c"hooks") {
                    for name in entries(dir.as_fd(), GUARD_MAX_REMOVED) {
                        let sample = name.as_bytes().ends_with(b".sample")
                            && c_name(&name).is_some_and(|c| {
                                kind_at(dir.as_fd(), &c)
                                    .is_some_and(|(k, _, _)| k == FileType::RegularFile)
                            });
                        if !sample {
                            let ok = c_name(&name)
                                .is_some_and(|c| remove_at(dir.as_fd(), &c, &mut budget, 0));
                            notes.push(planted_note(&hooks_path.join(&name), ok));
                        }
                    }
                }
            }
            Some(_) => {
                let ok = remove_at(git, c"hooks", &mut budget, 0);
                notes.push(planted_note(&hooks_path, ok));
            }
        }
        let config_path = git_path.join("config");
        match read_at(git, c"config") {
            Some(kept) => {
                let (text, dropped) = keep_safe_keys(&kept.bytes);
                if !dropped.is_empty() {
                    let ok = write_at(
                        git,
                        c"config",
                        &Kept {
                            bytes: text,
                            mode: kept.mode,
                        },
                    );
                    notes.push(format!(
                        "Refused by the sandbox: the command made a new repository whose \
                         {} set {}; {} (a new repository keeps only the settings `git init`, \
                         `git remote add` and `git branch -u` write, so that no hook path or \
                         program is planted).",
                        config_path.display(),
                        dropped.join(", "),
                        if ok {
                            "those lines were removed"
                        } else {
                            "they could NOT be removed"
                        }
                    ));
                }
            }
            None => {
                if kind_at(git, c"config").is_some() {
                    let ok = remove_at(git, c"config", &mut budget, 0);
                    notes.push(planted_note(&config_path, ok));
                }
            }
        }
    }
}

/// The lines of a git config file (`git-config(1)`, "Syntax") whose keys
/// [`NEW_CONFIG_KEYS`] lists, with comments and section headers; returns
/// the kept text and the dropped keys (`section.key`, at most 20 named).
/// A header followed by more text on its line, an `[include]` or any other
/// section, and a line continued with `\` all follow the fate of their key.
pub(crate) fn keep_safe_keys(text: &[u8]) -> (Vec<u8>, Vec<String>) {
    let text = String::from_utf8_lossy(text);
    let mut out = String::new();
    let mut dropped = Vec::new();
    let mut section: Option<String> = None;
    let mut keep_continued = true;
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if continued {
            continued = crate::git_plants::ends_continued(body);
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
            section = header(rest);
            match &section {
                Some(name) if NEW_CONFIG_KEYS.iter().any(|(s, _)| s == name) => {
                    out.push_str(line);
                }
                Some(_) => {}
                None => dropped.push(t.chars().take(60).collect()),
            }
            continue;
        }
        let key: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect::<String>()
            .to_ascii_lowercase();
        let keep = section.as_deref().is_some_and(|s| {
            NEW_CONFIG_KEYS
                .iter()
                .any(|(sec, k)| *sec == s && *k == key)
        });
        continued = crate::git_plants::ends_continued(body);
        keep_continued = keep;
        if keep {
            out.push_str(line);
        } else {
            dropped.push(format!("{}.{key}", section.as_deref().unwrap_or("?")));
        }
    }
    dropped.dedup();
    dropped.truncate(20);
    (out.into_bytes(), dropped)
}

/// The section name of a header line's text after `[`, lower case, when the
/// line holds the header alone (a comment may follow); `None` otherwise.
fn header(rest: &str) -> Option<String> {
    let close = rest.find(']')?;
    let after = rest[close + 1..].trim();
    if !(after.is_empty() || after.starts_with('#') || after.starts_with(';')) {
        return None;
    }
    let inner = &rest[..close];
    let name: String = inner
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

fn restored_note(path: &Path, ok: bool) -> String {
    let what = if ok {
        "was undone"
    } else {
        "could NOT be undone"
    };
    format!(
        "Refused by the sandbox: the command changed {}; the change {what} (.git/config and \
         .git/hooks are read-only in the sandbox, so that no hook or remote can be planted; `git \
         remote add` and `branch -u` need a person to run them outside the sandbox).",
        path.display()
    )
}

fn planted_note(path: &Path, ok: bool) -> String {
    let what = if ok {
        "it was removed"
    } else {
        "it could NOT be removed"
    };
    format!(
        "Refused by the sandbox: the command made a new repository with {}; {what} (a hook or \
         common-folder pointer planted by a command would run or be read by the user's next git \
         command outside the sandbox).",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    /// A workspace with a `.git` holding `config`, two hooks, and an
    /// outside folder with a victim file.
    struct Fixture {
        ws: tempfile::TempDir,
        out: tempfile::TempDir,
    }

    fn fixture() -> Fixture {
        let ws = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let git = ws.path().join(".git");
        std::fs::create_dir_all(git.join("hooks")).unwrap();
        std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(git.join("hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        std::fs::write(git.join("hooks/commit-msg.sample"), "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::write(out.path().join("victim.txt"), "outside").unwrap();
        Fixture { ws, out }
    }

    impl Fixture {
        fn git(&self) -> PathBuf {
            self.ws.path().join(".git")
        }

        /// The outside folder is exactly as made: one file, same text.
        fn outside_untouched(&self) {
            let names: Vec<_> = std::fs::read_dir(self.out.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, vec![OsString::from("victim.txt")]);
            assert_eq!(
                std::fs::read_to_string(self.out.path().join("victim.txt")).unwrap(),
                "outside"
            );
        }

        fn hooks_as_made(&self) {
            let hooks = self.git().join("hooks");
            assert!(!std::fs::symlink_metadata(&hooks).unwrap().is_symlink());
            let mut names: Vec<_> = std::fs::read_dir(&hooks)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            assert_eq!(names, ["commit-msg.sample", "pre-commit.sample"]);
            assert_eq!(
                std::fs::read_to_string(hooks.join("commit-msg.sample")).unwrap(),
                "#!/bin/sh\nexit 0\n"
            );
        }
    }

    #[test]
    fn hooks_swapped_for_a_symlink_are_never_written_through() {
        let f = fixture();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        std::fs::remove_dir_all(f.git().join("hooks")).unwrap();
        symlink(f.out.path(), f.git().join("hooks")).unwrap();
        let notes = guard.restore();
        f.outside_untouched();
        f.hooks_as_made();
        assert!(notes.iter().any(|n| n.contains("was undone")), "{notes:?}");
    }

    #[test]
    fn config_swapped_for_a_symlink_is_replaced_not_followed() {
        let f = fixture();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        std::fs::remove_file(f.git().join("config")).unwrap();
        symlink(f.out.path().join("victim.txt"), f.git().join("config")).unwrap();
        let notes = guard.restore();
        f.outside_untouched();
        let config = f.git().join("config");
        assert!(std::fs::symlink_metadata(&config).unwrap().is_file());
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            "[core]\n\tbare = false\n"
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn hooks_swapped_for_a_file_become_the_folder_again() {
        let f = fixture();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        std::fs::remove_dir_all(f.git().join("hooks")).unwrap();
        std::fs::write(f.git().join("hooks"), "not a folder").unwrap();
        guard.restore();
        f.hooks_as_made();
    }

    #[test]
    fn nested_links_inside_hooks_are_removed_not_followed() {
        let f = fixture();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        let hooks = f.git().join("hooks");
        // A hook made a link to an outside file, a planted folder holding
        // a link to the outside folder, and a planted executable hook.
        std::fs::remove_file(hooks.join("commit-msg.sample")).unwrap();
        symlink(
            f.out.path().join("victim.txt"),
            hooks.join("commit-msg.sample"),
        )
        .unwrap();
        std::fs::create_dir(hooks.join("deep")).unwrap();
        symlink(f.out.path(), hooks.join("deep/out")).unwrap();
        std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\necho pwned\n").unwrap();
        std::fs::set_permissions(hooks.join("pre-commit"), PermissionsExt::from_mode(0o755))
            .unwrap();
        let notes = guard.restore();
        f.outside_untouched();
        f.hooks_as_made();
        assert_eq!(notes.len(), 3, "{notes:?}");
    }

    /// Hook managers link their scripts into `.git/hooks`: a link that was
    /// there stays, and one the command changed points back where it did.
    #[test]
    fn the_users_own_linked_hooks_are_kept() {
        let f = fixture();
        let hooks = f.git().join("hooks");
        symlink("../../tools/pre-push", hooks.join("pre-push")).unwrap();
        symlink("../../tools/pre-merge", hooks.join("pre-merge-commit")).unwrap();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        assert!(guard.restore().is_empty());
        std::fs::remove_file(hooks.join("pre-merge-commit")).unwrap();
        symlink(f.out.path(), hooks.join("pre-merge-commit")).unwrap();
        let notes = guard.restore();
        assert_eq!(notes.len(), 1, "{notes:?}");
        for (name, target) in [
            ("pre-push", "../../tools/pre-push"),
            ("pre-merge-commit", "../../tools/pre-merge"),
        ] {
            assert_eq!(
                std::fs::read_link(hooks.join(name)).unwrap(),
                PathBuf::from(target)
            );
        }
        f.outside_untouched();
    }

    #[test]
    fn a_git_symlink_where_the_folder_was_is_removed() {
        let f = fixture();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        std::fs::rename(f.git(), f.ws.path().join(".git-old")).unwrap();
        symlink(f.out.path(), f.git()).unwrap();
        let notes = guard.restore();
        f.outside_untouched();
        assert!(std::fs::symlink_metadata(f.git()).is_err());
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn a_fresh_git_in_place_of_the_renamed_one_gets_the_old_hooks_and_config() {
        let f = fixture();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        std::fs::rename(f.git(), f.ws.path().join(".git-old")).unwrap();
        std::fs::create_dir_all(f.git().join("hooks")).unwrap();
        std::fs::write(f.git().join("hooks/pre-commit"), "#!/bin/sh\necho pwned\n").unwrap();
        std::fs::write(f.git().join("config"), "[core]\n\thooksPath = /tmp/x\n").unwrap();
        guard.restore();
        f.hooks_as_made();
        assert_eq!(
            std::fs::read_to_string(f.git().join("config")).unwrap(),
            "[core]\n\tbare = false\n"
        );
    }

    #[test]
    fn a_planted_commondir_is_removed() {
        let f = fixture();
        let guard = GitGuard::snapshot(f.ws.path()).unwrap();
        std::fs::write(f.git().join("commondir"), "../evil\n").unwrap();
        let notes = guard.restore();
        assert!(!f.git().join("commondir").exists());
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn a_new_repository_keeps_sample_hooks_and_safe_settings_only() {
        let ws = tempfile::tempdir().unwrap();
        let guard = GitGuard::snapshot(ws.path()).unwrap();
        let git = ws.path().join(".git");
        std::fs::create_dir_all(git.join("hooks")).unwrap();
        std::fs::write(git.join("hooks/pre-push.sample"), "#!/bin/sh\n").unwrap();
        std::fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\necho pwned\n").unwrap();
        std::fs::write(
            git.join("config"),
            "[core]\n\trepositoryformatversion = 0\n\thooksPath = evil\n\tfsmonitor = \"sh \\\n -c evil\"\n\
             [remote \"origin\"]\n\turl = https://example.com/x.git\n[alias]\n\tst = !sh evil\n\
             [core] editor = evil\n[include]\n\tpath = ../evil.cfg\n",
        )
        .unwrap();
        std::fs::write(git.join("commondir"), "../evil\n").unwrap();
        let notes = guard.restore();
        assert!(git.join("hooks/pre-push.sample").exists());
        assert!(!git.join("hooks/pre-commit").exists());
        assert!(!git.join("commondir").exists());
        assert_eq!(
            std::fs::read_to_string(git.join("config")).unwrap(),
            "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://example.com/x.git\n"
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[2].contains("core.hookspath"), "{notes:?}");
    }

    #[test]
    fn an_unchanged_git_gives_no_note_and_a_workspace_without_git_stays_so() {
        let f = fixture();
        assert!(
            GitGuard::snapshot(f.ws.path())
                .unwrap()
                .restore()
                .is_empty()
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(
            GitGuard::snapshot(empty.path())
                .unwrap()
                .restore()
                .is_empty()
        );
        assert!(!empty.path().join(".git").exists());
    }

    #[test]
    fn a_gitdir_file_goes_back_to_its_text() {
        let ws = tempfile::tempdir().unwrap();
        let git = ws.path().join(".git");
        std::fs::write(&git, "gitdir: /somewhere/.git/worktrees/x\n").unwrap();
        let guard = GitGuard::snapshot(ws.path()).unwrap();
        std::fs::write(&git, "gitdir: evil\n").unwrap();
        assert_eq!(guard.restore().len(), 1);
        assert_eq!(
            std::fs::read_to_string(&git).unwrap(),
            "gitdir: /somewhere/.git/worktrees/x\n"
        );
    }
}
