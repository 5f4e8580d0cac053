//! The files beside a skill's `SKILL.md`: listing them ([`Skill::files`])
//! and reading one confined to the skill's folder ([`Skill::read_file`]).
//! The confined read is the one `SKILL.md` itself is loaded with
//! ([`read_inside`]), and relative paths are joined as the `skill` tool's
//! path rewriting joins them ([`paths::join_inside`](super::paths::join_inside)).

use std::fmt;
use std::io::Read;
use std::path::Path;

use super::{MAX_LISTED_FILES, SKILL_FILE, Skill, paths};

/// Largest file beside a skill that [`Skill::read_file`] reads: 1 MiB
/// (1 048 576 bytes). A larger one is refused with
/// [`SkillFileError::TooLarge`].
pub const MAX_SKILL_FILE_BYTES: u64 = 1 << 20;

/// Folder levels below the skill's folder that [`Skill::files`] lists (3).
const LISTED_DEPTH: usize = 3;

/// One file beside a skill's `SKILL.md` ([`Skill::files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// The path relative to the skill's folder, `/`-separated
    /// (`scripts/fill.py`).
    pub path: String,
    /// Its size in bytes, when listed.
    pub bytes: u64,
    /// The MIME type guessed from the extension ([`mime_type`]).
    pub mime_type: &'static str,
}

impl SkillFile {
    /// Whether the file is text by its MIME type ([`is_text`]).
    pub fn is_text(&self) -> bool {
        is_text(self.mime_type)
    }
}

/// The MIME type of a file by its extension (case-insensitive): Markdown,
/// plain text, common source and data formats, images, PDF;
/// `application/octet-stream` for any other extension and for none.
pub fn mime_type(path: &str) -> &'static str {
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" => "text/plain",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "rb" => "text/x-ruby",
        "rs" => "text/x-rust",
        "go" => "text/x-go",
        "java" => "text/x-java",
        "c" | "h" => "text/x-c",
        "cc" | "cpp" | "hpp" => "text/x-c++",
        "sql" => "text/x-sql",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Whether `mime_type` is a text type: `text/*`, JSON, YAML, TOML and XML
/// (`+xml` and `+json` suffixes included).
pub fn is_text(mime_type: &str) -> bool {
    mime_type.starts_with("text/")
        || matches!(
            mime_type,
            "application/json" | "application/yaml" | "application/toml" | "application/xml"
        )
        || mime_type.ends_with("+xml")
        || mime_type.ends_with("+json")
}

/// Why [`Skill::read_file`] refused a file. The message (`Display`) names
/// the path as given and says why, in one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillFileError {
    /// The path is empty, absolute or holds `..`.
    NotInside(String),
    /// No such file in the skill's folder.
    NotFound(String),
    /// A folder, FIFO, socket or device, not a regular file.
    NotAFile(String),
    /// A symbolic link (of the path or a folder on it) leads out of the
    /// skill's folder.
    Outside(String),
    /// Larger than [`MAX_SKILL_FILE_BYTES`]: the path and its size.
    TooLarge(String, u64),
    /// Any other I/O error: the path and the error's text.
    Io(String, String),
}

impl fmt::Display for SkillFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInside(p) => write!(
                f,
                "{p} is not a path inside the skill's folder (relative, without `..`)"
            ),
            Self::NotFound(p) => write!(f, "{p} does not exist in the skill's folder"),
            Self::NotAFile(p) => write!(f, "{p} is not a regular file"),
            Self::Outside(p) => write!(
                f,
                "{p} leads out of the skill's folder (a symbolic link); only files inside it \
                 can be read"
            ),
            Self::TooLarge(p, bytes) => write!(
                f,
                "{p} is {bytes} bytes; a skill's file is read up to {MAX_SKILL_FILE_BYTES} bytes \
                 (1 MiB)"
            ),
            Self::Io(p, e) => write!(f, "cannot read {p}: {e}"),
        }
    }
}

impl std::error::Error for SkillFileError {}

/// Why [`read_inside`] refused a file (the callers word the message).
#[derive(Debug)]
pub(super) enum Refusal {
    NotFound,
    Directory,
    NotRegular,
    Outside,
    /// More bytes than the limit: the size when known (from the file's
    /// metadata), else the limit plus one.
    TooLarge(u64),
    Io(std::io::Error),
}

/// Reads `file`, which must lie inside the canonical folder `real` after
/// symbolic links are followed, be a regular file (opened non-blocking and
/// checked before any read, so a FIFO never blocks) and hold at most
/// `limit` bytes.
pub(super) fn read_inside(file: &Path, real: &Path, limit: u64) -> Result<Vec<u8>, Refusal> {
    use std::os::unix::fs::OpenOptionsExt;
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(file)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Refusal::NotFound,
            _ => Refusal::Io(e),
        })?;
    let meta = handle.metadata().map_err(Refusal::Io)?;
    if meta.is_dir() {
        return Err(Refusal::Directory);
    }
    if !meta.is_file() {
        return Err(Refusal::NotRegular);
    }
    if !file.canonicalize().is_ok_and(|f| f.starts_with(real)) {
        return Err(Refusal::Outside);
    }
    if meta.len() > limit {
        return Err(Refusal::TooLarge(meta.len()));
    }
    let mut bytes = Vec::new();
    handle
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Refusal::TooLarge(limit + 1));
    }
    Ok(bytes)
}

impl Skill {
    /// The files under the skill's folder other than its `SKILL.md`, in
    /// name order: at most [`MAX_LISTED_FILES`], 3 folder levels deep,
    /// hidden entries (names starting with `.`) and symbolic links skipped.
    pub fn files(&self) -> Vec<SkillFile> {
        fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<SkillFile>) {
            let Ok(read) = std::fs::read_dir(dir) else {
                return;
            };
            let mut entries: Vec<_> = read.filter_map(Result::ok).collect();
            entries.sort_by_key(std::fs::DirEntry::file_name);
            for entry in entries {
                if out.len() >= MAX_LISTED_FILES {
                    return;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if name.starts_with('.') || kind.is_symlink() {
                    continue;
                }
                let rel = format!("{prefix}{name}");
                if kind.is_dir() {
                    if depth < LISTED_DEPTH {
                        walk(&entry.path(), &format!("{rel}/"), depth + 1, out);
                    }
                } else if kind.is_file() && !(depth == 1 && name == SKILL_FILE) {
                    let bytes = entry.metadata().map_or(0, |m| m.len());
                    out.push(SkillFile {
                        mime_type: mime_type(&rel),
                        path: rel,
                        bytes,
                    });
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.folder, "", 1, &mut out);
        out
    }

    /// The bytes of the file at `rel` (relative to the skill's folder,
    /// `/`-separated; a leading `./` is accepted), listed by
    /// [`files`](Self::files) or not.
    ///
    /// # Errors
    /// A [`SkillFileError`] when `rel` is empty, absolute or holds `..`;
    /// when it names nothing, a folder or a special file; when it (or a
    /// folder on the way) is a symbolic link leading out of the skill's
    /// folder; when the file is larger than [`MAX_SKILL_FILE_BYTES`].
    pub fn read_file(&self, rel: &str) -> Result<Vec<u8>, SkillFileError> {
        let shown = || tool_rules::text::clip(rel, tool_rules::text::Clip::chars(200)).into_owned();
        let Some(path) = paths::join_inside(&self.folder, rel) else {
            return Err(SkillFileError::NotInside(shown()));
        };
        read_inside(&path, &self.folder, MAX_SKILL_FILE_BYTES).map_err(|r| match r {
            Refusal::NotFound => SkillFileError::NotFound(shown()),
            Refusal::Directory | Refusal::NotRegular => SkillFileError::NotAFile(shown()),
            Refusal::Outside => SkillFileError::Outside(shown()),
            Refusal::TooLarge(bytes) => SkillFileError::TooLarge(shown(), bytes),
            Refusal::Io(e) => SkillFileError::Io(shown(), e.to_string()),
        })
    }
}
