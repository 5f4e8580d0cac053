//! Decoding with bounds, downsampling and encoding for the model.
//!
//! Every decode goes through `decode`: the format is guessed from the
//! content (not the name); the dimensions and colour type are read from the
//! header and checked before a pixel is decoded, against [`MAX_PIXELS`] and
//! [`MAX_DECODED_BYTES`] (width × height × bytes per pixel of the colour type
//! the decoder produces: a 16-bit RGBA image takes 8 bytes a pixel); the
//! decoder's own allocation limit ([`image::Limits::max_alloc`]) is set too,
//! so a small file that claims a huge image (a decompression bomb) is refused
//! without allocating it.
//!
//! Memory is bounded by bytes across threads and calls, not per image: every
//! decode first reserves its decoded size plus the file's size from one
//! process-wide budget of [`DECODE_BUDGET_BYTES`], waiting while other
//! decodes hold it, and gives it back once the image is scaled down. Peak
//! memory of decoding therefore stays near that budget whatever the number
//! of cores or concurrent calls (one image larger than the budget's free part
//! waits until it can run alone).
//!
//! EXIF orientation (JPEG, PNG `eXIf`, WebP) is applied: the image is scaled to
//! fit the box its displayed (rotated) shape needs, then rotated or flipped,
//! which gives the same picture as rotating first at a fraction of the
//! memory. Animated GIF and WebP files give their first frame, and GIFs are
//! always re-encoded as PNG (OpenAI takes only still GIFs, Gemini none).
//!
//! Every image leaving here fits [`MAX_IMAGE_BASE64`] characters of base64,
//! the smallest per-image limit among the providers (Anthropic's 5 MB): a PNG
//! over it is sent as JPEG, the quality stepped down until it fits, and the
//! result says so.

use std::io::Cursor;
use std::sync::{Condvar, Mutex, PoisonError};

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::codecs::webp::WebPDecoder;
use image::metadata::Orientation;
use image::{
    DynamicImage, GenericImageView as _, ImageDecoder, ImageFormat, ImageReader, Limits, Rgb,
    RgbImage, imageops,
};

/// Most pixels (width × height) of one decoded image: 64 megapixels, e.g.
/// 8000 × 8000 (a 4000 × 3000 photo is 12). Larger images are refused.
pub const MAX_PIXELS: u64 = 64_000_000;

/// Most bytes one decoded image may take (width × height × bytes per pixel
/// of its decoded colour type): 256 MiB. Every 8-bit image of at most
/// [`MAX_PIXELS`] pixels passes (8000 × 8000 RGBA is 244 MiB); a 16-bit RGBA
/// image (8 bytes a pixel) passes up to about 33 megapixels, and a 16-bit
/// 8000 × 8000 one (488 MiB) is refused from its header. Also the decoder's
/// [`Limits::max_alloc`].
pub const MAX_DECODED_BYTES: u64 = 256 * 1024 * 1024;

/// Most bytes (decoded images plus their files) held by decodes at the same
/// time in the whole process: 512 MiB, two of the largest images. Decodes
/// wait for their share, so 12-megapixel photos (36 MB each decoded) run
/// one per core, and large 16-bit PNGs two at a time whatever the cores.
pub const DECODE_BUDGET_BYTES: u64 = 512 * 1024 * 1024;

/// Most bytes a PNG decoder may allocate besides the image itself (16 MiB):
/// the `png` crate's own limit, which bounds the inflated `iCCP` colour
/// profile, text chunks, other ancillary chunks' buffers and the line
/// buffer. A profile that would inflate past it is dropped (the `png`
/// crate skips it; the pixels are decoded as usual, and profiles are not
/// applied here anyway); real profiles are a few KiB to a few MiB. The
/// bytes are counted in the decode budget from before the header is read.
pub const MAX_PNG_ANCILLARY_BYTES: u64 = 16 * 1024 * 1024;

/// Most bytes a file may hold beyond its pixels and still be sent as it is
/// (64 KiB, plus a sixteenth of the pixels' decoded size for a PNG's
/// filter bytes and zlib framing): an EXIF block, an ICC profile or XMP of
/// an ordinary image fits. A file larger than that is mostly something
/// else (text chunks, private chunks, a `COM` segment: the third review of
/// issue 23 sent a 4×4 px PNG with 3 MB of `zTXt`) and is re-encoded from
/// its pixels instead, so a tiny image no longer carries megabytes of
/// base64 to the model, and the cost of reading it follows its pixels.
pub const MAX_AS_IS_EXTRA_BYTES: u64 = 64 * 1024;

/// The largest file sent as it is for an image whose pixels take
/// `pixel_bytes` decoded (see [`MAX_AS_IS_EXTRA_BYTES`]).
fn as_is_limit(pixel_bytes: u64) -> u64 {
    pixel_bytes + pixel_bytes / 16 + MAX_AS_IS_EXTRA_BYTES
}

/// Longest side of one image on its own (`read_file`, `read_images` with
/// `layout: separate`), in pixels. Anthropic's vision guide: images with a
/// long edge over 1568 px are scaled down by the API before the model sees
/// them, so larger ones cost bytes and time and show nothing more.
pub const MAX_LONG_SIDE: u32 = 1568;

/// Longest base64 text of one image sent: 5 000 000 characters (3 750 000
/// bytes before encoding). Anthropic's API takes at most 5 MB per image (the
/// "Vision" guide, counted on the base64 the request carries, as
/// `tool_core`'s provider limits count it), the smallest per-image limit of
/// the providers (OpenAI 50 MB per request, Gemini 20 MB of inline data).
pub const MAX_IMAGE_BASE64: usize = 5_000_000;

/// [`MAX_IMAGE_BASE64`] in bytes before base64 (4 characters per 3 bytes).
pub(crate) const MAX_IMAGE_BYTES: usize = MAX_IMAGE_BASE64 / 4 * 3;

/// A composed or single PNG larger than this is tried as JPEG (quality
/// [`JPEG_QUALITY`]) and the smaller kept: photos compress badly as PNG.
pub(crate) const PNG_SOFT_LIMIT: usize = 1024 * 1024;

/// JPEG quality of re-encoded images.
const JPEG_QUALITY: u8 = 85;

/// The qualities tried, in order, when a JPEG must shrink to fit
/// [`MAX_IMAGE_BYTES`]; below the last the image is scaled down by a quarter
/// and the steps repeat.
const JPEG_STEPS: [u8; 6] = [JPEG_QUALITY, 75, 65, 55, 45, 35];

/// Background of transparent areas in a JPEG (white).
const FLATTEN_COLOUR: [u8; 3] = [255, 255, 255];

/// Bytes shared by decodes: how many are in use, and the wake-up of those
/// waiting for their share.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: u64,
    used: Mutex<u64>,
    released: Condvar,
}

/// The process-wide budget of [`DECODE_BUDGET_BYTES`].
static DECODES: Budget = Budget::new(DECODE_BUDGET_BYTES);

impl Budget {
    const fn new(limit: u64) -> Self {
        Self {
            limit,
            used: Mutex::new(0),
            released: Condvar::new(),
        }
    }

    /// Waits until `bytes` (capped at the whole limit, so one large share
    /// runs alone) fit beside what others hold, then takes them.
    pub(crate) fn reserve(&self, bytes: u64) -> Permit<'_> {
        let bytes = bytes.min(self.limit);
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        while *used > 0 && *used + bytes > self.limit {
            used = self
                .released
                .wait(used)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *used += bytes;
        Permit {
            budget: self,
            bytes,
        }
    }
}

/// A share of a [`Budget`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Permit<'a> {
    budget: &'a Budget,
    bytes: u64,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut used = self
            .budget
            .used
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *used = used.saturating_sub(self.bytes);
        drop(used);
        self.budget.released.notify_all();
    }
}

/// A decoded image and what it was. Holds its share of the decode budget
/// until dropped or scaled ([`Decoded::fitted`]).
pub(crate) struct Decoded {
    /// The pixels as stored, before the orientation is applied.
    image: DynamicImage,
    pub(crate) format: ImageFormat,
    /// Width as displayed (after the EXIF orientation).
    pub(crate) width: u32,
    /// Height as displayed.
    pub(crate) height: u32,
    /// The EXIF orientation, applied by [`fitted`](Self::fitted).
    pub(crate) orientation: Orientation,
    /// More than one frame (GIF or WebP animation); only the first is kept.
    pub(crate) animated: bool,
    _permit: Permit<'static>,
}

impl Decoded {
    /// The image as displayed (EXIF orientation applied), scaled down (never
    /// up) to fit `max_w` × `max_h` with its aspect ratio kept, by area
    /// sampling ([`DynamicImage::thumbnail`]). Frees the full-size pixels and
    /// the budget share.
    pub(crate) fn fitted(self, max_w: u32, max_h: u32) -> DynamicImage {
        let swaps = swaps_axes(self.orientation);
        // The stored image is fitted to the box turned as it is stored.
        let (bw, bh) = if swaps {
            (max_h, max_w)
        } else {
            (max_w, max_h)
        };
        let mut image = if self.image.width() > bw || self.image.height() > bh {
            self.image.thumbnail(bw, bh)
        } else {
            self.image
        };
        image.apply_orientation(self.orientation);
        image
    }

    /// Whether this image needs no change to be sent as its file is: a
    /// format every provider takes as is (PNG, JPEG, still WebP), no EXIF
    /// rotation, within [`MAX_LONG_SIDE`].
    fn sendable_as_is(&self) -> bool {
        matches!(
            self.format,
            ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP
        ) && !self.animated
            && self.orientation == Orientation::NoTransforms
            && self.width <= MAX_LONG_SIDE
            && self.height <= MAX_LONG_SIDE
    }

    /// The decoded size of the pixels, in bytes.
    fn pixel_bytes(&self) -> u64 {
        self.image.as_bytes().len() as u64
    }
}

/// Whether `o` turns the image by a quarter (width and height swap).
fn swaps_axes(o: Orientation) -> bool {
    matches!(
        o,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
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

/// The IANA media type of `format` as sent.
fn media_type(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Jpeg => "image/jpeg",
        ImageFormat::WebP => "image/webp",
        _ => "image/png",
    }
}

fn mib(n: u64) -> u64 {
    n.div_ceil(1024 * 1024)
}

/// For `read_file`: whether a file the decoder refused may still go to the
/// model as it is, the way `read_file` sent every image before it decoded
/// them. True when its header reads as PNG, JPEG or WebP (formats every
/// provider takes as they are) with both sides within [`MAX_LONG_SIDE`] and
/// the file fits [`MAX_IMAGE_BYTES`]: a bad checksum or bytes after the end
/// that many viewers accept. A file whose header cannot be read, or that
/// would need scaling, is not.
pub(crate) fn sendable_undecoded(bytes: &[u8]) -> Option<(&'static str, u32, u32)> {
    if bytes.len() > MAX_IMAGE_BYTES {
        return None;
    }
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    // Reading a PNG's size reads its ancillary chunks too: the same bound
    // as `decode`'s (a profile past it is skipped, not inflated).
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_PNG_ANCILLARY_BYTES);
    reader.limits(limits);
    let format = reader.format()?;
    if !matches!(
        format,
        ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP
    ) {
        return None;
    }
    let (w, h) = reader.into_dimensions().ok()?;
    // Four bytes a pixel: the most an 8-bit image sent as it is needs.
    let fits = bytes.len() as u64 <= as_is_limit(u64::from(w) * u64::from(h) * 4);
    (w > 0 && h > 0 && w <= MAX_LONG_SIDE && h <= MAX_LONG_SIDE && fits)
        .then(|| (media_type(format), w, h))
}

/// Decodes `bytes` (PNG, JPEG, GIF's first frame, WebP or BMP, by content)
/// inside the decode budget; the orientation is read, not yet applied.
///
/// # Errors
/// A sentence for the model: not an image of a supported format, too many
/// pixels or decoded bytes, or the decoder's error (a corrupt file).
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
    let cannot = |e: image::ImageError| format!("cannot decode it: {e}");
    // A PNG's ancillary chunks (an `iCCP` profile above all, inflated while
    // the decoder reads up to the pixels) are bounded by the `png` crate's
    // limit and counted in the budget from the start: the header is read
    // under a share of the file plus that limit; then that share and the
    // decoder are given back and the whole share taken at once (holding
    // one share while waiting for another could deadlock), and the
    // decoder made anew under it.
    let extra = if format == ImageFormat::Png {
        MAX_PNG_ANCILLARY_BYTES
    } else {
        0
    };
    let header_permit = (extra > 0).then(|| DECODES.reserve(bytes.len() as u64 + extra));
    let (decoder, mut animated) = open_decoder(format, reader, bytes).map_err(cannot)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(format!(
            "it is {width}×{height} px, more than the {} megapixels one image may have",
            MAX_PIXELS / 1_000_000
        ));
    }
    // A GIF frame may be larger than the logical screen the header gives
    // (review 23 F3: a 4×4 screen with a 65 535×65 535 frame made the
    // decoder allocate 4 GiB), so every frame's descriptor is read first
    // (no pixel data decoded) and the largest frame counts.
    let gif_frames = if format == ImageFormat::Gif {
        Some(gif_frame_sizes(bytes)?)
    } else {
        None
    };
    let mut decoded_bytes = decoder.total_bytes();
    if let Some(frames) = &gif_frames {
        let (fw, fh) = frames.largest;
        if u64::from(fw) * u64::from(fh) > MAX_PIXELS {
            return Err(format!(
                "a frame of it is {fw}×{fh} px, more than the {} megapixels one image may have",
                MAX_PIXELS / 1_000_000
            ));
        }
        // The decoder expands every frame to 8-bit RGBA.
        decoded_bytes = decoded_bytes.max(u64::from(fw) * u64::from(fh) * 4);
    }
    if decoded_bytes > MAX_DECODED_BYTES {
        return Err(format!(
            "decoded it takes {} MiB ({width}×{height} px of {:?}), more than the {} MiB one image may take",
            mib(decoded_bytes),
            decoder.color_type(),
            mib(MAX_DECODED_BYTES)
        ));
    }
    // A GIF's frames are counted (two at most, each as large as the image)
    // inside the same share, so it reserves twice.
    let gif = format == ImageFormat::Gif;
    let share = decoded_bytes * if gif { 2 } else { 1 } + bytes.len() as u64 + extra;
    let (mut decoder, permit) = match header_permit {
        None => (decoder, DECODES.reserve(share)),
        Some(header_permit) => {
            drop(decoder);
            drop(header_permit);
            let permit = DECODES.reserve(share);
            let reader = ImageReader::with_format(Cursor::new(bytes), format);
            (
                open_decoder(format, reader, bytes).map_err(cannot)?.0,
                permit,
            )
        }
    };
    // A missing or unreadable EXIF block is no orientation, not an error.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    decoder.set_limits(limits).map_err(cannot)?;
    if let Some(frames) = &gif_frames {
        animated = frames.count > 1;
    }
    let image = DynamicImage::from_decoder(decoder).map_err(cannot)?;
    let (width, height) = if swaps_axes(orientation) {
        (height, width)
    } else {
        (width, height)
    };
    Ok(Decoded {
        image,
        format,
        width,
        height,
        orientation,
        animated,
        _permit: permit,
    })
}

/// The decoder of `bytes` in `format` (from `reader`), and whether it is an
/// animated WebP. A PNG's decoder is made with [`MAX_PNG_ANCILLARY_BYTES`] as
/// the `png` crate's allocation limit, set before its header is read
/// (`ImageReader` would set 512 MiB, its default `max_alloc`).
fn open_decoder<'a>(
    format: ImageFormat,
    reader: ImageReader<Cursor<&'a [u8]>>,
    bytes: &'a [u8],
) -> Result<(Box<dyn ImageDecoder + 'a>, bool), image::ImageError> {
    match format {
        ImageFormat::WebP => {
            let d = WebPDecoder::new(Cursor::new(bytes))?;
            let animated = d.has_animation();
            Ok((Box::new(d), animated))
        }
        ImageFormat::Png => {
            let mut limits = Limits::default();
            limits.max_alloc = Some(MAX_PNG_ANCILLARY_BYTES);
            let d = image::codecs::png::PngDecoder::with_limits(Cursor::new(bytes), limits)?;
            Ok((Box::new(d), false))
        }
        _ => Ok((Box::new(reader.into_decoder()?), false)),
    }
}

/// What the block structure of a GIF says about its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GifFrames {
    /// Number of image descriptors.
    pub(crate) count: usize,
    /// Width and height of the largest frame (by area), in pixels.
    pub(crate) largest: (u32, u32),
}

/// Walks a GIF's blocks (the `GIF89a` specification, sections 17–27: header,
/// logical screen descriptor and global colour table, then extensions
/// `0x21`, image descriptors `0x2C` with their data sub-blocks, trailer
/// `0x3B`) without decoding pixels, and returns every frame's size: the
/// decode budget must bound frames, not only the logical screen. A file
/// cut short ends the walk (the decoder reports it); a byte that starts no
/// block is an error.
///
/// # Errors
/// A message for the model when the blocks are malformed.
pub(crate) fn gif_frame_sizes(bytes: &[u8]) -> Result<GifFrames, String> {
    let mut frames = GifFrames {
        count: 0,
        largest: (0, 0),
    };
    let table = |packed: u8| {
        if packed & 0x80 == 0 {
            0
        } else {
            3usize << ((packed & 0x07) + 1)
        }
    };
    let Some(&screen_packed) = bytes.get(10) else {
        return Ok(frames);
    };
    let mut at = 13 + table(screen_packed);
    // Skips data sub-blocks (a length byte, then that many bytes) up to the
    // empty one; returns the position after it.
    let skip_sub_blocks = |mut at: usize| -> Option<usize> {
        loop {
            let len = usize::from(*bytes.get(at)?);
            at += 1;
            if len == 0 {
                return Some(at);
            }
            at += len;
        }
    };
    while let Some(&introducer) = bytes.get(at) {
        match introducer {
            0x3B => break,
            0x21 => match skip_sub_blocks(at + 2) {
                Some(next) => at = next,
                None => break,
            },
            0x2C => {
                let Some(d) = bytes.get(at + 1..at + 10) else {
                    break;
                };
                let width = u32::from(u16::from_le_bytes([d[4], d[5]]));
                let height = u32::from(u16::from_le_bytes([d[6], d[7]]));
                frames.count += 1;
                if u64::from(width) * u64::from(height)
                    > u64::from(frames.largest.0) * u64::from(frames.largest.1)
                {
                    frames.largest = (width, height);
                }
                // Descriptor, local colour table, LZW minimum code size.
                match skip_sub_blocks(at + 10 + table(d[8]) + 1) {
                    Some(next) => at = next,
                    None => break,
                }
            }
            other => {
                return Err(format!(
                    "cannot decode it: a GIF block starts with byte 0x{other:02X} at offset {at} \
                     (expected 0x21, 0x2C or 0x3B)"
                ));
            }
        }
    }
    Ok(frames)
}

/// Encoded image bytes ready to send.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub(crate) bytes: Vec<u8>,
    pub(crate) media_type: &'static str,
    pub(crate) width: u32,
    pub(crate) height: u32,
    /// Set when fitting [`MAX_IMAGE_BASE64`] cost quality, size or
    /// transparency, e.g. "sent as JPEG, quality 75, to fit 5 MB".
    pub(crate) note: Option<String>,
}

/// Whether any pixel of `image` is not fully opaque.
fn has_transparency(image: &DynamicImage) -> bool {
    if !image.color().has_alpha() {
        return false;
    }
    image.pixels().any(|(_, _, p)| p.0[3] < 255)
}

/// `image` over [`FLATTEN_COLOUR`], 8-bit RGB.
fn flattened(image: &DynamicImage) -> RgbImage {
    if !has_transparency(image) {
        return image.to_rgb8();
    }
    let rgba = image.to_rgba8();
    RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let p = rgba.get_pixel(x, y).0;
        let a = u16::from(p[3]);
        let mix = |c: u8, bg: u8| {
            let v = (u16::from(c) * a + u16::from(bg) * (255 - a) + 127) / 255;
            u8::try_from(v).unwrap_or(u8::MAX)
        };
        Rgb([
            mix(p[0], FLATTEN_COLOUR[0]),
            mix(p[1], FLATTEN_COLOUR[1]),
            mix(p[2], FLATTEN_COLOUR[2]),
        ])
    })
}

fn png_bytes(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut png = Vec::new();
    image
        .write_with_encoder(PngEncoder::new_with_quality(
            &mut png,
            CompressionType::Fast,
            FilterType::Adaptive,
        ))
        .map_err(|e| format!("cannot encode the image: {e}"))?;
    Ok(png)
}

fn jpeg_bytes(rgb: &RgbImage, quality: u8) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(rgb)
        .map_err(|e| format!("cannot encode the image: {e}"))?;
    Ok(out)
}

/// `image` encoded for the model, within [`MAX_IMAGE_BYTES`]: PNG (fast
/// compression, transparency kept, 8 bits a channel); JPEG (quality
/// [`JPEG_QUALITY`]) instead when `prefer_jpeg` (the source was a JPEG) or
/// when an opaque PNG is over [`PNG_SOFT_LIMIT`] and the JPEG is smaller.
/// Anything still over [`MAX_IMAGE_BYTES`] is sent as JPEG with the quality
/// stepped down ([`JPEG_STEPS`]), then scaled down by a quarter, until it
/// fits; transparent areas then go white. [`Encoded::note`] says what
/// fitting cost.
///
/// # Errors
/// The encoder's error, as a sentence.
pub(crate) fn encode(image: &DynamicImage, prefer_jpeg: bool) -> Result<Encoded, String> {
    let transparent = has_transparency(image);
    let done = |bytes: Vec<u8>, media_type, image: &DynamicImage, note| Encoded {
        bytes,
        media_type,
        width: image.width(),
        height: image.height(),
        note,
    };
    let mut png_len = None;
    if !prefer_jpeg {
        let eight_bit = if transparent {
            DynamicImage::ImageRgba8(image.to_rgba8())
        } else {
            DynamicImage::ImageRgb8(image.to_rgb8())
        };
        let png = png_bytes(&eight_bit)?;
        if png.len() <= PNG_SOFT_LIMIT || (transparent && png.len() <= MAX_IMAGE_BYTES) {
            return Ok(done(png, "image/png", image, None));
        }
        let rgb = flattened(image);
        let jpeg = jpeg_bytes(&rgb, JPEG_QUALITY)?;
        if png.len() <= MAX_IMAGE_BYTES && png.len() <= jpeg.len() {
            return Ok(done(png, "image/png", image, None));
        }
        if jpeg.len() <= MAX_IMAGE_BYTES {
            return Ok(done(jpeg, "image/jpeg", image, None));
        }
        png_len = Some(png.len());
    }
    let mut current = image.clone();
    for _ in 0..4 {
        let rgb = flattened(&current);
        for quality in JPEG_STEPS {
            let jpeg = jpeg_bytes(&rgb, quality)?;
            if jpeg.len() > MAX_IMAGE_BYTES {
                continue;
            }
            let scaled = current.width() != image.width();
            if quality == JPEG_QUALITY && !scaled && png_len.is_none() {
                return Ok(done(jpeg, "image/jpeg", &current, None));
            }
            let mut note = format!("sent as JPEG, quality {quality}");
            if scaled {
                note.push_str(&format!(
                    ", scaled to {}×{} px",
                    current.width(),
                    current.height()
                ));
            }
            if transparent {
                note.push_str(", transparent areas white");
            }
            note.push_str(&format!(
                ", to fit {} MB of base64 per image (Anthropic's limit, the smallest)",
                MAX_IMAGE_BASE64 / 1_000_000
            ));
            return Ok(done(jpeg, "image/jpeg", &current, Some(note)));
        }
        let (w, h) = (current.width() * 3 / 4, current.height() * 3 / 4);
        current = current.resize(w.max(1), h.max(1), imageops::FilterType::Triangle);
    }
    Err(format!(
        "cannot encode the image within {} MB of base64",
        MAX_IMAGE_BASE64 / 1_000_000
    ))
}

/// One image ready for the model on its own: the bytes to send, their media
/// type, the size sent and the original size (as displayed).
#[derive(Debug)]
pub(crate) struct Fitted {
    /// What is sent (its `note` moved into [`notes`](Self::notes)).
    pub(crate) sent: Encoded,
    pub(crate) original_width: u32,
    pub(crate) original_height: u32,
    pub(crate) format: ImageFormat,
    /// What was done beyond scaling, for the text: EXIF rotation, first
    /// frame of an animation, GIF to PNG, quality lowered to fit.
    pub(crate) notes: Vec<String>,
}

impl Fitted {
    /// Whether the image was scaled down.
    pub(crate) fn resized(&self) -> bool {
        self.sent.width != self.original_width || self.sent.height != self.original_height
    }
}

/// What was done to `decoded` beyond scaling, before encoding.
fn change_notes(decoded: &Decoded) -> Vec<String> {
    let mut notes = Vec::new();
    if decoded.orientation != Orientation::NoTransforms {
        notes.push("turned upright by its EXIF orientation".to_owned());
    }
    if decoded.animated {
        notes.push("animated: first frame only".to_owned());
    }
    if decoded.format == ImageFormat::Gif {
        notes.push("GIF sent as PNG".to_owned());
    } else if decoded.format == ImageFormat::Bmp {
        notes.push("BMP sent as PNG".to_owned());
    }
    notes
}

/// `bytes` as one image for the model. Always decoded first, so a corrupt or
/// truncated file is an error. Sent as the file is when
/// `Decoded::sendable_as_is` and it fits [`MAX_IMAGE_BYTES`] and its
/// pixels' size plus [`MAX_AS_IS_EXTRA_BYTES`] (a file mostly made of
/// metadata is re-encoded, with a note saying so); else
/// oriented, scaled down to a long side of at most [`MAX_LONG_SIDE`] and
/// re-encoded ([`encode`]; JPEG stays JPEG, GIF and BMP become PNG, the
/// first frame of an animation).
///
/// # Errors
/// [`decode`]'s or [`encode`]'s sentence.
pub(crate) fn fit_single(bytes: Vec<u8>) -> Result<Fitted, String> {
    let decoded = decode(&bytes)?;
    let (w, h, format) = (decoded.width, decoded.height, decoded.format);
    let bloated = bytes.len() as u64 > as_is_limit(decoded.pixel_bytes());
    if decoded.sendable_as_is() && bytes.len() <= MAX_IMAGE_BYTES && !bloated {
        drop(decoded);
        return Ok(Fitted {
            sent: Encoded {
                bytes,
                media_type: media_type(format),
                width: w,
                height: h,
                note: None,
            },
            original_width: w,
            original_height: h,
            format,
            notes: Vec::new(),
        });
    }
    let mut notes = change_notes(&decoded);
    if bloated && decoded.sendable_as_is() {
        notes.push(format!(
            "re-encoded without its metadata (the file is {} bytes for {} bytes of pixels)",
            bytes.len(),
            decoded.pixel_bytes()
        ));
    }
    drop(bytes);
    let shown = decoded.fitted(MAX_LONG_SIDE, MAX_LONG_SIDE);
    let mut sent = encode(&shown, format == ImageFormat::Jpeg)?;
    notes.extend(sent.note.take());
    Ok(Fitted {
        sent,
        original_width: w,
        original_height: h,
        format,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_share_waits_until_the_budget_has_room() {
        let budget = Budget::new(100);
        let first = budget.reserve(60);
        let got = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let _second = budget.reserve(60);
                got.store(true, Ordering::SeqCst);
            });
            // 60 + 60 > 100: the second waits while the first is held.
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!got.load(Ordering::SeqCst), "the second share waited");
            drop(first);
            waiter.join().unwrap();
        });
        assert!(got.load(Ordering::SeqCst));
        // A share larger than the whole budget runs alone, capped.
        let big = budget.reserve(1_000);
        assert_eq!(big.bytes, 100);
        drop(big);
        let (a, b) = (budget.reserve(40), budget.reserve(50));
        assert_eq!(
            *budget.used.lock().unwrap(),
            90,
            "small shares side by side"
        );
        drop((a, b));
        assert_eq!(*budget.used.lock().unwrap(), 0);
    }

    /// A 4×4 px PNG of one colour with `chunks` `zTXt` chunks after its
    /// header, each inflating to 15 MiB (about 70 KB of file each).
    fn png_with_text(chunks: usize) -> Vec<u8> {
        use png::text_metadata::EncodableTextChunk as _;
        let mut png = Vec::new();
        DynamicImage::ImageRgb8(RgbImage::from_pixel(4, 4, Rgb([200, 30, 30])))
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .unwrap();
        let mut text = png::text_metadata::ZTXtChunk::new("Comment", "a".repeat(15 << 20));
        text.compress_text().unwrap();
        let mut one = Vec::new();
        text.encode(&mut one).unwrap();
        // The signature (8 bytes) and IHDR (25) first.
        let mut out = png[..33].to_vec();
        for _ in 0..chunks {
            out.extend_from_slice(&one);
        }
        out.extend_from_slice(&png[33..]);
        out
    }

    /// Review 23 (item 7's notes): a 4×4 px PNG carrying megabytes of
    /// `zTXt` was sent to the model as its file, megabytes of base64 (the
    /// CPU the review measured was that, not inflating the text). Now the
    /// text is neither inflated (the decoder holds every byte it keeps
    /// against its 16 MiB limit, and the text would inflate to 600 MiB) nor
    /// sent: the image is re-encoded from its 48 bytes of pixels.
    #[test]
    fn a_tiny_png_with_megabytes_of_text_is_sent_without_them() {
        let bytes = png_with_text(40);
        assert!(
            bytes.len() > 2_000_000 && bytes.len() < MAX_IMAGE_BYTES,
            "a few MB, small enough to have been sent as is: {}",
            bytes.len()
        );
        let inflated = 40 * (15_u64 << 20);
        assert!(inflated > 30 * MAX_PNG_ANCILLARY_BYTES);
        let decoded = decode(&bytes).expect("decoded within the ancillary limit");
        assert_eq!((decoded.width, decoded.height), (4, 4));
        assert_eq!(decoded.pixel_bytes(), 48);
        drop(decoded);

        let fitted = fit_single(bytes.clone()).unwrap();
        assert_eq!(fitted.sent.media_type, "image/png");
        assert_eq!((fitted.sent.width, fitted.sent.height), (4, 4));
        assert!(
            fitted.sent.bytes.len() < 1024,
            "{} bytes sent",
            fitted.sent.bytes.len()
        );
        assert_eq!(
            fitted.notes,
            [format!(
                "re-encoded without its metadata (the file is {} bytes for 48 bytes of pixels)",
                bytes.len()
            )]
        );
        let sent = image::load_from_memory(&fitted.sent.bytes)
            .unwrap()
            .to_rgb8();
        assert!(sent.pixels().all(|p| p.0 == [200, 30, 30]));
        // read_file's fallback for a file the decoder refuses: not as is either.
        assert_eq!(sendable_undecoded(&bytes), None);

        // An ordinary image is still sent as its file, byte for byte.
        let plain = png_with_text(0);
        let fitted = fit_single(plain.clone()).unwrap();
        assert_eq!(fitted.sent.bytes, plain);
        assert!(fitted.notes.is_empty());
        assert_eq!(sendable_undecoded(&plain), Some(("image/png", 4, 4)));
    }

    #[test]
    fn a_noisy_image_is_stepped_down_to_fit() {
        // 1568 × 1568 of noise: ~7 MB as PNG, over the limit as JPEG 85.
        let mut seed = 0x2545_f491_u32;
        let noise = RgbImage::from_fn(MAX_LONG_SIDE, MAX_LONG_SIDE, |_, _| {
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                seed.to_le_bytes()[0]
            };
            Rgb([next(), next(), next()])
        });
        let e = encode(&DynamicImage::ImageRgb8(noise), false).unwrap();
        assert_eq!(e.media_type, "image/jpeg");
        assert!(e.bytes.len() <= MAX_IMAGE_BYTES, "{}", e.bytes.len());
        let note = e.note.expect("the text says what it cost");
        assert!(note.starts_with("sent as JPEG, quality "), "{note}");
        assert!(
            note.ends_with("to fit 5 MB of base64 per image (Anthropic's limit, the smallest)"),
            "{note}"
        );
        assert_eq!((e.width, e.height), (MAX_LONG_SIDE, MAX_LONG_SIDE));
    }
}
