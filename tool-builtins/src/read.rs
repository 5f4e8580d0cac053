//! `read_file`: a window of a text file with line numbers, a folder's
//! entries, or an image.
//!
//! Text is streamed: the file is read in fixed-size chunks, lines before the
//! window are only counted, lines in it are kept up to a per-line cap, lines
//! after it are counted with `memchr`. Memory stays bounded whatever the file
//! size or line length, and the total line count is still exact.
//!
//! One concern, though just over 800 lines: one tool and its readers (the
//! streaming text scanner, the folder listing, images and PDFs, whose checks
//! live in `media`), which share the tool's options, its not-found message
//! and its output shape.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use base64::Engine as _;
use encoding_rs::Encoding;
use tool_core::{
    Attachment, ErrorKind, Image, ToolContext, ToolError, ToolResult, meta, run_blocking, tool,
};

use crate::fs::beneath::Beneath;
use crate::fs::ledger::{ContentHasher, FileLedger, Stamp};
use crate::fs::workspace::workspace_of;

/// Limits of `read_file`; store a changed copy in the context
/// (`ctx.with_state(ReadOptions { .. })`) to override the defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Lines returned when the model gives no `limit`. Default 2000.
    pub default_limit: usize,
    /// Longest line shown, in characters; longer lines are cut with a marker. Default 2000.
    pub max_line_chars: usize,
    /// Output budget in bytes for the numbered lines. Default 50 KiB.
    pub max_output_bytes: usize,
    /// Largest PDF returned, in bytes. Default 10 MiB.
    pub max_media_bytes: u64,
    /// Largest image file read, in bytes. Default 50 MiB, as `read_images`
    /// ([`MAX_FILE_BYTES`](crate::media::MAX_FILE_BYTES)): images are scaled
    /// down and re-encoded before they are sent, so the file's size is not
    /// what the model receives.
    pub max_image_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            default_limit: 2000,
            max_line_chars: 2000,
            max_output_bytes: 50 * 1024,
            max_media_bytes: 10 * 1024 * 1024,
            max_image_bytes: crate::media::MAX_FILE_BYTES,
        }
    }
}

/// Size of the first block inspected for binary content.
const SAMPLE_BYTES: usize = 4096;
/// Read buffer for streaming.
const CHUNK_BYTES: usize = 64 * 1024;

/// Read a file or list a folder in the workspace.
///
/// Text comes back as numbered lines (`N: text`), 1-based, starting at
/// `offset` (default 1) for at most `limit` lines (default 2000); very long
/// lines are cut. The footer says whether the file ended or which `offset`
/// continues. Images (png, jpeg, gif, webp, bmp) come back as images, turned
/// upright by their EXIF orientation and scaled to a long side of at most
/// 1568 px (an animation's first frame); PDFs come back as documents; folders
/// list their entries. Read a file before editing or overwriting it.
///
/// # Arguments
/// * `file_path` - Path of the file or folder (relative to the workspace root, or absolute).
/// * `offset` - Line number to start from, 1-based (default 1).
/// * `limit` - Most lines to return (default 2000).
///
/// # Examples
/// ```json
/// {"file_path": "src/main.rs"}
/// {"file_path": "src/lib.rs", "offset": 200, "limit": 100}
/// ```
#[tool(kind = "read", tags = ["fs", "read"], read_only, idempotent, concurrency_safe)]
pub async fn read_file(
    context: &ToolContext,
    file_path: String,
    #[arg(default = 1)] offset: i64,
    limit: Option<i64>,
) -> Result<ToolResult, ToolError> {
    let opts = context
        .state::<ReadOptions>()
        .map_or_else(ReadOptions::default, |o| (*o).clone());
    if offset < 1 {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            "offset must be greater than or equal to 1 (lines are numbered from 1: offset 1 is \
             the first line)",
        ));
    }
    let limit = match limit {
        None => opts.default_limit,
        Some(l) if l < 1 => {
            return Err(ToolError::new(
                ErrorKind::InvalidArguments,
                "limit must be greater than or equal to 1",
            ));
        }
        Some(l) => usize::try_from(l).unwrap_or(usize::MAX),
    };
    let offset = usize::try_from(offset).unwrap_or(usize::MAX);
    let ws = workspace_of(context)?;
    let target = crate::roots::resolve_for_read(context, &ws, &file_path)?;
    let title = ws.relative(&target.path).display().to_string();
    let ledger = context.state::<FileLedger>();
    let path = target.path.clone();
    let is_dir = target.file_type() == Some(FileType::Directory);
    let result = run_blocking(move || {
        let ledger = ledger.as_deref();
        read_blocking(&target, offset, limit, &opts, ledger)
    })
    .await?;
    if !result.is_error() {
        crate::instructions::report(context, &ws, &path, is_dir).await;
    }
    Ok(result.with_title(title))
}

fn read_blocking(
    target: &Beneath,
    offset: usize,
    limit: usize,
    opts: &ReadOptions,
    ledger: Option<&FileLedger>,
) -> ToolResult {
    let path = target.path.as_path();
    match target.file_type() {
        None => return not_found(target),
        Some(FileType::Directory) => return read_dir(target, offset, limit),
        Some(FileType::RegularFile) => {}
        Some(_) => {
            return ToolResult::failed(format!(
                "Cannot read {}: it is not a regular file (a device, socket or pipe).",
                path.display()
            ));
        }
    }
    // Opened beneath the folder handle the path resolved to, never by name.
    let mut file = match target.open_file() {
        Ok(f) => f,
        Err(e) => return ToolResult::failed(format!("Cannot read {}: {e}", path.display())),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return ToolResult::failed(format!("Cannot read {}: {e}", path.display())),
    };
    if let Some(media) = media_type(path) {
        if media == PDF && !starts_as_pdf(&mut file) {
            return not_a_pdf(path, file, offset, limit, opts, ledger);
        }
        return read_media(path, &mut file, media, &meta, opts, ledger);
    }
    if crate::fs::binary::has_binary_extension(path) {
        return binary(path);
    }
    match read_text(path, file, offset, limit, opts, ledger) {
        Ok(r) => r,
        Err(e) => ToolResult::failed(format!("Cannot read {}: {e}", path.display())),
    }
}

/// Whether `file` starts as a PDF (its first bytes read from the start; the
/// position is put back at the start).
fn starts_as_pdf(file: &mut File) -> bool {
    let mut head = vec![0u8; crate::media::pdf::TAIL_BYTES];
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| read_full(file, &mut head));
    let _ = file.seek(SeekFrom::Start(0));
    read.is_ok_and(|n| crate::media::pdf::starts_as_pdf(&head[..n]))
}

/// A file named `.pdf` that does not start as one: read as text when it is
/// text, with a note saying so; else refused, saying why.
fn not_a_pdf(
    path: &Path,
    mut file: File,
    offset: usize,
    limit: usize,
    opts: &ReadOptions,
    ledger: Option<&FileLedger>,
) -> ToolResult {
    let why = "is named .pdf but is not a PDF (it does not start with `%PDF-`)";
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| read_text(path, file, offset, limit, opts, ledger));
    match read {
        Ok(r) if r.is_ok() => r.with_note(format!("{} {why}; it was read as text", path.display())),
        Ok(_) | Err(_) => ToolResult::failed(format!(
            "Cannot read {}: it {why}, and it is not text either.",
            path.display()
        )),
    }
}

fn binary(path: &Path) -> ToolResult {
    ToolResult::failed(format!("Cannot read binary file: {}", path.display()))
}

/// "File not found" with up to three siblings whose names resemble the wanted one.
fn not_found(target: &Beneath) -> ToolResult {
    let path = &target.path;
    let mut msg = format!("File not found: {}", path.display());
    let wanted = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let siblings = target.open_parent_dir().ok().and_then(|dir| {
        let parent = Beneath {
            parent: Some(dir),
            name: None,
            path: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            stat: None,
        };
        parent.list().ok()
    });
    if let (Some(entries), false) = (siblings, wanted.is_empty()) {
        let dir = path.parent().unwrap_or(path);
        let mut similar: Vec<PathBuf> = entries
            .into_iter()
            .filter(|(name, _)| {
                let name = name.to_string_lossy().to_lowercase();
                name.contains(&wanted) || wanted.contains(&name)
            })
            .map(|(name, _)| dir.join(name))
            .collect();
        similar.sort();
        similar.truncate(3);
        if !similar.is_empty() {
            msg.push_str("\n\nDid you mean one of these?");
            for s in similar {
                msg.push('\n');
                msg.push_str(&s.display().to_string());
            }
        }
    }
    ToolResult::failed(msg)
}

fn read_dir(target: &Beneath, offset: usize, limit: usize) -> ToolResult {
    let path = &target.path;
    let entries = match target.list() {
        Ok(e) => e,
        Err(e) => return ToolResult::failed(format!("Cannot list {}: {e}", path.display())),
    };
    let mut names: Vec<String> = entries
        .into_iter()
        .map(|(name, is_dir)| {
            let name = name.to_string_lossy().into_owned();
            if is_dir { format!("{name}/") } else { name }
        })
        .collect();
    names.sort();
    let total = names.len();
    let start = offset.saturating_sub(1).min(total);
    let end = start.saturating_add(limit).min(total);
    let mut out = format!(
        "<path>{}</path>\n<type>directory</type>\n<entries>\n",
        path.display()
    );
    for n in &names[start..end] {
        out.push_str(n);
        out.push('\n');
    }
    let truncated = end < total || start > 0;
    if end < total {
        out.push_str(&format!(
            "\n(Showing {} of {total} entries. Use offset={} to continue.)\n",
            end - start,
            end + 1
        ));
    } else {
        out.push_str(&format!("\n({total} entries)\n"));
    }
    out.push_str("</entries>");
    ToolResult::ok(out)
        .with_metadata(meta::TRUNCATED, truncated)
        .with_metadata(meta::ENTRIES, total)
}

/// The media type of PDF documents.
const PDF: &str = "application/pdf";

/// The media type of files returned as images or documents, by extension.
fn media_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "pdf" => PDF,
        _ => return None,
    })
}

fn read_media(
    path: &Path,
    file: &mut File,
    media: &'static str,
    meta: &std::fs::Metadata,
    opts: &ReadOptions,
    ledger: Option<&FileLedger>,
) -> ToolResult {
    let max = if media == PDF {
        opts.max_media_bytes
    } else {
        opts.max_image_bytes
    };
    if meta.len() > max {
        return ToolResult::failed(format!(
            "File {} is too large to return ({} bytes; the limit is {max} bytes).",
            path.display(),
            meta.len(),
        ));
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.take(max).read_to_end(&mut bytes) {
        return ToolResult::failed(format!("Cannot read {}: {e}", path.display()));
    }
    if let Some(l) = ledger
        && let Err(e) = l.try_record(path, Stamp::new(meta, ContentHasher::hash(&bytes)))
    {
        return ToolResult::failed(e.to_string());
    }
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if media.starts_with("image/") {
        return read_image(path, bytes);
    }
    if !crate::media::pdf::ends_as_pdf(&bytes) {
        return ToolResult::failed(format!(
            "Cannot read {}: the PDF is incomplete (no `%%EOF` marker in its last {} bytes; \
             the file looks truncated). Providers refuse a broken PDF, so it is not sent.",
            path.display(),
            crate::media::pdf::TAIL_BYTES
        ));
    }
    let pages = crate::media::pdf::rough_page_count(&bytes);
    let mut text = "PDF read successfully".to_owned();
    if pages > crate::media::pdf::MAX_PAGES {
        text.push_str(&format!(
            ". It has about {pages} pages (counted roughly from its page objects); Anthropic reads at most \
             {} pages of PDF per request and may refuse it: extract the pages needed first.",
            crate::media::pdf::MAX_PAGES
        ));
    }
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let shown = path.display();
    ToolResult::ok(text)
        .with_metadata(meta::PAGES_COUNTED, pages)
        .with_metadata(meta::TRUNCATED, false)
        .with_metadata(meta::MEDIA_TYPE, media)
        .with_metadata(meta::BYTES, bytes.len())
        .with_long_term_memory(format!(
            "[PDF {shown} ({} bytes) shown on an earlier turn and left out of the history; read it again to see it]",
            bytes.len()
        ))
        .output_once()
        .with_attachment(Attachment {
            name,
            media_type: media.to_owned(),
            path: Some(path.display().to_string()),
            data: Some(data),
        })
}

/// One image for the model, scaled to a long side of at most
/// [`MAX_LONG_SIDE`](crate::media::MAX_LONG_SIDE) px (the file as it is when
/// it fits and is PNG, JPEG, GIF or WebP; see `media::decode::fit_single`).
fn read_image(path: &Path, bytes: Vec<u8>) -> ToolResult {
    let len = bytes.len();
    // Kept only for a small image whose header reads (see `sendable_undecoded`),
    // so that one the decoder refuses can still go as it is.
    let undecoded = crate::media::decode::sendable_undecoded(&bytes).map(|h| (h, bytes.clone()));
    let fitted = match crate::media::decode::fit_single(bytes) {
        Ok(f) => f,
        Err(e) => {
            let Some(((media_type, width, height), original)) = undecoded else {
                return ToolResult::failed(format!("Cannot read image {}: {e}", path.display()));
            };
            return ToolResult::ok(format!(
                "Image read successfully (sent as the file holds it: the decoder could not check \
                 it ({e}), so a provider may refuse it)"
            ))
            .with_metadata(meta::TRUNCATED, false)
            .with_metadata(meta::MEDIA_TYPE, media_type)
            .with_metadata(meta::BYTES, len)
            .with_metadata(meta::WIDTH, width)
            .with_metadata(meta::HEIGHT, height)
            .with_metadata(meta::DECODED, false)
            .with_long_term_memory(format!(
                "[image {} ({width}×{height} px) shown on an earlier turn and left out of the history; read it again to see it]",
                path.display()
            ))
            .output_once()
            .with_image(
                Image::new(
                    media_type,
                    base64::engine::general_purpose::STANDARD.encode(&original),
                )
                .with_path(path.display().to_string()),
            );
        }
    };
    let mut text = "Image read successfully".to_owned();
    let mut changes = Vec::new();
    if fitted.resized() {
        changes.push(format!(
            "scaled from {}×{} to {}×{} px",
            fitted.original_width, fitted.original_height, fitted.sent.width, fitted.sent.height
        ));
    }
    changes.extend(fitted.notes.iter().cloned());
    if !changes.is_empty() {
        text.push_str(&format!(" ({})", changes.join("; ")));
    }
    ToolResult::ok(text)
        .with_metadata(meta::TRUNCATED, false)
        .with_metadata(meta::MEDIA_TYPE, fitted.sent.media_type)
        .with_metadata(meta::BYTES, len)
        .with_metadata(meta::WIDTH, fitted.sent.width)
        .with_metadata(meta::HEIGHT, fitted.sent.height)
        .with_metadata(meta::ORIGINAL_WIDTH, fitted.original_width)
        .with_metadata(meta::ORIGINAL_HEIGHT, fitted.original_height)
        .with_long_term_memory(format!(
            "[image {} ({}×{} px) shown on an earlier turn and left out of the history; read it again to see it]",
            path.display(),
            fitted.original_width,
            fitted.original_height
        ))
        .output_once()
        .with_image(
            Image::new(
                fitted.sent.media_type,
                base64::engine::general_purpose::STANDARD.encode(&fitted.sent.bytes),
            )
            .with_path(path.display().to_string()),
        )
}

/// Why a text read failed.
#[derive(Debug)]
enum TextError {
    Io(io::Error),
    Binary,
    Undecodable(&'static str),
    /// The file, read as UTF-8, turned out not to be UTF-8: read it again
    /// with its legacy encoding (every line, so that it reads as it is edited).
    NotUtf8,
}

impl From<io::Error> for TextError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

fn read_text(
    path: &Path,
    mut file: File,
    offset: usize,
    limit: usize,
    opts: &ReadOptions,
    ledger: Option<&FileLedger>,
) -> io::Result<ToolResult> {
    let meta = file.metadata()?;
    let mut sample = vec![0u8; SAMPLE_BYTES];
    let n = read_full(&mut file, &mut sample)?;
    sample.truncate(n);
    let scan = if sample.starts_with(b"\xFF\xFE") || sample.starts_with(b"\xFE\xFF") {
        scan_utf16(&mut file, offset, limit, opts)
    } else if crate::fs::binary::looks_binary(&sample) {
        Err(TextError::Binary)
    } else {
        // One decision for the whole file, as `TextFile::decode` makes it:
        // UTF-8 when every byte of it is, else the encoding its first bytes
        // suggest, for every line. A character cut at the sample's end is
        // not evidence of another encoding.
        let bom = sample.starts_with(crate::fs::text::UTF8_BOM);
        let sample_invalid = std::str::from_utf8(&sample).is_err_and(|e| e.error_len().is_some());
        let as_utf8 = if sample_invalid {
            Err(TextError::NotUtf8)
        } else {
            file.seek(SeekFrom::Start(0))?;
            Scanner::new(offset, limit, opts, None).run(&mut file)
        };
        match as_utf8 {
            // A byte order mark says UTF-8, whatever follows.
            Err(TextError::NotUtf8) if bom => Err(TextError::Undecodable("UTF-8")),
            Err(TextError::NotUtf8) => {
                file.seek(SeekFrom::Start(0))?;
                let mut prefix = vec![0u8; crate::fs::text::DETECT_PREFIX_BYTES];
                let n = read_full(&mut file, &mut prefix)?;
                let encoding = crate::fs::text::file_encoding(&prefix[..n]);
                drop(prefix);
                file.seek(SeekFrom::Start(0))?;
                Scanner::new(offset, limit, opts, Some(encoding)).run(&mut file)
            }
            other => other,
        }
    };
    let scan = match scan {
        Ok(s) => s,
        Err(TextError::Io(e)) => return Err(e),
        Err(TextError::Binary) => return Ok(binary(path)),
        Err(TextError::NotUtf8) => {
            return Ok(ToolResult::failed(format!(
                "Cannot read {}: the file is not valid UTF-8.",
                path.display()
            )));
        }
        Err(TextError::Undecodable(enc)) => {
            return Ok(ToolResult::failed(format!(
                "Cannot read {}: the file is not valid UTF-8 and does not decode cleanly as {enc} either. \
                 It may be binary or use an encoding that cannot be detected.",
                path.display()
            )));
        }
    };
    if let Some(l) = ledger
        && let Err(e) = l.try_record(path, Stamp::new(&meta, scan.hash))
    {
        return Ok(ToolResult::failed(e.to_string()));
    }
    Ok(render(path, offset, &scan, opts.max_output_bytes))
}

fn render(path: &Path, offset: usize, scan: &Scan, budget: usize) -> ToolResult {
    let total = scan.total_lines;
    if offset > total && !(offset == 1 && total == 0) {
        return ToolResult::failed(format!(
            "Offset {offset} is out of range for this file ({total} lines)"
        ));
    }
    let shown = scan.lines.len();
    let last = offset + shown - usize::from(shown > 0);
    let mut out = format!("<path>{}</path>\n<type>file</type>\n", path.display());
    if let Some(enc) = scan.encoding {
        out.push_str(&format!("<encoding>{}</encoding>\n", enc.name()));
    }
    out.push_str("<content>\n");
    for l in &scan.lines {
        out.push_str(l);
        out.push('\n');
    }
    let has_more = last < total;
    let footer = if scan.capped_by_bytes {
        format!(
            "(Output capped at {} KB. Showing lines {offset}-{last}. Use offset={} to continue.)",
            budget / 1024,
            last + 1
        )
    } else if has_more {
        format!(
            "(Showing lines {offset}-{last} of {total}. Use offset={} to continue.)",
            last + 1
        )
    } else {
        format!("(End of file - total {total} lines)")
    };
    out.push('\n');
    out.push_str(&footer);
    out.push_str("\n</content>");
    let mut result = ToolResult::ok(out)
        .with_metadata(meta::TRUNCATED, scan.capped_by_bytes || has_more)
        .with_metadata(meta::TOTAL_LINES, total)
        .with_metadata(meta::LINES_SHOWN, shown);
    if let Some(enc) = scan.encoding {
        result = result.with_metadata(meta::ENCODING, enc.name());
    }
    result
}

/// What a scan of a text file found.
#[derive(Debug, Default)]
struct Scan {
    /// Formatted `N: text` lines of the window.
    lines: Vec<String>,
    total_lines: usize,
    capped_by_bytes: bool,
    /// The legacy encoding used to decode, when the file is not UTF-8.
    encoding: Option<&'static Encoding>,
    hash: u64,
}

/// Streams a file line by line, keeping only the window.
struct Scanner<'a> {
    offset: usize,
    last_wanted: usize,
    opts: &'a ReadOptions,
    /// The legacy encoding of every line, or `None` for UTF-8.
    encoding: Option<&'static Encoding>,
    /// Checks the whole file when reading it as UTF-8.
    utf8: crate::fs::text::Utf8Validator,
    /// Bytes of the current line (capped).
    line: Vec<u8>,
    line_capped: bool,
    out: Vec<String>,
    out_bytes: usize,
    capped_by_bytes: bool,
    error: Option<TextError>,
}

impl<'a> Scanner<'a> {
    fn new(
        offset: usize,
        limit: usize,
        opts: &'a ReadOptions,
        encoding: Option<&'static Encoding>,
    ) -> Self {
        Self {
            offset,
            last_wanted: offset.saturating_add(limit).saturating_sub(1),
            opts,
            encoding,
            utf8: crate::fs::text::Utf8Validator::new(),
            line: Vec::new(),
            line_capped: false,
            out: Vec::new(),
            out_bytes: 0,
            capped_by_bytes: false,
            error: None,
        }
    }

    /// Most bytes kept of one line: enough for `max_line_chars` characters of up to 4 bytes.
    fn line_cap(&self) -> usize {
        self.opts.max_line_chars.saturating_mul(4).saturating_add(4)
    }

    fn push_part(&mut self, bytes: &[u8]) {
        let room = self.line_cap().saturating_sub(self.line.len());
        if bytes.len() > room {
            self.line_capped = true;
        }
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn run(mut self, file: &mut File) -> Result<Scan, TextError> {
        let mut buf = vec![0u8; CHUNK_BYTES];
        let mut hasher = ContentHasher::new();
        let mut newlines = 0usize;
        let mut last_byte = None;
        let mut done = false;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            let chunk = &buf[..n];
            hasher.update(chunk);
            if self.encoding.is_none() {
                self.utf8.feed(chunk);
                if self.utf8.failed() {
                    return Err(TextError::NotUtf8);
                }
            }
            last_byte = Some(chunk[n - 1]);
            if done {
                newlines += memchr::memchr_iter(b'\n', chunk).count();
                continue;
            }
            // Far before the window: count the chunk's breaks in bulk.
            if newlines + 1 < self.offset {
                let breaks = memchr::memchr_iter(b'\n', chunk).count();
                if newlines + breaks + 1 < self.offset {
                    newlines += breaks;
                    continue;
                }
            }
            let mut rest = chunk;
            loop {
                let line_no = newlines + 1;
                let in_window = line_no >= self.offset;
                match memchr::memchr(b'\n', rest) {
                    Some(i) => {
                        if in_window {
                            self.push_part(&rest[..i]);
                            if !self.finish_line(line_no) {
                                done = true;
                            }
                        }
                        newlines += 1;
                        rest = &rest[i + 1..];
                        if newlines >= self.last_wanted {
                            done = true;
                        }
                        if done {
                            newlines += memchr::memchr_iter(b'\n', rest).count();
                            break;
                        }
                    }
                    None => {
                        if in_window {
                            self.push_part(rest);
                        }
                        break;
                    }
                }
            }
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        if self.encoding.is_none() && !self.utf8.finish() {
            return Err(TextError::NotUtf8);
        }
        let partial_last = last_byte.is_some_and(|b| b != b'\n');
        if partial_last && !done && newlines + 1 >= self.offset {
            self.finish_line(newlines + 1);
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        Ok(Scan {
            lines: self.out,
            total_lines: newlines + usize::from(partial_last),
            capped_by_bytes: self.capped_by_bytes,
            encoding: self.encoding,
            hash: hasher.finish(),
        })
    }

    /// Formats the current line; `false` when the output budget is spent (or decoding failed).
    fn finish_line(&mut self, line_no: usize) -> bool {
        let bytes = std::mem::take(&mut self.line);
        let capped = std::mem::replace(&mut self.line_capped, false);
        let mut text = match self.decode(&bytes, capped) {
            Ok(t) => t,
            Err(e) => {
                self.error = Some(e);
                return false;
            }
        };
        if text.ends_with('\r') {
            text.pop();
        }
        if line_no == 1 {
            if let Some(stripped) = text.strip_prefix('\u{feff}') {
                text = stripped.to_owned();
            }
        }
        let formatted = format_line(line_no, &text, capped, self.opts.max_line_chars);
        if self.out_bytes + formatted.len() + 1 > self.opts.max_output_bytes {
            self.capped_by_bytes = true;
            return false;
        }
        self.out_bytes += formatted.len() + 1;
        self.out.push(formatted);
        self.line = bytes;
        self.line.clear();
        true
    }

    /// Decodes one line in the file's one encoding (never line by line:
    /// a valid UTF-8 line in a Latin-1 file is Latin-1 like the rest).
    fn decode(&self, bytes: &[u8], capped: bool) -> Result<String, TextError> {
        let Some(enc) = self.encoding else {
            return match std::str::from_utf8(bytes) {
                Ok(s) => Ok(s.to_owned()),
                // The cap cut a character in two: keep the whole ones.
                Err(e) if capped && e.error_len().is_none() => {
                    Ok(String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned())
                }
                Err(_) => Err(TextError::NotUtf8),
            };
        };
        if let Some(s) = crate::fs::text::decode_exact(bytes, enc) {
            return Ok(s);
        }
        // The cap may have cut a multi-byte character in two.
        if capped {
            for cut in 1..=3.min(bytes.len()) {
                if let Some(s) = crate::fs::text::decode_exact(&bytes[..bytes.len() - cut], enc) {
                    return Ok(s);
                }
            }
        }
        Err(TextError::Undecodable(enc.name()))
    }
}

/// `N: text`, the text cut to `max_chars` characters with a marker.
fn format_line(line_no: usize, text: &str, capped: bool, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!(
            "{line_no}: {}... (line truncated to {max_chars} chars)",
            &text[..cut]
        ),
        None if capped => format!("{line_no}: {text}... (line truncated to {max_chars} chars)"),
        None => format!("{line_no}: {text}"),
    }
}

/// UTF-16 files (with a byte order mark) are decoded whole; they are rare and small.
fn scan_utf16(
    file: &mut File,
    offset: usize,
    limit: usize,
    opts: &ReadOptions,
) -> Result<Scan, TextError> {
    const MAX_UTF16_BYTES: u64 = 64 * 1024 * 1024;
    if file.metadata()?.len() > MAX_UTF16_BYTES {
        return Err(TextError::Undecodable("UTF-16 (file too large to decode)"));
    }
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let decoded = crate::fs::text::TextFile::decode(&bytes)
        .map_err(|e| TextError::Undecodable(e.encoding))?;
    let text = crate::fs::lines::normalize_newlines(&decoded.text);
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let mut scan = Scan {
        total_lines: lines.len(),
        encoding: Some(decoded.encoding),
        hash: ContentHasher::hash(&bytes),
        ..Scan::default()
    };
    let mut out_bytes = 0;
    let last_wanted = offset.saturating_add(limit).saturating_sub(1);
    for (i, l) in lines.iter().enumerate() {
        let n = i + 1;
        if n < offset || n > last_wanted {
            continue;
        }
        let f = format_line(n, l, false, opts.max_line_chars);
        if out_bytes + f.len() + 1 > opts.max_output_bytes {
            scan.capped_by_bytes = true;
            break;
        }
        out_bytes += f.len() + 1;
        scan.lines.push(f);
    }
    Ok(scan)
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
