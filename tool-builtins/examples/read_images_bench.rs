//! Driver of the `read_images` benchmark (`tool-builtins/benches/read_images.sh`).
//!
//! `read_images_bench generate DIR [N]` writes N (default 16) JPEGs of
//! 4000 × 3000 px with noisy content (a gradient plus per-pixel noise, so
//! they do not compress trivially) into DIR; `read_images_bench run DIR`
//! calls `read_images` once on `DIR/*.jpg` (grid layout) and prints the wall
//! time of the call and the size of the composed image. Peak memory is
//! measured around the `run` process by the script (`/usr/bin/time -v`).

use std::path::Path;
use std::time::Instant;

use image::{ImageFormat, Rgb, RgbImage};

fn generate(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir).expect("create the folder");
    for i in 0..n {
        let path = dir.join(format!("photo{i:02}.jpg"));
        if path.exists() {
            continue;
        }
        let mut state = 0x9E37_79B9_7F4A_7C15_u64 ^ (i as u64 + 1);
        let img = RgbImage::from_fn(4000, 3000, |x, y| {
            // xorshift64: cheap noise, different per image.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state & 0x3F) as u8;
            let base = |v: u32, m: u32| u8::try_from((v * 160 / m) % 256).unwrap_or(0);
            Rgb([
                base(x, 4000).saturating_add(noise),
                base(y, 3000).saturating_add(noise / 2),
                base((x + y + 300 * i as u32) % 7000, 7000).saturating_add(noise),
            ])
        });
        img.save_with_format(&path, ImageFormat::Jpeg)
            .expect("write the JPEG");
    }
}

fn run(dir: &Path) {
    let ctx = tool_builtins::context(dir).expect("workspace");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let start = Instant::now();
    let result = rt.block_on(tool_builtins::read_images(
        &ctx,
        vec!["*.jpg".to_owned()],
        None,
    ));
    let elapsed = start.elapsed();
    assert!(result.is_ok(), "{result:?}");
    println!(
        "read_images: {} images -> {}x{} px grid, {} bytes ({}), {:.3} s",
        result.metadata["images"].as_array().map_or(0, Vec::len),
        result.metadata["width"],
        result.metadata["height"],
        result.metadata["bytes"],
        result.images[0].media_type,
        elapsed.as_secs_f64()
    );
}

/// Times one image's decode and scaling on this thread, for profiling.
fn stages(dir: &Path) {
    let bytes = std::fs::read(dir.join("photo00.jpg")).expect("photo00.jpg");
    let t = Instant::now();
    let img = image::load_from_memory(&bytes).expect("decodes");
    let decoded = t.elapsed();
    let t = Instant::now();
    let small = img.thumbnail(300, 300);
    println!(
        "decode {:.3} s, thumbnail {:.3} s ({}x{})",
        decoded.as_secs_f64(),
        t.elapsed().as_secs_f64(),
        small.width(),
        small.height()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("generate"), Some(dir)) => {
            let n = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(16);
            generate(Path::new(dir), n);
        }
        (Some("run"), Some(dir)) => run(Path::new(dir)),
        (Some("stages"), Some(dir)) => stages(Path::new(dir)),
        _ => {
            eprintln!("usage: read_images_bench generate DIR [N] | run DIR");
            std::process::exit(2);
        }
    }
}
