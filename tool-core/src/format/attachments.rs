//! Images and files of results in providers' result messages: which ones a
//! provider takes ([`Limits`]: media types and documented size limits), and a
//! text note for every one it cannot take, so nothing is dropped silently.
//!
//! Sizes are counted in base64 characters, what the request carries. A
//! result's media are admitted in order (images first, then inline files)
//! while they fit the per-item limit and what is left of the request's
//! total; the total is shared by every result of one turn when they are
//! rendered together ([`render_results`](super::render_results)). Attachments that live on disk
//! only (`data: None`, e.g. a spilled full output) stay with the host, as
//! before: the tool's text already names their path.
//!
//! The note that replaces a media item says what it was, why it was not
//! sent (the limit and its source) and where the file is:
//! `[not shown: attachment report.pdf (application/pdf, 40.2 MB of base64) is
//! over Gemini's limit of 20.0 MB for inline data in one request (…); the file
//! is at /work/report.pdf]`.

use super::reply::Reply;
#[cfg(test)]
use crate::result::{Attachment, Image};

/// What one provider takes in a tool result, with the documented limits.
#[derive(Debug)]
pub(crate) struct Limits {
    /// The provider's name in notes ("Anthropic").
    pub(crate) provider: &'static str,
    /// Image media types taken.
    pub(crate) image_types: &'static [&'static str],
    /// File (document) media types taken.
    pub(crate) file_types: &'static [&'static str],
    /// Longest base64 text of one image.
    pub(crate) max_image: usize,
    /// Longest base64 text of one file.
    pub(crate) max_file: usize,
    /// Most base64 text of all images and files of one request.
    pub(crate) max_total: usize,
    /// Where the limits come from.
    pub(crate) source: &'static str,
}

/// One media item admitted into a rendering.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Media<'a> {
    /// The file's name for an inline file; `None` for an image.
    pub(crate) file_name: Option<&'a str>,
    /// The media type as the provider's table spells it (lowercase, no
    /// parameters), whatever case the tool used: media types are
    /// case-insensitive (RFC 2045 §5.1), the providers' enums are not.
    pub(crate) media_type: &'static str,
    /// The base64 data, checked to be valid standard base64.
    pub(crate) data: &'a str,
}

impl Media<'_> {
    /// An image (not a file).
    pub(crate) fn is_image(&self) -> bool {
        self.file_name.is_none()
    }

    /// `data:<media type>;base64,<data>`, the data-URL form OpenAI takes
    /// for images (`image_url`) and files (`file_data`).
    pub(crate) fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

/// The media a provider takes from one result, and the notes for the rest.
#[derive(Debug, Default)]
pub(crate) struct Admitted<'a> {
    pub(crate) media: Vec<Media<'a>>,
    pub(crate) notes: Vec<String>,
}

impl Admitted<'_> {
    /// `text` followed by the notes (one line each, after a blank line).
    pub(crate) fn text_after(&self, text: &str) -> String {
        if self.notes.is_empty() {
            return text.to_owned();
        }
        let notes = self.notes.join("\n");
        if text.is_empty() {
            notes
        } else {
            format!("{text}\n\n{notes}")
        }
    }
}

/// `n` bytes as the providers' docs state a limit: whole decimal megabytes
/// (`20 MB`), or whole mebibytes, which Anthropic's docs also call MB
/// (`5 MB (5242880 bytes)`: the API's error for an image counts 5 × 2²⁰).
fn limit_text(n: usize) -> String {
    const MIB: usize = 1 << 20;
    if n % 1_000_000 == 0 {
        format!("{} MB", n / 1_000_000)
    } else if n % MIB == 0 {
        format!("{} MB ({n} bytes)", n / MIB)
    } else {
        format!("{n} bytes")
    }
}

/// An item's size: `5.2 MB (5242884 bytes)`, or `812 bytes` under 100 000.
fn size_text(n: usize) -> String {
    if n < 100_000 {
        return format!("{n} bytes");
    }
    #[allow(
        clippy::cast_precision_loss,
        reason = "a size shown to one decimal place"
    )]
    let mb = n as f64 / 1_000_000.0;
    format!("{mb:.1} MB ({n} bytes)")
}

/// The media type's essence, lowercased (`IMAGE/PNG; x=y` is `image/png`).
fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Why `data` is not valid standard base64 (RFC 4648 §4, padded, no line
/// breaks: what the three providers' docs ask for), checked in chunks
/// without decoding it whole; `None` when it is valid.
fn base64_problem(data: &str) -> Option<String> {
    use base64::Engine as _;
    const CHUNK: usize = 4096;
    let bytes = data.as_bytes();
    if bytes.len() % 4 != 0 {
        return Some(format!(
            "its data is not valid base64 ({} characters, not a multiple of 4)",
            bytes.len()
        ));
    }
    let mut buf = [0u8; CHUNK / 4 * 3];
    for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
        if let Err(e) = base64::engine::general_purpose::STANDARD.decode_slice(chunk, &mut buf) {
            let detail = match e {
                base64::DecodeSliceError::DecodeError(base64::DecodeError::InvalidByte(at, _)) => {
                    format!("an invalid character at {}", i * CHUNK + at)
                }
                base64::DecodeSliceError::DecodeError(base64::DecodeError::InvalidPadding) => {
                    "misplaced padding".to_owned()
                }
                _ => "malformed".to_owned(),
            };
            return Some(format!("its data is not valid base64 ({detail})"));
        }
    }
    None
}

fn located(path: Option<&str>) -> String {
    match path {
        Some(p) => format!("the file is at {p}"),
        None => "it was not saved to a file".to_owned(),
    }
}

/// The media of `reply` that `limits` allow, counting against `spent` (the
/// base64 characters already admitted into the same request). Each refusal
/// says why, with what the reader can do about it: an unsupported type
/// (convert it), invalid base64 (a fault of the tool), or a size over a limit
/// (ask for a smaller one).
pub(crate) fn admit<'a>(reply: &Reply<'a>, limits: &Limits, spent: &mut usize) -> Admitted<'a> {
    let mut out = Admitted::default();
    let mut media = Vec::new();
    let mut check = |what: String,
                     media_type: &str,
                     data: &'a str,
                     path: Option<&str>,
                     file_name: Option<&'a str>,
                     types: &[&'static str],
                     max: usize| {
        let len = data.len();
        let wanted = essence(media_type);
        let taken = types.iter().copied().find(|t| *t == wanted);
        let reason = match taken {
            None => Err(format!(
                "{} does not take {wanted} in a tool result (it takes {}); convert it to {}",
                limits.provider,
                types.join(", "),
                if file_name.is_some() {
                    "PDF"
                } else {
                    "PNG or JPEG"
                }
            )),
            Some(_) if len > max => Err(format!(
                "it is over {}'s limit of {} of base64 for one item ({}); ask the tool for a smaller one",
                limits.provider,
                limit_text(max),
                limits.source
            )),
            Some(_) if *spent + len > limits.max_total => Err(format!(
                "with the media before it, it would pass {}'s limit of {} for one request ({}); ask for fewer or smaller ones in another call",
                limits.provider,
                limit_text(limits.max_total),
                limits.source
            )),
            Some(t) => base64_problem(data).map_or(Ok(t), Err),
        };
        match reason {
            Ok(media_type) => {
                *spent += len;
                media.push(Media {
                    file_name,
                    media_type,
                    data,
                });
            }
            Err(reason) => out.notes.push(format!(
                "[not shown: {what} ({media_type}, {} of base64): {reason}; {}]",
                size_text(len),
                located(path)
            )),
        }
    };
    for (i, image) in reply.images.iter().enumerate() {
        check(
            format!("image {}", i + 1),
            &image.media_type,
            &image.data,
            image.path.as_deref(),
            None,
            limits.image_types,
            limits.max_image,
        );
    }
    for attachment in reply.attachments {
        let Some(data) = attachment.data.as_deref() else {
            continue;
        };
        check(
            format!("attachment {}", attachment.name),
            &attachment.media_type,
            data,
            attachment.path.as_deref(),
            Some(&attachment.name),
            limits.file_types,
            limits.max_file,
        );
    }
    out.media = media;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{anthropic, gemini, reply};
    use crate::registry::history::Rendering;
    use crate::result::ToolResult;

    #[test]
    fn over_the_limit_becomes_a_note_with_the_path() {
        let big = "A".repeat(anthropic::MEDIA_LIMITS.max_image + 4);
        let r = ToolResult::ok("read")
            .with_image(Image::new("image/png", big).with_path("/w/huge.png"))
            .with_image(Image::new("image/png", "iVBORw0KGgo="));
        let reply = reply::reply(&r, Rendering::First);
        let mut spent = 0;
        let a = admit(&reply, &anthropic::MEDIA_LIMITS, &mut spent);
        assert_eq!(a.media.len(), 1, "the small one still goes");
        assert_eq!(spent, 12);
        assert_eq!(a.notes.len(), 1);
        assert!(a.notes[0].starts_with("[not shown: image 1 (image/png, 5.2 MB (5242884 bytes) of base64): it is over Anthropic's limit of 5 MB (5242880 bytes) of base64 for one item"), "{}", a.notes[0]);
        assert!(
            a.notes[0].ends_with("the file is at /w/huge.png]"),
            "{}",
            a.notes[0]
        );
    }

    #[test]
    fn unsupported_types_and_the_request_total_are_noted() {
        let doc = Attachment::inline(
            "notes.docx",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "UEsDBA==",
        );
        let r = ToolResult::ok("x").with_attachment(doc);
        let reply = reply::reply(&r, Rendering::First);
        let mut spent = 0;
        let a = admit(&reply, &gemini::MEDIA_LIMITS, &mut spent);
        assert!(a.media.is_empty());
        assert!(
            a.notes[0].contains("Gemini does not take application/vnd.openxmlformats"),
            "{}",
            a.notes[0]
        );
        assert!(
            a.notes[0].contains("it was not saved to a file"),
            "{}",
            a.notes[0]
        );

        let pdf = Attachment::inline("a.pdf", "application/pdf", "JVBERi0=");
        let r = ToolResult::ok("x").with_attachment(pdf);
        let reply = reply::reply(&r, Rendering::First);
        let mut spent = gemini::MEDIA_LIMITS.max_total - 4;
        let a = admit(&reply, &gemini::MEDIA_LIMITS, &mut spent);
        assert!(a.media.is_empty());
        assert!(a.notes[0].contains("for one request"), "{}", a.notes[0]);
        assert_eq!(a.text_after("out"), format!("out\n\n{}", a.notes[0]));
    }

    #[test]
    fn limits_read_as_the_docs_state_them() {
        assert_eq!(limit_text(5 * 1024 * 1024), "5 MB (5242880 bytes)");
        assert_eq!(limit_text(20_000_000), "20 MB");
        assert_eq!(limit_text(1234), "1234 bytes");
        assert_eq!(base64_problem("iVBORw0KGgo="), None);
        assert_eq!(base64_problem(&"QUFB".repeat(3000)), None, "across chunks");
        let mut long = "QUFB".repeat(3000);
        long.replace_range(5000..5001, "*");
        assert_eq!(
            base64_problem(&long).as_deref(),
            Some("its data is not valid base64 (an invalid character at 5000)")
        );
        assert_eq!(
            base64_problem("QQ==QUFB").as_deref(),
            Some("its data is not valid base64 (an invalid character at 2)")
        );
    }

    #[test]
    fn path_only_attachments_stay_with_the_host() {
        let r = ToolResult::ok("x").with_attachment(Attachment::file(
            "full.log",
            "text/plain",
            "/tmp/full.log",
        ));
        let reply = reply::reply(&r, Rendering::First);
        let a = admit(&reply, &anthropic::MEDIA_LIMITS, &mut 0);
        assert!(a.media.is_empty() && a.notes.is_empty());
    }
}
