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
//! other two- and three-byte escapes (`ESC 7`, `ESC ( B`), and C0 control
//! bytes other than tab, line feed and carriage return. Bytes of multi-byte
//! UTF-8 characters pass through untouched (the 8-bit C1 forms are not
//! recognised, as they collide with UTF-8 continuation bytes).

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
}

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// Removes terminal escape sequences from a byte stream fed in pieces.
#[derive(Debug, Clone, Default)]
pub(crate) struct EscapeStripper {
    state: State,
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
            self.state = match self.state {
                State::Ground => match b {
                    ESC => State::Escape,
                    b'\t' | b'\n' | b'\r' => {
                        out.push(b);
                        State::Ground
                    }
                    _ => State::Ground, // other C0 controls and DEL are dropped
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
                    // Parameters, intermediates and stray bytes stay inside the sequence.
                    _ => State::Csi,
                },
                State::String => match b {
                    BEL => State::Ground,
                    ESC => State::StringEscape,
                    _ => State::String,
                },
                State::StringEscape => match b {
                    b'\\' => State::Ground,
                    b'[' => State::Csi,
                    b']' | b'P' | b'X' | b'^' | b'_' => State::String,
                    ESC => State::StringEscape,
                    _ => State::Ground,
                },
            };
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

/// C0 control bytes and DEL: everything the ground state must look at.
fn is_control(b: u8) -> bool {
    b < 0x20 || b == 0x7f
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
