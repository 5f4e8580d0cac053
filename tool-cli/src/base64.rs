//! Base64 decoding for images and inline attachments (RFC 4648 §4 and the URL-safe §5
//! alphabet, padding optional, ASCII whitespace ignored).

/// Decodes `text`; the error says what was wrong (never echoes the data).
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 3);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    let mut padding = 0usize;
    for (i, byte) in text.bytes().enumerate() {
        if byte.is_ascii_whitespace() {
            continue;
        }
        if byte == b'=' {
            padding += 1;
            continue;
        }
        if padding > 0 {
            return Err(format!("data after padding at byte {i}"));
        }
        let sextet = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return Err(format!("invalid base64 character at byte {i}")),
        };
        acc = (acc << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    // 6 leftover bits mean one lone character: not a whole byte.
    if bits == 6 || padding > 2 {
        return Err("truncated base64 data".to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_rfc4648_vectors() {
        for (enc, dec) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
            ("Zm9vYg", "foob"),
            ("Zm9v\nYmFy", "foobar"),
        ] {
            assert_eq!(decode(enc).unwrap(), dec.as_bytes(), "{enc}");
        }
        assert_eq!(decode("-_8=").unwrap(), decode("+/8=").unwrap());
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode("Zm9v!").is_err());
        assert!(decode("Z").is_err());
        assert!(decode("Zg==Zg").is_err());
        assert!(decode("Zg===").is_err());
    }
}
