//! Text decoding that never invents characters: a byte order mark decides,
//! else UTF-8, else the legacy encoding `chardetng` detects; and encoding
//! back into the file's own encoding, byte order mark included.

use std::borrow::Cow;
use std::fmt;

use encoding_rs::{DecoderResult, Encoding, UTF_8, UTF_16BE, UTF_16LE};

use super::lines::LineEnding;

/// The UTF-8 byte order mark.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A decoded text file and the format to write it back in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// The text, without the byte order mark, line endings as in the file.
    pub text: String,
    /// The file started with a byte order mark.
    pub bom: bool,
    /// The character encoding (UTF-8 for most files).
    pub encoding: &'static Encoding,
    /// The line-ending style (of the first line break).
    pub line_ending: LineEnding,
}

/// Why bytes could not be decoded as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The encoding that was tried.
    pub encoding: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the file is not valid UTF-8 and does not decode cleanly as {} either",
            self.encoding
        )
    }
}

impl std::error::Error for DecodeError {}

/// Why text could not be encoded back into a file's encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    /// The file's encoding.
    pub encoding: &'static str,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the new text has characters that the file's encoding ({}) cannot represent",
            self.encoding
        )
    }
}

impl std::error::Error for EncodeError {}

/// Bytes at the start of a file that decide its legacy encoding: the
/// same prefix for `read_file` (which streams) and the editing tools (which
/// hold the whole file), so both decode a file the same way.
pub const DETECT_PREFIX_BYTES: usize = 1024 * 1024;

/// The most likely legacy encoding of `bytes` (not UTF-8), by `chardetng`.
pub fn detect_encoding(bytes: &[u8]) -> &'static Encoding {
    let mut det = chardetng::EncodingDetector::new();
    det.feed(bytes, true);
    det.guess(None, false)
}

/// The legacy encoding of a file that is not valid UTF-8, decided by its
/// first [`DETECT_PREFIX_BYTES`] (`prefix` may be longer: the rest is ignored).
///
/// This is the one decision for a whole file: every line is then decoded in
/// this encoding, also lines that happen to be valid UTF-8, because that is
/// how the file is written back.
pub fn file_encoding(prefix: &[u8]) -> &'static Encoding {
    let end = prefix.len().min(DETECT_PREFIX_BYTES);
    detect_encoding(&prefix[..end])
}

/// Validates UTF-8 arriving in pieces (a character may be split between
/// two), in constant memory: `encoding_rs`'s streaming UTF-8 decoder, its
/// output discarded.
pub struct Utf8Validator {
    decoder: encoding_rs::Decoder,
    invalid: bool,
}

impl fmt::Debug for Utf8Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Utf8Validator")
            .field("invalid", &self.invalid)
            .finish_non_exhaustive()
    }
}

impl Default for Utf8Validator {
    fn default() -> Self {
        Self::new()
    }
}

impl Utf8Validator {
    /// A validator that has seen nothing yet.
    pub fn new() -> Self {
        Self {
            decoder: UTF_8.new_decoder_without_bom_handling(),
            invalid: false,
        }
    }

    fn run(&mut self, mut bytes: &[u8], last: bool) {
        let mut scratch = [0u8; 8 * 1024];
        while !self.invalid {
            let (result, read, _) =
                self.decoder
                    .decode_to_utf8_without_replacement(bytes, &mut scratch, last);
            bytes = &bytes[read..];
            match result {
                DecoderResult::InputEmpty => break,
                DecoderResult::OutputFull => {}
                DecoderResult::Malformed(..) => self.invalid = true,
            }
        }
    }

    /// Checks the next piece.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.run(bytes, false);
    }

    /// Whether an invalid sequence has been seen already.
    pub fn failed(&self) -> bool {
        self.invalid
    }

    /// Ends the input: whether everything fed was valid UTF-8 and no
    /// character was left unfinished.
    pub fn finish(&mut self) -> bool {
        self.run(&[], true);
        !self.invalid
    }
}

/// Decodes `bytes` without lossy replacement, in `encoding`. UTF-8 and
/// UTF-16 need no detection; `None` when a byte sequence is invalid.
pub fn decode_exact(bytes: &[u8], encoding: &'static Encoding) -> Option<String> {
    if encoding == UTF_8 {
        return std::str::from_utf8(bytes).ok().map(str::to_owned);
    }
    encoding
        .decode_without_bom_handling_and_without_replacement(bytes)
        .map(Cow::into_owned)
}

impl TextFile {
    /// [`TextFile::decode`] for a file about to be changed: `Ok(None)` when
    /// its first 4 KiB look binary ([`looks_binary`](crate::fs::binary::looks_binary)),
    /// which the writer refuses, so the frame of a write makes one call for
    /// "is it text, and which".
    ///
    /// # Errors
    /// As [`TextFile::decode`].
    pub(crate) fn decode_unless_binary(bytes: &[u8]) -> Result<Option<Self>, DecodeError> {
        if crate::fs::binary::looks_binary(&bytes[..bytes.len().min(4096)]) {
            return Ok(None);
        }
        Self::decode(bytes).map(Some)
    }

    /// Decodes a file's bytes: a byte order mark decides (UTF-8, UTF-16LE/BE);
    /// otherwise a file that is valid UTF-8 as a whole is UTF-8, and anything
    /// else is decoded, every line alike, with the encoding [`file_encoding`]
    /// detects, with no replacement characters. `read_file` makes the same
    /// decision, so what it shows is what the editing tools match.
    ///
    /// # Errors
    /// [`DecodeError`] when the bytes are not valid in the chosen encoding.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (encoding, bom, body) = if let Some(rest) = bytes.strip_prefix(UTF8_BOM) {
            (UTF_8, true, rest)
        } else if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
            (UTF_16LE, true, rest)
        } else if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
            (UTF_16BE, true, rest)
        } else if std::str::from_utf8(bytes).is_ok() {
            (UTF_8, false, bytes)
        } else {
            (file_encoding(bytes), false, bytes)
        };
        let text = decode_exact(body, encoding).ok_or(DecodeError {
            encoding: encoding.name(),
        })?;
        Ok(Self {
            line_ending: LineEnding::detect(&text),
            text,
            bom,
            encoding,
        })
    }

    /// Encodes `text` (already in the line-ending style wanted) in this
    /// file's encoding, with its byte order mark if it had one.
    ///
    /// # Errors
    /// [`EncodeError`] when `text` has a character the encoding cannot represent.
    pub fn encode(&self, text: &str) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(text.len() + 3);
        if self.encoding == UTF_8 {
            if self.bom {
                out.extend_from_slice(UTF8_BOM);
            }
            out.extend_from_slice(text.as_bytes());
        } else if self.encoding == UTF_16LE || self.encoding == UTF_16BE {
            let le = self.encoding == UTF_16LE;
            if self.bom {
                out.extend_from_slice(if le { b"\xFF\xFE" } else { b"\xFE\xFF" });
            }
            for unit in text.encode_utf16() {
                out.extend_from_slice(&if le {
                    unit.to_le_bytes()
                } else {
                    unit.to_be_bytes()
                });
            }
        } else {
            let (bytes, _, had_errors) = self.encoding.encode(text);
            if had_errors {
                return Err(EncodeError {
                    encoding: self.encoding.name(),
                });
            }
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    /// Whether the file is plain UTF-8 (with or without a BOM).
    pub fn is_utf8(&self) -> bool {
        self.encoding == UTF_8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::binary::looks_binary;

    #[test]
    fn decode_keeps_bom_and_detects_legacy_encodings() {
        let t = TextFile::decode(b"\xEF\xBB\xBFx = 1\r\n").unwrap();
        assert!(t.bom && t.is_utf8());
        assert_eq!(t.text, "x = 1\r\n");
        assert_eq!(t.line_ending, LineEnding::CrLf);
        assert_eq!(t.encode(&t.text).unwrap(), b"\xEF\xBB\xBFx = 1\r\n");

        let latin1 = "caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9} ".repeat(50);
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&latin1);
        let t = TextFile::decode(&bytes).unwrap();
        assert_eq!(t.text, latin1);
        assert!(!t.text.contains('\u{FFFD}'));
        assert!(!t.is_utf8());
        assert_eq!(t.encode("café").unwrap(), b"caf\xE9");
        assert!(t.encode("日本").is_err());
    }

    #[test]
    fn utf16_with_bom_round_trips() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "hé\n".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        let t = TextFile::decode(&bytes).unwrap();
        assert_eq!(t.text, "hé\n");
        assert_eq!(t.encode(&t.text).unwrap(), bytes);
        assert!(!looks_binary(&bytes));
    }

    #[test]
    fn utf8_validator_handles_split_characters() {
        let text = "a\u{e9}\u{2014}\u{1F600}z".as_bytes();
        for split in 0..=text.len() {
            for second in split..=text.len() {
                let mut v = Utf8Validator::new();
                v.feed(&text[..split]);
                v.feed(&text[split..second]);
                v.feed(&text[second..]);
                assert!(v.finish(), "split at {split}/{second}");
            }
        }
        let mut v = Utf8Validator::new();
        v.feed(b"ok \xC3");
        assert!(!v.failed(), "unfinished, not yet wrong");
        v.feed(b"(");
        assert!(v.failed());
        let mut v = Utf8Validator::new();
        v.feed(b"ok \xC3");
        assert!(!v.finish(), "a character left unfinished at the end");
        let mut v = Utf8Validator::new();
        v.feed(b"caf\xE9 latin-1\n");
        assert!(v.failed());
    }
}
