//! A [`ToolResult`] as the `tool` program prints it: one JSON object, JSON
//! output embedded as JSON, binary content written to files.

use std::cell::{Cell, OnceCell};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use image::ImageFormat;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tool_core::{Attachment, Image, ToolError, ToolResult};

use crate::base64;

/// The printed result object. Field order is the documented order.
#[derive(Serialize)]
pub(crate) struct Printed<'a> {
    /// The batch line's `id`, echoed back when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    trace_id: &'a str,
    tool: Option<&'a str>,
    title: Option<&'a str>,
    output: Output<'a>,
    error: Option<&'a ToolError>,
    /// What the model is told about how its input was read (argument repairs, approver edits).
    notes: &'a [String],
    metadata: &'a Map<String, Value>,
    long_term_memory: Option<&'a str>,
    images: Vec<SavedImage>,
    attachments: Vec<SavedAttachment>,
}

/// The result object of `tool call` (as [`render`] builds it, turned into
/// JSON) as text for a person at a terminal: the title as a first line, the
/// output (JSON output indented), `error (kind): message`, one `note:` line
/// per note, one `image:` / `file:` line per file written, and the trace id
/// last. Nothing is cut: the output is the tool's, already within the
/// registry's output budget. Control characters other than newline and tab
/// (escape sequences, a lone carriage return, bidirectional overrides) are
/// written escaped ([`escape_controls`]): a tool's output (a file's content,
/// an MCP server's answer) cannot drive the terminal.
pub(crate) fn readable(printed: &Value) -> String {
    escape_controls(&readable_raw(printed))
}

/// `text` with every character that would act on a terminal rather than be
/// shown written as an escape: C0 controls but `\n` and `\t` (and `\r`
/// before `\n`), DEL and C1 controls as `\x1b`, and the Unicode
/// bidirectional controls (U+202A–U+202E, U+2066–U+2069) as `\u{202e}`,
/// the way the JSON form spells them apart.
pub(crate) fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek() == Some(&'\n') => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// [`readable`] before its control characters are escaped.
fn readable_raw(printed: &Value) -> String {
    let mut text = String::new();
    let mut line = |s: &str| {
        text.push_str(s);
        if !s.ends_with('\n') {
            text.push('\n');
        }
    };
    if let Some(title) = printed["title"].as_str().filter(|t| !t.is_empty()) {
        line(&format!("== {title}"));
    }
    match &printed["output"] {
        Value::String(s) if s.is_empty() => {}
        Value::String(s) => line(s),
        Value::Null => {}
        other => line(&serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string())),
    }
    if let Some(error) = printed["error"].as_object() {
        let kind = error.get("kind").and_then(Value::as_str).unwrap_or("error");
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        line(&format!("error ({kind}): {message}"));
    }
    for note in printed["notes"].as_array().into_iter().flatten() {
        line(&format!("note: {}", note.as_str().unwrap_or_default()));
    }
    for (key, label) in [("images", "image"), ("attachments", "file")] {
        for item in printed[key].as_array().into_iter().flatten() {
            match (item["path"].as_str(), item["error"].as_str()) {
                (Some(path), _) => line(&format!("{label}: {path}")),
                (None, Some(error)) => line(&format!("{label} not written: {error}")),
                (None, None) => {}
            }
        }
    }
    if let Some(trace) = printed["trace_id"].as_str() {
        line(&format!("(trace {trace})"));
    }
    // `call` ends the text with its own newline.
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

/// `output`: the text, or the JSON it holds.
enum Output<'a> {
    Text(&'a str),
    Json(Box<RawValue>),
}

impl Serialize for Output<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(t) => s.serialize_str(t),
            Self::Json(raw) => raw.serialize(s),
        }
    }
}

/// An image as reported: where its bytes were written.
#[derive(Serialize)]
struct SavedImage {
    media_type: String,
    path: Option<String>,
    bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Writing failed (as opposed to invalid data): the run exits 1.
    #[serde(skip)]
    write_failed: bool,
}

/// An attachment as reported: its file on disk (written here when it came inline).
#[derive(Serialize)]
struct SavedAttachment {
    name: String,
    media_type: String,
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Writing failed (as opposed to invalid data): the run exits 1.
    #[serde(skip)]
    write_failed: bool,
}

/// Where binary output goes, from `--out`:
///
/// - none: the trace's folder `<private dir>/out/<trace folder>`
///   (`tool_core::truncate::private_dir`, `trace_folder_name`), created on
///   first use with mode `0700` inside the per-user `0700` private dir; each
///   of the three is refused when it is a symbolic link, another user's or
///   not mode `0700`;
/// - a folder: a path that ends with `/`, or names an existing folder, or has
///   no extension (created when missing), used as given;
/// - an image file: a path ending in `.png`, `.jpg`, `.jpeg`, `.gif`, `.webp`
///   or `.bmp` (any case; [`FILE_FORMATS`]) that is not an existing folder:
///   the first image of a result is written to it in that format (converted
///   when the tool made another), replacing a regular file there; `tool batch`
///   numbers the results after the first (`g.png`, `g-2.png`, `g-3.png` …);
///   the other images and inline files go beside it;
/// - anything else (another extension, an existing file without one, such as
///   `/dev/full`) is a usage error before the tool runs.
///
/// The folder is opened once, on the first write, with `O_DIRECTORY |
/// O_NOFOLLOW` (a folder that is a symbolic link is refused: `--out` never
/// follows one), and every file is made beneath that handle (`openat`,
/// `renameat`), so a folder swapped for a link while a run writes cannot
/// redirect it. A folder inside the private tree
/// (`tool_core::truncate::private_dir`: other traces' spill and output
/// folders) is refused unless it is this trace's own output folder (no
/// `--out`).
///
/// Nothing is replaced but the file the user named: every other file is
/// new (`O_CREAT | O_EXCL`, which never follows a symbolic link, and
/// removed again when writing fails); `tool batch`'s numbered files
/// (`g-2.png` …) that already exist are refused, not replaced. The named
/// file is written whole or not at all: into a new temporary file beside
/// it, then renamed over it. A symbolic link, folder or device at the named
/// file is refused, its target untouched.
pub(crate) struct OutDir {
    place: Place,
    /// Results whose first image went to the named file so far (`tool batch`).
    file_results: Cell<u32>,
    /// The folder, opened on the first write.
    folder: OnceCell<Folder>,
}

/// Every folder `--out` refuses to write into, whatever this process's own
/// configuration (review 23, F10: only the current private folder was
/// refused, so another spelling of the same user's trees got through): the
/// private folder as configured now, the temp-dir private folder that the
/// same user's processes started without `XDG_RUNTIME_DIR` use
/// (`<temp>/agent-tools-<uid>`), `$XDG_RUNTIME_DIR/agent-tools`, and the
/// state folder (`$XDG_STATE_HOME/agent-tools` and the default
/// `~/.local/state/agent-tools`). Canonical where they exist.
fn private_trees() -> Vec<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    let mut trees = vec![
        tool_core::truncate::private_dir_location(),
        std::env::temp_dir().join(format!("agent-tools-{uid}")),
    ];
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(run) = absolute("XDG_RUNTIME_DIR") {
        trees.push(run.join("agent-tools"));
    }
    trees.extend(tool_core::state::state_dir());
    if let Some(home) = absolute("HOME") {
        trees.push(home.join(".local/state/agent-tools"));
    }
    trees
        .into_iter()
        .map(|t| t.canonicalize().unwrap_or(t))
        .collect()
}

/// An output folder opened once, and its path (from the handle, for
/// messages and results).
struct Folder {
    fd: rustix::fd::OwnedFd,
    path: PathBuf,
}

impl Folder {
    /// Opens `dir` as a folder, refusing a symbolic link at its last
    /// component; `private` says whether it may lie in the private tree.
    fn open(dir: &Path, private: bool) -> io::Result<Self> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // Without its trailing `/`, which would have the kernel follow a link.
        let dir: PathBuf = dir.components().collect();
        let dir = dir.as_path();
        let fd = rustix::fs::open(dir, flags, Mode::empty()).map_err(|e| {
            let e = io::Error::from(e);
            if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "it is a symbolic link to a folder; --out never follows one (name the folder itself)",
                )
            } else {
                e
            }
        })?;
        let path = std::fs::read_link(format!(
            "/proc/self/fd/{}",
            rustix::fd::AsRawFd::as_raw_fd(&fd)
        ))
        .or_else(|_| dir.canonicalize())?;
        if !private && let Some(tree) = private_trees().into_iter().find(|t| path.starts_with(t)) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it is inside the private folder {} (spill and output folders of every \
                     trace, ledgers and caches of this user's agent-tools processes); leave --out \
                     out to use this trace's own folder",
                    tree.display()
                ),
            ));
        }
        Ok(Self { fd, path })
    }

    /// Creates `name` in this folder, failing with `AlreadyExists` when
    /// anything is there (never follows a symbolic link), and writes
    /// `bytes`; a file that cannot be written whole is removed again.
    fn write_new(&self, name: &str, bytes: &[u8], mode: u32) -> io::Result<PathBuf> {
        use rustix::fs::{Mode, OFlags};
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode))?;
        let mut file = File::from(fd);
        if let Err(e) = write_all(&mut file, bytes) {
            drop(file);
            // Never leave a partial file behind.
            let _ = rustix::fs::unlinkat(&self.fd, name, rustix::fs::AtFlags::empty());
            return Err(e);
        }
        Ok(self.path.join(name))
    }

    /// Replaces `name` (a regular file or nothing) with `bytes`, whole or
    /// not at all: a new temporary file beside it, synced, then renamed.
    fn replace(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let target = self.path.join(name);
        let shown = target.display();
        match rustix::fs::statat(&self.fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(format!("cannot write {shown}: {e}")),
            Ok(st) => {
                let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
                if kind == rustix::fs::FileType::Symlink {
                    return Err(format!(
                        "refused to write {shown}: it is a symbolic link; --out never writes through one"
                    ));
                }
                if kind != rustix::fs::FileType::RegularFile {
                    return Err(format!(
                        "refused to write {shown}: it exists and is not a regular file"
                    ));
                }
            }
        }
        let temp = format!(".{name}.tmp-{}", std::process::id());
        let _ = rustix::fs::unlinkat(&self.fd, temp.as_str(), rustix::fs::AtFlags::empty());
        self.write_new(&temp, bytes, 0o644)
            .and_then(|_| {
                rustix::fs::renameat(&self.fd, temp.as_str(), &self.fd, name).map_err(|e| {
                    let _ =
                        rustix::fs::unlinkat(&self.fd, temp.as_str(), rustix::fs::AtFlags::empty());
                    io::Error::from(e)
                })
            })
            .map_err(|e| format!("cannot write {shown}: {e}"))?;
        Ok(target)
    }
}

enum Place {
    /// `--out DIR`.
    Explicit(PathBuf),
    /// `--out FILE.png` and the format its extension names.
    File(PathBuf, ImageFormat),
    /// The trace's folder name under `<private dir>/out`.
    PerTrace(String),
}

/// The image formats `--out FILE` writes, by extension (compared without
/// regard to case): the formats the `image` crate encodes with the features
/// this program builds it with.
pub(crate) const FILE_FORMATS: &[(&str, ImageFormat)] = &[
    ("png", ImageFormat::Png),
    ("jpg", ImageFormat::Jpeg),
    ("jpeg", ImageFormat::Jpeg),
    ("gif", ImageFormat::Gif),
    ("webp", ImageFormat::WebP),
    ("bmp", ImageFormat::Bmp),
];

/// `png, jpg, jpeg, gif, webp, bmp`.
fn file_format_list() -> String {
    FILE_FORMATS
        .iter()
        .map(|(e, _)| *e)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Refuses an `--out` path one of whose folders, as written, is a symbolic
/// link (review 23, F8: `--out lnk/imgs/` followed a link planted one level
/// up and wrote outside). The last component is checked where it is opened
/// (`Folder::open`, `replace`). Written relative paths are checked from the
/// current folder; the folders above an absolute path's first component are
/// not special-cased: a link anywhere in what the person wrote is refused.
fn refuse_linked_parents(p: &Path) -> Result<(), String> {
    let mut prefix = PathBuf::new();
    let mut components = p.components().peekable();
    while let Some(component) = components.next() {
        prefix.push(component);
        if components.peek().is_none() {
            break;
        }
        if matches!(
            component,
            std::path::Component::RootDir | std::path::Component::CurDir
        ) {
            continue;
        }
        if std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "--out {}: {} is a symbolic link; name the folder it points to, so that a link \
                 planted in a workspace cannot redirect the output",
                p.display(),
                prefix.display()
            ));
        }
    }
    Ok(())
}

impl OutDir {
    /// Where this run's binary output goes (see [`OutDir`]).
    ///
    /// # Errors
    /// A usage message when `--out` names neither a folder nor an image file.
    pub(crate) fn new(explicit: Option<&Path>, trace_id: &str) -> Result<Self, String> {
        let place = match explicit {
            None => Place::PerTrace(tool_core::truncate::trace_folder_name(Some(trace_id))),
            Some(p) => Self::place_of(p)?,
        };
        Ok(Self {
            place,
            file_results: Cell::new(0),
            folder: OnceCell::new(),
        })
    }

    fn place_of(p: &Path) -> Result<Place, String> {
        use std::os::unix::ffi::OsStrExt;
        refuse_linked_parents(p)?;
        let slash = p.as_os_str().as_bytes().ends_with(b"/");
        if slash || p.is_dir() {
            return Ok(Place::Explicit(p.to_path_buf()));
        }
        let extension = p
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension {
            Some(ext) => FILE_FORMATS
                .iter()
                .find(|(e, _)| *e == ext)
                .map(|(_, format)| Place::File(p.to_path_buf(), *format))
                .ok_or_else(|| {
                    format!(
                        "--out {}: `.{ext}` is not an image format this program writes ({}); \
                         end the path with / for a folder",
                        p.display(),
                        file_format_list()
                    )
                }),
            None if std::fs::symlink_metadata(p).is_ok() => Err(format!(
                "--out {} exists and is not a folder; name a folder (DIR or DIR/) or an image file \
                 ending in one of {}",
                p.display(),
                file_format_list()
            )),
            None => Ok(Place::Explicit(p.to_path_buf())),
        }
    }

    /// Writes the first image of a result (`bytes`, the tool's `media_type`)
    /// to the `--out FILE` named, in that file's format; `None` when `--out`
    /// is not a file name. The error names the path.
    fn write_image_file(&self, bytes: &[u8], media_type: &str) -> Option<Result<PathBuf, String>> {
        let Place::File(file, format) = &self.place else {
            return None;
        };
        let n = self.file_results.get() + 1;
        self.file_results.set(n);
        let folder = match self.folder() {
            Ok(folder) => folder,
            Err(e) => return Some(Err(format!("cannot write {}: {e}", file.display()))),
        };
        let name = numbered(file, n).to_string_lossy().into_owned();
        let shown = folder.path.join(&name);
        let shown = shown.display();
        Some(
            convert(bytes, media_type, *format)
                .map_err(|e| format!("cannot write {shown}: {e}"))
                .and_then(|encoded| {
                    if n == 1 {
                        // The file the user named: replaced.
                        return folder.replace(&name, &encoded);
                    }
                    // `g-2.png` … were not named: never replaced.
                    folder
                        .write_new(&name, &encoded, 0o644)
                        .map_err(|e| match e.kind() {
                            io::ErrorKind::AlreadyExists => format!(
                                "refused to write {shown}: it exists; --out replaces only the \
                                 file it names (move it away, or name another file)"
                            ),
                            _ => format!("cannot write {shown}: {e}"),
                        })
                }),
        )
    }

    /// The refusal for a file (inline or on disk) when `--out` names an
    /// image file and the result has no image to put there.
    fn refuses_files_alone(&self) -> Option<String> {
        let Place::File(file, _) = &self.place else {
            return None;
        };
        Some(format!(
            "not written: --out {} names an image file and this result has no image; give a \
             folder (--out DIR/) to save its files",
            file.display()
        ))
    }

    /// The folder: created (and, per trace, checked) and opened on the
    /// first call, the same handle afterwards.
    fn folder(&self) -> io::Result<&Folder> {
        if let Some(folder) = self.folder.get() {
            return Ok(folder);
        }
        let opened = match &self.place {
            Place::Explicit(dir) => {
                create_folder(dir)?;
                Folder::open(dir, false)?
            }
            Place::File(file, _) => {
                let dir = match file.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                create_folder(&dir)?;
                Folder::open(&dir, false)?
            }
            Place::PerTrace(name) => {
                let per_trace = || -> io::Result<Folder> {
                    let out = tool_core::truncate::private_dir()?.join("out");
                    tool_core::truncate::ensure_private_dir(&out)?;
                    let dir = out.join(name);
                    tool_core::truncate::ensure_private_dir(&dir)?;
                    Folder::open(&dir, true)
                };
                per_trace().map_err(|e| {
                    io::Error::new(e.kind(), format!("{e}; or choose a folder with --out DIR"))
                })?
            }
        };
        Ok(self.folder.get_or_init(|| opened))
    }

    /// Writes `bytes` to a new file named after `name` (`stem.ext`, then
    /// `stem-2.ext`, … so nothing is overwritten) and returns its absolute
    /// path; the error names the folder or file.
    fn write_new(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let folder = self
            .folder()
            .map_err(|e| format!("cannot write to {}: {e}", self.shown()))?;
        let name = file_safe(name);
        let (stem, ext) = match name.rsplit_once('.') {
            Some((s, e)) if !s.is_empty() => (s.to_owned(), format!(".{e}")),
            _ => (name.clone(), String::new()),
        };
        // Readable by its owner only in the private folder, like the folder.
        let mode = if matches!(self.place, Place::PerTrace(_)) {
            0o600
        } else {
            0o644
        };
        for n in 1u32..10_000 {
            let candidate = if n == 1 {
                format!("{stem}{ext}")
            } else {
                format!("{stem}-{n}{ext}")
            };
            match folder.write_new(&candidate, bytes, mode) {
                Ok(path) => return Ok(path),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(format!(
                        "cannot write {}: {e}",
                        folder.path.join(&candidate).display()
                    ));
                }
            }
        }
        Err(format!(
            "too many files named {stem}{ext} in {}",
            folder.path.display()
        ))
    }

    /// The place, for messages.
    fn shown(&self) -> String {
        match &self.place {
            Place::Explicit(p) | Place::File(p, _) => p.display().to_string(),
            Place::PerTrace(_) => "the trace's output folder".to_owned(),
        }
    }
}

/// `create_dir_all`, with a clear error when a part of `dir` is a file
/// (`create_dir_all` reports that as "File exists (os error 17)").
fn create_folder(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        if e.kind() != io::ErrorKind::AlreadyExists {
            return e;
        }
        let blocker = dir
            .ancestors()
            .find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()))
            .unwrap_or(dir);
        io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} exists and is not a folder", blocker.display()),
        )
    })
}

/// `g.png` for the first result, `g-2.png`, `g-3.png` … for the next ones.
fn numbered(file: &Path, n: u32) -> std::ffi::OsString {
    let name = file.file_name().unwrap_or(file.as_os_str());
    if n == 1 {
        return name.to_owned();
    }
    let stem = file.file_stem().unwrap_or(name).to_string_lossy();
    let ext = file.extension().unwrap_or_default().to_string_lossy();
    format!("{stem}-{n}.{ext}").into()
}

/// `bytes` in `format`: as they are when they already are (by their
/// signature, not the media type the tool claimed), else decoded and
/// re-encoded with the `image` crate. JPEG has no alpha channel, so
/// transparent pixels are laid on white; WebP is written lossless (the
/// `image` crate's only WebP encoder); GIF gets the first frame.
fn convert(bytes: &[u8], media_type: &str, format: ImageFormat) -> Result<Vec<u8>, String> {
    if image::guess_format(bytes).ok() == Some(format) {
        return Ok(bytes.to_vec());
    }
    let target = format.extensions_str().first().copied().unwrap_or("image");
    let decoded = image::load_from_memory(bytes).map_err(|e| {
        format!(
            "the image ({media_type}) cannot be converted to {target} ({e}); use --out DIR/ to save \
             it as it is"
        )
    })?;
    let image = if format == ImageFormat::Jpeg {
        let mut rgba = decoded.to_rgba8();
        for pixel in rgba.pixels_mut() {
            let [r, g, b, a] = pixel.0;
            let over_white = |c: u8| {
                let (c, a) = (u32::from(c), u32::from(a));
                u8::try_from((c * a + 255 * (255 - a)) / 255).unwrap_or(u8::MAX)
            };
            pixel.0 = [over_white(r), over_white(g), over_white(b), 255];
        }
        image::DynamicImage::ImageRgb8(image::DynamicImage::ImageRgba8(rgba).to_rgb8())
    } else {
        image::DynamicImage::ImageRgba8(decoded.to_rgba8())
    };
    let mut out = io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, format)
        .map_err(|e| format!("cannot encode the image as {target}: {e}"))?;
    Ok(out.into_inner())
}

fn write_all(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.flush()
}

/// Builds the printed object for `result`, writing its images and inline
/// attachments into `out`.
pub(crate) fn render<'a>(
    result: &'a ToolResult,
    tool: Option<&'a str>,
    trace_id: &'a str,
    id: Option<&'a Value>,
    out: &OutDir,
) -> Printed<'a> {
    let prefix = tool.unwrap_or("tool");
    let no_image = result.images.is_empty();
    Printed {
        id,
        trace_id,
        tool,
        title: result.title.as_deref(),
        output: json_output(&result.output).map_or(Output::Text(&result.output), Output::Json),
        error: result.error.as_ref(),
        notes: &result.notes,
        metadata: &result.metadata,
        long_term_memory: result.long_term_memory.as_deref(),
        images: result
            .images
            .iter()
            .enumerate()
            .map(|(i, image)| save_image(image, &format!("{prefix}-image-{}", i + 1), out, i == 0))
            .collect(),
        attachments: result
            .attachments
            .iter()
            .map(|a| save_attachment(a, out, no_image))
            .collect(),
    }
}

impl Printed<'_> {
    /// The messages of every image or file that could not be written (not
    /// those whose data was invalid base64: a fault of the tool, reported in
    /// the object only).
    pub(crate) fn write_failures(&self) -> Vec<&str> {
        self.images
            .iter()
            .filter(|i| i.write_failed)
            .filter_map(|i| i.error.as_deref())
            .chain(
                self.attachments
                    .iter()
                    .filter(|a| a.write_failed)
                    .filter_map(|a| a.error.as_deref()),
            )
            .collect()
    }
}

fn save_image(image: &Image, stem: &str, out: &OutDir, first: bool) -> SavedImage {
    let name = format!("{stem}.{}", extension(&image.media_type));
    let mut write_failed = false;
    let saved = base64::decode(&image.data)
        .map_err(|e| format!("the image is not valid base64 ({e})"))
        .and_then(|bytes| {
            let to_file = if first {
                out.write_image_file(&bytes, &image.media_type)
            } else {
                None
            };
            to_file
                .unwrap_or_else(|| out.write_new(&name, &bytes))
                .map(|p| (p, bytes.len()))
                .inspect_err(|_| write_failed = true)
        });
    match saved {
        Ok((path, len)) => SavedImage {
            media_type: image.media_type.clone(),
            path: Some(path.to_string_lossy().into_owned()),
            bytes: std::fs::metadata(&path).map_or(Some(len), |m| usize::try_from(m.len()).ok()),
            error: None,
            write_failed,
        },
        Err(e) => SavedImage {
            media_type: image.media_type.clone(),
            path: None,
            bytes: None,
            error: Some(e),
            write_failed,
        },
    }
}

fn save_attachment(attachment: &Attachment, out: &OutDir, no_image: bool) -> SavedAttachment {
    let mut saved = SavedAttachment {
        name: attachment.name.clone(),
        media_type: attachment.media_type.clone(),
        path: attachment.path.clone(),
        bytes: None,
        error: None,
        write_failed: false,
    };
    // `--out FILE.png` and a result with files but no image (a PDF read):
    // nothing goes to the image file, and the user hears why.
    if let Some(refusal) = no_image.then(|| out.refuses_files_alone()).flatten() {
        saved.error = Some(match &attachment.path {
            Some(path) => format!("{refusal} (this {} is at {path})", attachment.media_type),
            None => refusal,
        });
        saved.write_failed = true;
        return saved;
    }
    if let (None, Some(data)) = (&attachment.path, &attachment.data) {
        let name = if attachment.name.trim().is_empty() {
            format!("attachment.{}", extension(&attachment.media_type))
        } else {
            attachment.name.clone()
        };
        let written = base64::decode(data)
            .map_err(|e| format!("the attachment is not valid base64 ({e})"))
            .and_then(|bytes| {
                out.write_new(&name, &bytes)
                    .map(|p| (p, bytes.len()))
                    .inspect_err(|_| saved.write_failed = true)
            });
        match written {
            Ok((path, len)) => {
                saved.path = Some(path.to_string_lossy().into_owned());
                saved.bytes = Some(len);
            }
            Err(e) => saved.error = Some(e),
        }
    }
    saved
}

/// The output as JSON when it is a JSON object or array (surrounding
/// whitespace allowed), re-emitted without the whitespace between tokens so
/// the result stays one line; keys, their order and number spellings are kept
/// exactly. Other text, including JSON scalars such as `42` or `null`, stays a
/// string: turning those into numbers or `null` would change what the tool said.
fn json_output(text: &str) -> Option<Box<RawValue>> {
    let trimmed = text.trim();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<&RawValue>(trimmed).ok()?;
    RawValue::from_string(minify(trimmed)).ok()
}

/// Drops the whitespace between the tokens of valid JSON text.
fn minify(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

/// A file extension for a media type.
fn extension(media_type: &str) -> &'static str {
    let essence = media_type.split(';').next().unwrap_or("").trim();
    match essence.to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/bmp" => "bmp",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        "text/html" => "html",
        "text/csv" => "csv",
        _ => "bin",
    }
}

/// `text` with every character outside `[A-Za-z0-9._-]` replaced by `_`,
/// leading dots removed, cut to 100 characters: safe as one path component.
fn file_safe(text: &str) -> String {
    let base = text.rsplit(['/', '\\']).next().unwrap_or(text);
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let cleaned = cleaned.trim_start_matches('.');
    if cleaned.is_empty() {
        "output".to_owned()
    } else {
        cleaned.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_form_escapes_terminal_controls() {
        let printed = serde_json::json!({
            "title": "t\u{1b}]0;owned\u{7}",
            "output": "line 1\r\nred \u{1b}[31mRED\u{1b}[0m\tok\rover \u{202e}evil \u{9b}2J",
            "error": null,
            "trace_id": "x",
        });
        assert_eq!(
            readable(&printed),
            "== t\\x1b]0;owned\\x07\nline 1\r\nred \\x1b[31mRED\\x1b[0m\tok\\x0dover \\u{202e}evil \\x9b2J\n(trace x)"
        );
    }

    fn output_json(text: &str) -> String {
        let result = ToolResult::ok(text);
        let out = OutDir::new(Some(Path::new("/nonexistent")), "t").unwrap();
        serde_json::to_string(&render(&result, Some("x"), "t", None, &out).output).unwrap()
    }

    #[test]
    fn json_objects_and_arrays_are_embedded_verbatim() {
        assert_eq!(
            output_json(r#" {"b": 1, "a": [1.50, "x y"]} "#),
            r#"{"b":1,"a":[1.50,"x y"]}"#
        );
        assert_eq!(output_json("[\n  1,\n  2\n]\n"), "[1,2]");
        assert_eq!(
            output_json(r#"{"s": "a \"q\" \\ \n"}"#),
            r#"{"s":"a \"q\" \\ \n"}"#
        );
    }

    #[test]
    fn other_text_stays_a_string() {
        assert_eq!(output_json("42"), r#""42""#);
        assert_eq!(output_json("null"), r#""null""#);
        assert_eq!(output_json("{not json"), r#""{not json""#);
        assert_eq!(
            output_json(r#"{"a": 1} trailing"#),
            r#""{\"a\": 1} trailing""#
        );
        assert_eq!(output_json(""), r#""""#);
    }

    #[test]
    fn file_names_are_confined() {
        assert_eq!(file_safe("../../etc/passwd"), "passwd");
        assert_eq!(file_safe("..."), "output");
        assert_eq!(file_safe("a b/c:d.png"), "c_d.png");
        assert_eq!(file_safe("trace/../x"), "x");
    }

    fn mode_of(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    /// A result with one PNG image (the bytes `PNG`).
    fn with_image() -> ToolResult {
        ToolResult::ok("x").with_image(Image::new("image/png", "UE5H"))
    }

    fn saved_image(trace: &str, explicit: Option<&Path>) -> SavedImage {
        let result = with_image();
        let out = OutDir::new(explicit, trace).unwrap();
        let printed = render(&result, Some("t"), trace, None, &out);
        printed.images.into_iter().next().unwrap()
    }

    #[test]
    fn per_trace_folders_are_private() {
        let private = tool_core::truncate::private_dir().unwrap();
        let pid = std::process::id();
        for trace in [
            format!("render-mode-{pid}"),
            format!("../render-up-{pid}"),
            format!("render/{pid}"),
            format!("render mode {pid}"),
        ] {
            let image = saved_image(&trace, None);
            let path = PathBuf::from(
                image
                    .path
                    .clone()
                    .unwrap_or_else(|| panic!("{:?}", image.error)),
            );
            let folder = path.parent().unwrap();
            assert_eq!(
                folder,
                private
                    .join("out")
                    .join(tool_core::truncate::trace_folder_name(Some(&trace)))
            );
            assert_eq!(std::fs::read(&path).unwrap(), b"PNG");
            assert_eq!(mode_of(&private), 0o700);
            assert_eq!(mode_of(&private.join("out")), 0o700);
            assert_eq!(mode_of(folder), 0o700);
            assert_eq!(mode_of(&path), 0o600);
            std::fs::remove_dir_all(folder).unwrap();
        }
    }

    #[test]
    fn a_link_among_the_parents_is_refused() {
        let dir = std::env::temp_dir().join(format!("tool-cli-outlink-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join("lnk")).unwrap();
        let err = OutDir::new(Some(&dir.join("lnk/imgs/")), "t")
            .err()
            .unwrap();
        assert!(err.contains("is a symbolic link"), "{err}");
        let err = OutDir::new(Some(&dir.join("lnk/a.png")), "t")
            .err()
            .unwrap();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert!(OutDir::new(Some(&dir.join("real/imgs/")), "t").is_ok());
        assert!(!dir.join("elsewhere/imgs").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_planted_symlink_or_loose_folder_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let target = scratch("render-target");
        let pid = std::process::id();
        let out = tool_core::truncate::private_dir().unwrap().join("out");
        tool_core::truncate::ensure_private_dir(&out).unwrap();
        for (trace, plant) in [
            (format!("render-link-{pid}"), "dir-link"),
            (format!("render-file-link-{pid}"), "file-link"),
            (format!("render-loose-{pid}"), "loose"),
            (format!("render-file-{pid}"), "file"),
        ] {
            let folder = out.join(tool_core::truncate::trace_folder_name(Some(&trace)));
            let expected = match plant {
                "dir-link" => {
                    std::os::unix::fs::symlink(&target, &folder).unwrap();
                    "it is a symbolic link"
                }
                "file-link" => {
                    let file = target.join("f");
                    std::fs::write(&file, "x").unwrap();
                    std::os::unix::fs::symlink(&file, &folder).unwrap();
                    "it is a symbolic link"
                }
                "loose" => {
                    std::fs::create_dir(&folder).unwrap();
                    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755))
                        .unwrap();
                    "its mode is 0755, but it must be 0700"
                }
                _ => {
                    std::fs::write(&folder, "x").unwrap();
                    "it is not a folder"
                }
            };
            let image = saved_image(&trace, None);
            assert_eq!(image.path, None);
            let error = image.error.unwrap();
            assert!(
                error.starts_with(&format!(
                    "cannot write to the trace's output folder: refusing to use {}: {expected}",
                    folder.display()
                )),
                "{error}"
            );
            assert!(
                error.ends_with("; or choose a folder with --out DIR"),
                "{error}"
            );
            if std::fs::symlink_metadata(&folder).unwrap().is_dir() {
                std::fs::remove_dir(&folder).unwrap();
            } else {
                std::fs::remove_file(&folder).unwrap();
            }
        }
        let names: Vec<_> = std::fs::read_dir(&target)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["f"], "nothing was written through a link");
        std::fs::remove_dir_all(&target).unwrap();
    }

    /// A fresh folder under the temp dir for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tool-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_without_an_image_is_not_written_for_an_image_out_file() {
        let dir = scratch("render-pdf-alone");
        let file = dir.join("page.png");
        let result = ToolResult::ok("PDF read").with_attachment(Attachment::inline(
            "report.pdf",
            "application/pdf",
            "JVBERi0=",
        ));
        let out = OutDir::new(Some(&file), "t").unwrap();
        let printed = render(&result, Some("read_file"), "t", None, &out);
        let expected = format!(
            "not written: --out {} names an image file and this result has no image; give a \
             folder (--out DIR/) to save its files",
            file.display()
        );
        assert_eq!(
            printed.attachments[0].error.as_deref(),
            Some(expected.as_str())
        );
        assert_eq!(printed.attachments[0].path, None);
        assert_eq!(printed.write_failures(), [expected.as_str()]);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_explicit_out_folder_is_used_as_given() {
        let dir = scratch("render-explicit");
        let nested = dir.join("a/b");
        let image = saved_image("render-explicit", Some(&nested));
        let path = PathBuf::from(image.path.unwrap());
        assert_eq!(path, nested.canonicalize().unwrap().join("t-image-1.png"));
        assert_eq!(std::fs::read(&path).unwrap(), b"PNG");
        let again = saved_image("render-explicit", Some(&nested));
        assert!(again.path.unwrap().ends_with("t-image-1-2.png"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
