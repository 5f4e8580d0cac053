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
pub(crate) enum Media<'a> {
    /// An image.
    Image(&'a Image),
    /// An inline file: the attachment and its base64 data.
    File(&'a Attachment, &'a str),
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

fn megabytes(n: usize) -> String {
    #[allow(
        clippy::cast_precision_loss,
        reason = "a size shown to one decimal place"
    )]
    let mb = n as f64 / 1_000_000.0;
    format!("{mb:.1} MB")
}

fn located(path: Option<&str>) -> String {
    match path {
        Some(p) => format!("the file is at {p}"),
        None => "it was not saved to a file; ask the tool for a smaller one".to_owned(),
    }
}

/// The media of `reply` that `limits` allow, counting against `spent` (the
/// base64 characters already admitted into the same request).
pub(crate) fn admit<'a>(reply: &Reply<'a>, limits: &Limits, spent: &mut usize) -> Admitted<'a> {
    let mut out = Admitted::default();
    let mut check = |what: String,
                     media_type: &str,
                     len: usize,
                     path: Option<&str>,
                     types: &[&str],
                     max: usize|
     -> bool {
        let reason = if !types.contains(&media_type) {
            Some(format!(
                "{} does not take {media_type} in a tool result (it takes {})",
                limits.provider,
                types.join(", ")
            ))
        } else if len > max {
            Some(format!(
                "it is over {}'s limit of {} for one item ({})",
                limits.provider,
                megabytes(max),
                limits.source
            ))
        } else if *spent + len > limits.max_total {
            Some(format!(
                "with the media before it, it would pass {}'s limit of {} for one request ({})",
                limits.provider,
                megabytes(limits.max_total),
                limits.source
            ))
        } else {
            None
        };
        match reason {
            None => {
                *spent += len;
                true
            }
            Some(reason) => {
                out.notes.push(format!(
                    "[not shown: {what} ({media_type}, {} of base64): {reason}; {}]",
                    megabytes(len),
                    located(path)
                ));
                false
            }
        }
    };
    let mut media = Vec::new();
    for (i, image) in reply.images.iter().enumerate() {
        if check(
            format!("image {}", i + 1),
            &image.media_type,
            image.data.len(),
            image.path.as_deref(),
            limits.image_types,
            limits.max_image,
        ) {
            media.push(Media::Image(image));
        }
    }
    for attachment in reply.attachments {
        let Some(data) = attachment.data.as_deref() else {
            continue;
        };
        if check(
            format!("attachment {}", attachment.name),
            &attachment.media_type,
            data.len(),
            attachment.path.as_deref(),
            limits.file_types,
            limits.max_file,
        ) {
            media.push(Media::File(attachment, data));
        }
    }
    out.media = media;
    out
}

/// `data:<media type>;base64,<data>` for a file (OpenAI's `file_data`).
pub(crate) fn file_data_url(attachment: &Attachment, data: &str) -> String {
    format!("data:{};base64,{data}", attachment.media_type)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{anthropic, gemini, reply};
    use crate::memory::Rendering;
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
        assert!(a.notes[0].starts_with("[not shown: image 1 (image/png, 5.2 MB of base64): it is over Anthropic's limit of 5.2 MB for one item"), "{}", a.notes[0]);
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
