//! `read_images` on real image files written in each test: grid geometry,
//! limits, skipped files, index order, `separate`, and `read_file`'s downsampling.

use std::path::Path;

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use tool_builtins::{ImageLayout, read_file, read_images};
use tool_core::{ToolContext, ToolResult};

fn solid(path: &Path, w: u32, h: u32, colour: [u8; 3]) {
    let img = RgbImage::from_pixel(w, h, Rgb(colour));
    img.save(path).unwrap();
}

pub(super) fn workspace() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = tool_builtins::context(dir.path()).unwrap();
    (dir, ctx)
}

/// A distinct colour per index, far apart so that JPEG or scaling cannot confuse them.
fn colour(i: usize) -> [u8; 3] {
    let i = u8::try_from(i).unwrap();
    [
        i.wrapping_mul(53),
        255 - i.wrapping_mul(29),
        i.wrapping_mul(97),
    ]
}

pub(super) fn decoded(r: &ToolResult, n: usize) -> DynamicImage {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&r.images[n].data)
        .unwrap();
    image::load_from_memory(&bytes).unwrap()
}

pub(super) async fn call(
    ctx: &ToolContext,
    paths: &[&str],
    layout: Option<ImageLayout>,
) -> ToolResult {
    read_images(ctx, paths.iter().map(|p| (*p).to_owned()).collect(), layout).await
}

fn make(dir: &Path, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let name = format!("img{i:02}.png");
            // Mixed aspect ratios: wide, tall and square.
            let (w, h) = match i % 3 {
                0 => (640, 360),
                1 => (300, 900),
                _ => (200, 200),
            };
            solid(&dir.join(&name), w, h, colour(i));
            name
        })
        .collect()
}

#[tokio::test]
async fn grid_sizes_follow_the_layout_table() {
    for (n, w, h) in [
        (2, 1024, 516),
        (5, 1232, 824),
        (9, 1172, 1172),
        (16, 1240, 1240),
    ] {
        let (dir, ctx) = workspace();
        let names = make(dir.path(), n);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let r = call(&ctx, &refs, None).await;
        assert!(r.is_ok(), "{n}: {r:?}");
        assert_eq!(r.images.len(), 1, "{n}: one composed image");
        let img = decoded(&r, 0);
        assert_eq!((img.width(), img.height()), (w, h), "{n} images");
        assert_eq!(r.metadata["width"], w);
        assert_eq!(r.metadata["height"], h);
        assert!(
            r.output
                .starts_with(&format!("Composed {n} images into one {w}×{h} px grid"))
        );
        assert!(r.include_output_only_once, "the grid is shown once");
        assert!(
            r.long_term_memory
                .as_deref()
                .unwrap()
                .contains("1: img00.png"),
            "later turns keep the listing"
        );
    }
}

#[tokio::test]
async fn seventeen_are_refused_with_what_to_do() {
    let (dir, ctx) = workspace();
    make(dir.path(), 17);
    let r = call(&ctx, &["*.png"], None).await;
    let e = r.error.expect("refused");
    assert_eq!(e.kind, tool_core::ErrorKind::InvalidArguments);
    assert!(e.message.contains("17 images"), "{}", e.message);
    assert!(e.message.contains("at most 16"), "{}", e.message);
    assert!(e.message.contains("separate"), "{}", e.message);
    // The same files come back one by one with `separate`.
    let r = call(&ctx, &["*.png"], Some(ImageLayout::Separate)).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.images.len(), 17);
}

#[tokio::test]
async fn a_corrupt_file_is_skipped_and_named() {
    let (dir, ctx) = workspace();
    make(dir.path(), 2);
    std::fs::write(
        dir.path().join("broken.png"),
        b"\x89PNG\r\n\x1a\nthis is not a png",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt.png"), b"plain text").unwrap();
    let r = call(
        &ctx,
        &[
            "img00.png",
            "broken.png",
            "img01.png",
            "notes.txt.png",
            "missing.png",
        ],
        None,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    let img = decoded(&r, 0);
    assert_eq!(
        (img.width(), img.height()),
        (1024, 516),
        "a grid of the two good ones"
    );
    assert!(r.output.contains("\n1: img00.png ("), "{}", r.output);
    assert!(r.output.contains("\n2: img01.png ("), "{}", r.output);
    assert!(r.output.contains("Skipped 3 files:"), "{}", r.output);
    assert!(
        r.output.contains("- broken.png: cannot decode it"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("- notes.txt.png: not a PNG, JPEG"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("- missing.png: file not found"),
        "{}",
        r.output
    );
    assert_eq!(r.metadata["skipped"].as_array().unwrap().len(), 3);

    // Nothing readable: a failure listing why.
    let r = call(&ctx, &["broken.png"], None).await;
    let e = r.error.expect("failed");
    assert!(
        e.message
            .starts_with("No image could be read:\n- broken.png"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn index_numbers_match_the_text() {
    let (dir, ctx) = workspace();
    let names = make(dir.path(), 5);
    // Ask in an order other than the names' so the test sees the order kept.
    let order = [3, 0, 4, 1, 2];
    let refs: Vec<&str> = order.iter().map(|&i| names[i].as_str()).collect();
    let r = call(&ctx, &refs, None).await;
    let img = decoded(&r, 0).to_rgb8();
    let layout = tool_builtins::media::Layout::for_count(5).unwrap();
    for (pos, &file) in order.iter().enumerate() {
        let line = format!("\n{}: {} (", pos + 1, names[file]);
        assert!(r.output.contains(&line), "{line:?} in {}", r.output);
        // The middle of cell `pos` shows that file's colour.
        let (x, y) = layout.cell_origin(u32::try_from(pos).unwrap());
        let px = img.get_pixel(x + layout.cell / 2, y + layout.cell / 2).0;
        let want = colour(file);
        let close = px.iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 2);
        assert!(close, "cell {} shows {px:?}, want {want:?}", pos + 1);
    }
    let meta = r.metadata["images"].as_array().unwrap();
    assert_eq!(meta[0]["path"], "img03.png");
    assert_eq!(meta[0]["width"], 640);
    assert_eq!(meta[0]["height"], 360);
}

#[tokio::test]
async fn formats_and_the_first_gif_frame() {
    let (dir, ctx) = workspace();
    let base = RgbImage::from_pixel(120, 80, Rgb([10, 200, 30]));
    let d = dir.path();
    DynamicImage::ImageRgb8(base.clone())
        .save_with_format(d.join("a.jpg"), ImageFormat::Jpeg)
        .unwrap();
    DynamicImage::ImageRgb8(base.clone())
        .save_with_format(d.join("b.bmp"), ImageFormat::Bmp)
        .unwrap();
    DynamicImage::ImageRgba8(DynamicImage::ImageRgb8(base.clone()).to_rgba8())
        .save_with_format(d.join("c.webp"), ImageFormat::WebP)
        .unwrap();
    DynamicImage::ImageRgba8(DynamicImage::ImageRgb8(base).to_rgba8())
        .save_with_format(d.join("d.gif"), ImageFormat::Gif)
        .unwrap();
    let r = call(&ctx, &["a.jpg", "b.bmp", "c.webp", "d.gif"], None).await;
    assert!(r.is_ok(), "{r:?}");
    for (i, f) in ["jpeg", "bmp", "webp", "gif"].iter().enumerate() {
        assert!(
            r.output.contains(&format!("\n{}: ", i + 1))
                && r.output.contains(&format!("120×80 {f})")),
            "{f}: {}",
            r.output
        );
    }
    assert!(r.metadata["skipped"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn separate_downsamples_each_and_one_image_is_not_a_grid() {
    let (dir, ctx) = workspace();
    solid(&dir.path().join("wide.png"), 4000, 1000, [200, 10, 10]);
    solid(&dir.path().join("small.png"), 300, 200, [10, 10, 200]);
    let r = call(
        &ctx,
        &["wide.png", "small.png"],
        Some(ImageLayout::Separate),
    )
    .await;
    assert_eq!(r.images.len(), 2);
    let wide = decoded(&r, 0);
    assert_eq!((wide.width(), wide.height()), (1568, 392));
    let small = decoded(&r, 1);
    assert_eq!((small.width(), small.height()), (300, 200));
    assert!(r.output.contains("1: wide.png ("), "{}", r.output);
    assert!(
        r.output.contains("4000×1000 png), sent at 1568×392"),
        "{}",
        r.output
    );

    // One path: returned as read_file returns it.
    let one = call(&ctx, &["wide.png"], None).await;
    let by_read_file = read_file(&ctx, "wide.png".into(), 1, None).await.unwrap();
    assert_eq!(one.images.len(), 1);
    assert_eq!(one.images, by_read_file.images, "the same image either way");
    assert!(one.output.starts_with("Image read successfully"));
    assert!(by_read_file.output.starts_with("Image read successfully"));
    let img = decoded(&by_read_file, 0);
    assert_eq!(
        (img.width(), img.height()),
        (1568, 392),
        "read_file downsamples too"
    );
    assert_eq!(by_read_file.metadata["original_width"], 4000);
}

#[tokio::test]
async fn globs_are_expanded_in_the_workspace_and_escapes_refused() {
    let (dir, ctx) = workspace();
    std::fs::create_dir(dir.path().join("shots")).unwrap();
    for (i, n) in ["b.png", "a.png", "c.png"].iter().enumerate() {
        solid(&dir.path().join("shots").join(n), 50, 50, colour(i));
    }
    let r = call(&ctx, &["shots/*.png"], None).await;
    assert!(r.is_ok(), "{r:?}");
    let a = r.output.find("shots/a.png").unwrap();
    let c = r.output.find("shots/c.png").unwrap();
    assert!(a < c, "glob matches in path order: {}", r.output);
    let r = call(&ctx, &["nothing/*.png", "shots/a.png"], None).await;
    assert!(
        r.output
            .contains("- nothing/*.png: no file matches this pattern"),
        "{}",
        r.output
    );

    for outside in ["../x.png", "/etc/hostname"] {
        let r = call(&ctx, &[outside], None).await;
        let e = r.error.expect("refused");
        assert!(
            e.message.contains("outside the workspace"),
            "{outside}: {}",
            e.message
        );
    }
    let r = call(&ctx, &[], None).await;
    assert!(r.error.unwrap().message.contains("`paths` is empty"));
}

#[tokio::test]
async fn a_decompression_bomb_is_refused_before_decoding() {
    let (dir, ctx) = workspace();
    // A BMP header claiming 20 000 × 20 000 px (400 megapixels) and no pixels.
    let mut bmp = Vec::new();
    bmp.extend_from_slice(b"BM");
    bmp.extend_from_slice(&70u32.to_le_bytes());
    bmp.extend_from_slice(&0u32.to_le_bytes());
    bmp.extend_from_slice(&54u32.to_le_bytes());
    bmp.extend_from_slice(&40u32.to_le_bytes());
    bmp.extend_from_slice(&20_000i32.to_le_bytes());
    bmp.extend_from_slice(&20_000i32.to_le_bytes());
    bmp.extend_from_slice(&1u16.to_le_bytes());
    bmp.extend_from_slice(&24u16.to_le_bytes());
    bmp.extend_from_slice(&[0u8; 24]);
    bmp.extend_from_slice(&[0u8; 16]);
    std::fs::write(dir.path().join("bomb.bmp"), &bmp).unwrap();
    solid(&dir.path().join("ok.png"), 10, 10, [1, 2, 3]);
    let r = call(&ctx, &["bomb.bmp", "ok.png"], None).await;
    assert!(r.is_ok(), "{r:?}");
    assert!(r.output.contains("- bomb.bmp: "), "{}", r.output);
    assert!(
        r.output
            .contains("- bomb.bmp: it is 20000×20000 px, more than the 64 megapixels"),
        "{}",
        r.output
    );
    // The one good image alone: not a grid.
    assert!(
        r.output.starts_with("Image read successfully"),
        "{}",
        r.output
    );
}

/// Writes a 9-image grid to `$READ_IMAGES_SAVE` for a person to look at.
#[tokio::test]
async fn save_a_grid_when_asked() {
    let Ok(out) = std::env::var("READ_IMAGES_SAVE") else {
        return;
    };
    let (dir, ctx) = workspace();
    for i in 0..9 {
        let (w, h) = [(800, 450), (400, 900), (600, 600)][i % 3];
        let img = RgbImage::from_fn(w, h, |x, y| {
            let c = colour(i);
            let stripe = u8::from((x / 40 + y / 40) % 2 == 0) * 60;
            Rgb([
                c[0].saturating_add(stripe),
                c[1],
                c[2].saturating_sub(stripe),
            ])
        });
        img.save(dir.path().join(format!("shot{i}.png"))).unwrap();
    }
    let r = call(&ctx, &["shot*.png"], None).await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&r.images[0].data)
        .unwrap();
    std::fs::write(&out, bytes).unwrap();
    println!("{}", r.output);
}
