//! Pictures of first-layer weights in each block's own geometry: for one neuron, every term's
//! weights drawn on the term's sheets (boards, strips, pair matrices, king-square grids), as
//! declared by its plugin through [`plugin_api::geometry`]; a term without a declared geometry
//! is drawn in index order, 64 indices per row. nnue-pytorch's `visualize.py` draws
//! HalfKP/HalfKA weights as boards the same way; here the block, not the tool, says how.
//!
//! A picture is an SVG file: titles, labels and the colour legend are text and vector shapes,
//! each sheet's cells one PNG image embedded as a data URI (a `halfka_v2_hm` neuron has 22,528
//! cells), scaled by whole pixels so that no viewer smooths it.

use anyhow::{Context, Result};
use std::fmt::Write as _;

use base64::Engine as _;
use plugin_api::{Axis, FeatureSet, TermGeometry};

/// The layout of one term's picture: sheets of tiles of cells and each index's place.
#[derive(Clone, Debug)]
pub struct TermLayout {
    /// The term's name (`all`, `k*all`).
    pub term: String,
    /// The term's first index in the feature set.
    pub offset: u32,
    /// The sheets' names.
    pub sheets: Vec<String>,
    /// Columns and rows of tiles per sheet.
    pub tiles: [u32; 2],
    /// Columns and rows of cells per tile.
    pub cells: [u32; 2],
    /// Labels of the tile columns and rows.
    pub tile_axes: [Axis; 2],
    /// Labels of the cell columns and rows.
    pub cell_axes: [Axis; 2],
    /// What a tile is (empty for one tile per sheet).
    pub tile_title: String,
    /// What a cell is.
    pub cell_title: String,
    /// Where each of the term's indices is drawn: (sheet, x, y) in pixels of cells of the
    /// sheet's image (tile gaps excluded), or `None`.
    places: Vec<Option<(u32, u32, u32)>>,
    /// Whether the layout comes from the block (else index order).
    pub declared: bool,
}

/// Indices per row of a term drawn without a declared geometry.
const INDEX_ROW: u32 = 64;
/// Cells drawn between two tiles: a one-cell gap, at least one pixel.
const TILE_GAP_PX: u32 = 2;

impl TermLayout {
    /// The layouts of every term of `set`.
    pub fn of_set(set: &FeatureSet) -> Vec<TermLayout> {
        set.terms()
            .iter()
            .map(|term| match TermGeometry::of(term) {
                Some(g) => {
                    let grid = *g.grid();
                    let tiles = grid.tiles.map(u32::from);
                    let cells = grid.cells.map(u32::from);
                    let places = (0..term.size)
                        .map(|local| {
                            g.place(local).map(|p| {
                                let (tx, ty) = (u32::from(p.tile[0]), u32::from(p.tile[1]));
                                let (cx, cy) = (u32::from(p.cell[0]), u32::from(p.cell[1]));
                                let ty = flip(grid.tile_axes[1], ty, tiles[1]);
                                let cy = flip(grid.cell_axes[1], cy, cells[1]);
                                (p.sheet, tx * cells[0] + cx, ty * cells[1] + cy)
                            })
                        })
                        .collect();
                    TermLayout {
                        term: term.name.clone(),
                        offset: term.offset,
                        sheets: (0..grid.sheets).map(|s| g.sheet_name(s)).collect(),
                        tiles,
                        cells,
                        tile_axes: grid.tile_axes,
                        cell_axes: grid.cell_axes,
                        tile_title: grid.tile_title.to_string(),
                        cell_title: grid.cell_title.to_string(),
                        places,
                        declared: true,
                    }
                }
                None => TermLayout {
                    term: term.name.clone(),
                    offset: term.offset,
                    sheets: vec![format!("{} (index order)", term.name)],
                    tiles: [1, 1],
                    cells: [INDEX_ROW, term.size.div_ceil(INDEX_ROW)],
                    tile_axes: [Axis::Index, Axis::Index],
                    cell_axes: [Axis::Index, Axis::Index],
                    tile_title: String::new(),
                    cell_title: format!("index, {INDEX_ROW} per row"),
                    places: (0..term.size)
                        .map(|i| Some((0, i % INDEX_ROW, i / INDEX_ROW)))
                        .collect(),
                    declared: false,
                },
            })
            .collect()
    }

    /// Cells of a sheet's image, columns and rows (tiles side by side).
    fn sheet_cells(&self) -> [u32; 2] {
        [self.tiles[0] * self.cells[0], self.tiles[1] * self.cells[1]]
    }

    /// Pixels per cell: sheets about 160 pixels wide, from 1 to 20 pixels per cell.
    fn cell_px(&self) -> u32 {
        (160 / self.sheet_cells()[0].max(1)).clamp(1, 20)
    }

    /// Pixels between tiles (none for one tile).
    fn gap_px(&self) -> u32 {
        if self.tiles == [1, 1] { 0 } else { TILE_GAP_PX }
    }

    /// A sheet's image size in pixels.
    fn sheet_px(&self) -> [u32; 2] {
        let (c, g) = (self.cell_px(), self.gap_px());
        [0, 1].map(|d| self.sheet_cells()[d] * c + (self.tiles[d] - 1) * g)
    }
}

/// A row counted from the bottom on a bottom-up axis.
fn flip(axis: Axis, i: u32, n: u32) -> u32 {
    if axis.bottom_up() { n - 1 - i } else { i }
}

/// How values map to colours.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Blue (−m) through white (0) to red (+m): signed weights.
    Diverging(f64),
    /// White (0) to dark red (m): magnitudes.
    Sequential(f64),
}

impl Scale {
    fn colour(self, v: f64) -> [u8; 3] {
        const NEG: [f64; 3] = [33.0, 102.0, 172.0];
        const POS: [f64; 3] = [178.0, 24.0, 43.0];
        let (t, end) = match self {
            Scale::Diverging(m) => {
                let t = (v / m.max(1e-12)).clamp(-1.0, 1.0);
                (t.abs(), if t < 0.0 { NEG } else { POS })
            }
            Scale::Sequential(m) => ((v / m.max(1e-12)).clamp(0.0, 1.0), POS),
        };
        [0, 1, 2].map(|c| (255.0 + (end[c] - 255.0) * t).round() as u8)
    }

    fn range(self) -> (f64, f64) {
        match self {
            Scale::Diverging(m) => (-m, m),
            Scale::Sequential(m) => (0.0, m),
        }
    }
}

/// Colour of a cell no index is drawn on.
const EMPTY: [u8; 3] = [228, 228, 228];

/// One sheet's cells as a PNG (RGB), each cell `px` pixels square, tiles `gap` pixels apart
/// (the gaps white).
fn sheet_png(layout: &TermLayout, colours: &[[u8; 3]]) -> Result<Vec<u8>> {
    let [w, h] = layout.sheet_px();
    let (px, gap) = (layout.cell_px(), layout.gap_px());
    let [cols, rows] = layout.sheet_cells();
    let mut rgb = vec![255u8; (w * h * 3) as usize];
    for cy in 0..rows {
        for cx in 0..cols {
            let colour = colours[(cy * cols + cx) as usize];
            let x0 = cx * px + cx / layout.cells[0] * gap;
            let y0 = cy * px + cy / layout.cells[1] * gap;
            for y in y0..y0 + px {
                for x in x0..x0 + px {
                    let at = ((y * w + x) * 3) as usize;
                    rgb[at..at + 3].copy_from_slice(&colour);
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().context("cannot encode a PNG")?;
    writer
        .write_image_data(&rgb)
        .context("cannot encode a PNG")?;
    writer.finish().context("cannot encode a PNG")?;
    Ok(out)
}

/// Escapes text for SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Text along an axis when every label fits: `n` positions of `step` pixels from `start`.
fn axis_labels(svg: &mut String, axis: Axis, n: u32, horizontal: bool, at: (f64, f64), step: f64) {
    if step < 9.0 || (axis == Axis::Index && n > 16) {
        return;
    }
    for i in 0..n {
        let label = escape(&axis.label(if horizontal { i } else { flip(axis, i, n) }));
        let (x, y) = if horizontal {
            (at.0 + (f64::from(i) + 0.5) * step, at.1)
        } else {
            (at.0, at.1 + (f64::from(i) + 0.5) * step + 3.0)
        };
        let anchor = if horizontal { "middle" } else { "end" };
        let _ = write!(
            svg,
            r##"<text x="{x:.1}" y="{y:.1}" font-size="9" text-anchor="{anchor}" fill="#444">{label}</text>"##
        );
    }
}

/// A picture of every term of a feature set: `values[i]` is the value of feature `i` (the set's
/// index), drawn with `scale`. Returns the SVG text.
pub fn draw(
    title: &str,
    layouts: &[TermLayout],
    values: &[f64],
    scale: Scale,
    unit: &str,
) -> Result<String> {
    const MARGIN: f64 = 16.0;
    const LABEL_W: f64 = 22.0;
    const SHEET_TITLE_H: f64 = 16.0;
    const SECTION_TITLE_H: f64 = 26.0;
    let mut body = String::new();
    let mut y = 40.0;
    let mut width: f64 = 560.0;
    for layout in layouts {
        let [sw, sh] = layout.sheet_px().map(f64::from);
        let per_row = ((900.0 / (sw + LABEL_W + 14.0)).floor() as usize).clamp(1, 12);
        let described = if layout.tile_title.is_empty() {
            format!("cells: {}", layout.cell_title)
        } else {
            format!("tiles: {}; cells: {}", layout.tile_title, layout.cell_title)
        };
        let _ = write!(
            body,
            r##"<text x="{MARGIN}" y="{:.1}" font-size="15" font-weight="bold">{}</text><text x="{:.1}" y="{:.1}" font-size="11" fill="#555">{}</text>"##,
            y + 16.0,
            escape(&layout.term),
            MARGIN + 10.0 + 9.0 * layout.term.chars().count() as f64,
            y + 16.0,
            escape(&described)
        );
        y += SECTION_TITLE_H;
        let mut colours =
            vec![
                vec![EMPTY; (layout.sheet_cells()[0] * layout.sheet_cells()[1]) as usize];
                layout.sheets.len()
            ];
        let cols = layout.sheet_cells()[0];
        for (local, place) in layout.places.iter().enumerate() {
            if let Some((s, x, y)) = *place {
                let v = values[layout.offset as usize + local];
                colours[s as usize][(y * cols + x) as usize] = scale.colour(v);
            }
        }
        let px = f64::from(layout.cell_px());
        let step = |d: usize| {
            if layout.tiles == [1, 1] {
                (layout.cell_axes[d], layout.cells[d], px)
            } else {
                let tile = px * f64::from(layout.cells[d]) + f64::from(layout.gap_px());
                (layout.tile_axes[d], layout.tiles[d], tile)
            }
        };
        for (s, name) in layout.sheets.iter().enumerate() {
            let (row, col) = (s / per_row, s % per_row);
            let x0 = MARGIN + LABEL_W + col as f64 * (sw + LABEL_W + 14.0);
            let y0 = y + row as f64 * (sh + SHEET_TITLE_H + 16.0) + SHEET_TITLE_H;
            let png = sheet_png(layout, &colours[s])?;
            let _ = write!(
                body,
                r##"<text x="{x0:.1}" y="{:.1}" font-size="11">{}</text><image x="{x0:.1}" y="{y0:.1}" width="{sw}" height="{sh}" href="data:image/png;base64,{}"/><rect x="{x0:.1}" y="{y0:.1}" width="{sw}" height="{sh}" fill="none" stroke="#999" stroke-width="0.5"/>"##,
                y0 - 4.0,
                escape(name),
                base64::engine::general_purpose::STANDARD.encode(&png)
            );
            let (ax, n, st) = step(0);
            axis_labels(&mut body, ax, n, true, (x0, y0 + sh + 10.0), st);
            let (ay, n, st) = step(1);
            axis_labels(&mut body, ay, n, false, (x0 - 3.0, y0), st);
            width = width.max(x0 + sw + MARGIN);
        }
        let rows = layout.sheets.len().div_ceil(per_row) as f64;
        y += rows * (sh + SHEET_TITLE_H + 16.0) + 10.0;
    }
    // The legend: a gradient with its ends and zero labelled.
    let (lo, hi) = scale.range();
    let stops: String = (0..=10)
        .map(|i| {
            let v = lo + (hi - lo) * f64::from(i) / 10.0;
            let [r, g, b] = scale.colour(v);
            format!(
                r#"<stop offset="{}%" stop-color="rgb({r},{g},{b})"/>"#,
                i * 10
            )
        })
        .collect();
    let legend_y = y + 4.0;
    let _ = write!(
        body,
        r##"<defs><linearGradient id="scale">{stops}</linearGradient></defs><rect x="{MARGIN}" y="{legend_y:.1}" width="240" height="12" fill="url(#scale)" stroke="#999" stroke-width="0.5"/><text x="{MARGIN}" y="{:.1}" font-size="10">{lo:.3}</text><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{hi:.3}</text><text x="{:.1}" y="{:.1}" font-size="10" fill="#555">{}; grey: no index</text>"##,
        legend_y + 24.0,
        MARGIN + 240.0,
        legend_y + 24.0,
        MARGIN + 252.0,
        legend_y + 10.0,
        escape(unit)
    );
    let height = legend_y + 36.0;
    Ok(format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="{MARGIN}" y="24" font-size="17">{}</text>{body}</svg>"#,
        escape(title)
    ))
}
