//! A [`ToolResult`] as the `tool` program prints it: one JSON object, JSON
//! output embedded as JSON, binary content written to files.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
}

/// Where binary output goes: `--out DIR` (used as given, created when
/// missing), else the trace's folder `<private dir>/out/<trace folder>`
/// (`tool_core::truncate::private_dir`, `trace_folder_name`), created on
/// first use with mode `0700` inside the per-user `0700` private dir; each
/// of the three is refused when it is a symbolic link, another user's or not
/// mode `0700`.
pub(crate) struct OutDir {
    place: Place,
}

enum Place {
    /// `--out DIR`.
    Explicit(PathBuf),
    /// `--out FILE.png` (or `.jpg`, `.jpeg`, `.gif`, `.webp`): the first
    /// image goes to that file, the rest of the output beside it.
    File(PathBuf),
    /// The trace's folder name under `<private dir>/out`.
    PerTrace(String),
}

impl OutDir {
    /// The folder for this run.
    pub(crate) fn new(explicit: Option<&Path>, trace_id: &str) -> Self {
        let place = explicit.map_or_else(
            || Place::PerTrace(tool_core::truncate::trace_folder_name(Some(trace_id))),
            |p| {
                if is_image_file_name(p) && !p.is_dir() {
                    Place::File(p.to_path_buf())
                } else {
                    Place::Explicit(p.to_path_buf())
                }
            },
        );
        Self { place }
    }

    /// Writes the first image of a result to the `--out FILE` named, replacing
    /// a file already there; `None` when `--out` is not a file name.
    fn write_image_file(&self, bytes: &[u8]) -> Option<io::Result<PathBuf>> {
        let Place::File(file) = &self.place else {
            return None;
        };
        Some(self.ensure().and_then(|dir| {
            let name = file
                .file_name()
                .ok_or_else(|| io::Error::other("--out names no file"))?;
            let target = dir.join(name);
            let mut f = File::create(&target)?;
            write_all(&mut f, bytes)?;
            Ok(target)
        }))
    }

    /// The folder, created (and, per trace, checked) now.
    fn ensure(&self) -> io::Result<PathBuf> {
        match &self.place {
            Place::Explicit(dir) => {
                std::fs::create_dir_all(dir)?;
                dir.canonicalize()
            }
            Place::File(file) => {
                let dir = match file.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                std::fs::create_dir_all(&dir)?;
                dir.canonicalize()
            }
            Place::PerTrace(name) => {
                let per_trace = || -> io::Result<PathBuf> {
                    let out = tool_core::truncate::private_dir()?.join("out");
                    tool_core::truncate::ensure_private_dir(&out)?;
                    let dir = out.join(name);
                    tool_core::truncate::ensure_private_dir(&dir)?;
                    Ok(dir)
                };
                per_trace().map_err(|e| {
                    io::Error::new(e.kind(), format!("{e}; or choose a folder with --out DIR"))
                })
            }
        }
    }

    /// Writes `bytes` to a new file named after `name` (`stem.ext`, then
    /// `stem-2.ext`, … so nothing is overwritten) and returns its absolute path.
    fn write_new(&self, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let dir = self.ensure()?;
        let name = file_safe(name);
        let (stem, ext) = match name.rsplit_once('.') {
            Some((s, e)) if !s.is_empty() => (s.to_owned(), format!(".{e}")),
            _ => (name.clone(), String::new()),
        };
        for n in 1u32..10_000 {
            let candidate = if n == 1 {
                dir.join(format!("{stem}{ext}"))
            } else {
                dir.join(format!("{stem}-{n}{ext}"))
            };
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            if matches!(self.place, Place::PerTrace(_)) {
                // Readable by its owner only, like the folder.
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            }
            match options.open(&candidate) {
                Ok(mut file) => {
                    write_all(&mut file, bytes)?;
                    return Ok(candidate);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!(
            "too many files named {stem}{ext} in {}",
            dir.display()
        )))
    }
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
            .map(|a| save_attachment(a, out))
            .collect(),
    }
}

/// `.png`, `.jpg`, `.jpeg`, `.gif` or `.webp`: `--out` names the image file itself.
fn is_image_file_name(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        ["png", "jpg", "jpeg", "gif", "webp"].contains(&e.to_ascii_lowercase().as_str())
    })
}

fn save_image(image: &Image, stem: &str, out: &OutDir, first: bool) -> SavedImage {
    let name = format!("{stem}.{}", extension(&image.media_type));
    let saved = base64::decode(&image.data)
        .map_err(|e| format!("the image is not valid base64 ({e})"))
        .and_then(|bytes| {
            let to_file = if first {
                out.write_image_file(&bytes)
            } else {
                None
            };
            let written = to_file.unwrap_or_else(|| out.write_new(&name, &bytes));
            written
                .map(|p| (p, bytes.len()))
                .map_err(|e| format!("cannot write the image: {e}"))
        });
    match saved {
        Ok((path, len)) => SavedImage {
            media_type: image.media_type.clone(),
            path: Some(path.to_string_lossy().into_owned()),
            bytes: Some(len),
            error: None,
        },
        Err(e) => SavedImage {
            media_type: image.media_type.clone(),
            path: None,
            bytes: None,
            error: Some(e),
        },
    }
}

fn save_attachment(attachment: &Attachment, out: &OutDir) -> SavedAttachment {
    let mut saved = SavedAttachment {
        name: attachment.name.clone(),
        media_type: attachment.media_type.clone(),
        path: attachment.path.clone(),
        bytes: None,
        error: None,
    };
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
                    .map_err(|e| format!("cannot write the attachment: {e}"))
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

    fn output_json(text: &str) -> String {
        let result = ToolResult::ok(text);
        let out = OutDir::new(Some(Path::new("/nonexistent")), "t");
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
        let out = OutDir::new(explicit, trace);
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
                    "cannot write the image: refusing to use {}: {expected}",
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
