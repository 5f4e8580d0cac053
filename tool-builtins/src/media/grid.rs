//! The grid: layout by image count, composition, the index badges and
//! optional captions; [`build_image_grid`] is the entry for other tools.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use image::{DynamicImage, GenericImageView as _, RgbImage, Rgba, RgbaImage, imageops};
use tool_core::{ErrorKind, ToolError};

/// Most images one grid holds.
pub const MAX_GRID_IMAGES: usize = 16;

/// Gap around and between cells, in pixels.
pub const GAP: u32 = 8;

/// Colour of the gaps (white).
const GAP_COLOUR: Rgba<u8> = Rgba([255, 255, 255, 255]);
/// Colour of a cell's letterbox, the part the image does not cover (dark grey).
const CELL_COLOUR: Rgba<u8> = Rgba([48, 48, 48, 255]);
/// The checkerboard under transparent images: light grey and white squares
/// of [`CHECKER`] px, so dark art on a transparent background stays visible.
const CHECKER_COLOURS: [Rgba<u8>; 2] = [Rgba([255, 255, 255, 255]), Rgba([214, 214, 214, 255])];
const CHECKER: u32 = 8;
/// The index badge: black box, white digits.
const BADGE_COLOUR: Rgba<u8> = Rgba([0, 0, 0, 255]);
const DIGIT_COLOUR: [u8; 3] = [255, 255, 255];

/// The digits 0–9 of DejaVu Sans Mono Bold (open licence: `assets/fonts/LICENSE`).
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono-Bold-digits.ttf");
/// Latin letters, digits and punctuation (U+0020–007E, U+00A0–017F, `…`) of
/// DejaVu Sans Condensed, for captions (same licence, 21 KB).
const CAPTION_FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansCondensed-latin.ttf");
/// Colour of caption text (near black, on the white caption band).
const CAPTION_COLOUR: [u8; 3] = [20, 20, 20];
/// Longest caption kept, in characters (a longer one is cut with `…`; the
/// drawing cuts it again to the cell's width).
pub const MAX_CAPTION_CHARS: usize = 200;

/// A grid's shape: columns, rows, the side of its square cells and the
/// height of the caption band under each cell (0 without captions), in
/// pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Columns.
    pub cols: u32,
    /// Rows.
    pub rows: u32,
    /// Side of each square cell, in pixels.
    pub cell: u32,
    /// Height of the caption band under each cell, in pixels (0: none).
    pub caption: u32,
}

impl Layout {
    /// The layout for `count` images (2–[`MAX_GRID_IMAGES`]), `None` outside
    /// that range: 2 → 2 columns of 500 px; 3–4 → 2 × 450; 5–6 → 3 × 400;
    /// 7–9 → 3 × 380; 10–12 → 4 × 320; 13–16 → 4 × 300. Rows are as many as
    /// the count needs.
    pub fn for_count(count: usize) -> Option<Self> {
        let (cols, cell) = match count {
            2 => (2, 500),
            3..=4 => (2, 450),
            5..=6 => (3, 400),
            7..=9 => (3, 380),
            10..=12 => (4, 320),
            13..=16 => (4, 300),
            _ => return None,
        };
        let count = u32::try_from(count).ok()?;
        Some(Self {
            cols,
            rows: count.div_ceil(cols),
            cell,
            caption: 0,
        })
    }

    /// The same layout with a caption band under every cell: a twelfth of
    /// the cell, at least 24 px (500 px cells: 41 px; 300 px: 25 px).
    #[must_use]
    pub fn with_captions(self) -> Self {
        Self {
            caption: (self.cell / 12).max(24),
            ..self
        }
    }

    /// Canvas width: `cols × cell + (cols + 1) × GAP`.
    pub fn width(self) -> u32 {
        self.cols * self.cell + (self.cols + 1) * GAP
    }

    /// Canvas height: `rows × (cell + caption) + (rows + 1) × GAP`.
    pub fn height(self) -> u32 {
        self.rows * (self.cell + self.caption) + (self.rows + 1) * GAP
    }

    /// Top-left corner of cell `index` (0-based, row by row); its caption
    /// band starts `cell` px lower.
    pub fn cell_origin(self, index: u32) -> (u32, u32) {
        let (col, row) = (index % self.cols, index / self.cols);
        (
            GAP + col * (self.cell + GAP),
            GAP + row * (self.cell + self.caption + GAP),
        )
    }
}

/// `image` (already fitted to a cell of side `cell`) enlarged by the largest
/// whole factor that still fits, with nearest-neighbour sampling, when that
/// factor is 2 or more: a 16 × 16 icon fills a 300 px cell as 288 × 288 sharp
/// squares instead of a speck, and stays pixel-exact (the text gives its real
/// size). Larger images are returned as they are: enlarging by a fraction
/// would blur them and add nothing the model can read.
pub(crate) fn enlarge(image: DynamicImage, cell: u32) -> DynamicImage {
    let long = image.width().max(image.height()).max(1);
    let factor = cell / long;
    if factor < 2 {
        return image;
    }
    image.resize_exact(
        image.width() * factor,
        image.height() * factor,
        imageops::FilterType::Nearest,
    )
}

/// A composed grid: the picture and its layout.
#[derive(Debug, Clone)]
pub struct Grid {
    /// The picture, opaque RGB, [`Layout::width`] × [`Layout::height`] px.
    pub image: RgbImage,
    /// Its shape (cell `n`'s corner: [`Layout::cell_origin`]).
    pub layout: Layout,
}

/// Composes 2 to [`MAX_GRID_IMAGES`] images into one numbered grid, for any
/// tool that shows several pictures at once (`read_images` uses it; search
/// tools can caption each cell with a title).
///
/// The layout follows the count ([`Layout::for_count`]: 2 → 2 columns of
/// 500 px cells … 13–16 → 4 columns of 300 px). Each image is scaled down
/// to fit its square cell (aspect ratio kept, never cropped; a tiny one is
/// enlarged by a whole factor with sharp pixels), centred on dark grey
/// (transparent parts on a light checkerboard), and numbered 1, 2, … in
/// white on black in its top-left corner. With `captions`, a white band
/// under each cell carries its caption in one line of dark text, cut with
/// `…` to the cell's width (and to [`MAX_CAPTION_CHARS`] first); characters
/// outside the bundled Latin font are drawn as `?`; an empty caption
/// leaves its band blank. Without captions (`None`) only the numbers are
/// drawn, the choice for local files whose names tell a model nothing.
///
/// Memory: the canvas is at most 1 320 × 1 240 px without captions
/// (1 320 × 1 408 with), about 5 MB of RGB; the caller bounds the images it
/// decodes (`read_images` does, see the [module docs](super)).
///
/// # Errors
/// `invalid_arguments` when there are fewer than 2 or more than 16 images,
/// or `captions` does not have one entry per image.
///
/// ```
/// use tool_builtins::image::{DynamicImage, RgbImage, Rgb};
/// use tool_builtins::media::grid::build_image_grid;
///
/// let red = DynamicImage::ImageRgb8(RgbImage::from_pixel(800, 600, Rgb([255, 0, 0])));
/// let blue = DynamicImage::ImageRgb8(RgbImage::from_pixel(600, 800, Rgb([0, 0, 255])));
/// let grid = build_image_grid(&[red, blue], Some(&["Sunset", "Sea"])).unwrap();
/// assert_eq!((grid.layout.cols, grid.layout.cell, grid.layout.caption), (2, 500, 41));
/// assert_eq!(grid.image.dimensions(), (1024, 557));
/// assert!(build_image_grid(&[], None).is_err());
/// ```
pub fn build_image_grid(
    images: &[DynamicImage],
    captions: Option<&[&str]>,
) -> Result<Grid, ToolError> {
    let invalid = |m: String| ToolError::new(ErrorKind::InvalidArguments, m);
    let Some(mut layout) = Layout::for_count(images.len()) else {
        return Err(invalid(format!(
            "A grid holds 2 to {MAX_GRID_IMAGES} images; got {}. Show one image on its own, \
             or split the images into groups of at most {MAX_GRID_IMAGES}.",
            images.len()
        )));
    };
    if let Some(c) = captions {
        if c.len() != images.len() {
            return Err(invalid(format!(
                "{} captions for {} images: give one caption per image (an empty one leaves \
                 its cell without).",
                c.len(),
                images.len()
            )));
        }
        layout = layout.with_captions();
    }
    let fitted: Vec<DynamicImage> = images
        .iter()
        .map(|im| {
            let im = if im.width() > layout.cell || im.height() > layout.cell {
                im.resize(layout.cell, layout.cell, imageops::FilterType::Triangle)
            } else {
                im.clone()
            };
            enlarge(im, layout.cell)
        })
        .collect();
    let mut image = compose(layout, &fitted);
    if let Some(c) = captions {
        draw_captions(&mut image, layout, c);
    }
    Ok(Grid { image, layout })
}

/// Composes `images` (already fitted to the cell) into one opaque canvas of
/// `layout`, each centred in its cell and numbered 1, 2, … in its top-left
/// corner; transparent parts of an image show a light checkerboard.
pub(crate) fn compose(layout: Layout, images: &[DynamicImage]) -> RgbImage {
    let mut canvas = RgbaImage::from_pixel(layout.width(), layout.height(), GAP_COLOUR);
    for (i, image) in images.iter().enumerate() {
        let Ok(index) = u32::try_from(i) else { break };
        let (x, y) = layout.cell_origin(index);
        for py in y..y + layout.cell {
            for px in x..x + layout.cell {
                canvas.put_pixel(px, py, CELL_COLOUR);
            }
        }
        let dx = (layout.cell.saturating_sub(image.width())) / 2;
        let dy = (layout.cell.saturating_sub(image.height())) / 2;
        if image.color().has_alpha() && image.pixels().any(|(_, _, p)| p.0[3] < 255) {
            let (w, h) = (
                image.width().min(layout.cell),
                image.height().min(layout.cell),
            );
            for py in 0..h {
                for px in 0..w {
                    let square = ((px / CHECKER) + (py / CHECKER)) % 2;
                    canvas.put_pixel(x + dx + px, y + dy + py, CHECKER_COLOURS[square as usize]);
                }
            }
        }
        imageops::overlay(
            &mut canvas,
            &image.to_rgba8(),
            i64::from(x + dx),
            i64::from(y + dy),
        );
    }
    let mut canvas = DynamicImage::ImageRgba8(canvas).to_rgb8();
    for index in 0..images.len() {
        let Ok(index) = u32::try_from(index) else {
            break;
        };
        let (x, y) = layout.cell_origin(index);
        draw_badge(&mut canvas, x, y, layout.cell, index + 1);
    }
    canvas
}

/// The colour at `(x, y)` of a composed canvas, for tests.
#[cfg(test)]
fn at(canvas: &RgbImage, x: u32, y: u32) -> [u8; 4] {
    let image::Rgb([r, g, b]) = *canvas.get_pixel(x, y);
    [r, g, b, 255]
}

fn font() -> Option<&'static FontRef<'static>> {
    static FONT_REF: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT_REF
        .get_or_init(|| FontRef::try_from_slice(FONT).ok())
        .as_ref()
}

fn caption_font() -> Option<&'static FontRef<'static>> {
    static FONT_REF: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT_REF
        .get_or_init(|| FontRef::try_from_slice(CAPTION_FONT).ok())
        .as_ref()
}

/// `caption` as drawn in `width` px at `scale`: one line (line breaks and
/// tabs become spaces), characters the font lacks as `?`, cut with `…`
/// when wider.
fn fitted_caption(font: &FontRef<'_>, scale: PxScale, caption: &str, width: f32) -> String {
    let scaled = font.as_scaled(scale);
    let clean: String = caption
        .chars()
        .take(MAX_CAPTION_CHARS)
        .map(|c| match c {
            c if c.is_whitespace() => ' ',
            c if font.glyph_id(c).0 == 0 => '?',
            c => c,
        })
        .collect();
    let clean = clean.trim();
    let advance = |s: &str| -> f32 { s.chars().map(|c| scaled.h_advance(font.glyph_id(c))).sum() };
    if advance(clean) <= width {
        return clean.to_owned();
    }
    let ellipsis = advance("…");
    let mut out = String::new();
    let mut used = 0.0;
    for c in clean.chars() {
        let w = scaled.h_advance(font.glyph_id(c));
        if used + w + ellipsis > width {
            break;
        }
        used += w;
        out.push(c);
    }
    format!("{}…", out.trim_end())
}

/// Draws each caption centred in the band under its cell.
fn draw_captions(canvas: &mut RgbImage, layout: Layout, captions: &[&str]) {
    let Some(font) = caption_font() else { return };
    #[allow(
        clippy::cast_precision_loss,
        reason = "caption bands are at most 41 px and cells 500 px, exact in f32"
    )]
    let (band, cell) = (layout.caption as f32, layout.cell as f32);
    let size = (band * 0.7).round();
    let scale = PxScale::from(size);
    let scaled = font.as_scaled(scale);
    for (i, caption) in captions.iter().enumerate() {
        let Ok(index) = u32::try_from(i) else { break };
        let text = fitted_caption(font, scale, caption, cell - 8.0);
        if text.is_empty() {
            continue;
        }
        let (x, y) = layout.cell_origin(index);
        let width: f32 = text
            .chars()
            .map(|c| scaled.h_advance(font.glyph_id(c)))
            .sum();
        #[allow(
            clippy::cast_precision_loss,
            reason = "canvas coordinates are at most a few thousand px, exact in f32"
        )]
        let (left, top) = (x as f32 + (cell - width) / 2.0, (y + layout.cell) as f32);
        let baseline = top + (band - (scaled.ascent() - scaled.descent())) / 2.0 + scaled.ascent();
        draw_glyphs(canvas, font, scale, &text, left, baseline, CAPTION_COLOUR);
    }
}

/// Draws `text` with `font` at `scale` from `(x, baseline)` in `colour`,
/// blended by coverage over what is there; pixels off the canvas are skipped.
fn draw_glyphs(
    canvas: &mut RgbImage,
    font: &FontRef<'_>,
    scale: PxScale,
    text: &str,
    x: f32,
    baseline: f32,
    colour: [u8; 3],
) {
    let scaled = font.as_scaled(scale);
    let mut caret = x;
    for c in text.chars() {
        let id = font.glyph_id(c);
        let glyph = id.with_scale_and_position(scale, point(caret, baseline));
        caret += scaled.h_advance(id);
        let Some(outline) = font.outline_glyph(glyph) else {
            continue;
        };
        let bounds = outline.px_bounds();
        outline.draw(|gx, gy, coverage| {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "glyph bounds are small pixel values"
            )]
            let (px, py) = (
                bounds.min.x as i64 + i64::from(gx),
                bounds.min.y as i64 + i64::from(gy),
            );
            let (Ok(px), Ok(py)) = (u32::try_from(px), u32::try_from(py)) else {
                return;
            };
            if px >= canvas.width() || py >= canvas.height() {
                return;
            }
            let under = canvas.get_pixel(px, py).0;
            let mix = |fg: u8, bg: u8| {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a blend of two bytes stays in 0..=255"
                )]
                let v = (f32::from(fg) * coverage + f32::from(bg) * (1.0 - coverage)).round() as u8;
                v
            };
            canvas.put_pixel(
                px,
                py,
                image::Rgb([
                    mix(colour[0], under[0]),
                    mix(colour[1], under[1]),
                    mix(colour[2], under[2]),
                ]),
            );
        });
    }
}

/// Draws `number` in white on a black box at the cell's top-left corner.
/// The digit height is a twelfth of the cell, at least 20 px.
fn draw_badge(canvas: &mut RgbImage, cell_x: u32, cell_y: u32, cell: u32, number: u32) {
    let Some(font) = font() else { return };
    #[allow(
        clippy::cast_precision_loss,
        reason = "cell sides are at most 500 px, exact in f32"
    )]
    let size = (cell as f32 / 12.0).max(20.0);
    let scale = PxScale::from(size);
    let scaled = font.as_scaled(scale);
    let text = number.to_string();
    let width: f32 = text
        .chars()
        .map(|c| scaled.h_advance(font.glyph_id(c)))
        .sum();
    let pad = (size / 4.0).round();
    let inset = 4.0;
    let box_w = width + 2.0 * pad;
    let box_h = scaled.ascent() - scaled.descent() + pad;
    #[allow(
        clippy::cast_precision_loss,
        reason = "canvas coordinates are at most a few thousand px, exact in f32"
    )]
    let (x0, y0) = (cell_x as f32 + inset, cell_y as f32 + inset);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "box coordinates are small positive pixel values"
    )]
    {
        let image::Rgba([r, g, b, _]) = BADGE_COLOUR;
        for py in y0 as u32..(y0 + box_h) as u32 {
            for px in x0 as u32..(x0 + box_w) as u32 {
                if px < canvas.width() && py < canvas.height() {
                    canvas.put_pixel(px, py, image::Rgb([r, g, b]));
                }
            }
        }
    }
    let baseline = y0 + pad / 2.0 + scaled.ascent();
    draw_glyphs(canvas, font, scale, &text, x0 + pad, baseline, DIGIT_COLOUR);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_table_and_canvas_size() {
        let cases = [
            (2, 2, 1, 500, 1024, 516),
            (3, 2, 2, 450, 924, 924),
            (4, 2, 2, 450, 924, 924),
            (5, 3, 2, 400, 1232, 824),
            (6, 3, 2, 400, 1232, 824),
            (7, 3, 3, 380, 1172, 1172),
            (9, 3, 3, 380, 1172, 1172),
            (10, 4, 3, 320, 1320, 992),
            (12, 4, 3, 320, 1320, 992),
            (13, 4, 4, 300, 1240, 1240),
            (16, 4, 4, 300, 1240, 1240),
        ];
        for (n, cols, rows, cell, w, h) in cases {
            let l = Layout::for_count(n).unwrap();
            assert_eq!((l.cols, l.rows, l.cell), (cols, rows, cell), "{n}");
            assert_eq!((l.width(), l.height()), (w, h), "{n}");
        }
        assert_eq!(Layout::for_count(1), None);
        assert_eq!(Layout::for_count(17), None);
        let l = Layout::for_count(5).unwrap();
        assert_eq!(l.cell_origin(0), (8, 8));
        assert_eq!(l.cell_origin(2), (8 + 2 * 408, 8));
        assert_eq!(l.cell_origin(3), (8, 416));
    }

    #[test]
    fn the_font_loads_and_has_every_digit() {
        let font = font().expect("the bundled font parses");
        for c in '0'..='9' {
            assert_ne!(font.glyph_id(c).0, 0, "digit {c} is in the subset");
        }
    }

    #[test]
    fn badges_are_drawn_in_the_top_left_corner() {
        let layout = Layout::for_count(2).unwrap();
        let red = DynamicImage::ImageRgba8(RgbaImage::from_pixel(500, 500, Rgba([255, 0, 0, 255])));
        let canvas = compose(layout, &[red.clone(), red]);
        // Gap, then the badge box, then red image pixels away from the corner.
        assert_eq!(at(&canvas, 0, 0), GAP_COLOUR.0);
        assert_eq!(at(&canvas, 8 + 5, 8 + 5), BADGE_COLOUR.0);
        assert_eq!(at(&canvas, 8 + 250, 8 + 250), [255, 0, 0, 255]);
        // Some white digit pixels inside the first badge.
        let white = (8..60)
            .flat_map(|y| (8..60).map(move |x| (x, y)))
            .filter(|&(x, y)| at(&canvas, x, y) == [255, 255, 255, 255])
            .count();
        assert!(white > 20, "digit pixels drawn: {white}");
    }
}

#[cfg(test)]
mod more_tests {
    use super::*;

    #[test]
    fn transparent_images_sit_on_a_checkerboard_and_tiny_ones_are_enlarged() {
        let layout = Layout::for_count(2).unwrap();
        // A black square on a transparent 20 × 20 image.
        let logo = RgbaImage::from_fn(20, 20, |x, y| {
            if (5..15).contains(&x) && (5..15).contains(&y) {
                Rgba([0, 0, 0, 255])
            } else {
                Rgba([0, 0, 0, 0])
            }
        });
        let big = enlarge(DynamicImage::ImageRgba8(logo), layout.cell);
        assert_eq!((big.width(), big.height()), (500, 500), "factor 25");
        let canvas = compose(layout, &[big.clone(), big]);
        // Transparent corner: the checkerboard's two colours, not the dark letterbox.
        let (x, y) = layout.cell_origin(1);
        assert_eq!(at(&canvas, x + 100, y + 2), CHECKER_COLOURS[0].0);
        assert_eq!(at(&canvas, x + 100 + CHECKER, y + 2), CHECKER_COLOURS[1].0);
        // The opaque black square, enlarged 25 times with sharp edges.
        assert_eq!(at(&canvas, x + 5 * 25, y + 5 * 25), [0, 0, 0, 255]);
        assert_eq!(
            at(&canvas, x + 15 * 25 - 1, y + 15 * 25 - 1),
            [0, 0, 0, 255]
        );
        assert_ne!(at(&canvas, x + 15 * 25, y + 15 * 25), [0, 0, 0, 255]);
        // An image too large to double is left as it is.
        let photo = DynamicImage::ImageRgb8(RgbImage::new(300, 200));
        assert_eq!(enlarge(photo, 500).width(), 300);
    }
}

#[cfg(test)]
mod caption_tests {
    use super::*;

    /// Dark pixels (caption text) in `canvas` within the box.
    fn dark(canvas: &RgbImage, (x0, y0): (u32, u32), (w, h): (u32, u32)) -> usize {
        (y0..y0 + h)
            .flat_map(|y| (x0..x0 + w).map(move |x| (x, y)))
            .filter(|&(x, y)| canvas.get_pixel(x, y).0.iter().all(|&c| c < 100))
            .count()
    }

    fn solid(w: u32, h: u32, rgb: [u8; 3]) -> DynamicImage {
        DynamicImage::ImageRgb8(RgbImage::from_pixel(w, h, image::Rgb(rgb)))
    }

    #[test]
    fn captions_sit_in_a_band_under_each_cell_and_images_are_fitted() {
        let images: Vec<DynamicImage> = (0..5u8)
            .map(|i| solid(1200, 600, [200, 40 * i, 0]))
            .collect();
        let plain = build_image_grid(&images, None).unwrap();
        assert_eq!(plain.layout, Layout::for_count(5).unwrap());
        assert_eq!(plain.image.dimensions(), (1232, 824));
        let captions = ["First", "", "Third photo", "x", &"wide ".repeat(60)];
        let grid = build_image_grid(&images, Some(&captions)).unwrap();
        let l = grid.layout;
        assert_eq!((l.cols, l.rows, l.cell, l.caption), (3, 2, 400, 33));
        assert_eq!(grid.image.dimensions(), (1232, 8 + 2 * (400 + 33 + 8)));
        assert_eq!(l.cell_origin(3), (8, 8 + 400 + 33 + 8));
        let band = |i: u32| {
            let (x, y) = l.cell_origin(i);
            dark(&grid.image, (x, y + l.cell), (l.cell, l.caption))
        };
        assert!(band(0) > 30, "caption 1 drawn: {}", band(0));
        assert_eq!(band(1), 0, "an empty caption leaves its band blank");
        assert!(band(2) > band(0), "a longer caption has more ink");
        // The over-long caption is cut to the cell: no ink in the gap beside it.
        let (x, y) = l.cell_origin(4);
        assert!(band(4) > band(2));
        assert_eq!(
            dark(&grid.image, (x + l.cell, y + l.cell), (GAP, l.caption)),
            0
        );
        // The image is fitted: 1200 × 600 → 400 × 200, centred in the cell.
        let (x, y) = l.cell_origin(2);
        assert_eq!(grid.image.get_pixel(x + 200, y + 200).0, [200, 80, 0]);
        assert_eq!(grid.image.get_pixel(x + 200, y + 60).0, [48, 48, 48]);
        // Without captions the same cells are numbered but nothing is under them.
        let (x, y) = plain.layout.cell_origin(3);
        assert_eq!(plain.image.get_pixel(x + 5, y + 5).0, [0, 0, 0]);
        assert_eq!(plain.image.get_pixel(x + 200, y - 4).0, [255, 255, 255]);
    }

    #[test]
    fn captions_are_one_line_cut_with_an_ellipsis_and_unknown_letters_show_as_question_marks() {
        let font = caption_font().unwrap();
        let scale = PxScale::from(20.0);
        assert_eq!(
            fitted_caption(font, scale, " Café\nnoir ", 400.0),
            "Café noir"
        );
        assert_eq!(fitted_caption(font, scale, "猫 cat", 400.0), "? cat");
        let cut = fitted_caption(font, scale, &"abc ".repeat(100), 120.0);
        assert!(cut.ends_with('…') && cut.chars().count() < 40, "{cut}");
    }

    #[test]
    fn bad_grid_requests_are_refused_with_the_rule() {
        let one = [solid(10, 10, [0, 0, 0])];
        let err = build_image_grid(&one, None).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArguments);
        assert!(err.message.contains("2 to 16 images; got 1"), "{err}");
        let many: Vec<DynamicImage> = (0..17).map(|_| solid(4, 4, [0, 0, 0])).collect();
        assert!(build_image_grid(&many, None).is_err());
        let two = [solid(4, 4, [0, 0, 0]), solid(4, 4, [0, 0, 0])];
        let err = build_image_grid(&two, Some(&["a"])).unwrap_err();
        assert!(err.message.contains("1 captions for 2 images"), "{err}");
    }
}
