//! The break-it review of `read_images` and `read_file`'s images and PDFs
//! (issue 16): EXIF orientation, bounded decoding, images that fit every
//! provider, `read_file`'s checks, animated GIFs, literal paths with glob
//! characters, escaped names, natural order and duplicates. Every image is
//! written by the test.

use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use tool_builtins::{ImageLayout, read_file};
use tool_core::{ToolContext, ToolResult};

use super::read_images::{call, decoded, workspace};

async fn read(ctx: &ToolContext, path: &str) -> ToolResult {
    read_file(ctx, path.to_owned(), 1, None)
        .await
        .unwrap_or_else(ToolResult::from)
}

fn image_bytes(r: &ToolResult, n: usize) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(&r.images[n].data)
        .unwrap()
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 12)
}

const RED: [u8; 3] = [220, 20, 20];
const BLUE: [u8; 3] = [20, 20, 220];

/// A JPEG of `w` × `h` px, left half red and right half blue, with an EXIF
/// block (APP1, right after the start-of-image marker) whose Orientation
/// tag is `orientation`.
fn jpeg_with_orientation(path: &Path, w: u32, h: u32, orientation: u16) {
    let img = RgbImage::from_fn(w, h, |x, _| Rgb(if x < w / 2 { RED } else { BLUE }));
    let mut jpeg = Vec::new();
    DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut jpeg), ImageFormat::Jpeg)
        .unwrap();
    // TIFF header (big-endian, first IFD at 8), one IFD entry: tag 0x0112
    // Orientation, type SHORT, count 1, the value; no next IFD.
    let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01".to_vec();
    exif.extend_from_slice(&orientation.to_be_bytes());
    exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    let len = u16::try_from(exif.len() + 2).unwrap();
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&exif);
    out.extend_from_slice(&jpeg[2..]);
    std::fs::write(path, out).unwrap();
}

fn rgb_at(img: &DynamicImage, x: u32, y: u32) -> [u8; 3] {
    img.to_rgb8().get_pixel(x, y).0
}

#[tokio::test]
async fn exif_orientation_is_applied_in_every_path() {
    let (dir, ctx) = workspace();
    jpeg_with_orientation(&dir.path().join("phone.jpg"), 400, 200, 6);
    jpeg_with_orientation(&dir.path().join("big.jpg"), 2000, 1000, 6);
    jpeg_with_orientation(&dir.path().join("plain.jpg"), 400, 200, 1);

    // read_file: orientation 6 (turn 90° clockwise): the stored left half
    // (red) is the top of the picture, and it comes back portrait.
    let r = read(&ctx, "phone.jpg").await;
    assert!(r.is_ok(), "{r:?}");
    let img = decoded(&r, 0);
    assert_eq!((img.width(), img.height()), (200, 400), "portrait");
    assert!(
        close(rgb_at(&img, 100, 20), RED),
        "{:?}",
        rgb_at(&img, 100, 20)
    );
    assert!(close(rgb_at(&img, 100, 380), BLUE));
    assert!(
        r.output.contains("turned upright by its EXIF orientation"),
        "{}",
        r.output
    );
    assert_eq!(r.metadata["original_width"], 200);
    assert_eq!(r.metadata["original_height"], 400);
    // Scaled after turning: the long side is the height.
    let r = read(&ctx, "big.jpg").await;
    let img = decoded(&r, 0);
    assert_eq!((img.width(), img.height()), (784, 1568));
    assert!(
        r.output.contains("scaled from 1000×2000 to 784×1568 px"),
        "{}",
        r.output
    );
    // No orientation: the file as it is.
    let r = read(&ctx, "plain.jpg").await;
    assert_eq!(
        image_bytes(&r, 0),
        std::fs::read(dir.path().join("plain.jpg")).unwrap()
    );

    // read_images, grid: the cell holds the portrait image, red on top.
    let r = call(&ctx, &["phone.jpg", "plain.jpg"], None).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.metadata["images"][0]["width"], 200);
    assert_eq!(r.metadata["images"][0]["height"], 400);
    assert!(r.output.contains("\n1: phone.jpg ("), "{}", r.output);
    assert!(
        r.output
            .contains("200×400 jpeg; turned upright by its EXIF orientation)"),
        "{}",
        r.output
    );
    let grid = decoded(&r, 0);
    let layout = tool_builtins::media::Layout::for_count(2).unwrap();
    let (x, y) = layout.cell_origin(0);
    // 200 × 400 in a 500 px cell, not enlarged (factor 1), centred.
    let (left, top) = (x + 150, y + 50);
    assert!(close(rgb_at(&grid, left + 100, top + 60), RED));
    assert!(close(rgb_at(&grid, left + 100, top + 380), BLUE));
    assert_eq!(
        rgb_at(&grid, left - 10, top + 200),
        [48, 48, 48],
        "letterbox beside the portrait"
    );

    // separate: portrait too.
    let r = call(&ctx, &["phone.jpg", "big.jpg"], Some(ImageLayout::Separate)).await;
    assert_eq!(
        (decoded(&r, 0).width(), decoded(&r, 0).height()),
        (200, 400)
    );
    assert_eq!(
        (decoded(&r, 1).width(), decoded(&r, 1).height()),
        (784, 1568)
    );
}

/// A flat 16-bit RGBA PNG of `side` × `side` px, streamed row by row so the
/// test never holds the decoded image.
fn flat_png16(path: &Path, side: u32) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = png::Encoder::new(file, side, side);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Sixteen);
    encoder.set_compression(png::Compression::Balanced);
    let mut writer = encoder.write_header().unwrap();
    let mut stream = writer.stream_writer().unwrap();
    let row: Vec<u8> = [0x12u8, 0x34, 0x80, 0x00, 0x20, 0x00, 0xFF, 0xFF]
        .iter()
        .copied()
        .cycle()
        .take(side as usize * 8)
        .collect();
    for _ in 0..side {
        stream.write_all(&row).unwrap();
    }
    stream.finish().unwrap();
}

#[tokio::test]
async fn decoding_is_bounded_by_bytes_not_pixels() {
    let (dir, ctx) = workspace();
    // 8000 × 8000 px is within the 64 megapixels, but at 8 bytes a pixel it
    // decodes to 488 MiB: refused from its header, before any pixel.
    let huge = dir.path().join("huge16.png");
    flat_png16(&huge, 8000);
    let file_len = std::fs::metadata(&huge).unwrap().len();
    assert!(file_len < 1_000_000, "a small file: {file_len} bytes");
    flat_png16(&dir.path().join("small16.png"), 600);
    let r = call(&ctx, &["huge16.png", "small16.png"], None).await;
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.output.contains(
            "- huge16.png: decoded it takes 489 MiB (8000×8000 px of Rgba16), more than the 256 MiB one image may take"
        ),
        "{}",
        r.output
    );
    // The small 16-bit image still comes back, as 8-bit PNG.
    assert!(
        r.output.starts_with("Image read successfully"),
        "{}",
        r.output
    );
    assert_eq!(r.images[0].media_type, "image/png");
    assert_eq!(decoded(&r, 0).width(), 600);
    // read_file refuses it the same way.
    let r = read(&ctx, "huge16.png").await;
    let e = r.error.expect("refused");
    assert!(
        e.message
            .contains("more than the 256 MiB one image may take"),
        "{}",
        e.message
    );
}

/// `w` × `h` px of noise (xorshift), which compresses to nothing.
fn noise(w: u32, h: u32, seed: u32) -> RgbImage {
    let mut s = seed | 1;
    let mut buf = vec![0u8; (w * h * 3) as usize];
    for chunk in buf.chunks_mut(4) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        let b = s.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
    RgbImage::from_raw(w, h, buf).unwrap()
}

#[tokio::test]
async fn noisy_grids_and_images_fit_five_megabytes_of_base64() {
    let (dir, ctx) = workspace();
    let mut names = Vec::new();
    for i in 0..16 {
        let name = format!("n{i:02}.png");
        noise(300, 300, 7 + i).save(dir.path().join(&name)).unwrap();
        names.push(name);
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = call(&ctx, &refs, None).await;
    assert!(r.is_ok(), "{r:?}");
    // The grid of noise is ~4.6 MB as PNG (6.2 MB of base64): sent as JPEG.
    assert_eq!(r.images[0].media_type, "image/jpeg");
    assert!(
        r.images[0].data.len() <= 5_000_000,
        "{}",
        r.images[0].data.len()
    );
    let grid = decoded(&r, 0);
    assert_eq!((grid.width(), grid.height()), (1240, 1240));

    // One noisy image at the full 1568 px, on its own: quality stepped
    // down, and the text says so; also through read_file.
    noise(1568, 1568, 99)
        .save(dir.path().join("big.png"))
        .unwrap();
    noise(300, 300, 5)
        .save(dir.path().join("small.png"))
        .unwrap();
    let r = call(&ctx, &["big.png", "small.png"], Some(ImageLayout::Separate)).await;
    assert_eq!(r.images[0].media_type, "image/jpeg");
    assert!(
        r.images[0].data.len() <= 5_000_000,
        "{}",
        r.images[0].data.len()
    );
    assert!(
        r.output.contains("1568×1568 png; sent as JPEG, quality "),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("to fit 5 MB of base64 per image"),
        "{}",
        r.output
    );
    let r = read(&ctx, "big.png").await;
    assert!(r.images[0].data.len() <= 5_000_000);
    assert!(
        r.output
            .starts_with("Image read successfully (sent as JPEG, quality "),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn read_file_checks_images_and_pdfs_by_content() {
    let (dir, ctx) = workspace();
    let d = dir.path();
    // Over read_file's old 10 MiB cap, within read_images' 50 MiB: read and scaled.
    noise(2000, 1900, 3).save(d.join("large.png")).unwrap();
    assert!(std::fs::metadata(d.join("large.png")).unwrap().len() > 10 * 1024 * 1024);
    let r = read(&ctx, "large.png").await;
    assert!(r.is_ok(), "{r:?}");
    assert!(r.images[0].data.len() <= 5_000_000);
    assert_eq!(decoded(&r, 0).width(), 1568);

    // A truncated image that would need scaling is an error, as in read_images.
    let big = std::fs::read(d.join("large.png")).unwrap();
    std::fs::write(d.join("cut-big.png"), &big[..big.len() / 2]).unwrap();
    let r = read(&ctx, "cut-big.png").await;
    let e = r.error.expect("refused");
    assert!(
        e.message.contains("cut-big.png: cannot decode it"),
        "{}",
        e.message
    );
    // A small one whose header reads goes as the file holds it, and says so
    // (as read_file sent images before it decoded them).
    let mut png = Vec::new();
    DynamicImage::ImageRgb8(noise(100, 100, 1))
        .write_to(&mut std::io::Cursor::new(&mut png), ImageFormat::Png)
        .unwrap();
    let cut = &png[..png.len() / 2];
    std::fs::write(d.join("cut.png"), cut).unwrap();
    let r = read(&ctx, "cut.png").await;
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.output.contains(
            "sent as the file holds it: the decoder could not check it (cannot decode it"
        ),
        "{}",
        r.output
    );
    assert_eq!(r.metadata["decoded"], false);
    assert_eq!(r.metadata["width"], 100);
    assert_eq!(r.images.len(), 1);
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&r.images[0].data)
            .unwrap(),
        cut
    );

    // PDFs: the header, the end marker, the page count.
    let pdf = |pages: usize, end: &str| {
        let mut s = String::from("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n");
        s.push_str(&format!(
            "2 0 obj << /Type /Pages /Count {pages} >> endobj\n"
        ));
        for i in 0..pages {
            s.push_str(&format!(
                "{} 0 obj << /Type /Page /Parent 2 0 R >> endobj\n",
                i + 3
            ));
        }
        s.push_str("trailer << /Root 1 0 R >>\n");
        s.push_str(end);
        s
    };
    std::fs::write(d.join("doc.pdf"), pdf(2, "%%EOF\n")).unwrap();
    std::fs::write(d.join("long.pdf"), pdf(150, "%%EOF\n")).unwrap();
    std::fs::write(d.join("trunc.pdf"), pdf(2, "")).unwrap();
    std::fs::write(d.join("fake.pdf"), "just some notes\nnot a pdf\n").unwrap();
    std::fs::write(d.join("blob.pdf"), [0u8, 1, 2, 3, 0, 0, 255, 254]).unwrap();

    let r = read(&ctx, "doc.pdf").await;
    assert_eq!(r.output, "PDF read successfully");
    assert_eq!(r.attachments.len(), 1);
    assert_eq!(r.metadata["pages_counted"], 2);
    let r = read(&ctx, "long.pdf").await;
    assert!(r.is_ok());
    assert_eq!(r.metadata["pages_counted"], 150);
    assert!(
        r.output.contains("It has about 150 pages") && r.output.contains("at most 100 pages"),
        "{}",
        r.output
    );
    let r = read(&ctx, "trunc.pdf").await;
    let e = r.error.expect("refused");
    assert!(
        e.message
            .contains("the PDF is incomplete (no `%%EOF` marker"),
        "{}",
        e.message
    );
    assert!(r.attachments.is_empty());
    let r = read(&ctx, "fake.pdf").await;
    assert!(r.is_ok(), "{r:?}");
    assert!(r.attachments.is_empty());
    assert!(r.output.contains("1: just some notes"), "{}", r.output);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("is named .pdf but is not a PDF")),
        "{:?}",
        r.notes
    );
    let r = read(&ctx, "blob.pdf").await;
    let e = r.error.expect("refused");
    assert!(
        e.message.contains("is named .pdf but is not a PDF"),
        "{}",
        e.message
    );
    assert!(e.message.contains("not text either"), "{}", e.message);
}

/// A two-frame GIF: red, then blue.
fn animated_gif(path: &Path) {
    use image::codecs::gif::{GifEncoder, Repeat};
    use image::{Delay, Frame};
    let file = std::fs::File::create(path).unwrap();
    let mut encoder = GifEncoder::new(file);
    encoder.set_repeat(Repeat::Infinite).unwrap();
    for c in [RED, BLUE] {
        let frame = RgbaImage::from_pixel(60, 40, Rgba([c[0], c[1], c[2], 255]));
        encoder
            .encode_frame(Frame::from_parts(
                frame,
                0,
                0,
                Delay::from_numer_denom_ms(100, 1),
            ))
            .unwrap();
    }
}

#[tokio::test]
async fn animated_gifs_give_their_first_frame_as_png() {
    let (dir, ctx) = workspace();
    animated_gif(&dir.path().join("anim.gif"));
    RgbImage::from_pixel(60, 40, Rgb(BLUE))
        .save(dir.path().join("still.png"))
        .unwrap();
    let r = read(&ctx, "anim.gif").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.images[0].media_type, "image/png");
    let img = decoded(&r, 0);
    assert!(close(rgb_at(&img, 30, 20), RED), "the first frame");
    assert!(
        r.output
            .contains("animated: first frame only; GIF sent as PNG"),
        "{}",
        r.output
    );
    // `separate` the same; a frame-by-frame GIF would still hold frame 2.
    let r = call(
        &ctx,
        &["anim.gif", "still.png"],
        Some(ImageLayout::Separate),
    )
    .await;
    assert_eq!(r.images[0].media_type, "image/png");
    assert!(image::load_from_memory_with_format(&image_bytes(&r, 0), ImageFormat::Png).is_ok());
    // The grid: frame 1 in its cell, and the text says it was animated.
    let r = call(&ctx, &["anim.gif", "still.png"], None).await;
    assert!(
        r.output.contains("60×40 gif; animated: first frame only)"),
        "{}",
        r.output
    );
    let grid = decoded(&r, 0);
    let layout = tool_builtins::media::Layout::for_count(2).unwrap();
    let (x, y) = layout.cell_origin(0);
    assert!(close(rgb_at(&grid, x + 250, y + 250), RED));
}

#[tokio::test]
async fn paths_names_order_and_duplicates() {
    let (dir, ctx) = workspace();
    let d = dir.path();
    std::fs::create_dir_all(d.join("odd")).unwrap();
    std::fs::create_dir_all(d.join("app/[id]")).unwrap();
    RgbImage::from_pixel(20, 20, Rgb(RED))
        .save(d.join("odd/[brackets].png"))
        .unwrap();
    RgbImage::from_pixel(20, 20, Rgb(BLUE))
        .save(d.join("app/[id]/page.png"))
        .unwrap();
    // An existing literal path wins over reading it as a pattern.
    let r = call(&ctx, &["odd/[brackets].png", "app/[id]/page.png"], None).await;
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.output.contains("\n1: odd/[brackets].png ("),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("\n2: app/[id]/page.png ("),
        "{}",
        r.output
    );
    assert!(r.metadata["skipped"].as_array().unwrap().is_empty());
    // A pattern that is not a file still is one.
    let r = call(&ctx, &["odd/*.png", "app/*/page.png"], None).await;
    assert_eq!(
        r.metadata["images"].as_array().unwrap().len(),
        2,
        "{}",
        r.output
    );

    // A name holding a newline cannot forge an index line.
    std::fs::create_dir(d.join("shots")).unwrap();
    let forged = "a\n2: shots-secret.png (1 bytes, 9999×9999 png).png";
    RgbImage::from_pixel(10, 10, Rgb(RED))
        .save(d.join("shots").join(forged))
        .unwrap();
    RgbImage::from_pixel(10, 10, Rgb(BLUE))
        .save(d.join("shots/b.png"))
        .unwrap();
    let r = call(&ctx, &["shots/*.png"], None).await;
    let index_lines: Vec<&str> = r
        .output
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(index_lines.len(), 2, "{}", r.output);
    assert!(
        r.output
            .contains("\n1: \"shots/a\\n2: shots-secret.png (1 bytes, 9999×9999 png).png\" (")
            || r.output
                .contains("\n2: \"shots/a\\n2: shots-secret.png (1 bytes, 9999×9999 png).png\" ("),
        "{}",
        r.output
    );

    // Natural order: b1, b2, … b10, not b1, b10, b11, b2.
    std::fs::create_dir(d.join("seq")).unwrap();
    for i in 1..=12 {
        RgbImage::from_pixel(10, 10, Rgb(RED))
            .save(d.join(format!("seq/b{i}.png")))
            .unwrap();
    }
    let r = call(&ctx, &["seq/*.png"], None).await;
    let order: Vec<String> = r.metadata["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap().to_owned())
        .collect();
    let want: Vec<String> = (1..=12).map(|i| format!("seq/b{i}.png")).collect();
    assert_eq!(order, want);

    // Duplicates are read once, and the text says how many.
    let r = call(
        &ctx,
        &["seq/b1.png", "./seq/b1.png", "seq/b1.png", "seq/b?.png"],
        None,
    )
    .await;
    assert_eq!(
        r.metadata["images"].as_array().unwrap().len(),
        9,
        "{}",
        r.output
    );
    assert!(
        r.output.contains("\n3 duplicate paths (the same file named again, or matched by two patterns) given once."),
        "{}",
        r.output
    );
}

/// A 35-byte GIF: a `screen`×`screen` logical screen, one `w`×`h` frame.
fn gif_with_frame(path: &Path, screen: u16, w: u16, h: u16) {
    let mut b = b"GIF89a".to_vec();
    b.extend(screen.to_le_bytes());
    b.extend(screen.to_le_bytes());
    b.extend([0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF]);
    b.push(0x2C);
    for v in [0u16, 0, w, h] {
        b.extend(v.to_le_bytes());
    }
    b.push(0);
    b.extend([0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]);
    assert_eq!(b.len(), 35);
    std::fs::write(path, b).unwrap();
}

/// Review 23 F3: a GIF's frames are bounded before decoding, not only its
/// logical screen: a 4×4 screen with a 65 535×65 535 frame (4 GiB decoded,
/// 94 s before the fix) and one with a 20 000×20 000 frame are refused
/// from their descriptors; a 1×1 frame in the same file layout decodes.
#[tokio::test]
async fn a_gif_frame_larger_than_its_screen_is_refused_before_decoding() {
    let (dir, ctx) = workspace();
    gif_with_frame(&dir.path().join("big.gif"), 4, 65_535, 65_535);
    gif_with_frame(&dir.path().join("g20k.gif"), 4, 20_000, 20_000);
    gif_with_frame(&dir.path().join("ok.gif"), 4, 1, 1);
    let r = call(&ctx, &["big.gif", "g20k.gif", "ok.gif"], None).await;
    assert!(r.is_ok(), "{r:?}");
    for line in [
        "- big.gif: a frame of it is 65535×65535 px, more than the 64 megapixels one image may have",
        "- g20k.gif: a frame of it is 20000×20000 px, more than the 64 megapixels one image may have",
    ] {
        assert!(r.output.contains(line), "{line}\n{}", r.output);
    }
    assert_eq!(r.images.len(), 1, "{}", r.output);
    let r = read(&ctx, "big.gif").await;
    let e = r.error.expect("refused");
    assert!(
        e.message.contains("a frame of it is 65535×65535 px"),
        "{}",
        e.message
    );
}
