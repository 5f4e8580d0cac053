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

/// Where binary output goes: `--out`, else `<temp>/tool-out-<trace id>`, created on first use.
pub(crate) struct OutDir {
    dir: PathBuf,
}

impl OutDir {
    /// The folder for this run.
    pub(crate) fn new(explicit: Option<&Path>, trace_id: &str) -> Self {
        let dir = explicit.map_or_else(
            || std::env::temp_dir().join(format!("tool-out-{}", file_safe(trace_id))),
            Path::to_path_buf,
        );
        Self { dir }
    }

    /// Writes `bytes` to a new file named after `name` (`stem.ext`, then
    /// `stem-2.ext`, … so nothing is overwritten) and returns its absolute path.
    fn write_new(&self, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        std::fs::create_dir_all(&self.dir)?;
        let dir = self.dir.canonicalize()?;
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
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&candidate)
            {
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
            .map(|(i, image)| save_image(image, &format!("{prefix}-image-{}", i + 1), out))
            .collect(),
        attachments: result
            .attachments
            .iter()
            .map(|a| save_attachment(a, out))
            .collect(),
    }
}

fn save_image(image: &Image, stem: &str, out: &OutDir) -> SavedImage {
    let name = format!("{stem}.{}", extension(&image.media_type));
    let saved = base64::decode(&image.data)
        .map_err(|e| format!("the image is not valid base64 ({e})"))
        .and_then(|bytes| {
            out.write_new(&name, &bytes)
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
}
