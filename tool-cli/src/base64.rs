//! Base64 decoding for images and inline attachments: the standard alphabet
//! (RFC 4648 §4) that [`tool_core::Image`] specifies, with or without padding,
//! line breaks allowed.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Decodes `text`; the error says what was wrong (never echoes the data).
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    LENIENT.decode(compact).map_err(|e| match e {
        base64::DecodeError::InvalidByte(at, _) => format!("invalid base64 character at byte {at}"),
        base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidLastSymbol(..) => {
            "truncated base64 data".to_owned()
        }
        base64::DecodeError::InvalidPadding => "misplaced base64 padding".to_owned(),
    })
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
    }

    #[test]
    fn rejects_garbage_without_echoing_it() {
        for bad in ["Zm9v!", "Z", "Zg==Zg", "Zg==="] {
            let e = decode(bad).unwrap_err();
            assert!(!e.contains(bad), "{e}");
        }
    }
}
