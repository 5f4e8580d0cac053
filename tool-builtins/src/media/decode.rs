//! Decoding with bounds, downsampling and encoding for the model.
//!
//! Every decode goes through `decode`: the format is guessed from the
//! content (not the name), the dimensions are read from the header and
//! checked against [`MAX_PIXELS`] before a pixel is decoded, and the
//! decoder's own allocation limit ([`image::Limits::max_alloc`]) is set, so a
//! small file that claims a huge image (a decompression bomb) is refused
//! without allocating it.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};

/// Most pixels (width × height) of one decoded image: 64 megapixels, e.g.
/// 8000 × 8000 (a 4000 × 3000 photo is 12). Larger images are refused.
pub const MAX_PIXELS: u64 = 64_000_000;

/// Longest side of one image on its own (`read_file`, `read_images` with
/// `layout: separate`), in pixels. Anthropic's vision guide: images with a
/// long edge over 1568 px are scaled down by the API before the model sees
/// them, so larger ones cost bytes and time and show nothing more.
pub const MAX_LONG_SIDE: u32 = 1568;

/// Most bytes the decoder may allocate for one image: 512 MiB (the
/// `image` crate's default, stated so the bound is visible here).
const MAX_ALLOC: u64 = 512 * 1024 * 1024;

/// A composed or single PNG larger than this is tried as JPEG (quality
/// [`JPEG_QUALITY`]) and the smaller kept: photos compress badly as PNG.
pub(crate) const PNG_SOFT_LIMIT: usize = 1024 * 1024;

/// JPEG quality of re-encoded images.
const JPEG_QUALITY: u8 = 85;

/// A decoded image and what it was.
pub(crate) struct Decoded {
    pub(crate) image: DynamicImage,
    pub(crate) format: ImageFormat,
    pub(crate) width: u32,
    pub(crate) height: u32,
}

/// The short name of a format for the text output (`png`, `jpeg`, …).
pub(crate) fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "png",
        ImageFormat::Jpeg => "jpeg",
        ImageFormat::Gif => "gif",
        ImageFormat::WebP => "webp",
        ImageFormat::Bmp => "bmp",
        _ => "other",
    }
}

/// The IANA media type providers accept for `format`, when they take it as is.
pub(crate) fn web_media_type(format: ImageFormat) -> Option<&'static str> {
    Some(match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Jpeg => "image/jpeg",
        ImageFormat::Gif => "image/gif",
        ImageFormat::WebP => "image/webp",
        _ => return None,
    })
}

/// Decodes `bytes` (PNG, JPEG, GIF's first frame, WebP or BMP, by content).
///
/// # Errors
/// A sentence for the model: not an image of a supported format, too many
/// pixels, or the decoder's error (a corrupt file).
pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded, String> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("cannot read it: {e}"))?;
    let format = match reader.format() {
        Some(
            f @ (ImageFormat::Png
            | ImageFormat::Jpeg
            | ImageFormat::Gif
            | ImageFormat::WebP
            | ImageFormat::Bmp),
        ) => f,
        Some(other) => {
            return Err(format!(
                "{other:?} images are not supported (PNG, JPEG, GIF, WebP and BMP are)"
            ));
        }
        None => {
            return Err(
                "not a PNG, JPEG, GIF, WebP or BMP image (its first bytes match none of them)"
                    .to_owned(),
            );
        }
    };
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_ALLOC);
    let mut decoder = reader
        .into_decoder()
        .map_err(|e| format!("cannot decode it: {e}"))?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(format!(
            "it is {width}×{height} px, more than the {} megapixels one image may have",
            MAX_PIXELS / 1_000_000
        ));
    }
    decoder
        .set_limits(limits)
        .map_err(|e| format!("cannot decode it: {e}"))?;
    let image =
        DynamicImage::from_decoder(decoder).map_err(|e| format!("cannot decode it: {e}"))?;
    Ok(Decoded {
        image,
        format,
        width,
        height,
    })
}

/// `image` scaled down (never up) to fit `max_w` × `max_h`, aspect ratio kept.
/// Uses area sampling ([`DynamicImage::thumbnail`]), fast on large photos.
pub(crate) fn fit(image: &DynamicImage, max_w: u32, max_h: u32) -> Option<DynamicImage> {
    (image.width() > max_w || image.height() > max_h).then(|| image.thumbnail(max_w, max_h))
}

/// PNG bytes of `image` (fast compression); JPEG instead when the PNG is over
/// [`PNG_SOFT_LIMIT`] and the JPEG is smaller. Returns the bytes and media type.
///
/// # Errors
/// The encoder's error, as a sentence.
pub(crate) fn encode(
    image: &DynamicImage,
    prefer_jpeg: bool,
) -> Result<(Vec<u8>, &'static str), String> {
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    let keep_alpha = image.color().has_alpha() && !prefer_jpeg;
    let jpeg = || -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY)
            .encode_image(&rgb)
            .map_err(|e| format!("cannot encode the image: {e}"))?;
        Ok(out)
    };
    if prefer_jpeg {
        return Ok((jpeg()?, "image/jpeg"));
    }
    let mut png = Vec::new();
    let source = if keep_alpha { image } else { &rgb };
    source
        .write_with_encoder(PngEncoder::new_with_quality(
            &mut png,
            CompressionType::Fast,
            FilterType::Adaptive,
        ))
        .map_err(|e| format!("cannot encode the image: {e}"))?;
    if png.len() > PNG_SOFT_LIMIT && !keep_alpha {
        let jpeg = jpeg()?;
        if jpeg.len() < png.len() {
            return Ok((jpeg, "image/jpeg"));
        }
    }
    Ok((png, "image/png"))
}

/// One image ready for the model on its own: the bytes to send, their media
/// type, the size sent and the original size.
#[derive(Debug)]
pub(crate) struct Fitted {
    pub(crate) bytes: Vec<u8>,
    pub(crate) media_type: &'static str,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) original_width: u32,
    pub(crate) original_height: u32,
    pub(crate) format: ImageFormat,
}

impl Fitted {
    /// Whether the image was scaled down.
    pub(crate) fn resized(&self) -> bool {
        self.width != self.original_width || self.height != self.original_height
    }
}

/// The format and dimensions of `bytes`, from the header alone.
///
/// # Errors
/// As [`decode`]: not a supported image, or a header that does not parse.
fn probe(bytes: &[u8]) -> Result<(ImageFormat, u32, u32), String> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("cannot read it: {e}"))?;
    let format = reader
        .format()
        .ok_or_else(|| "not a PNG, JPEG, GIF, WebP or BMP image".to_owned())?;
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| format!("cannot decode it: {e}"))?;
    Ok((format, w, h))
}

/// `bytes` as one image for the model: the file as it is when it fits
/// [`MAX_LONG_SIDE`] and is a format providers take (PNG, JPEG, GIF, WebP),
/// else decoded, scaled down to a long side of at most [`MAX_LONG_SIDE`] and
/// re-encoded ([`encode`]; JPEG stays JPEG). With `verify` false a file whose
/// header says it fits is sent as it is without decoding its pixels
/// (`read_file`, as before downsampling existed); with `verify` true it is
/// decoded first, so a corrupt file is an error (`read_images`).
///
/// # Errors
/// [`decode`]'s or [`encode`]'s sentence.
pub(crate) fn fit_single(bytes: Vec<u8>, verify: bool) -> Result<Fitted, String> {
    if !verify {
        if let Ok((format, w, h)) = probe(&bytes) {
            if let (true, Some(media_type)) = (
                w <= MAX_LONG_SIDE && h <= MAX_LONG_SIDE,
                web_media_type(format),
            ) {
                return Ok(Fitted {
                    bytes,
                    media_type,
                    width: w,
                    height: h,
                    original_width: w,
                    original_height: h,
                    format,
                });
            }
        }
    }
    let decoded = decode(&bytes)?;
    let (w, h) = (decoded.width, decoded.height);
    let too_large = w > MAX_LONG_SIDE || h > MAX_LONG_SIDE;
    if let (false, Some(media_type)) = (too_large, web_media_type(decoded.format)) {
        return Ok(Fitted {
            bytes,
            media_type,
            width: w,
            height: h,
            original_width: w,
            original_height: h,
            format: decoded.format,
        });
    }
    drop(bytes);
    let scaled = fit(&decoded.image, MAX_LONG_SIDE, MAX_LONG_SIDE);
    let shown = scaled.as_ref().unwrap_or(&decoded.image);
    let (bytes, media_type) = encode(shown, decoded.format == ImageFormat::Jpeg)?;
    Ok(Fitted {
        bytes,
        media_type,
        width: shown.width(),
        height: shown.height(),
        original_width: w,
        original_height: h,
        format: decoded.format,
    })
}
