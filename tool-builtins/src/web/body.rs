//! What `web_fetch` makes of a response body: HTML as Markdown, other text
//! as it is, images through the media path (`media::decode::fit_single`),
//! PDFs as an inline attachment; and how a page becomes the tool's result.

use base64::Engine as _;
use tool_core::{Attachment, ErrorKind, Image, ToolResult};
use tool_rules::text::{Clip, clip};

/// Most characters `max_length` may ask for: 50 000, so that a whole answer
/// of ASCII text stays within the registry's default output budget (50 KiB,
/// `tool_core::truncate::DEFAULT_MAX_BYTES`) instead of being cut again and
/// spilled to a file.
pub const MAX_LENGTH_LIMIT: usize = 50_000;
/// Characters returned when `max_length` is not given: 20 000.
pub const DEFAULT_MAX_LENGTH: usize = 20_000;

/// Stack of the thread that turns HTML into Markdown: 256 MiB (reserved,
/// touched only as deep as the document nests). The converter walks the
/// tree recursively; a deeply nested page must not overflow the stack.
const CONVERT_STACK: usize = 256 * 1024 * 1024;

/// Deepest element nesting handed to the converter: 512, the depth at which
/// Chromium's HTML parser stops nesting (`kMaximumHTMLParserDOMTreeDepth`).
/// The parser's scope checks walk the stack of open elements, so 100 000
/// nested `<div>`s (600 KB) took minutes; tags deeper than this are left
/// out before parsing ([`flatten_deep`]), their text kept.
const MAX_NESTING: usize = 512;

/// Elements that never have content (no end tag): they do not nest.
const VOID_TAGS: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param",
];

/// Elements whose end tag may be left out (the HTML standard's "optional
/// tags"): a page of unclosed `<p>`s or `<li>`s is not deep, so they are
/// not counted.
const OPTIONAL_END_TAGS: [&str; 16] = [
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "rt",
    "rp", "colgroup", "caption",
];

/// Tags whose content is never page text: left out of the Markdown.
const SKIPPED_TAGS: [&str; 9] = [
    "script", "style", "noscript", "template", "iframe", "svg", "canvas", "object", "embed",
];

/// One fetched page, as cached.
#[derive(Debug)]
pub(crate) struct Page {
    /// The URL finally answered (after redirects).
    pub(crate) url: String,
    /// Its HTTP status (2xx).
    pub(crate) status: u16,
    /// The media type as sent (or sniffed, when none was sent).
    pub(crate) content_type: String,
    /// Body bytes read.
    pub(crate) bytes: usize,
    /// Whether the body was cut at the byte limit.
    pub(crate) cut: bool,
    /// The redirect hops followed, in order (each hop's target URL).
    pub(crate) redirects: Vec<String>,
    /// The content.
    pub(crate) content: Content,
}

/// A page's content.
#[derive(Debug)]
pub(crate) enum Content {
    /// Text; `markdown` when it was converted from HTML; `chars` its length
    /// in characters (counted once, not on every cached answer).
    Text {
        text: String,
        markdown: bool,
        chars: usize,
    },
    /// An image ready for the model.
    Image {
        image: Image,
        width: u32,
        height: u32,
        original_width: u32,
        original_height: u32,
        notes: Vec<String>,
    },
    /// A PDF, base64.
    Pdf { base64: String, pages: usize },
}

impl Page {
    /// Bytes the page holds, for the cache's bound.
    pub(crate) fn size(&self) -> usize {
        let content = match &self.content {
            Content::Text { text, .. } => text.len(),
            Content::Image { image, .. } => image.data.len(),
            Content::Pdf { base64, .. } => base64.len(),
        };
        content + self.url.len() + self.redirects.iter().map(String::len).sum::<usize>()
    }

    #[cfg(test)]
    pub(crate) fn for_test(content: Content) -> Self {
        Self {
            url: "http://a.test/".to_owned(),
            status: 200,
            content_type: "text/plain".to_owned(),
            bytes: 0,
            cut: false,
            redirects: Vec::new(),
            content,
        }
    }
}

/// What kind of body a media type (or, without one, the bytes) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Image,
    Pdf,
    Other,
}

/// The media type without parameters, lower case (`text/html`).
pub(crate) fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn kind_of_type(essence: &str) -> Kind {
    match essence {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/pdf" => Kind::Pdf,
        "image/png" | "image/jpeg" | "image/jpg" | "image/gif" | "image/webp" | "image/bmp" => {
            Kind::Image
        }
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-yaml"
        | "application/yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql" => Kind::Text,
        e if e.starts_with("text/") || e.ends_with("+json") || e.ends_with("+xml") => Kind::Text,
        _ => Kind::Other,
    }
}

/// The kind of a body sent without a useful media type, from its first bytes.
fn sniff(head: &[u8]) -> Kind {
    if crate::media::pdf::starts_as_pdf(head) {
        return Kind::Pdf;
    }
    if image::guess_format(head).is_ok() {
        return Kind::Image;
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(512)]).to_ascii_lowercase();
    let start = start.trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        return Kind::Html;
    }
    // UTF-8 text without NUL bytes; a character cut at the end of the
    // sniffed bytes still counts (`error_len` is `None` then).
    let utf8 = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    if utf8 && !head.contains(&0) {
        return Kind::Text;
    }
    Kind::Other
}

/// Why a body could not be turned into content: a sentence for the model
/// and the `metadata.failure` word.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) failure: &'static str,
    pub(crate) message: String,
}

/// Whether a body of `content_type` must be complete to be used (images and
/// PDFs): such a body over the byte limit is refused instead of cut.
pub(crate) fn needs_whole_body(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| matches!(kind_of_type(&essence(ct)), Kind::Image | Kind::Pdf))
}

/// Turns a body into content. Blocking (HTML conversion, image decoding):
/// run it on a blocking thread.
///
/// # Errors
/// [`Refused`] for a media type that is neither text, HTML, an image nor a
/// PDF, an image that does not decode, a PDF that is cut or not a PDF.
pub(crate) fn convert(
    body: Vec<u8>,
    content_type: Option<&str>,
    cut: bool,
    base: Option<&url::Url>,
) -> Result<(Content, String), Refused> {
    let sent = content_type.map(essence).filter(|e| !e.is_empty());
    let kind = match sent.as_deref().map(kind_of_type) {
        Some(Kind::Other) if sent.as_deref() != Some("application/octet-stream") => Kind::Other,
        Some(k @ (Kind::Html | Kind::Text | Kind::Image | Kind::Pdf)) => k,
        _ => sniff(&body[..body.len().min(1024)]),
    };
    let shown_type = sent.clone().unwrap_or_else(|| {
        match kind {
            Kind::Html => "text/html",
            Kind::Text => "text/plain",
            Kind::Image => "image",
            Kind::Pdf => "application/pdf",
            Kind::Other => "application/octet-stream",
        }
        .to_owned()
    });
    let content = match kind {
        Kind::Html => {
            let html = decode_text(&body, content_type, true);
            drop(body);
            let text = crate::shell::ansi::clean_text(&html_to_markdown(html, base.cloned())?);
            Content::Text {
                chars: text.chars().count(),
                text,
                markdown: true,
            }
        }
        Kind::Text => {
            let text = crate::shell::ansi::clean_text(&decode_text(&body, content_type, false));
            Content::Text {
                chars: text.chars().count(),
                text,
                markdown: false,
            }
        }
        Kind::Image => image_content(body)?,
        Kind::Pdf => pdf_content(&body, cut)?,
        Kind::Other => {
            return Err(Refused {
                failure: "content_type",
                message: format!(
                    "the response is `{shown_type}`, which web_fetch cannot show: it returns \
                     HTML (as Markdown), text, JSON/XML, PDF and PNG/JPEG/GIF/WebP/BMP images"
                ),
            });
        }
    };
    Ok((content, shown_type))
}

/// The text of `body` in the charset the media type names (else, for HTML,
/// a `<meta charset>` in its first 1 024 bytes; else UTF-8), a byte order
/// mark winning over both; undecodable bytes become U+FFFD.
fn decode_text(body: &[u8], content_type: Option<&str>, html: bool) -> String {
    let label = content_type.and_then(charset_param).or_else(|| {
        html.then(|| meta_charset(&body[..body.len().min(1024)]))
            .flatten()
    });
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_owned())
    })
}

fn meta_charset(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let at = text.find("charset=")? + "charset=".len();
    let label: String = text[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!label.is_empty()).then_some(label)
}

/// HTML to Markdown with `htmd`, on a thread with a large stack
/// ([`CONVERT_STACK`]); link and image targets (`href`, `src`) made
/// absolute against `base` (the URL that answered) when given.
fn html_to_markdown(html: String, base: Option<url::Url>) -> Result<String, Refused> {
    let failed = |what: String| Refused {
        failure: "convert",
        message: format!("the HTML could not be turned into Markdown ({what})"),
    };
    let worker = std::thread::Builder::new()
        .name("web-fetch-html".to_owned())
        .stack_size(CONVERT_STACK)
        .spawn(move || {
            let html = flatten_deep(&html);
            let converter = htmd::HtmlToMarkdown::builder()
                .skip_tags(SKIPPED_TAGS.to_vec())
                .build();
            let tree = converter.html_to_tree(&html)?;
            if let Some(base) = &base {
                absolute_links(&tree, base);
            }
            Ok::<_, std::io::Error>(converter.tree_to_markdown(&tree))
        })
        .map_err(|e| failed(e.to_string()))?;
    let markdown = worker
        .join()
        .map_err(|_| failed("the converter failed".to_owned()))?
        .map_err(|e| failed(e.to_string()))?;
    Ok(tidy(&markdown))
}

/// Rewrites every `href` and `src` attribute of `tree` that is a relative
/// reference into the absolute URL it means against `base` (`/x` on
/// `https://a.test/d/p` becomes `https://a.test/x`), so the model can fetch
/// a link as it reads it. Fragment-only links (`#top`) and values that do
/// not join into a URL are left as they are. Walks with an explicit stack
/// (no recursion on deep pages).
fn absolute_links(tree: &std::rc::Rc<htmd::Node>, base: &url::Url) {
    let mut stack = vec![tree.clone()];
    while let Some(node) = stack.pop() {
        if let markup5ever_rcdom::NodeData::Element { attrs, .. } = &node.data {
            for attr in attrs.borrow_mut().iter_mut() {
                let name: &str = &attr.name.local;
                if !matches!(name, "href" | "src") {
                    continue;
                }
                let value = attr.value.trim();
                if value.is_empty() || value.starts_with('#') || url::Url::parse(value).is_ok() {
                    continue;
                }
                if let Ok(joined) = base.join(value) {
                    attr.value.clear();
                    attr.value.push_slice(joined.as_str());
                }
            }
        }
        stack.extend(node.children.borrow().iter().cloned());
    }
}

/// `html` without the start and end tags nested deeper than
/// [`MAX_NESTING`] (their text stays). A linear scan that knows comments,
/// `<script>`/`<style>` content, void elements and elements with optional
/// end tags; not a parser, so the depth it counts is an estimate that errs
/// on the deep side only for malformed pages. Borrowed when nothing is deep.
fn flatten_deep(html: &str) -> std::borrow::Cow<'_, str> {
    let bytes = html.as_bytes();
    let mut depth = 0usize;
    let mut out: Option<String> = None;
    let mut copied = 0usize;
    let mut i = 0usize;
    while let Some(offset) = memchr::memchr(b'<', &bytes[i..]) {
        let start = i + offset;
        let rest = &html[start..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            i = comment
                .find("-->")
                .map_or(bytes.len(), |e| start + 4 + e + 3);
            continue;
        }
        let closing = rest.as_bytes().get(1) == Some(&b'/');
        let name_at = start + 1 + usize::from(closing);
        let name_len = bytes[name_at.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 || !bytes[name_at].is_ascii_alphabetic() {
            i = start + 1;
            continue;
        }
        let Some(end) = memchr::memchr(b'>', &bytes[name_at..]).map(|e| name_at + e + 1) else {
            break;
        };
        let name = html[name_at..name_at + name_len].to_ascii_lowercase();
        i = end;
        if !closing && matches!(name.as_str(), "script" | "style") {
            // Raw text up to the matching end tag: no tags inside.
            i = raw_text_end(bytes, end, name.as_bytes());
            continue;
        }
        let self_closing = bytes[..end].ends_with(b"/>");
        if self_closing
            || VOID_TAGS.contains(&name.as_str())
            || OPTIONAL_END_TAGS.contains(&name.as_str())
        {
            continue;
        }
        let deep = if closing {
            let deep = depth > MAX_NESTING;
            depth = depth.saturating_sub(1);
            deep
        } else {
            depth += 1;
            depth > MAX_NESTING
        };
        if deep {
            let buf = out.get_or_insert_with(|| String::with_capacity(html.len()));
            buf.push_str(&html[copied..start]);
            copied = end;
        }
    }
    match out {
        None => std::borrow::Cow::Borrowed(html),
        Some(mut buf) => {
            buf.push_str(&html[copied..]);
            std::borrow::Cow::Owned(buf)
        }
    }
}

/// Where the end tag `</name` (any case) of a raw-text element starts, at
/// or after `from`; the end of `bytes` when there is none. Linear: looks at
/// each `</` once, copies nothing.
fn raw_text_end(bytes: &[u8], from: usize, name: &[u8]) -> usize {
    let mut at = from;
    while let Some(found) = memchr::memmem::find(&bytes[at..], b"</") {
        let tag = at + found + 2;
        if bytes
            .get(tag..tag + name.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(name))
        {
            return at + found;
        }
        at = tag;
    }
    bytes.len()
}

/// At most one blank line in a row, no trailing spaces on lines, no blank
/// edges: what a page's layout leaves after conversion costs tokens only.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0usize;
    for line in markdown.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

fn image_content(body: Vec<u8>) -> Result<Content, Refused> {
    let fitted = crate::media::decode::fit_single(body).map_err(|e| Refused {
        failure: "content",
        message: format!("the image could not be read: {e}"),
    })?;
    let mut notes = fitted.notes.clone();
    if fitted.resized() {
        notes.insert(
            0,
            format!(
                "scaled from {}×{} to {}×{} px",
                fitted.original_width,
                fitted.original_height,
                fitted.sent.width,
                fitted.sent.height
            ),
        );
    }
    Ok(Content::Image {
        image: Image::new(
            fitted.sent.media_type,
            base64::engine::general_purpose::STANDARD.encode(&fitted.sent.bytes),
        ),
        width: fitted.sent.width,
        height: fitted.sent.height,
        original_width: fitted.original_width,
        original_height: fitted.original_height,
        notes,
    })
}

fn pdf_content(body: &[u8], cut: bool) -> Result<Content, Refused> {
    let head = &body[..body.len().min(crate::media::pdf::TAIL_BYTES)];
    if !crate::media::pdf::starts_as_pdf(head) {
        return Err(Refused {
            failure: "content",
            message: "the response says it is a PDF but does not start with `%PDF-`".to_owned(),
        });
    }
    if cut || !crate::media::pdf::ends_as_pdf(body) {
        return Err(Refused {
            failure: "content",
            message: format!(
                "the PDF is incomplete (no `%%EOF` marker in its last {} bytes); providers refuse \
                 a broken PDF, so it is not sent",
                crate::media::pdf::TAIL_BYTES
            ),
        });
    }
    Ok(Content::Pdf {
        base64: base64::engine::general_purpose::STANDARD.encode(body),
        pages: crate::media::pdf::rough_page_count(body),
    })
}

/// The tool result for `page` requested as `requested`: its text from
/// character `skip` on, cut at `max_chars` characters; `cached` when it came
/// from the cache. A cut text's note names the `offset` that continues.
pub(crate) fn render(
    page: &Page,
    requested: &str,
    skip: usize,
    max_chars: usize,
    cached: bool,
    limit_bytes: u64,
) -> ToolResult {
    let mut result = match &page.content {
        Content::Text {
            text,
            markdown,
            chars,
        } => {
            let total = *chars;
            let rest = match text.char_indices().nth(skip) {
                Some((at, _)) => &text[at..],
                None => "",
            };
            let shown = clip(rest, Clip::chars(max_chars).unmarked());
            let end = skip.saturating_add(shown.chars().count()).min(total);
            let truncated = shown.len() < rest.len();
            let mut r = ToolResult::ok(shown.into_owned())
                .with_metadata(tool_core::meta::MetaKey::custom("markdown"), *markdown)
                .with_metadata(tool_core::meta::MetaKey::custom("chars"), total)
                .with_metadata(
                    tool_core::meta::MetaKey::custom("truncated"),
                    truncated || skip > 0 || page.cut,
                );
            if skip > 0 && skip >= total {
                r.add_note(format!(
                    "offset {skip} is past the end of the page, which has {total} characters"
                ));
            } else if truncated {
                r = r.with_metadata(tool_core::meta::MetaKey::custom("next_offset"), end);
                r.add_note(format!(
                    "the page has {total} characters; characters {}-{end} are shown. Call again \
                     with offset={end} to read on",
                    skip + 1
                ));
            } else if skip > 0 {
                r.add_note(format!(
                    "the page has {total} characters; characters {}-{end} (the end) are shown",
                    skip + 1
                ));
            }
            if page.cut {
                r.add_note(format!(
                    "the response was longer than {limit_bytes} bytes; only its first \
                     {limit_bytes} bytes were read, and the rest cannot be read with web_fetch"
                ));
            }
            r
        }
        Content::Image {
            image,
            width,
            height,
            original_width,
            original_height,
            notes,
        } => {
            let mut text = format!("Image fetched from {}", page.url);
            if !notes.is_empty() {
                text.push_str(&format!(" ({})", notes.join("; ")));
            }
            ToolResult::ok(text)
                .with_metadata(tool_core::meta::MetaKey::custom("width"), *width)
                .with_metadata(tool_core::meta::MetaKey::custom("height"), *height)
                .with_metadata(
                    tool_core::meta::MetaKey::custom("original_width"),
                    *original_width,
                )
                .with_metadata(
                    tool_core::meta::MetaKey::custom("original_height"),
                    *original_height,
                )
                .with_metadata(tool_core::meta::MetaKey::custom("truncated"), false)
                .with_long_term_memory(format!(
                    "[image from {} ({original_width}×{original_height} px) shown on an earlier \
                     turn and left out of the history; fetch it again to see it]",
                    page.url
                ))
                .output_once()
                .with_image(image.clone())
        }
        Content::Pdf { base64, pages } => {
            let name = url::Url::parse(&page.url)
                .ok()
                .and_then(|u| {
                    u.path_segments()
                        .and_then(|mut s| s.next_back().map(str::to_owned))
                })
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "page.pdf".to_owned());
            let mut text = format!("PDF fetched from {}", page.url);
            if *pages > crate::media::pdf::MAX_PAGES {
                text.push_str(&format!(
                    ". It has about {pages} pages; Anthropic reads at most {} pages of PDF per \
                     request and may refuse it",
                    crate::media::pdf::MAX_PAGES
                ));
            }
            ToolResult::ok(text)
                .with_metadata(tool_core::meta::MetaKey::custom("pages_counted"), *pages)
                .with_metadata(tool_core::meta::MetaKey::custom("truncated"), false)
                .with_long_term_memory(format!(
                    "[PDF from {} shown on an earlier turn and left out of the history; fetch it \
                     again to see it]",
                    page.url
                ))
                .output_once()
                .with_attachment(Attachment::inline(name, "application/pdf", base64.clone()))
        }
    };
    result = result
        .with_title(format!("Fetched {requested}"))
        .with_metadata(tool_core::meta::MetaKey::custom("url"), requested)
        .with_metadata(
            tool_core::meta::MetaKey::custom("final_url"),
            page.url.as_str(),
        )
        .with_metadata(tool_core::meta::MetaKey::custom("status"), page.status)
        .with_metadata(
            tool_core::meta::MetaKey::custom("content_type"),
            page.content_type.as_str(),
        )
        .with_metadata(tool_core::meta::MetaKey::custom("bytes"), page.bytes)
        .with_metadata(
            tool_core::meta::MetaKey::custom("redirects"),
            page.redirects.clone(),
        )
        .with_metadata(tool_core::meta::MetaKey::custom("cached"), cached);
    result
}

/// A failed fetch: `kind`, the sentence, and `metadata.failure`.
pub(crate) fn failure(kind: ErrorKind, failure: &str, url: &str, message: String) -> ToolResult {
    ToolResult::error(kind, message)
        .with_title(format!("Could not fetch {url}"))
        .with_metadata(tool_core::meta::MetaKey::custom("url"), url)
        .with_metadata(tool_core::meta::MetaKey::custom("failure"), failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(content: Content) -> String {
        match content {
            Content::Text { text, .. } => text,
            other => panic!("not text: {other:?}"),
        }
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let html = b"<html><head><title>T</title><script>var secret=1</script>\
            <style>p{}</style></head><body><h1>Hello</h1><p>A <a href=\"/x\">link</a> and \
            <b>bold</b>.</p><ul><li>one</li><li>two</li></ul></body></html>";
        let (content, ct) =
            convert(html.to_vec(), Some("text/html; charset=utf-8"), false, None).unwrap();
        assert_eq!(ct, "text/html");
        let md = text(content);
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("[link](/x)"), "{md}");
        assert!(md.contains("**bold**"), "{md}");
        assert!(md.contains("one"), "{md}");
        assert!(!md.contains("secret"), "{md}");
        assert!(!md.contains("p{}"), "{md}");
    }

    #[test]
    fn charsets_are_honoured() {
        // "café" in Latin-1.
        let body = b"caf\xe9".to_vec();
        let (content, _) = convert(
            body.clone(),
            Some("text/plain; charset=ISO-8859-1"),
            false,
            None,
        )
        .unwrap();
        assert_eq!(text(content), "café");
        let html = b"<meta charset=\"windows-1252\"><p>caf\xe9</p>".to_vec();
        let (content, _) = convert(html, Some("text/html"), false, None).unwrap();
        assert_eq!(text(content), "café");
    }

    #[test]
    fn unknown_types_are_sniffed_or_refused() {
        let (content, ct) = convert(b"plain words".to_vec(), None, false, None).unwrap();
        assert_eq!(ct, "text/plain");
        assert_eq!(text(content), "plain words");
        let (_, ct) = convert(b"<!DOCTYPE html><p>x</p>".to_vec(), None, false, None).unwrap();
        assert_eq!(ct, "text/html");
        let e = convert(vec![0, 1, 2, 0, 255], Some("application/zip"), false, None).unwrap_err();
        assert_eq!(e.failure, "content_type");
        assert!(e.message.contains("`application/zip`"), "{}", e.message);
        let e = convert(vec![0, 159, 146, 150], None, false, None).unwrap_err();
        assert_eq!(e.failure, "content_type");
    }

    #[test]
    fn cut_or_fake_pdfs_are_refused() {
        let pdf = b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n".to_vec();
        assert!(matches!(
            convert(pdf.clone(), Some("application/pdf"), false, None)
                .unwrap()
                .0,
            Content::Pdf { pages: 1, .. }
        ));
        let e = convert(pdf[..20].to_vec(), Some("application/pdf"), true, None).unwrap_err();
        assert!(e.message.contains("incomplete"), "{}", e.message);
        let e = convert(b"<html>".to_vec(), Some("application/pdf"), false, None).unwrap_err();
        assert!(e.message.contains("%PDF-"), "{}", e.message);
    }

    #[test]
    fn deeply_nested_html_does_not_overflow() {
        let depth = 100_000;
        let html = format!("{}deep{}", "<div>".repeat(depth), "</div>".repeat(depth));
        let (content, _) = convert(html.into_bytes(), Some("text/html"), false, None).unwrap();
        assert_eq!(text(content), "deep");
    }

    #[test]
    fn only_tags_past_the_nesting_limit_are_dropped() {
        let html = format!(
            "<!-- <div> --><script>if (a<b) {{}}</script>{}<p>x<br><img src=a>{}",
            "<div>".repeat(MAX_NESTING),
            "</div>".repeat(MAX_NESTING)
        );
        assert!(matches!(flatten_deep(&html), std::borrow::Cow::Borrowed(_)));
        let deep = format!(
            "{}<b>t</b>{}",
            "<div>".repeat(MAX_NESTING + 2),
            "</div>".repeat(MAX_NESTING + 2)
        );
        let flat = flatten_deep(&deep);
        assert_eq!(
            flat,
            format!(
                "{}t{}",
                "<div>".repeat(MAX_NESTING),
                "</div>".repeat(MAX_NESTING)
            )
        );
    }

    #[test]
    fn many_scripts_are_skipped_in_one_pass() {
        // 20 000 scripts: each one's end is found without copying the rest of
        // the page (a copy per script was quadratic: 20 000 × 1 MB).
        let page = "<script>var a = '</b>';</SCRIPT><div>x</div>".repeat(20_000);
        assert!(matches!(flatten_deep(&page), std::borrow::Cow::Borrowed(_)));
        assert_eq!(raw_text_end(b"<script>a</b></Script>", 8, b"script"), 13);
        assert_eq!(raw_text_end(b"<style>never closed", 7, b"style"), 19);
    }

    #[test]
    fn render_cuts_at_max_chars_and_says_how_to_read_on() {
        let page = Page::for_test(Content::Text {
            text: "é".repeat(50),
            markdown: false,
            chars: 50,
        });
        let r = render(&page, "http://a.test/", 0, 10, false, 100);
        assert_eq!(r.output, "é".repeat(10));
        assert_eq!(r.metadata["chars"], 50);
        assert_eq!(r.metadata["truncated"], true);
        assert_eq!(r.metadata["next_offset"], 10);
        let notes = r.notes_text().unwrap();
        assert!(notes.contains("the page has 50 characters"), "{notes}");
        assert!(notes.contains("characters 1-10 are shown"), "{notes}");
        assert!(notes.contains("offset=10 to read on"), "{notes}");
        // The offset continues where the page was cut, up to its end.
        let text = format!("{}{}", "a".repeat(45), "b".repeat(5));
        let page = Page::for_test(Content::Text {
            text,
            markdown: false,
            chars: 50,
        });
        let r = render(&page, "http://a.test/", 40, 20, true, 100);
        assert_eq!(r.output, "aaaaabbbbb");
        assert!(r.metadata.get("next_offset").is_none());
        let notes = r.notes_text().unwrap();
        assert!(notes.contains("characters 41-50 (the end)"), "{notes}");
        let r = render(&page, "http://a.test/", 50, 20, true, 100);
        assert_eq!(r.output, "");
        let notes = r.notes_text().unwrap();
        assert!(notes.contains("offset 50 is past the end"), "{notes}");
        // A body cut at the byte limit says its rest cannot be read.
        let mut cut = Page::for_test(Content::Text {
            text: "x".repeat(5),
            markdown: false,
            chars: 5,
        });
        cut.cut = true;
        let notes = render(&cut, "http://a.test/", 0, 10, false, 5)
            .notes_text()
            .unwrap();
        assert!(notes.contains("the rest cannot be read"), "{notes}");
    }

    #[test]
    fn text_is_cleaned_of_terminal_controls() {
        let body =
            "red \x1b[31mRED\x1b[0m \x1b]0;title\x07 \u{202e}rtl\u{0}\r\nnext\rover\u{9b}2J\tend";
        let (content, _) =
            convert(body.as_bytes().to_vec(), Some("text/plain"), false, None).unwrap();
        assert_eq!(text(content), "red RED  rtl\nnext\nover\tend");
        let html = "<p>a \x1b[2Jb \u{202e}c</p>";
        let (content, _) =
            convert(html.as_bytes().to_vec(), Some("text/html"), false, None).unwrap();
        // The HTML parser drops the ESC itself; what is left is plain text.
        assert_eq!(text(content), "a [2Jb c");
    }

    #[test]
    fn relative_links_become_absolute_against_the_final_url() {
        let html = b"<p><a href=\"/x\">root</a> <a href=\"y?q=1\">rel</a> \
            <a href=\"#top\">frag</a> <a href=\"https://other.test/z\">abs</a> \
            <img src=\"../i.png\" alt=\"pic\"></p>";
        let base = url::Url::parse("https://a.test/docs/page").unwrap();
        let (content, _) = convert(html.to_vec(), Some("text/html"), false, Some(&base)).unwrap();
        let md = text(content);
        assert!(md.contains("[root](https://a.test/x)"), "{md}");
        assert!(md.contains("[rel](https://a.test/docs/y?q=1)"), "{md}");
        assert!(md.contains("[frag](#top)"), "{md}");
        assert!(md.contains("[abs](https://other.test/z)"), "{md}");
        assert!(md.contains("![pic](https://a.test/i.png)"), "{md}");
    }
}
