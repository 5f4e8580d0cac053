//! Rewriting the relative paths of a skill's body so that `read_file` opens
//! them: a body says `[the form guide](reference/forms.md)` relative to its
//! own folder, while the model's paths are relative to the workspace.
//!
//! Rewritten: the target of a Markdown link or image (`[text](path)`,
//! `![alt](path "title")`, `<path>` targets) and an inline code span that is
//! nothing but a path (`` `scripts/fill.py` ``), when the path is relative
//! (no scheme, no leading `/`, `~` or `#`) and names a file or folder that
//! exists inside the skill's folder. Text in fenced code blocks is left
//! alone (commands there are the skill's own), and so is every other path;
//! the result's header names the skill's folder for those. A link to a file
//! that does not exist is left as written and reported.

use std::path::{Component, Path, PathBuf};

/// The body with paths rewritten, and the targets that named nothing.
pub(super) struct Resolved {
    pub(super) body: String,
    pub(super) missing: Vec<String>,
}

/// Rewrites `body`'s relative paths inside `folder` (canonical) with `show`,
/// which turns an absolute path into the form the model should use.
pub(super) fn resolve(body: &str, folder: &Path, show: &dyn Fn(&Path) -> String) -> Resolved {
    let mut out = String::with_capacity(body.len());
    let mut missing = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in body.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        if let Some(c) = marker {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= 3 {
                fence = match fence {
                    None => Some((c, run)),
                    Some((open, n)) if open == c && run >= n => None,
                    still => still,
                };
                out.push_str(line);
                continue;
            }
        }
        if fence.is_some() {
            out.push_str(line);
        } else {
            rewrite_line(line, folder, show, &mut out, &mut missing);
        }
    }
    Resolved { body: out, missing }
}

/// One line outside code fences: code spans and link targets.
fn rewrite_line(
    line: &str,
    folder: &Path,
    show: &dyn Fn(&Path) -> String,
    out: &mut String,
    missing: &mut Vec<String>,
) {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            let open_end = i + run;
            let Some(close) = find_run(line, open_end, run) else {
                i = open_end;
                continue;
            };
            let inner = &line[open_end..close];
            if let Some(shown) = existing(inner.trim(), folder, show) {
                out.push_str(&line[copied..open_end]);
                out.push_str(&shown);
                copied = close;
            }
            i = close + run;
            continue;
        }
        if bytes[i] == b']' && bytes.get(i + 1) == Some(&b'(') {
            let start = i + 2;
            let Some(len) = line[start..].find(')') else {
                break;
            };
            let inside = &line[start..start + len];
            let (target, rest) = split_target(inside);
            if is_relative(target) {
                let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
                match existing(path, folder, show) {
                    Some(shown) => {
                        out.push_str(&line[copied..start]);
                        out.push_str(&shown);
                        if !fragment.is_empty() {
                            out.push('#');
                            out.push_str(fragment);
                        }
                        out.push_str(rest);
                        copied = start + len;
                    }
                    None if !path.is_empty() => missing.push(path.to_owned()),
                    None => {}
                }
            }
            i = start + len + 1;
            continue;
        }
        i += 1;
    }
    out.push_str(&line[copied..]);
}

/// The byte index of the next run of exactly `run` backticks from `from`.
fn find_run(line: &str, from: usize, run: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let n = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if n == run {
                return Some(i);
            }
            i += n;
        } else {
            i += 1;
        }
    }
    None
}

/// A link's destination and what follows it (a title), `<...>` unwrapped.
fn split_target(inside: &str) -> (&str, &str) {
    let inside = inside.trim_start();
    if let Some(rest) = inside.strip_prefix('<') {
        if let Some(end) = rest.find('>') {
            return (&rest[..end], "");
        }
    }
    match inside.find(char::is_whitespace) {
        Some(i) => (&inside[..i], &inside[i..]),
        None => (inside, ""),
    }
}

/// Whether a link target is a relative path (no scheme, no absolute path,
/// no home folder, not a bare fragment).
fn is_relative(target: &str) -> bool {
    !target.is_empty()
        && !target.starts_with(['/', '\\', '~', '#'])
        && !target.contains("://")
        && !target.starts_with("mailto:")
        && !target.starts_with("data:")
}

/// `rel` shown by `show` when it names an existing entry inside `folder`
/// (after following symbolic links: one that leads out is not rewritten).
fn existing(rel: &str, folder: &Path, show: &dyn Fn(&Path) -> String) -> Option<String> {
    if !is_relative(rel) || rel.contains(char::is_whitespace) || rel.len() > 1024 {
        return None;
    }
    let joined = join_inside(folder, rel)?;
    let real = joined.canonicalize().ok()?;
    if !real.starts_with(folder) || real == folder {
        return None;
    }
    Some(show(&joined))
}

/// `folder` joined with the relative path `rel` (`/`-separated, a leading
/// `./` accepted), or `None` when `rel` is empty, absolute or holds `..`.
/// Symbolic links are not looked at here: the caller checks where the
/// joined path really leads.
pub(super) fn join_inside(folder: &Path, rel: &str) -> Option<PathBuf> {
    let rel = rel.strip_prefix("./").unwrap_or(rel);
    let mut joined = PathBuf::from(folder);
    let mut any = false;
    for part in Path::new(rel).components() {
        match part {
            Component::Normal(p) => {
                joined.push(p);
                any = true;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    any.then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("pdf");
        std::fs::create_dir_all(folder.join("scripts")).unwrap();
        std::fs::write(folder.join("forms.md"), "f").unwrap();
        std::fs::write(folder.join("scripts/fill.py"), "p").unwrap();
        std::fs::write(dir.path().join("outside.md"), "o").unwrap();
        let folder = folder.canonicalize().unwrap();
        (dir, folder)
    }

    fn show(p: &Path) -> String {
        format!("WS/{}", p.file_name().unwrap().to_string_lossy())
    }

    #[test]
    fn links_and_code_spans() {
        let (_dir, folder) = setup();
        let body = "See [forms](forms.md#top \"Forms\") and ![x](./scripts/fill.py).\n\
                    Run `scripts/fill.py`, not `missing.py` or `fill`.\n\
                    [web](https://e.com/a.md) [abs](/etc/passwd) [up](../outside.md) [frag](#x)\n\
                    [gone](nothing.md) [angle](<forms.md>)\n";
        let r = resolve(body, &folder, &show);
        assert_eq!(
            r.body,
            "See [forms](WS/forms.md#top \"Forms\") and ![x](WS/fill.py).\n\
             Run `WS/fill.py`, not `missing.py` or `fill`.\n\
             [web](https://e.com/a.md) [abs](/etc/passwd) [up](../outside.md) [frag](#x)\n\
             [gone](nothing.md) [angle](WS/forms.md)\n"
        );
        assert_eq!(r.missing, ["../outside.md", "nothing.md"]);
    }

    #[test]
    fn fenced_code_is_left_alone() {
        let (_dir, folder) = setup();
        let body = "```sh\npython `scripts/fill.py` [a](forms.md)\n```\n[a](forms.md)\n";
        let r = resolve(body, &folder, &show);
        assert_eq!(
            r.body,
            "```sh\npython `scripts/fill.py` [a](forms.md)\n```\n[a](WS/forms.md)\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlink_out_of_the_folder_is_not_followed() {
        let (dir, folder) = setup();
        std::os::unix::fs::symlink(dir.path().join("outside.md"), folder.join("link.md")).unwrap();
        let r = resolve("[l](link.md)", &folder, &show);
        assert_eq!(r.body, "[l](link.md)");
        assert_eq!(r.missing, ["link.md"]);
    }
}
