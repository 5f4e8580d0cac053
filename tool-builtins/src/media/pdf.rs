//! The checks `read_file` makes on PDF files: `%PDF-` at the start,
//! `%%EOF` near the end, a rough page count. No PDF parser is compiled in:
//! these catch a file that is not a PDF or was cut short, which a provider
//! would refuse with the whole request, and warn of a long one.

/// Where the header and the end marker are looked for: the first and
/// last 1024 bytes. The PDF specification (ISO 32000-1, 7.5.2 and 7.5.5)
/// puts `%PDF-` first and `%%EOF` last; readers, as Acrobat does, accept
/// the header within the first 1024 bytes and the marker within the last.
pub(crate) const TAIL_BYTES: usize = 1024;

/// Pages of one PDF Anthropic reads per request ("PDF support": maximum
/// 100 pages per request); over it the result warns.
pub(crate) const MAX_PAGES: usize = 100;

/// Whether `head` (a file's first [`TAIL_BYTES`] bytes, or all of a
/// shorter one) holds `%PDF-`.
pub(crate) fn starts_as_pdf(head: &[u8]) -> bool {
    memchr::memmem::find(head, b"%PDF-").is_some()
}

/// Whether `bytes` has `%%EOF` in its last [`TAIL_BYTES`] bytes.
pub(crate) fn ends_as_pdf(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(TAIL_BYTES)..];
    memchr::memmem::find(tail, b"%%EOF").is_some()
}

/// Page objects (`/Type /Page`, not `/Pages`) written in the clear; 0
/// when they sit in compressed object streams (PDF 1.5 and later), so
/// the count is a floor, used only to warn.
pub(crate) fn rough_page_count(bytes: &[u8]) -> usize {
    memchr::memmem::find_iter(bytes, b"/Type")
        .filter(|&at| {
            let rest = &bytes[at + 5..];
            let skip = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let rest = &rest[skip..];
            rest.starts_with(b"/Page") && !rest.get(5).is_some_and(u8::is_ascii_alphanumeric)
        })
        .count()
}
