//! The grid: layout by image count, composition, the index badges.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use image::{DynamicImage, GenericImageView as _, RgbImage, Rgba, RgbaImage, imageops};

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

/// A grid's shape: columns, rows and the side of its square cells, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Columns.
    pub cols: u32,
    /// Rows.
    pub rows: u32,
    /// Side of each square cell, in pixels.
    pub cell: u32,
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
        })
    }

    /// Canvas width: `cols × cell + (cols + 1) × GAP`.
    pub fn width(self) -> u32 {
        self.cols * self.cell + (self.cols + 1) * GAP
    }

    /// Canvas height: `rows × cell + (rows + 1) × GAP`.
    pub fn height(self) -> u32 {
        self.rows * self.cell + (self.rows + 1) * GAP
    }

    /// Top-left corner of cell `index` (0-based, row by row).
    pub fn cell_origin(self, index: u32) -> (u32, u32) {
        let (col, row) = (index % self.cols, index / self.cols);
        (GAP + col * (self.cell + GAP), GAP + row * (self.cell + GAP))
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
        draw_badge(&mut canvas, x, y, layout.cell, index + 1);
    }
    DynamicImage::ImageRgba8(canvas).to_rgb8()
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

/// Draws `number` in white on a black box at the cell's top-left corner.
/// The digit height is a twelfth of the cell, at least 20 px.
fn draw_badge(canvas: &mut RgbaImage, cell_x: u32, cell_y: u32, cell: u32, number: u32) {
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
    let (x0, y0) = (cell_x as f32 + inset, cell_y as f32 + inset);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "box coordinates are small positive pixel values"
    )]
    {
        for py in y0 as u32..(y0 + box_h) as u32 {
            for px in x0 as u32..(x0 + box_w) as u32 {
                if px < canvas.width() && py < canvas.height() {
                    canvas.put_pixel(px, py, BADGE_COLOUR);
                }
            }
        }
    }
    let mut caret = x0 + pad;
    let baseline = y0 + pad / 2.0 + scaled.ascent();
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
                clippy::cast_sign_loss,
                reason = "glyph bounds are small positive pixel values inside the badge"
            )]
            let (px, py) = (
                (bounds.min.x as i64 + i64::from(gx)) as u32,
                (bounds.min.y as i64 + i64::from(gy)) as u32,
            );
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
                Rgba([
                    mix(DIGIT_COLOUR[0], under[0]),
                    mix(DIGIT_COLOUR[1], under[1]),
                    mix(DIGIT_COLOUR[2], under[2]),
                    255,
                ]),
            );
        });
    }
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
