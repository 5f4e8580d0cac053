//! `read_images`: several images in one call, composed into one numbered
//! grid (one image's tokens instead of N) or returned one by one, scaled
//! down for the model.
//!
//! Paths are confined to the workspace exactly as `read_file`'s are (the
//! same resolution beneath the root's handle, the same read-only roots);
//! globs are expanded as `glob_files` expands them. Decoding, scaling and
//! encoding use the [`image`] crate (PNG, JPEG, GIF's first frame, WebP, BMP;
//! nothing else compiled in), the index numbers are drawn with [`ab_glyph`]
//! from a bundled subset of DejaVu Sans Mono Bold (digits only, 2 KiB; its
//! licence is `tool-builtins/assets/fonts/LICENSE`). Files are decoded in
//! parallel, one thread per core, inside the blocking pool.
//!
//! Bounds, since the model chooses the inputs: at most [`MAX_PATHS`] entries
//! in `paths`, at most [`MAX_FILES`] files after expanding globs, files of at
//! most [`MAX_FILE_BYTES`] bytes, images of at most [`MAX_PIXELS`] pixels and
//! [`MAX_DECODED_BYTES`] decoded (checked from the header before decoding,
//! with the decoder's allocation limit set: no decompression bomb), at most
//! [`DECODE_BUDGET_BYTES`] of decodes in flight in the process (threads wait
//! for their share), [`MAX_GRID_IMAGES`] per grid, every image sent within
//! [`MAX_IMAGE_BASE64`] of base64 (Anthropic's 5 MB; a grid or image over it
//! goes as JPEG with the quality stepped down, and the text says so), and
//! [`SEPARATE_BUDGET_BASE64`] of images per `separate` call.
//!
//! The grid: each image is scaled down into its cell (aspect ratio kept,
//! letterboxed in dark grey); transparent parts show a light checkerboard so
//! that dark art on a transparent background stays visible; an image at most
//! half the cell's side is enlarged by a whole factor with nearest-neighbour
//! sampling (sharp pixels, no blur); larger ones are not enlarged. Other
//! tools compose grids with [`build_image_grid`] (the same code, with
//! optional captions drawn under each cell in a bundled Latin subset of
//! DejaVu Sans Condensed, 21 KB); `read_images` draws no captions, as file
//! names tell a model nothing the index list does not.
//!
//! Names in the text are shown as they are, or quoted with escapes when they
//! hold control characters, so no file name can forge an index line.
//! Matches of a glob come in natural order (`b2` before `b10`, a small
//! comparator, `natural_cmp`).

use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use image::DynamicImage;
use rustix::fs::FileType;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{ErrorKind, Image, ToolContext, ToolError, ToolResult, meta, run_blocking, tool};

use crate::fs::workspace::{Workspace, workspace_of};

pub mod decode;
pub mod grid;
pub(crate) mod pdf;

pub use decode::{
    DECODE_BUDGET_BYTES, MAX_AS_IS_EXTRA_BYTES, MAX_DECODED_BYTES, MAX_IMAGE_BASE64, MAX_LONG_SIDE,
    MAX_PIXELS, MAX_PNG_ANCILLARY_BYTES,
};
pub use grid::{GAP, Grid, Layout, MAX_CAPTION_CHARS, MAX_GRID_IMAGES, build_image_grid};

/// Most entries (paths or globs) in one call's `paths`.
pub const MAX_PATHS: usize = 64;

/// Most files one call reads, after globs are expanded.
pub const MAX_FILES: usize = 64;

/// Largest image file read, in bytes: 50 MiB.
pub const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;

/// Most base64 text of images one `layout: separate` call returns:
/// 20 000 000 characters (15 MB of image bytes), the smallest request limit
/// among the providers (Gemini API, "Image understanding": inline data up to
/// 20 MB per request, counted on the base64 the request carries). Images
/// past it are listed as not sent, with the reason.
pub const SEPARATE_BUDGET_BASE64: usize = 20_000_000;

/// How `read_images` returns the images.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageLayout {
    /// One composed image, each cell numbered (at most 16 images).
    #[default]
    Grid,
    /// Each image on its own, long side at most 1568 px.
    Separate,
}

/// Reads several images at once, to compare them.
///
/// `grid` (the default) composes up to 16 images into one picture, each in a
/// numbered cell (1, 2, 3 … in the top-left corner); the text maps each
/// number to its file, size and original dimensions. `separate` returns each
/// image on its own, scaled to a long side of at most 1568 px (up to 20 MB of
/// base64 in all). PNG, JPEG, GIF and WebP (first frame of an animation) and
/// BMP, turned upright by their EXIF orientation; a file that cannot be
/// decoded is listed as skipped and the others still come back. One image is
/// returned as `read_file` returns it.
///
/// Globs: a pattern without `/` matches file names at any depth
/// (`*.png`), one with `/` matches paths from the root (`shots/*.png`);
/// files ignored by `.gitignore` are left out; the matches come in natural
/// order (`b2` before `b10`). A path that exists is read as it is even if it
/// holds glob characters (`app/[id]/page.png`). A file named twice is read
/// once (the text says so). A path outside the workspace fails the whole call.
///
/// # Arguments
/// * `paths` - Image paths or glob patterns (e.g. `screenshots/*.png`), relative to the workspace root or absolute.
/// * `layout` - `grid` (default): one numbered picture of at most 16 images; `separate`: each image on its own.
///
/// # Examples
/// ```json
/// {"paths": ["screenshots/before.png", "screenshots/after.png"]}
/// ```
#[tool(kind = "read", read_only, idempotent, concurrency_safe)]
pub async fn read_images(
    context: &ToolContext,
    paths: Vec<String>,
    layout: Option<ImageLayout>,
) -> ToolResult {
    let layout = layout.unwrap_or_default();
    if paths.is_empty() {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            "`paths` is empty. Give one or more image paths or globs, e.g. [\"shots/*.png\"].",
        );
    }
    if paths.len() > MAX_PATHS {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "`paths` has {} entries; at most {MAX_PATHS} are read in one call. Use globs or split the call.",
                paths.len()
            ),
        );
    }
    let ctx = context.clone();
    run_blocking(move || read_blocking(&ctx, &paths, layout))
        .await
        .unwrap_or_else(ToolResult::from)
}

/// One file to read: the path shown and the resolved entry.
struct Entry {
    shown: String,
    target: crate::fs::beneath::Beneath,
}

/// What reading one file gave.
enum Outcome {
    /// Scaled to fit a grid cell.
    Cell {
        image: DynamicImage,
        info: Info,
    },
    /// Ready to send on its own.
    Single {
        fitted: decode::Fitted,
        info: Info,
    },
    Skipped(String),
}

/// What the text says of one image.
struct Info {
    bytes: u64,
    width: u32,
    height: u32,
    format: &'static str,
    /// What was done beyond scaling (EXIF rotation, first frame, re-encoding).
    notes: Vec<String>,
}

#[allow(
    clippy::too_many_lines,
    reason = "one linear pass: expand, check, decode, render"
)]
fn read_blocking(ctx: &ToolContext, paths: &[String], layout: ImageLayout) -> ToolResult {
    let ws = match workspace_of(ctx) {
        Ok(ws) => ws,
        Err(e) => return ToolResult::from(e),
    };
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut duplicates = 0;
    let entries = match expand(ctx, &ws, paths, &mut skipped, &mut duplicates) {
        Ok(e) => e,
        Err(r) => return r,
    };
    if layout == ImageLayout::Grid && entries.len() > MAX_GRID_IMAGES {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "`paths` name {} images; a grid holds at most {MAX_GRID_IMAGES}. Split the call into groups of \
                 {MAX_GRID_IMAGES} or fewer, or use `layout: \"separate\"`.",
                entries.len()
            ),
        );
    }
    let single = entries.len() == 1 || layout == ImageLayout::Separate;
    let cell = Layout::for_count(entries.len()).map_or(MAX_LONG_SIDE, |l| l.cell);
    let outcomes = decode_all(&entries, if single { None } else { Some(cell) });

    let mut cells = Vec::new();
    let mut singles = Vec::new();
    for (entry, outcome) in entries.iter().zip(outcomes) {
        match outcome {
            Outcome::Cell { image, info } => cells.push((entry.shown.clone(), image, info)),
            Outcome::Single { fitted, info } => {
                singles.push((entry.shown.clone(), fitted, info, entry.target.path.clone()));
            }
            Outcome::Skipped(why) => skipped.push((entry.shown.clone(), why)),
        }
    }
    // A grid whose other images were skipped down to one: that one alone.
    if cells.len() == 1 {
        let (shown, _, _) = cells.remove(0);
        let again: Vec<&Entry> = entries.iter().filter(|e| e.shown == shown).collect();
        if let Some(entry) = again.first() {
            match read_single(entry) {
                Outcome::Single { fitted, info } => {
                    singles.push((shown, fitted, info, entry.target.path.clone()));
                }
                Outcome::Skipped(why) => skipped.push((shown, why)),
                Outcome::Cell { .. } => {}
            }
        }
    }
    if cells.is_empty() && singles.is_empty() {
        let mut text = String::from("No image could be read:");
        push_skipped_lines(&mut text, &skipped);
        return ToolResult::failed(text).with_metadata(meta::SKIPPED, skipped_json(&skipped));
    }

    let mut listing = String::new();
    let mut images_json = Vec::new();
    let mut result;
    if cells.is_empty() {
        // One image, or `separate`.
        let mut sent = Vec::new();
        let mut spent = 0usize;
        let mut over_budget = Vec::new();
        for (shown, fitted, info, abs) in singles {
            let base64_len = fitted.sent.bytes.len().div_ceil(3) * 4;
            if spent + base64_len > SEPARATE_BUDGET_BASE64 && !sent.is_empty() {
                over_budget.push(shown);
                continue;
            }
            spent += base64_len;
            sent.push((shown, fitted, info, abs));
        }
        let head = if sent.len() == 1 && over_budget.is_empty() {
            "Image read successfully".to_owned()
        } else {
            format!(
                "Read {} images, each returned on its own in this order:",
                sent.len()
            )
        };
        listing.push_str(&head);
        result = ToolResult::ok("");
        for (i, (shown, fitted, info, abs)) in sent.iter().enumerate() {
            let n = i + 1;
            listing.push_str(&format!("\n{n}: {}", describe(shown, info)));
            if fitted.resized() {
                listing.push_str(&format!(
                    ", sent at {}×{}",
                    fitted.sent.width, fitted.sent.height
                ));
            }
            images_json.push(image_json(
                n,
                shown,
                info,
                Some((fitted.sent.width, fitted.sent.height)),
            ));
            result = result.with_image(
                Image::new(
                    fitted.sent.media_type,
                    base64::engine::general_purpose::STANDARD.encode(&fitted.sent.bytes),
                )
                .with_path(abs.display().to_string()),
            );
        }
        if !over_budget.is_empty() {
            listing.push_str(&format!(
                "\nNot sent, over the {} MB of base64 one call returns (read them in another call):",
                SEPARATE_BUDGET_BASE64 / 1_000_000
            ));
            for shown in &over_budget {
                listing.push_str(&format!("\n- {}", escaped(shown)));
            }
        }
        result = result
            .with_metadata(
                meta::LAYOUT,
                if sent.len() == 1 {
                    "single"
                } else {
                    "separate"
                },
            )
            .with_metadata(meta::NOT_SENT, over_budget);
    } else {
        let images: Vec<DynamicImage> = cells.iter().map(|(_, im, _)| im.clone()).collect();
        let grid = match grid::build_image_grid(&images, None) {
            Ok(g) => g,
            Err(e) => return ToolResult::from(e),
        };
        drop(images);
        let (canvas, grid_layout) = (grid.image, grid.layout);
        let encoded = match decode::encode(&DynamicImage::ImageRgb8(canvas), false) {
            Ok(b) => b,
            Err(e) => return ToolResult::failed(e),
        };
        listing.push_str(&format!(
            "Composed {} images into one {}×{} px grid ({} columns × {} row{} of {} px cells). \
             The number in each cell's top-left corner is the index below.",
            cells.len(),
            grid_layout.width(),
            grid_layout.height(),
            grid_layout.cols,
            grid_layout.rows,
            if grid_layout.rows == 1 { "" } else { "s" },
            grid_layout.cell
        ));
        if let Some(note) = &encoded.note {
            listing.push_str(&format!(" The grid is {note}."));
        }
        for (i, (shown, _, info)) in cells.iter().enumerate() {
            let n = i + 1;
            listing.push_str(&format!("\n{n}: {}", describe(shown, info)));
            images_json.push(image_json(n, shown, info, None));
        }
        result = ToolResult::ok("")
            .with_image(Image::new(
                encoded.media_type,
                base64::engine::general_purpose::STANDARD.encode(&encoded.bytes),
            ))
            .with_metadata(meta::LAYOUT, "grid")
            .with_metadata(meta::WIDTH, grid_layout.width())
            .with_metadata(meta::HEIGHT, grid_layout.height())
            .with_metadata(meta::COLUMNS, grid_layout.cols)
            .with_metadata(meta::ROWS, grid_layout.rows)
            .with_metadata(meta::CELL, grid_layout.cell)
            .with_metadata(meta::BYTES, encoded.bytes.len());
    }
    if duplicates > 0 {
        listing.push_str(&format!(
            "\n{duplicates} duplicate path{} (the same file named again, or matched by two patterns) given once.",
            if duplicates == 1 { "" } else { "s" }
        ));
    }
    if !skipped.is_empty() {
        listing.push_str(&format!(
            "\nSkipped {} file{}:",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" }
        ));
        push_skipped_lines(&mut listing, &skipped);
    }
    let memory = format!(
        "[images shown on an earlier turn and left out of the history; call read_images again to see them]\n{listing}"
    );
    result
        .with_output(listing)
        .with_long_term_memory(memory)
        .output_once()
        .with_metadata(meta::IMAGES, Value::Array(images_json))
        .with_metadata(meta::SKIPPED, skipped_json(&skipped))
}

fn describe(shown: &str, info: &Info) -> String {
    let mut text = format!(
        "{} ({} bytes, {}×{} {}",
        escaped(shown),
        info.bytes,
        info.width,
        info.height,
        info.format
    );
    for note in &info.notes {
        text.push_str("; ");
        text.push_str(note);
    }
    text.push(')');
    text
}

/// A path as the text shows it: as it is, or quoted with Rust's
/// `escape_debug` escapes when it holds a control character or a line or
/// paragraph separator, so that no file name can start a line of its own
/// (and forge an index line) or hide behind escape sequences.
pub(crate) fn escaped(shown: &str) -> String {
    if shown
        .chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '"'))
    {
        format!("\"{}\"", shown.escape_debug())
    } else {
        shown.to_owned()
    }
}

fn image_json(n: usize, shown: &str, info: &Info, sent: Option<(u32, u32)>) -> Value {
    let mut v = json!({
        "index": n,
        "path": shown,
        "bytes": info.bytes,
        "width": info.width,
        "height": info.height,
        "format": info.format,
    });
    if let Some((w, h)) = sent {
        v["sent_width"] = json!(w);
        v["sent_height"] = json!(h);
    }
    v
}

fn push_skipped_lines(text: &mut String, skipped: &[(String, String)]) {
    for (shown, why) in skipped {
        text.push_str(&format!("\n- {}: {why}", escaped(shown)));
    }
}

fn skipped_json(skipped: &[(String, String)]) -> Value {
    Value::Array(
        skipped
            .iter()
            .map(|(p, e)| json!({"path": p, "error": e}))
            .collect(),
    )
}

/// Expands globs and resolves every path; a path that resolves outside the
/// workspace fails the call (as in `read_file`), a glob that matches nothing
/// or a missing file is skipped.
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's final result; it is returned at once"
)]
fn expand(
    ctx: &ToolContext,
    ws: &Workspace,
    paths: &[String],
    skipped: &mut Vec<(String, String)>,
    duplicates: &mut usize,
) -> Result<Vec<Entry>, ToolResult> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut wanted: Vec<(String, String)> = Vec::new();
    for p in paths {
        let pattern = p.trim();
        // An existing file or folder named with glob characters
        // (`app/[id]/page.png`) is that file, not a pattern.
        let exists =
            || crate::roots::resolve_for_read(ctx, ws, p).is_ok_and(|b| b.file_type().is_some());
        let is_glob = pattern.split('/').any(crate::search::has_glob_syntax) && !exists();
        if !is_glob {
            wanted.push((p.clone(), p.clone()));
            continue;
        }
        let (files, total) = crate::search::glob::expand(ws, pattern, MAX_FILES + 1, threads)
            .map_err(ToolResult::from)?;
        if total > MAX_FILES {
            return Err(too_many(total));
        }
        if files.is_empty() {
            skipped.push((p.clone(), "no file matches this pattern".to_owned()));
        }
        let mut files = files;
        files.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        for f in files {
            let shown = ws.relative(&f).display().to_string();
            wanted.push((shown, f.to_string_lossy().into_owned()));
        }
    }
    let mut entries: Vec<Entry> = Vec::new();
    for (shown, path) in wanted {
        if entries.len() >= MAX_FILES {
            return Err(too_many(entries.len() + 1));
        }
        let target = crate::roots::resolve_for_read(ctx, ws, &path)
            .map_err(|e| ToolResult::from(ToolError::from(e)))?;
        if entries.iter().any(|e| e.target.path == target.path) {
            *duplicates += 1;
            continue;
        }
        let shown = if std::path::Path::new(&shown).is_absolute() {
            ws.relative(&target.path).display().to_string()
        } else {
            shown
        };
        entries.push(Entry { shown, target });
    }
    Ok(entries)
}

/// Orders paths as people number files: runs of digits compare by value
/// (`b2` before `b10`), the rest character by character; equal values with
/// different spellings (`b01`, `b1`) fall back to plain text order.
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (m, n) = (run(x), run(y));
                let trim = |s: &[u8]| {
                    let zeros = s.iter().take_while(|&&c| c == b'0').count();
                    s[zeros..].to_vec()
                };
                let (p, q) = (trim(&x[..m]), trim(&y[..n]));
                let by_value = p.len().cmp(&q.len()).then_with(|| p.cmp(&q));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                x = &x[m..];
                y = &y[n..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

fn too_many(n: usize) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "`paths` name more than {MAX_FILES} files ({n} or more); one call reads at most {MAX_FILES}. \
             Use narrower globs or split the call."
        ),
    )
}

/// Environment variable that sets how many threads decode the images of
/// one call (1 to [`MAX_DECODE_THREADS`]) instead of the number of cores:
/// for measuring the decode budget as a many-core machine would run it.
pub const DECODE_THREADS_ENV: &str = "AGENT_TOOLS_DECODE_THREADS";

/// Most decode threads [`DECODE_THREADS_ENV`] may ask for (64).
pub const MAX_DECODE_THREADS: usize = 64;

/// Threads for one call's decodes: [`DECODE_THREADS_ENV`] when it holds a
/// number (clamped to 1..=[`MAX_DECODE_THREADS`]), else the cores.
fn decode_threads() -> usize {
    std::env::var(DECODE_THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            |n| n.clamp(1, MAX_DECODE_THREADS),
        )
}

/// Decodes every entry, in parallel over the cores; each fitted to a cell of
/// side `cell`, or (for `None`) to stand alone. Results are in entry order.
fn decode_all(entries: &[Entry], cell: Option<u32>) -> Vec<Outcome> {
    let threads = decode_threads().min(entries.len()).max(1);
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, Outcome)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(entry) = entries.get(i) else { break };
                        let outcome = match cell {
                            Some(side) => read_cell(entry, side),
                            None => read_single(entry),
                        };
                        mine.push((i, outcome));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|_| vec![]))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    let mut out: Vec<Outcome> = Vec::with_capacity(entries.len());
    let mut it = done.into_iter().peekable();
    for i in 0..entries.len() {
        match it.peek() {
            Some((j, _)) if *j == i => {
                if let Some((_, o)) = it.next() {
                    out.push(o);
                }
            }
            _ => out.push(Outcome::Skipped("decoding failed unexpectedly".to_owned())),
        }
    }
    out
}

/// The bytes of an entry, bounded by [`MAX_FILE_BYTES`].
fn read_bytes(entry: &Entry) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    match entry.target.file_type() {
        None => return Err("file not found".to_owned()),
        Some(FileType::RegularFile) => {}
        Some(FileType::Directory) => return Err("it is a folder, not an image".to_owned()),
        Some(_) => return Err("it is not a regular file".to_owned()),
    }
    let file = entry
        .target
        .open_file()
        .map_err(|e| format!("cannot open it: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "it is {len} bytes; images of at most {MAX_FILE_BYTES} bytes are read"
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    Ok(bytes)
}

fn read_cell(entry: &Entry, side: u32) -> Outcome {
    let bytes = match read_bytes(entry) {
        Ok(b) => b,
        Err(e) => return Outcome::Skipped(e),
    };
    let decoded = match decode::decode(&bytes) {
        Ok(d) => d,
        Err(e) => return Outcome::Skipped(e),
    };
    let mut notes = Vec::new();
    if decoded.orientation != image::metadata::Orientation::NoTransforms {
        notes.push("turned upright by its EXIF orientation".to_owned());
    }
    if decoded.animated {
        notes.push("animated: first frame only".to_owned());
    }
    let info = Info {
        bytes: bytes.len() as u64,
        width: decoded.width,
        height: decoded.height,
        format: decode::format_name(decoded.format),
        notes,
    };
    drop(bytes);
    let image = grid::enlarge(decoded.fitted(side, side), side);
    Outcome::Cell { image, info }
}

fn read_single(entry: &Entry) -> Outcome {
    let bytes = match read_bytes(entry) {
        Ok(b) => b,
        Err(e) => return Outcome::Skipped(e),
    };
    let len = bytes.len() as u64;
    match decode::fit_single(bytes) {
        Ok(fitted) => {
            let info = Info {
                bytes: len,
                width: fitted.original_width,
                height: fitted.original_height,
                format: decode::format_name(fitted.format),
                notes: fitted.notes.clone(),
            };
            Outcome::Single { fitted, info }
        }
        Err(e) => Outcome::Skipped(e),
    }
}
