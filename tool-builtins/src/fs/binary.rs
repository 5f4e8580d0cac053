//! Binary sniffing: by extension, and by the first bytes of a file.

use std::path::Path;

/// Extensions of files that are binary whatever their first bytes look like.
pub const BINARY_EXTENSIONS: &[&str] = &[
    "zip", "tar", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "jar", "war", "ear", "exe", "dll",
    "so", "dylib", "a", "lib", "o", "obj", "class", "pyc", "pyo", "wasm", "bin", "dat", "iso",
    "img", "dmg", "deb", "rpm", "apk", "ipa", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt",
    "ods", "odp", "sqlite", "db", "mp3", "mp4", "avi", "mov", "mkv", "wav", "flac", "ogg", "ttf",
    "otf", "woff", "woff2", "eot", "ico", "bmp", "tif", "tiff", "psd", "pdf",
];

/// Whether `path`'s extension is in [`BINARY_EXTENSIONS`] (case-insensitive).
pub fn has_binary_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| BINARY_EXTENSIONS.iter().any(|b| b.eq_ignore_ascii_case(e)))
}

/// Whether the first bytes of a file look binary: a NUL byte, or more than
/// 30 % control bytes (other than tab, line feed, form feed, carriage return,
/// backspace and escape). A UTF-16 byte order mark means text.
pub fn looks_binary(sample: &[u8]) -> bool {
    if sample.starts_with(b"\xFF\xFE") || sample.starts_with(b"\xFE\xFF") {
        return false;
    }
    if sample.contains(&0) {
        return true;
    }
    if sample.is_empty() {
        return false;
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b'\x08' | 0x1B))
        .count();
    control * 10 > sample.len() * 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection() {
        assert!(looks_binary(b"abc\0def"));
        assert!(looks_binary(&[1, 2, 3, 4, b'a']));
        assert!(!looks_binary(b"plain text\n\twith tabs\r\n"));
        assert!(!looks_binary(b""));
        assert!(has_binary_extension(Path::new("x/notes.ZIP")));
        assert!(!has_binary_extension(Path::new("x/notes.txt")));
    }
}
