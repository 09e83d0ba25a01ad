//! SVG plots of the benchmarks' tables, written beside them when a binary gets `--plot-dir`.
//!
//! A table of thirteen clients answers "how much more than client-go?" one row at a time; a bar
//! chart answers it at a glance, and `docs/performance.md` shows both. Two shapes cover the
//! benchmarks: [`bars`] (one horizontal bar per client, one panel per measure: memory, CPU) and
//! [`lines`] (a measure against a count: throughput against replicas).
//!
//! Built on plotters, a well-kept pure-Rust plotting crate, with only its SVG backend: an SVG
//! keeps its text as `<text>` elements that the viewer draws, so the machine that runs the bench
//! needs no font files (plotters' built-in metrics only place the labels).

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Whose bar it is: each family keeps one colour in every plot, so the peer reads the same
/// everywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// kubegen's rows.
    Kubegen,
    /// client-go's rows (the mirrored system).
    ClientGo,
    /// kube-rs's rows.
    KubeRs,
    /// What bounds every client from below: moving the bytes, decoding them.
    Floor,
}

impl Family {
    /// The family of a row label as the benchmarks write them (`"client-go, paged list"`,
    /// `"kube-rs-metadata + strip managedFields"`, `"raw"`).
    pub fn of(label: &str) -> Family {
        if label.starts_with("client-go") {
            Family::ClientGo
        } else if label.starts_with("kube-rs") {
            Family::KubeRs
        } else if label.starts_with("kubegen") {
            Family::Kubegen
        } else {
            Family::Floor
        }
    }

    fn color(self) -> RGBColor {
        match self {
            Family::Kubegen => RGBColor(0xB7, 0x41, 0x0E),
            Family::ClientGo => RGBColor(0x00, 0x7D, 0x9C),
            Family::KubeRs => RGBColor(0x32, 0x6C, 0xE5),
            Family::Floor => RGBColor(0x99, 0x99, 0x99),
        }
    }
}

/// One bar: a row label and its value.
#[derive(Clone, Debug)]
pub struct Bar {
    /// The row, as its table names it.
    pub label: String,
    /// Its value in the panel's unit.
    pub value: f64,
}

/// One measure over every row: `"max RSS, MiB"` and its bars, in table order.
#[derive(Clone, Debug)]
pub struct Panel {
    /// The measure and its unit, shown above the panel.
    pub title: String,
    /// One bar per row.
    pub bars: Vec<Bar>,
}

/// One line of a [`lines`] plot: a name for the legend and its points, in x order.
#[derive(Clone, Debug)]
pub struct Line {
    /// Shown in the legend.
    pub name: String,
    /// `(x, y)` points.
    pub points: Vec<(f64, f64)>,
    /// A reference line (ideal, target) is drawn thin and grey-dashed instead of in a colour.
    pub reference: bool,
}

/// A [`lines`] panel: a title, the axes' names and its lines.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Shown above the panel.
    pub title: String,
    /// The x axis's name.
    pub x: String,
    /// The y axis's name.
    pub y: String,
    /// Its lines.
    pub lines: Vec<Line>,
}

const ROW_PX: u32 = 26;
const PANEL_PX: u32 = 520;
const LABEL_PX: u32 = 330;
const LINE_COLORS: [RGBColor; 4] = [
    RGBColor(0xB7, 0x41, 0x0E),
    RGBColor(0x00, 0x7D, 0x9C),
    RGBColor(0x6A, 0x3D, 0x9A),
    RGBColor(0x33, 0xA0, 0x2C),
];

/// Writes `panels` side by side as one SVG at `path`, a horizontal bar per row coloured by its
/// [`Family`], each bar's value printed at its end.
///
/// # Errors
/// When `panels` is empty or a panel has no bar, or the file cannot be written.
pub fn bars(path: &Path, title: &str, panels: &[Panel]) -> Result<()> {
    let rows = panels.iter().map(|p| p.bars.len()).max().unwrap_or(0);
    if rows == 0 {
        return Err(anyhow!("nothing to plot in {}", path.display()));
    }
    let width = LABEL_PX + PANEL_PX * panels.len() as u32;
    let height = 90 + ROW_PX * rows as u32;
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    draw(&root, |root| {
        root.fill(&WHITE)?;
        let root = root.titled(title, ("sans-serif", 20))?;
        let (labels, rest) = root.split_horizontally(LABEL_PX);
        let areas = rest.split_evenly((1, panels.len()));
        for (panel, area) in panels.iter().zip(&areas) {
            bar_panel(area, panel)?;
        }
        // The first panel carries the row labels in its own column, so they are never clipped.
        if let Some(first) = panels.first() {
            row_labels(&labels, first, rows)?;
        }
        Ok(())
    })
    .with_context(|| format!("plotting {}", path.display()))?;
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", path.display()))
}

/// Writes `charts` side by side as one SVG at `path`: each a line per series with its points
/// marked, and a legend.
///
/// # Errors
/// When `charts` is empty or has no point, or the file cannot be written.
pub fn lines(path: &Path, title: &str, charts: &[Chart]) -> Result<()> {
    if charts
        .iter()
        .all(|c| c.lines.iter().all(|l| l.points.is_empty()))
    {
        return Err(anyhow!("nothing to plot in {}", path.display()));
    }
    let root = SVGBackend::new(path, (PANEL_PX * charts.len() as u32, 420)).into_drawing_area();
    draw(&root, |root| {
        root.fill(&WHITE)?;
        let root = root.titled(title, ("sans-serif", 20))?;
        let areas = root.split_evenly((1, charts.len()));
        for (chart, area) in charts.iter().zip(&areas) {
            line_chart(area, chart)?;
        }
        Ok(())
    })
    .with_context(|| format!("plotting {}", path.display()))?;
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", path.display()))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Runs `body`, turning plotters' backend errors (which borrow the backend) into an owned error.
fn draw<'a>(root: &Area<'a>, body: impl FnOnce(&Area<'a>) -> DrawResult) -> Result<()> {
    body(root).map_err(|e| anyhow!("{e}"))
}

fn bar_panel(area: &Area<'_>, panel: &Panel) -> DrawResult {
    let rows = panel.bars.len();
    let max = panel
        .bars
        .iter()
        .map(|b| b.value)
        .fold(0.0, f64::max)
        .max(1.0);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 16))
        .margin_right(60)
        .margin_left(8)
        .x_label_area_size(28)
        .build_cartesian_2d(0.0..max * 1.08, 0.0..rows as f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_labels(6)
        .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    for (row, bar) in panel.bars.iter().enumerate() {
        let (bottom, middle, top) = slot(rows, row);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, bottom), (bar.value, top)],
            Family::of(&bar.label).color().filled(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{:.0}", bar.value),
            (bar.value + max * 0.01, middle),
            ("sans-serif", 12)
                .into_font()
                .color(&BLACK)
                .pos(text_anchor(HPos::Left)),
        )))?;
    }
    Ok(())
}

/// Where row `row` of `rows` sits on a panel's y axis: its bar's bottom, middle and top. Row 0 is
/// at the top, so the table's first row reads first.
fn slot(rows: usize, row: usize) -> (f64, f64, f64) {
    let base = (rows - 1 - row) as f64;
    (base + 0.12, base + 0.5, base + 0.88)
}

/// The row labels, right-aligned beside the bars' rows (same caption and axis offsets as a
/// panel, so each label sits on its bar).
fn row_labels(area: &Area<'_>, panel: &Panel, rows: usize) -> DrawResult {
    let mut chart = ChartBuilder::on(area)
        .caption(" ", ("sans-serif", 16))
        .x_label_area_size(28)
        .build_cartesian_2d(0.0..1.0, 0.0..rows as f64)?;
    for (row, bar) in panel.bars.iter().enumerate() {
        let style = ("sans-serif", 13)
            .into_font()
            .color(&Family::of(&bar.label).color())
            .pos(text_anchor(HPos::Right));
        chart.draw_series(std::iter::once(Text::new(
            bar.label.clone(),
            (0.98, slot(rows, row).1),
            style,
        )))?;
    }
    Ok(())
}

fn line_chart(area: &Area<'_>, chart_spec: &Chart) -> DrawResult {
    let points = chart_spec.lines.iter().flat_map(|l| l.points.iter());
    let (x_max, y_max) = points.fold((1.0f64, 1.0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    let mut chart = ChartBuilder::on(area)
        .caption(&chart_spec.title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..x_max * 1.05, 0.0..y_max * 1.1)?;
    chart
        .configure_mesh()
        .x_desc(&chart_spec.x)
        .y_desc(&chart_spec.y)
        .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
        .x_labels(x_max as usize + 2)
        .x_label_formatter(&|v| integral(*v))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    let mut colors = LINE_COLORS.iter().cycle();
    for line in &chart_spec.lines {
        let points = line.points.clone();
        if line.reference {
            let style = RGBColor(0x88, 0x88, 0x88).stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new(points, 6, 4, style))?
                .label(&line.name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], style));
            continue;
        }
        let color = *colors.next().unwrap_or(&BLACK);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(&line.name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(RGBColor(0xCC, 0xCC, 0xCC))
        .draw()?;
    Ok(())
}

/// Tick labels of a count axis: whole numbers only.
fn integral(value: f64) -> String {
    if value.fract().abs() < 1e-9 {
        format!("{value:.0}")
    } else {
        String::new()
    }
}

fn text_anchor(horizontal: HPos) -> Pos {
    Pos::new(horizontal, VPos::Center)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("kubegen-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir.join(name)
    }

    #[test]
    fn labels_fall_into_their_families() {
        assert_eq!(Family::of("client-go, paged list"), Family::ClientGo);
        assert_eq!(
            Family::of("client-go-metadata + strip managedFields"),
            Family::ClientGo
        );
        assert_eq!(Family::of("kube-rs-any"), Family::KubeRs);
        assert_eq!(Family::of("kubegen-protobuf"), Family::Kubegen);
        assert_eq!(Family::of("floor"), Family::Floor);
        assert_eq!(Family::of("raw"), Family::Floor);
    }

    #[test]
    fn bars_write_an_svg_with_every_label_and_value() {
        let path = scratch("bars.svg");
        let panel = |title: &str, values: [f64; 3]| Panel {
            title: title.to_owned(),
            bars: ["client-go", "kube-rs", "kubegen-protobuf"]
                .iter()
                .zip(values)
                .map(|(label, value)| Bar {
                    label: (*label).to_owned(),
                    value,
                })
                .collect(),
        };
        bars(
            &path,
            "60000 configmaps",
            &[
                panel("max RSS, MiB", [264.0, 464.0, 470.0]),
                panel("CPU, ms", [1100.0, 1610.0, 1400.0]),
            ],
        )
        .expect("plot");
        let svg = std::fs::read_to_string(&path).expect("read back");
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        for text in [
            "60000 configmaps",
            "max RSS, MiB",
            "CPU, ms",
            "kube-rs",
            "\n1610\n",
            "\n264\n",
        ] {
            assert!(svg.contains(text), "{text:?} missing from the plot");
        }
        // One bar per row and panel, in its family's colour.
        let bars_of = |color: &str| {
            svg.lines()
                .filter(|line| line.starts_with("<rect") && line.contains(color))
                .count()
        };
        assert_eq!(bars_of("#B7410E"), 2, "kubegen's bars");
        assert_eq!(bars_of("#007D9C"), 2, "client-go's bars");
    }

    #[test]
    fn lines_write_an_svg_with_a_legend() {
        let path = scratch("lines.svg");
        let chart = Chart {
            title: "sustained changes/s".to_owned(),
            x: "replicas".to_owned(),
            y: "changes/s".to_owned(),
            lines: vec![
                Line {
                    name: "labels".to_owned(),
                    points: vec![(1.0, 180.0), (2.0, 350.0), (5.0, 820.0)],
                    reference: false,
                },
                Line {
                    name: "N × one replica".to_owned(),
                    points: vec![(1.0, 180.0), (5.0, 900.0)],
                    reference: true,
                },
            ],
        };
        lines(&path, "scale-out", &[chart]).expect("plot");
        let svg = std::fs::read_to_string(&path).expect("read back");
        for text in ["scale-out", "labels", "N × one replica", "replicas"] {
            assert!(svg.contains(text), "{text:?} missing from the plot");
        }
    }

    #[test]
    fn an_empty_plot_is_an_error_not_a_blank_file() {
        let path = scratch("empty.svg");
        let error = bars(&path, "none", &[]).expect_err("no rows");
        assert!(error.to_string().contains("nothing to plot"), "{error}");
        let chart = Chart {
            title: String::new(),
            x: String::new(),
            y: String::new(),
            lines: Vec::new(),
        };
        assert!(lines(&path, "none", &[chart]).is_err());
    }
}
