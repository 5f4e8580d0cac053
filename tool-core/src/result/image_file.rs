//! Images given by path (000 附件和图片: an image is "base64 or a path"):
//! [`Image::from_file`] reads the file, bounded, and sniffs its media type
//! from its first bytes, so a tool can hand the model a screenshot it saved
//! without encoding it itself.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use image::ImageFormat;

use super::Image;

/// Why [`Image::from_file`] could not read an image.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageFileError {
    /// The file could not be opened or read.
    #[error("cannot read image {}: {source}", path.display())]
    Io {
        /// The path given.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is larger than the limit.
    #[error("image {} is {bytes} bytes, over the {limit}-byte limit for an image sent to a model; scale it down first", path.display())]
    TooLarge {
        /// The path given.
        path: PathBuf,
        /// The file's size (at least `limit + 1` when it grew while read).
        bytes: u64,
        /// The limit it broke.
        limit: u64,
    },
    /// The first bytes are not those of a PNG, JPEG, GIF or WebP image.
    #[error("{} is not a PNG, JPEG, GIF or WebP image ({})", path.display(), detected.map_or_else(|| "its first bytes match no image format".to_owned(), |m| format!("it holds {m}, which models are not sent")))]
    NotAnImage {
        /// The path given.
        path: PathBuf,
        /// The media type of another image format the bytes match (`image/bmp`, `image/tiff`, …).
        detected: Option<&'static str>,
    },
}

impl Image {
    /// The largest file [`from_file`](Self::from_file) reads: 20 MiB, the
    /// largest image any supported provider accepts (OpenAI's 20 MB;
    /// Anthropic's API takes 5 MB, and `render_result` replaces a larger
    /// image by a note naming its [`path`](Self::path)).
    pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

    /// The image in the file at `path`, as base64, its media type sniffed
    /// from the content (PNG, JPEG, GIF or WebP: the formats every provider
    /// takes; the extension is not read), its [`path`](Self::path) recorded.
    /// Reads at most [`MAX_FILE_BYTES`](Self::MAX_FILE_BYTES). The path is
    /// used as given: a tool that takes it from the model resolves it inside
    /// its workspace first, as the file tools do. A blocking read; in async
    /// code of a busy runtime wrap it in `spawn_blocking`.
    ///
    /// ```
    /// use tool_core::{Image, ToolResult};
    ///
    /// let path = std::env::temp_dir().join(format!("from-file-doc-{}.gif", std::process::id()));
    /// std::fs::write(&path, b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")?;
    /// let image = Image::from_file(&path)?;
    /// assert_eq!((image.media_type.as_str(), image.data.as_str()), ("image/gif", "R0lGODlhAQABAAAAADs="));
    /// let result = ToolResult::ok("saved the chart").with_image(image);
    /// assert_eq!(result.images[0].path.as_deref(), path.to_str());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ImageFileError::Io`] when the file cannot be read,
    /// [`TooLarge`](ImageFileError::TooLarge) over the limit,
    /// [`NotAnImage`](ImageFileError::NotAnImage) when the bytes are not one
    /// of the four formats.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ImageFileError> {
        Self::from_file_limited(path, Self::MAX_FILE_BYTES)
    }

    /// [`from_file`](Self::from_file) with a limit of `max_bytes` instead
    /// of [`MAX_FILE_BYTES`](Self::MAX_FILE_BYTES) (e.g. Anthropic's 5 MB).
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file).
    pub fn from_file_limited(
        path: impl AsRef<Path>,
        max_bytes: u64,
    ) -> Result<Self, ImageFileError> {
        let path = path.as_ref();
        let io = |source| ImageFileError::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let too_large = |bytes| ImageFileError::TooLarge {
            path: path.to_owned(),
            bytes,
            limit: max_bytes,
        };
        if size > max_bytes {
            return Err(too_large(size));
        }
        // Bounded even when the file grows after the size was read (or is
        // not a regular file and reports no size).
        let mut bytes = Vec::new();
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(io)?;
        let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if read > max_bytes {
            return Err(too_large(read));
        }
        let format = image::guess_format(&bytes).ok();
        let media_type = match format {
            Some(
                f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP),
            ) => f.to_mime_type(),
            other => {
                return Err(ImageFileError::NotAnImage {
                    path: path.to_owned(),
                    detected: other.as_ref().map(ImageFormat::to_mime_type),
                });
            }
        };
        Ok(Self::new(
            media_type,
            base64::engine::general_purpose::STANDARD.encode(&bytes),
        )
        .with_path(path.display().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// The smallest valid PNG: 1×1, one grey pixel.
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00:~\x9bU\x00\x00\x00\nIDATx\x9cc\xf8\x0f\x00\x01\x01\x01\x00\x1b\xb6\xee\x56\x00\x00\x00\x00IEND\xaeB`\x82";

    #[test]
    fn sniffs_the_type_from_the_bytes_not_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let png = write(dir.path(), "shot.jpg", PNG);
        let image = Image::from_file(&png).unwrap();
        assert_eq!(image.media_type, "image/png");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap();
        assert_eq!(decoded, PNG);
        assert_eq!(image.path.as_deref(), png.to_str());
        for (name, bytes, media) in [
            (
                "a.bin",
                &b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"[..],
                "image/jpeg",
            ),
            ("b", &b"GIF87a\x01\x00\x01\x00"[..], "image/gif"),
            (
                "c.png",
                &b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00"[..],
                "image/webp",
            ),
        ] {
            let p = write(dir.path(), name, bytes);
            assert_eq!(Image::from_file(&p).unwrap().media_type, media, "{name}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_sendable_image() {
        let dir = tempfile::tempdir().unwrap();
        let text = write(dir.path(), "notes.png", b"hello, not an image");
        let e = Image::from_file(&text).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} is not a PNG, JPEG, GIF or WebP image (its first bytes match no image format)",
                text.display()
            )
        );
        let bmp = write(
            dir.path(),
            "x.bmp",
            b"BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00",
        );
        let e = Image::from_file(&bmp).unwrap_err();
        assert!(
            matches!(
                e,
                ImageFileError::NotAnImage {
                    detected: Some("image/bmp"),
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .ends_with("(it holds image/bmp, which models are not sent)"),
            "{e}"
        );
        let missing = dir.path().join("gone.png");
        let e = Image::from_file(&missing).unwrap_err();
        assert!(matches!(e, ImageFileError::Io { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with(&format!("cannot read image {}: ", missing.display())),
            "{e}"
        );
        // A folder opens but does not read.
        assert!(matches!(
            Image::from_file(dir.path()).unwrap_err(),
            ImageFileError::Io { .. }
        ));
    }

    #[test]
    fn the_size_limit_holds() {
        let dir = tempfile::tempdir().unwrap();
        let png = write(dir.path(), "a.png", PNG);
        let len = PNG.len() as u64;
        assert!(Image::from_file_limited(&png, len).is_ok());
        let e = Image::from_file_limited(&png, len - 1).unwrap_err();
        assert!(
            matches!(e, ImageFileError::TooLarge { bytes, limit, .. } if bytes == len && limit == len - 1),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "image {} is {len} bytes, over the {}-byte limit for an image sent to a model; scale it down first",
                png.display(),
                len - 1
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_stream_without_a_size_is_still_bounded() {
        // `/dev/zero` reports size 0 and never ends: the read stops at the limit.
        let e = Image::from_file_limited("/dev/zero", 4096).unwrap_err();
        assert!(
            matches!(
                e,
                ImageFileError::TooLarge {
                    bytes: 4097,
                    limit: 4096,
                    ..
                }
            ),
            "{e:?}"
        );
    }
}
