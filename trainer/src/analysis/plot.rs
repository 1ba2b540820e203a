//! SVG charts for the dataset tools, drawn with `plotters`' SVG backend.
//!
//! plotters is built without its font features (no fontconfig, no system fonts): the SVG
//! backend writes text as `<text>` elements that the viewer renders, so titles and labels show
//! in any browser or SVG viewer.

use anyhow::{Result, anyhow};
use std::path::Path;

use plotters::prelude::*;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesKind {
    /// A polyline.
    Line,
    /// One dot per point.
    Points,
}

/// A named series of (x, y) points.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// The points.
    pub points: Vec<(f64, f64)>,
    /// How to draw them.
    pub kind: SeriesKind,
}

const SIZE: (u32, u32) = (900, 560);

/// A drawing error (plotters' errors hold a backend's, which need not be `Sync`).
fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("cannot draw the plot: {e}")
}

fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// A bar chart: each bar spans `lo..hi` on the x axis with height `value`.
pub fn bars(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    data: &[(f64, f64, f64)],
) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (x0, x1) = span(data.iter().flat_map(|d| [d.0, d.1]));
    let (_, y1) = span(data.iter().map(|d| d.2).chain([0.0]));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(76)
        .build_cartesian_2d(x0..x1, 0.0..y1 * 1.05)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .disable_x_mesh()
        .draw()
        .map_err(err)?;
    chart
        .draw_series(
            data.iter()
                .map(|&(lo, hi, v)| Rectangle::new([(lo, 0.0), (hi, v)], BLUE.mix(0.6).filled())),
        )
        .map_err(err)?;
    root.present().map_err(err)
}

/// One chart of [`bar_panels`]: bars spanning `lo..hi` with a height, on a numeric x axis or,
/// with `categories`, one named bar per whole x (bar `i` spanning about `i ± 0.4`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarPanel {
    /// The chart's title.
    pub title: String,
    /// The x axis's description.
    pub x_desc: String,
    /// The y axis's description.
    pub y_desc: String,
    /// `(lo, hi, height)` per bar.
    pub bars: Vec<(f64, f64, f64)>,
    /// Names of the whole x positions, for category charts.
    pub categories: Vec<String>,
}

impl BarPanel {
    /// A category chart: one bar per `(name, height)`.
    pub fn categories(title: &str, y_desc: &str, values: &[(String, f64)]) -> BarPanel {
        BarPanel {
            title: title.into(),
            x_desc: String::new(),
            y_desc: y_desc.into(),
            bars: (0..values.len())
                .map(|i| (i as f64 - 0.4, i as f64 + 0.4, values[i].1))
                .collect(),
            categories: values.iter().map(|v| v.0.clone()).collect(),
        }
    }
}

/// Several bar charts in one SVG, `columns` per row, under one title.
pub fn bar_panels(path: &Path, title: &str, columns: usize, panels: &[BarPanel]) -> Result<()> {
    let columns = columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(columns).max(1);
    let size = (
        (460 * columns as u32).max(SIZE.0 / 2),
        48 + 320 * rows as u32,
    );
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    for (area, panel) in root.split_evenly((rows, columns)).iter().zip(panels) {
        let (x0, x1) = if panel.categories.is_empty() {
            span(panel.bars.iter().flat_map(|d| [d.0, d.1]))
        } else {
            (-0.5, panel.categories.len() as f64 - 0.5)
        };
        let (y0, y1) = span(panel.bars.iter().map(|d| d.2).chain([0.0]));
        let names = &panel.categories;
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(if names.is_empty() { 36 } else { 44 })
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0.min(0.0)..(y1 + (y1 - y0) * 0.05))
            .map_err(err)?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(panel.x_desc.as_str())
            .y_desc(panel.y_desc.as_str())
            .disable_x_mesh();
        let label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        if !names.is_empty() {
            mesh.x_labels(names.len()).x_label_formatter(&label);
        }
        mesh.draw().map_err(err)?;
        chart
            .draw_series(
                panel.bars.iter().map(|&(lo, hi, v)| {
                    Rectangle::new([(lo, 0.0), (hi, v)], BLUE.mix(0.6).filled())
                }),
            )
            .map_err(err)?;
    }
    root.present().map_err(err)
}

/// Line and point series on shared axes, with a legend.
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (x0, x1) = span(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let (y0, y1) = span(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let pad = (y1 - y0) * 0.05;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(76)
        .build_cartesian_2d(x0..x1, (y0 - pad)..(y1 + pad))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let anno = match s.kind {
            SeriesKind::Line => chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(err)?,
            SeriesKind::Points => chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 2, color.filled())))
                .map_err(err)?,
        };
        anno.label(s.name.clone()).legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
        });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Points with symmetric error bars, one row per named category, first at the top (e.g. Elo
/// ± its 95% interval per feature set): names of any length stay readable at the left, and the
/// picture grows with the rows.
pub fn error_bars(
    path: &Path,
    title: &str,
    x_desc: &str,
    points: &[(String, f64, f64)],
) -> Result<()> {
    let n = points.len().max(1);
    let longest = points
        .iter()
        .map(|p| p.0.chars().count())
        .max()
        .unwrap_or(0);
    // About 7 pixels a character of the 13-pixel labels.
    let label_width = (longest as u32 * 7 + 16).clamp(80, 480);
    let height = (110 + 34 * n as u32).max(240);
    let root = SVGBackend::new(path, (SIZE.0, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (x0, x1) = span(
        points
            .iter()
            .flat_map(|&(_, v, e)| [v - e.abs(), v + e.abs()]),
    );
    let pad = (x1 - x0) * 0.08;
    let names: Vec<String> = points.iter().map(|p| p.0.clone()).collect();
    // Row i at y = n - 1 - i: the first point at the top.
    let row = |i: usize| (n - 1 - i) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(label_width)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), -0.5..(n as f64 - 0.5))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_labels(n)
        .y_label_style(("sans-serif", 13))
        .y_label_formatter(&|y| {
            let r = y.round();
            if (y - r).abs() < 1e-6 && r >= 0.0 && (r as usize) < n {
                names.get(n - 1 - r as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .disable_y_mesh()
        .draw()
        .map_err(err)?;
    chart
        .draw_series(points.iter().enumerate().map(|(i, &(_, v, e))| {
            ErrorBar::new_horizontal(row(i), v - e.abs(), v, v + e.abs(), BLUE.filled(), 12)
        }))
        .map_err(err)?;
    chart
        .draw_series(
            points
                .iter()
                .enumerate()
                .map(|(i, &(_, v, _))| Circle::new((v, row(i)), 4, BLUE.filled())),
        )
        .map_err(err)?;
    root.present().map_err(err)
}

/// A count as axes and tables write it: `125k`, `4M`, `1.5M`, `200` (three significant digits
/// at most).
pub fn count_label(n: f64) -> String {
    if n >= 1e6 {
        format!("{}M", round_sig(n / 1e6))
    } else if n >= 1e3 {
        format!("{}k", round_sig(n / 1e3))
    } else {
        round_sig(n)
    }
}

/// Three significant digits at most, no trailing zeros.
fn round_sig(v: f64) -> String {
    let text = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

/// A named curve whose points carry symmetric error bars: (x, y, error).
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The legend entry.
    pub name: String,
    /// The points, by increasing x.
    pub points: Vec<(f64, f64, f64)>,
}

/// Curves with vertical error bars on a logarithmic x axis (a quantity against data size, say),
/// one colour each, with a legend. A NaN error draws no bar; x must be positive.
pub fn log_x_curves(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    curves: &[Curve],
) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let points = || curves.iter().flat_map(|c| c.points.iter());
    let (x0, x1) = span(points().map(|p| p.0).filter(|&x| x > 0.0));
    let bar = |e: f64| if e.is_finite() { e.abs() } else { 0.0 };
    let (y0, y1) = span(points().flat_map(|&(_, y, e)| [y - bar(e), y + bar(e)]));
    let pad = (y1 - y0) * 0.05;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(76)
        .build_cartesian_2d((x0 / 1.25..x1 * 1.25).log_scale(), (y0 - pad)..(y1 + pad))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        // A log axis's minor lines crowd into bands near each power of ten: major lines only.
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| count_label(*x))
        .draw()
        .map_err(err)?;
    for (i, c) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                c.points.iter().map(|&(x, y, _)| (x, y)),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(c.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
            });
        chart
            .draw_series(
                c.points
                    .iter()
                    .filter(|p| p.2.is_finite())
                    .map(|&(x, y, e)| {
                        ErrorBar::new_vertical(
                            x,
                            y - e.abs(),
                            y,
                            y + e.abs(),
                            color.stroke_width(2),
                            10,
                        )
                    }),
            )
            .map_err(err)?;
        chart
            .draw_series(
                c.points
                    .iter()
                    .map(|&(x, y, _)| Circle::new((x, y), 4, color.filled())),
            )
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_svg_files_with_their_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.svg");
        bars(
            &p,
            "Scores",
            "score",
            "positions",
            &[(0.0, 1.0, 3.0), (1.0, 2.0, 5.0)],
        )
        .unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("Scores") && svg.contains("positions"));
        assert!(svg.matches("<rect").count() >= 3);
        let p = dir.path().join("l.svg");
        lines(
            &p,
            "WDL",
            "score",
            "win rate",
            &[
                Series {
                    name: "fit".into(),
                    points: vec![(0.0, 0.1), (1.0, 0.9)],
                    kind: SeriesKind::Line,
                },
                Series {
                    name: "observed".into(),
                    points: vec![(0.5, 0.5)],
                    kind: SeriesKind::Points,
                },
            ],
        )
        .unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.contains("observed") && svg.contains("<polyline") && svg.contains("<circle"));
        let p = dir.path().join("e.svg");
        error_bars(
            &p,
            "Elo",
            "Elo",
            &[("all".into(), 0.0, 10.0), ("all+mc".into(), -25.0, 12.0)],
        )
        .unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.contains("all+mc") && svg.matches("<circle").count() >= 2);
    }
}
