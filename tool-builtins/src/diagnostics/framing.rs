//! The LSP base protocol's framing: a header part (`Content-Length: N`,
//! lines ended by `\r\n`, an empty line) and N bytes of JSON
//! (LSP 3.17, "Base Protocol"). Reading is bounded: header lines, their
//! number and the content length all have limits, so a server cannot make
//! the client hold unbounded memory.

use std::io::{self, BufRead, Read, Write};

/// Longest header line accepted (1 KiB).
const MAX_HEADER_LINE: usize = 1024;

/// Most header lines in one frame (32).
const MAX_HEADER_LINES: usize = 32;

/// Why a frame could not be read.
#[derive(Debug)]
pub(crate) enum FrameError {
    /// The stream ended (between frames: the server closed its stdout).
    Eof,
    /// Reading failed.
    Io(io::Error),
    /// The frame announced more than the limit (bytes announced, limit).
    TooLarge(usize, usize),
    /// The header part is not LSP's.
    BadHeader(String),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Eof => f.write_str("it closed its output"),
            Self::Io(e) => write!(f, "reading its output failed: {e}"),
            Self::TooLarge(n, max) => write!(
                f,
                "it sent a message of {n} bytes, more than the limit of {max} bytes"
            ),
            Self::BadHeader(what) => write!(f, "it does not speak LSP ({what})"),
        }
    }
}

/// Reads one frame's content from `reader` (at most `max` bytes).
pub(crate) fn read_frame(reader: &mut impl BufRead, max: usize) -> Result<Vec<u8>, FrameError> {
    let mut length: Option<usize> = None;
    let mut lines = 0;
    loop {
        let line = read_header_line(reader, lines == 0)?;
        if line.is_empty() {
            break;
        }
        lines += 1;
        if lines > MAX_HEADER_LINES {
            return Err(FrameError::BadHeader(format!(
                "more than {MAX_HEADER_LINES} header lines"
            )));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(FrameError::BadHeader(format!(
                "a header line without `:`: {}",
                tool_rules::text::clip(&line, tool_rules::text::Clip::chars(80))
            )));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n = value.trim().parse::<usize>().map_err(|_| {
                FrameError::BadHeader(format!(
                    "Content-Length `{}` is not a number",
                    tool_rules::text::clip(value.trim(), tool_rules::text::Clip::chars(40))
                ))
            })?;
            length = Some(n);
        }
    }
    let Some(length) = length else {
        return Err(FrameError::BadHeader(
            "a frame without Content-Length".to_owned(),
        ));
    };
    if length > max {
        return Err(FrameError::TooLarge(length, max));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => FrameError::Eof,
        _ => FrameError::Io(e),
    })?;
    Ok(body)
}

/// One header line without its `\r\n` (a bare `\n` is accepted too), at
/// most [`MAX_HEADER_LINE`] bytes. End of stream before the first byte of
/// a frame is [`FrameError::Eof`].
fn read_header_line(reader: &mut impl BufRead, first: bool) -> Result<String, FrameError> {
    let mut line = Vec::new();
    let read = reader
        .take(MAX_HEADER_LINE as u64 + 1)
        .read_until(b'\n', &mut line)
        .map_err(FrameError::Io)?;
    if read == 0 {
        return Err(if first {
            FrameError::Eof
        } else {
            FrameError::BadHeader("the output ended inside a header".to_owned())
        });
    }
    if line.last() != Some(&b'\n') {
        return Err(FrameError::BadHeader(format!(
            "a header line longer than {MAX_HEADER_LINE} bytes"
        )));
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| FrameError::BadHeader("a header that is not text".into()))
}

/// Writes `body` as one frame and flushes.
pub(crate) fn write_frame(writer: &mut impl Write, body: &[u8]) -> io::Result<()> {
    write!(writer, "Content-Length: {}\r\n\r\n", body.len())?;
    writer.write_all(body)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &[u8], max: usize) -> Result<Vec<u8>, FrameError> {
        read_frame(&mut io::BufReader::new(input), max)
    }

    #[test]
    fn frames_round_trip_and_keep_their_order() {
        let mut out = Vec::new();
        write_frame(&mut out, b"{\"a\":1}").unwrap();
        write_frame(&mut out, b"[]").unwrap();
        assert_eq!(&out[..25], b"Content-Length: 7\r\n\r\n{\"a\"");
        let mut reader = io::BufReader::new(&out[..]);
        assert_eq!(read_frame(&mut reader, 100).unwrap(), b"{\"a\":1}");
        assert_eq!(read_frame(&mut reader, 100).unwrap(), b"[]");
        assert!(matches!(read_frame(&mut reader, 100), Err(FrameError::Eof)));
    }

    #[test]
    fn other_headers_are_skipped() {
        let input = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(read(input, 10).unwrap(), b"{}");
    }

    #[test]
    fn a_frame_over_the_limit_is_refused_before_it_is_read() {
        let err = read(b"Content-Length: 999999999999\r\n\r\n", 4 << 20).unwrap_err();
        assert!(
            matches!(err, FrameError::TooLarge(999_999_999_999, 4_194_304)),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "it sent a message of 999999999999 bytes, more than the limit of 4194304 bytes"
        );
    }

    #[test]
    fn what_is_not_lsp_is_named() {
        let long = vec![b'x'; 5000];
        let cases: [(&[u8], &str); 4] = [
            (
                b"hello world\n",
                "it does not speak LSP (a header line without `:`: hello world)",
            ),
            (
                b"Content-Length: ten\r\n\r\n",
                "it does not speak LSP (Content-Length `ten` is not a number)",
            ),
            (
                b"X: 1\r\n\r\n",
                "it does not speak LSP (a frame without Content-Length)",
            ),
            (
                &long,
                "it does not speak LSP (a header line longer than 1024 bytes)",
            ),
        ];
        for (input, message) in cases {
            assert_eq!(read(input, 100).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn a_body_cut_short_is_the_end_of_the_stream() {
        assert!(matches!(
            read(b"Content-Length: 10\r\n\r\n{}", 100),
            Err(FrameError::Eof)
        ));
    }
}
