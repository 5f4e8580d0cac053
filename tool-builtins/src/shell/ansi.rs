//! Streaming removal of terminal escape sequences from command output.
//!
//! Programs that think they talk to a terminal colour their output, move the
//! cursor and set window titles. A model reads those sequences as noise, so
//! [`EscapeStripper`] removes them. Output arrives in arbitrary pieces, so the
//! parser keeps its state between calls: a sequence split across two reads is
//! still removed whole.
//!
//! Removed: CSI sequences (`ESC [` … final byte), OSC strings (`ESC ]` … BEL or
//! `ESC \`), DCS/SOS/PM/APC strings (`ESC P`, `ESC X`, `ESC ^`, `ESC _` … `ESC \`),
//! other two- and three-byte escapes (`ESC 7`, `ESC ( B`), C0 control bytes
//! other than tab, line feed and carriage return, and the C1 controls written
//! as UTF-8 characters (U+0080–U+009F: `U+009B` starts a CSI sequence,
//! `U+009D` an OSC string, `U+009C` ends a string). Other bytes of multi-byte
//! UTF-8 characters pass through untouched (raw 8-bit C1 bytes are not
//! recognised, as they collide with UTF-8 continuation bytes).
//!
//! A string or CSI sequence left unterminated never swallows the rest of the
//! output: a line feed ends it (and is kept), and a string ends after
//! [`MAX_STRING_BYTES`] bytes.

/// Where the parser stands between bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Plain text.
    #[default]
    Ground,
    /// Just after `ESC`.
    Escape,
    /// After `ESC` and one or more intermediate bytes (0x20–0x2F), e.g. `ESC (`.
    EscapeIntermediate,
    /// Inside a CSI sequence: parameters and intermediates until a final byte.
    Csi,
    /// Inside an OSC/DCS/SOS/PM/APC string, until BEL or `ESC \`.
    String,
    /// Saw `ESC` inside a string: `\` ends it, anything else starts a new escape.
    StringEscape,
    /// Saw `0xC2` in plain text: the first byte of a C1 control (U+0080–U+009F) or of a character.
    GroundC2,
    /// Saw `0xC2` inside a string: `0x9C` (U+009C, ST) ends it.
    StringC2,
}

/// Longest OSC/DCS/SOS/PM/APC string removed: past it, the string is taken
/// as unterminated and the bytes after it are shown again.
pub(crate) const MAX_STRING_BYTES: usize = 4096;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
/// First byte of the UTF-8 encoding of U+0080–U+00BF, the C1 controls among them.
const C2: u8 = 0xc2;

/// Removes terminal escape sequences from a byte stream fed in pieces.
#[derive(Debug, Clone, Default)]
pub(crate) struct EscapeStripper {
    state: State,
    /// Bytes of the current string so far.
    string_len: usize,
}

impl EscapeStripper {
    /// A stripper in the ground state.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends the text bytes of `input` to `out`, dropping escape sequences.
    /// A sequence left open at the end of `input` continues with the next call.
    pub(crate) fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Ground {
                // Fast path: copy the run of ordinary bytes in one go.
                let run = input[i..]
                    .iter()
                    .position(|&b| is_control(b))
                    .unwrap_or(input.len() - i);
                out.extend_from_slice(&input[i..i + run]);
                i += run;
                if i == input.len() {
                    break;
                }
            }
            let b = input[i];
            i += 1;
            let before = self.state;
            self.state = match self.state {
                State::Ground => match b {
                    ESC => State::Escape,
                    b'\t' | b'\n' | b'\r' => {
                        out.push(b);
                        State::Ground
                    }
                    C2 => State::GroundC2,
                    _ => State::Ground, // other C0 controls and DEL are dropped
                },
                State::GroundC2 => match b {
                    0x9b => State::Csi,
                    0x90 | 0x98 | 0x9d | 0x9e | 0x9f => State::String,
                    0x80..=0x9f => State::Ground, // other C1 controls are dropped
                    _ => {
                        // An ordinary character (or stray byte): keep it and
                        // look at `b` again as plain text.
                        out.push(C2);
                        i -= 1;
                        State::Ground
                    }
                },
                State::Escape => match b {
                    b'[' => State::Csi,
                    b']' | b'P' | b'X' | b'^' | b'_' => State::String,
                    0x20..=0x2f => State::EscapeIntermediate,
                    ESC => State::Escape,
                    _ => State::Ground, // two-byte escape such as `ESC 7` or `ESC =`
                },
                State::EscapeIntermediate => match b {
                    0x20..=0x2f => State::EscapeIntermediate,
                    ESC => State::Escape,
                    _ => State::Ground,
                },
                State::Csi => match b {
                    0x40..=0x7e => State::Ground,
                    ESC => State::Escape,
                    b'\n' => {
                        out.push(b);
                        State::Ground
                    }
                    // Parameters, intermediates and stray bytes stay inside the sequence.
                    _ => State::Csi,
                },
                State::String | State::StringC2 => {
                    self.string_len += 1;
                    match b {
                        BEL => State::Ground,
                        ESC => State::StringEscape,
                        // Unterminated: the line ends it, and so does the length cap.
                        b'\n' => {
                            out.push(b);
                            State::Ground
                        }
                        0x9c if self.state == State::StringC2 => State::Ground,
                        _ if self.string_len > MAX_STRING_BYTES => State::Ground,
                        C2 => State::StringC2,
                        _ => State::String,
                    }
                }
                State::StringEscape => match b {
                    b'\\' => State::Ground,
                    b'[' => State::Csi,
                    b']' | b'P' | b'X' | b'^' | b'_' => State::String,
                    ESC => State::StringEscape,
                    _ => State::Ground,
                },
            };
            let in_string = |s: State| matches!(s, State::String | State::StringC2);
            if in_string(self.state) && !in_string(before) {
                self.string_len = 0;
            }
        }
    }

    /// Strips a complete text in one call (convenience for tests and small outputs).
    #[cfg(test)]
    pub(crate) fn strip(text: &str) -> String {
        let mut out = Vec::new();
        Self::new().push(text.as_bytes(), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// `text` as the model may see it: terminal escape sequences and C0/C1
/// controls removed by [`EscapeStripper`] (the cleaner of job output; tab
/// and line feed kept), a carriage return turned into a line feed (`\r\n`
/// into one), and the Unicode bidirectional controls (U+202A–U+202E,
/// U+2066–U+2069) removed, so text from outside (a fetched page, a language
/// server's message) cannot plant sequences that act on a terminal a host
/// later prints it to.
pub(crate) fn clean_text(text: &str) -> String {
    let mut stripped = Vec::with_capacity(text.len());
    EscapeStripper::new().push(text.as_bytes(), &mut stripped);
    let stripped = String::from_utf8_lossy(&stripped);
    let mut out = String::with_capacity(stripped.len());
    let mut chars = stripped.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

/// C0 control bytes, DEL and the first byte of a UTF-8 C1 control: everything
/// the ground state must look at.
fn is_control(b: u8) -> bool {
    b < 0x20 || b == 0x7f || b == C2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_colours_and_cursor_moves() {
        assert_eq!(
            EscapeStripper::strip("\x1b[1;31mred\x1b[0m plain \x1b[2K\x1b[1Gdone\n"),
            "red plain done\n"
        );
    }

    #[test]
    fn removes_osc_with_bel_and_st() {
        assert_eq!(
            EscapeStripper::strip("a\x1b]0;title\x07b\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\c"),
            "ablinkc"
        );
    }

    #[test]
    fn removes_dcs_charset_and_short_escapes() {
        assert_eq!(
            EscapeStripper::strip("\x1bPq#0;2;0;0;0\x1b\\x\x1b(By\x1b7z\x1b8"),
            "xyz"
        );
    }

    #[test]
    fn keeps_tabs_newlines_carriage_returns_and_unicode() {
        assert_eq!(
            EscapeStripper::strip("a\tb\r\nc\x07\x08d é🚀"),
            "a\tb\r\ncd é🚀"
        );
    }

    #[test]
    fn sequences_split_across_pieces_are_removed_whole() {
        let text = "x\x1b[38;5;196mred\x1b[0m\x1b]0;title\x1b\\y\x1b(Bz";
        let bytes = text.as_bytes();
        // Every split point, including inside each sequence.
        for cut in 0..=bytes.len() {
            let mut s = EscapeStripper::new();
            let mut out = Vec::new();
            s.push(&bytes[..cut], &mut out);
            s.push(&bytes[cut..], &mut out);
            assert_eq!(String::from_utf8_lossy(&out), "xredyz", "cut at {cut}");
        }
        // One byte at a time.
        let mut s = EscapeStripper::new();
        let mut out = Vec::new();
        for b in bytes {
            s.push(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(String::from_utf8_lossy(&out), "xredyz");
    }

    #[test]
    fn unterminated_strings_end_at_a_line_feed_or_the_cap() {
        assert_eq!(
            EscapeStripper::strip("M\x1b]0;title\nN after\n"),
            "M\nN after\n"
        );
        assert_eq!(EscapeStripper::strip("a\x1b[12\nb\n"), "a\nb\n");
        let long = format!("x\x1b]52;c;{}tail", "Q".repeat(MAX_STRING_BYTES + 10));
        let out = EscapeStripper::strip(&long);
        assert!(out.starts_with('x') && out.ends_with("tail"), "{out}");
        assert!(out.len() < 100, "{}", out.len());
    }

    #[test]
    fn utf8_encoded_c1_controls_are_removed() {
        assert_eq!(
            EscapeStripper::strip("a\u{9b}31mred\u{9b}0m b\u{9d}0;t\u{9c}c\u{85}d\n"),
            "ared bcd\n"
        );
        // Characters that share the first byte pass, also split across pieces.
        let text = "£ © ° ± ½ \u{a0}é";
        assert_eq!(EscapeStripper::strip(text), text);
        let bytes = "x\u{9b}1my£".as_bytes();
        for cut in 0..=bytes.len() {
            let mut s = EscapeStripper::new();
            let mut out = Vec::new();
            s.push(&bytes[..cut], &mut out);
            s.push(&bytes[cut..], &mut out);
            assert_eq!(String::from_utf8_lossy(&out), "xy£", "cut at {cut}");
        }
    }

    #[test]
    fn utf8_split_across_pieces_passes_through() {
        let bytes = "é🚀".as_bytes();
        let mut s = EscapeStripper::new();
        let mut out = Vec::new();
        s.push(&bytes[..1], &mut out);
        s.push(&bytes[1..4], &mut out);
        s.push(&bytes[4..], &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "é🚀");
    }
}
